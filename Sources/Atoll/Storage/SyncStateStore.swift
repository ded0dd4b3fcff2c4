import AtollCore
import Foundation

/// The SQL of a synced file's bookkeeping: its place in the server's history
/// (`_atoll_sync_state`, by key) and a pending client reset (`_atoll_pending_reset`). The rows
/// record no history and never sync as data; saves belong inside the write transaction of the
/// data they describe.
///
/// ```swift
/// var state = try realm.syncStateStore.load()
/// state.serverVersion = 12
/// try realm.syncStateStore.save(state)
/// ```
struct SyncStateStore {
    static let stateTable = "_atoll_sync_state"
    static let pendingResetTable = "_atoll_pending_reset"

    let connection: Connection
    /// The file, for error messages.
    let path: String

    /// Whether `table` exists (a file opened read-only may predate the sync tables).
    private func exists(_ table: String) throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM sqlite_master WHERE name = ?", [.text(table)]) != nil
    }

    // MARK: Sync state

    /// The stored sync state (a fresh one for a file that never synced).
    func load() throws -> ClientSyncState {
        var state = ClientSyncState()
        guard try exists(Self.stateTable) else { return state }
        for row in try connection.fetchAll("SELECT key, value FROM \(Self.stateTable)") {
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
                        throw Realm.Error(.invalidDatabase, "the sync state of \(path) is damaged: \(error)", underlying: error)
                    }
                }
            default: continue
            }
        }
        return state
    }

    /// Saves the sync state. `includingPending: false` leaves the stored pending changesets as
    /// they are (re-encoding them costs as much as what is still unacknowledged).
    func save(_ state: ClientSyncState, includingPending: Bool = true) throws {
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
        for (key, value) in values { try set(key, value) }
    }

    /// The schema last recorded for the server (an encoded changeset), if any.
    func announcedSchema() throws -> Data? {
        guard try exists(Self.stateTable),
              case .blob(let data)? = try connection.fetchOne("SELECT value FROM \(Self.stateTable) WHERE key = 'announced_schema'")?.first else { return nil }
        return data
    }

    func saveAnnouncedSchema(_ encoded: Data) throws {
        try set("announced_schema", .blob(encoded))
    }

    private func set(_ key: String, _ value: SQLValue) throws {
        try connection.execute("INSERT OR REPLACE INTO \(Self.stateTable) (key, value) VALUES (?, ?)", [.text(key), value])
    }

    /// Makes a copy's sync state fit its new owner: with `keep`, the copy keeps its place in the
    /// history and its unsynced changes but gets a file ident of its own on first sync; without,
    /// it has no sync state.
    func adoptCopy(keep: Bool) throws {
        guard try exists(Self.stateTable) else { return }
        if keep {
            try connection.execute("UPDATE \(Self.stateTable) SET value = 0 WHERE key IN ('file_ident', 'file_salt')")
        } else {
            try connection.execute("DELETE FROM \(Self.stateTable)")
        }
    }

    // MARK: Pending client reset

    func pendingReset() throws -> PendingReset? {
        guard try exists(Self.pendingResetTable),
              let row = try connection.fetchOne("SELECT action, date, recovered_version FROM \(Self.pendingResetTable) WHERE id = 1"),
              case .text(let action) = row[0], case .real(let date) = row[1]
        else { return nil }
        let version: Int64? = if case .integer(let v) = row[2] { v } else { nil }
        return PendingReset(action: action, date: Date(timeIntervalSince1970: date), recoveredVersion: version)
    }

    /// Records (or with nil clears) the pending reset.
    func savePendingReset(_ reset: PendingReset?) throws {
        guard let reset else {
            try connection.execute("DELETE FROM \(Self.pendingResetTable)")
            return
        }
        try connection.execute(
            "INSERT OR REPLACE INTO \(Self.pendingResetTable) (id, action, date, recovered_version) VALUES (1, ?, ?, ?)",
            [.text(reset.action), .real(reset.date.timeIntervalSince1970), reset.recoveredVersion.map(SQLValue.integer) ?? .null])
    }
}
