import AtollCore
import Foundation
import Logging
import PostgresNIO

/// Integrating an upload into a realm's history on PostgreSQL.
///
/// The common case (a client that is up to date uploads one changeset) takes one round trip: the
/// integration runs against what this node last knew of the realm (its *fence*: latest version,
/// epoch, compaction point, the file's last integrated version), and one statement appends the
/// entry only if the realm and the file are still exactly so. A fence another node (or a restore,
/// a compaction) made stale only costs that statement: nothing is written, and the integration
/// runs again in a transaction that holds the realm's row lock, as every other case does.
extension PostgresServerStore {
    /// The integration runs before the append, outside the realm's lock (under it only when the
    /// node's fence was stale): the coordinator need not rebase uploads early.
    package var integratesOutsideTheLock: Bool { true }

    package func integrate(
        realmID: Int64, fileIdent: Int64, baseServerVersion: Int64, historyAfter: Int64,
        _ integrate: @Sendable (IntegrationInput) throws -> [Changeset]
    ) async throws -> IntegrationResult {
        if let result = try await integrateUnlocked(realmID: realmID, fileIdent: fileIdent, historyAfter: historyAfter, integrate) {
            return result
        }
        return try await integrateLocked(realmID: realmID, fileIdent: fileIdent, historyAfter: historyAfter, integrate)
    }

    /// The one-statement append against the node's fence (read first when it has none). Nil when
    /// the locked path must decide: the fence was stale, the integration threw (a stale fence may
    /// be why) or did not come to exactly one changeset of the uploader's.
    private func integrateUnlocked(
        realmID: Int64, fileIdent: Int64, historyAfter: Int64, _ integrate: @Sendable (IntegrationInput) throws -> [Changeset]
    ) async throws -> IntegrationResult? {
        let fence: PostgresUploadFence
        if let known = uploadFences.withLock({ $0.fence(realmID: realmID, fileIdent: fileIdent) }) {
            fence = known
        } else {
            var read: PostgresUploadFence?
            for try await (latest, epoch, compacted, last) in try await client.execute(
                PostgresStatements.ReadUploadFence(realmID: realmID, fileIdent: fileIdent), logger: logger) {
                guard let last else { continue }
                read = PostgresUploadFence(latestServerVersion: latest, epoch: SyncEpoch(rawValue: UInt64(bitPattern: epoch)),
                                           compactedThrough: compacted, lastClientVersion: last)
            }
            guard let read else { return nil }  // no such realm or file: the locked path says which
            fence = read
        }
        // Entries are never changed once written; a compaction or restart changes the fence.
        let after = historyAfter < fence.latestServerVersion
            ? try await client.withConnection { [logger] connection in
                try await Self.readHistory(connection, realmID: realmID, after: historyAfter, through: fence.latestServerVersion, logger: logger)
            }
            : []
        let input = IntegrationInput(
            historyAfterBase: after, historyAfter: historyAfter, lastIntegratedClientVersion: fence.lastClientVersion,
            latestServerVersion: fence.latestServerVersion, epoch: fence.epoch, compactedThrough: fence.compactedThrough)
        guard let changesets = try? integrate(input), changesets.count == 1,
              changesets[0].fileIdent != IntegrationInput.serverAuthored
        else { return nil }
        let result = IntegrationResult.stamping(changesets, fileIdent: fileIdent, after: fence.latestServerVersion,
                                                lastIntegratedClientVersion: fence.lastClientVersion)
        let row = PostgresStatements.Entry(realmID: realmID, result.appended[0])
        var appended = false
        for try await _ in try await client.execute(PostgresStatements.AppendIfUnchanged(
            entry: row, uploaderFileIdent: fileIdent, uploaderClientVersion: result.lastIntegratedClientVersion, fence: fence),
            logger: logger) { appended = true }
        guard appended else {
            uploadFences.withLock { $0.forget(realmID: realmID) }
            return nil
        }
        announcer.announce(notification(payload: StoreChange.historyLine(
            realmID: realmID, epoch: fence.epoch, latestServerVersion: result.latestServerVersion,
            encoded: [(row.serverVersion, row.changeset)])))
        var moved = fence
        moved.latestServerVersion = result.latestServerVersion
        moved.lastClientVersion = result.lastIntegratedClientVersion
        uploadFences.withLock { $0.remember(moved, realmID: realmID, fileIdent: fileIdent) }
        return result
    }

