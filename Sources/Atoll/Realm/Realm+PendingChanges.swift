import AtollCore
import Foundation

/// The local changesets the server has not acknowledged, for the sync session to upload and to
/// rebase over downloads (`Merge.transform`). They are the `_atoll_history` records after the
/// version recorded in `_atoll_sync` under `uploaded`.
///
/// ```swift
/// let pending = try realm.pendingLocalChangesets()
/// try realm.write {
///     try realm.integrateRemoteInWrite(rebasedDownload)
///     try realm.replacePendingLocalChangesets(rebasedPending)
/// }
/// ```
extension Realm {
    /// The newest local version the server acknowledged (0 before any).
    @_spi(Sync)
    public func lastUploadedVersion() throws -> Int64 {
        verifyThread()
        return (try? connection.fetchInt("SELECT value FROM _atoll_sync WHERE key = 'uploaded'")) ?? 0
    }

    /// Records that every local changeset up to `version` was acknowledged; inside a write
    /// transaction. The version never moves back.
    @_spi(Sync)
    public func setLastUploadedVersion(_ version: Int64) throws {
        try requireSyncWrite()
        guard version > (try lastUploadedVersion()) else { return }
        try connection.execute("INSERT OR REPLACE INTO _atoll_sync (key, value) VALUES ('uploaded', ?)", [.integer(version)])
    }

    /// Local changesets after the last acknowledged version, oldest first; empty ones left out.
    @_spi(Sync)
    public func pendingLocalChangesets() throws -> [Changeset] {
        try pendingRecords().filter { !$0.instructions.isEmpty }
    }

    /// Replaces the pending changesets with their rebased form, inside a write transaction. Each
    /// given changeset replaces the record of its version; a pending record not given was
    /// dropped by the rebase and becomes empty.
    @_spi(Sync)
    public func replacePendingLocalChangesets(_ changesets: [Changeset]) throws {
        try requireSyncWrite()
        let pending = try pendingRecords()
        let versions = Set(pending.map(\.version))
        let given = Dictionary(changesets.map { ($0.version, $0) }, uniquingKeysWith: { _, last in last })
        if let unknown = given.keys.first(where: { !versions.contains($0) }) {
            throw Error(.invalidValue, "changeset version \(unknown) is not a pending local changeset of \(coordinator.path)")
        }
        for record in pending {
            let replacement = given[record.version]
                ?? Changeset(version: record.version, timestamp: record.timestamp, fileIdent: record.fileIdent, instructions: [])
            guard replacement != record else { continue }
            try connection.execute("UPDATE _atoll_history SET changeset = ? WHERE version = ?",
                                   [.blob(replacement.encoded()), .integer(record.version)])
        }
    }

    /// Integrates downloaded changesets and stores the rebased pending changesets, in one write
    /// transaction that records no history.
    @_spi(Sync)
    public func integrateRemote(_ changesets: [Changeset], rebasedPending: [Changeset]) throws {
        try checkThread()
        guard transaction == nil else {
            throw Error(.alreadyInWriteTransaction, "Cannot integrate changes from the server inside a write transaction")
        }
        try beginWrite()
        do {
            try integrateRemoteInWrite(changesets)
            try replacePendingLocalChangesets(rebasedPending)
        } catch {
            cancelWrite()
            throw error
        }
        try commitWrite(recordingHistory: false)
    }

    private func pendingRecords() throws -> [Changeset] {
        verifyThread()
        return try historyRecords(after: try lastUploadedVersion())
    }

    private func requireSyncWrite() throws {
        try checkThread()
        guard transaction != nil else {
            throw Error(.notInWriteTransaction, "Sync bookkeeping can only change inside a write transaction")
        }
    }
}
