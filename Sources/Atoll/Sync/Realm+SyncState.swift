import AtollCore
import Foundation

/// What a synced realm file remembers about its place in the server's history.
typealias SyncState = ClientSyncState

extension Realm {
    static let syncStateTable = "_atoll_sync_state"

    private func ensureSyncStateTable() throws {
        try connection.execute("CREATE TABLE IF NOT EXISTS \(Self.syncStateTable) (key TEXT PRIMARY KEY, value) WITHOUT ROWID")
    }

    /// The stored sync state (a fresh one for a realm that never synced).
    func loadSyncState() throws -> SyncState {
        var state = SyncState()
        let exists = try connection.fetchOne("SELECT 1 FROM sqlite_master WHERE name = ?", [.text(Self.syncStateTable)]) != nil
        guard exists else { return state }
        for row in try connection.fetchAll("SELECT key, value FROM \(Self.syncStateTable)") {
            guard case .text(let key) = row[0] else { continue }
            switch (key, row[1]) {
            case ("file_ident", .integer(let v)): state.fileIdent.ident = v
            case ("file_salt", .integer(let v)): state.fileIdent.salt = v
            case ("server_version", .integer(let v)): state.serverVersion = v
            case ("epoch", .integer(let v)): state.epoch = SyncEpoch(rawValue: UInt64(bitPattern: v))
            case ("acknowledged", .integer(let v)): state.acknowledgedClientVersion = v
            case ("queued", .integer(let v)): state.queuedClientVersion = v
            case ("pending", .blob(let data)):
                var reader = BinaryReader(data)
                while !reader.isAtEnd {
                    do {
                        state.pending.append(try Changeset(decoding: Data(try reader.blob())))
                    } catch {
                        throw Error(.invalidDatabase, "the sync state of \(coordinator.path) is damaged: \(error)", underlying: error)
                    }
                }
            default: continue
            }
        }
        return state
    }

    /// Saves the sync state; call inside a write transaction, with the data it describes.
    /// `includingPending: false` leaves the stored pending changesets as they are (re-encoding
    /// them costs as much as what is still unacknowledged).
    func saveSyncState(_ state: SyncState, includingPending: Bool = true) throws {
        try ensureSyncStateTable()
        var values: [(String, SQLValue)] = [
            ("file_ident", .integer(state.fileIdent.ident)), ("file_salt", .integer(state.fileIdent.salt)),
            ("server_version", .integer(state.serverVersion)),
            ("epoch", .integer(Int64(bitPattern: state.epoch.rawValue))),
            ("acknowledged", .integer(state.acknowledgedClientVersion)),
            ("queued", .integer(state.queuedClientVersion)),
        ]
        if includingPending {
            var writer = BinaryWriter()
            for changeset in state.pending { writer.blob([UInt8](changeset.encoded())) }
            values.append(("pending", .blob(Data(writer.bytes))))
        }
        for (key, value) in values {
            try connection.execute("INSERT OR REPLACE INTO \(Self.syncStateTable) (key, value) VALUES (?, ?)", [.text(key), value])
        }
    }

    /// Remembers the schema last recorded for the server; call inside a write transaction.
    func saveAnnouncedSchema(_ encoded: Data) throws {
        try ensureSyncStateTable()
        try connection.execute("INSERT OR REPLACE INTO \(Self.syncStateTable) (key, value) VALUES ('announced_schema', ?)", [.blob(encoded)])
    }

    /// Local changesets committed after `version`, oldest first (empty commits left out).
    func localChangesets(after version: Int64) throws -> [Changeset] {
        try historyRecords(after: version).filter { !$0.instructions.isEmpty }
    }
}
