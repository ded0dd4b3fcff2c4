import AtollCore
import Foundation

/// What a synced realm file remembers about its place in the server's history.
typealias SyncState = ClientSyncState

/// The sync engine's view of the file's bookkeeping; the SQL is in `SyncStateStore`.
extension Realm {
    var syncStateStore: SyncStateStore { SyncStateStore(connection: connection, path: coordinator.path) }

    /// The stored sync state (a fresh one for a realm that never synced).
    func loadSyncState() throws -> SyncState {
        try syncStateStore.load()
    }

    /// Saves the sync state; call inside a write transaction, with the data it describes.
    /// `includingPending: false` leaves the stored pending changesets as they are (re-encoding
    /// them costs as much as what is still unacknowledged).
    func saveSyncState(_ state: SyncState, includingPending: Bool = true) throws {
        try syncStateStore.save(state, includingPending: includingPending)
    }

    /// Remembers the schema last recorded for the server; call inside a write transaction.
    func saveAnnouncedSchema(_ encoded: Data) throws {
        try syncStateStore.saveAnnouncedSchema(encoded)
    }

    /// Local changesets committed after `version`, oldest first (empty commits left out).
    func localChangesets(after version: Int64) throws -> [Changeset] {
        try historyRecords(after: version).filter { !$0.instructions.isEmpty }
    }

    func loadPendingReset() throws -> PendingReset? {
        try syncStateStore.pendingReset()
    }

    /// Records (or with nil clears) the pending reset; call inside a write transaction.
    func savePendingReset(_ reset: PendingReset?) throws {
        try syncStateStore.savePendingReset(reset)
    }
}