    /// The integration in a transaction that holds the realm's row lock from its first read.
    private func integrateLocked(
        realmID: Int64, fileIdent: Int64, historyAfter: Int64, _ integrate: @Sendable (IntegrationInput) throws -> [Changeset]
    ) async throws -> IntegrationResult {
        let (result, fence, rows) = try await transaction { connection in
            var locked: PostgresStatements.LockRealmForUpload.Row?
            for try await row in try await connection.execute(
                PostgresStatements.LockRealmForUpload(realmID: realmID, fileIdent: fileIdent), logger: logger) { locked = row }
            guard let (latest, epoch, compactedThrough, fileVersion) = locked else {
                throw ServerStoreError(.notFound, "no realm \(realmID)")
            }
            guard let lastClientVersion = fileVersion else { throw ServerStoreError(.notFound, "no client file \(fileIdent) in realm \(realmID)") }
            let after = historyAfter < latest
                ? try await Self.readHistory(connection, realmID: realmID, after: historyAfter, logger: logger) : []
            let input = IntegrationInput(
                historyAfterBase: after, historyAfter: historyAfter, lastIntegratedClientVersion: lastClientVersion,
                latestServerVersion: latest, epoch: SyncEpoch(rawValue: UInt64(bitPattern: epoch)), compactedThrough: compactedThrough)
            let result = IntegrationResult.stamping(
                try integrate(input), fileIdent: fileIdent, after: latest, lastIntegratedClientVersion: lastClientVersion)
            // Each changeset encoded once, for its row and for the announcement.
            let rows = result.appended.map { PostgresStatements.Entry(realmID: realmID, $0) }
            for row in rows.dropLast() {
                for try await _ in try await connection.execute(PostgresStatements.InsertEntry(entry: row), logger: logger) {}
            }
            if let last = rows.last {
                // The last entry and the realm's and the file's versions in one round trip.
                for try await _ in try await connection.execute(PostgresStatements.AppendLastEntry(
                    entry: last, uploaderFileIdent: fileIdent, uploaderClientVersion: result.lastIntegratedClientVersion),
                    logger: logger) {}
            }
            let fence = PostgresUploadFence(latestServerVersion: result.latestServerVersion, epoch: input.epoch,
                                            compactedThrough: compactedThrough, lastClientVersion: result.lastIntegratedClientVersion)
            return (result, fence, rows)
        }
        uploadFences.withLock { $0.remember(fence, realmID: realmID, fileIdent: fileIdent) }
        if !rows.isEmpty {
            announcer.announce(notification(payload: StoreChange.historyLine(
                realmID: realmID, epoch: fence.epoch, latestServerVersion: result.latestServerVersion,
                encoded: rows.map { ($0.serverVersion, $0.changeset) })))
        }
        return result
    }
}

/// What an upload's one-statement append checks the realm and the uploading file against.
struct PostgresUploadFence: Sendable, Equatable {
    var latestServerVersion: Int64
    var epoch: SyncEpoch
    var compactedThrough: Int64
    var lastClientVersion: Int64
}

/// The fences a node knows, bounded: a miss costs one read, a stale entry one failed statement.
struct PostgresUploadFences: Sendable {
    private struct Realm: Sendable {
        var latestServerVersion: Int64
        var epoch: SyncEpoch
        var compactedThrough: Int64
        var files: [Int64: Int64]
    }

    static let maxRealms = 10_000
    static let maxFilesPerRealm = 64

    private var realms: [Int64: Realm] = [:]

    var count: Int { realms.count }

    func fence(realmID: Int64, fileIdent: Int64) -> PostgresUploadFence? {
        guard let realm = realms[realmID], let last = realm.files[fileIdent] else { return nil }
        return PostgresUploadFence(latestServerVersion: realm.latestServerVersion, epoch: realm.epoch,
                                   compactedThrough: realm.compactedThrough, lastClientVersion: last)
    }

    /// The realm as an integration left it. Other files' versions stay (an append moves only the
    /// uploader's) unless the realm itself changed in a way an append does not (epoch, compaction).
    mutating func remember(_ fence: PostgresUploadFence, realmID: Int64, fileIdent: Int64) {
        var realm = realms[realmID] ?? Realm(latestServerVersion: 0, epoch: fence.epoch, compactedThrough: fence.compactedThrough, files: [:])
        if realm.epoch != fence.epoch || realm.compactedThrough != fence.compactedThrough { realm.files = [:] }
        if realm.files[fileIdent] == nil, realm.files.count >= Self.maxFilesPerRealm { realm.files = [:] }
        realm.latestServerVersion = fence.latestServerVersion
        realm.epoch = fence.epoch
        realm.compactedThrough = fence.compactedThrough
        realm.files[fileIdent] = fence.lastClientVersion
        if realms[realmID] == nil, realms.count >= Self.maxRealms { realms = [:] }
        realms[realmID] = realm
    }

    mutating func forget(realmID: Int64) { realms[realmID] = nil }
}
