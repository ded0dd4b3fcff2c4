import AtollCore
import Foundation
import Logging
import PostgresNIO

extension PostgresServerStore {
    // MARK: Realms

    static let realmColumns = "id, app_id, path, epoch, created_at, epoch_reason, compacted_through"
    typealias RealmRow = (Int64, String, String, Int64, Double, Int16, Int64)

    static func realm(_ row: RealmRow) -> StoredRealm {
        StoredRealm(
            id: row.0, appID: row.1, path: row.2, epoch: SyncEpoch(rawValue: UInt64(bitPattern: row.3)),
            createdAt: Date(timeIntervalSince1970: row.4),
            epochReason: ResetReason(rawValue: UInt8(clamping: row.5)) ?? .epochChanged, compactedThrough: row.6)
    }

    static func fetchRealm(_ connection: PostgresConnection, appID: String, path: String, logger: Logger) async throws -> StoredRealm? {
        for row in try await connection.query(
            "SELECT \(unescaped: realmColumns) FROM realms WHERE app_id = \(appID) AND path = \(path)", logger: logger
        ).collect().map({ try $0.decode(RealmRow.self) }) { return realm(row) }
        return nil
    }

    package func realm(appID: String, path: String, creatingWith epoch: SyncEpoch, now: Date, creator: String?, maxPerCreator: Int?)
        async throws -> StoredRealm
    {
        if let existing = try await client.withConnection({ connection in
            try await Self.fetchRealm(connection, appID: appID, path: path, logger: logger)
        }) { return existing }
        return try await transaction { connection in
            if let creator, let maxPerCreator {
                // One creation of a user at a time, on every node, so the limit holds exactly.
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.userLockClass), hashtext(\(creator)))", logger: logger)
                if let existing = try await Self.fetchRealm(connection, appID: appID, path: path, logger: logger) { return existing }
                var count = 0
                for n in try await connection.query(
                    "SELECT COUNT(*) FROM realms WHERE app_id = \(appID) AND created_by = \(creator)", logger: logger
                ).collect().map({ try $0.decode(Int.self) }) { count = n }
                guard count < maxPerCreator else {
                    throw ServerStoreError(.limitExceeded, "user \(creator) made \(count) realms of app \(appID), the most allowed (\(maxPerCreator))")
                }
            }
            do {
                // Two nodes racing: one insert wins, the other does nothing and reads the winner's row.
                try await connection.query(
                    """
                    INSERT INTO realms (app_id, path, epoch, created_at, created_by)
                    VALUES (\(appID), \(path), \(Int64(bitPattern: epoch.rawValue)), \(now.timeIntervalSince1970), \(creator))
                    ON CONFLICT (app_id, path) DO NOTHING
                    """, logger: logger)
            } catch where Self.isForeignKeyViolation(error) {
                throw ServerStoreError(.missingOwner, "no app \(appID)")
            }
            guard let realm = try await Self.fetchRealm(connection, appID: appID, path: path, logger: logger) else {
                throw ServerStoreError(.notFound, "the realm \(path) of \(appID) went away as it was made")
            }
            return realm
        }
    }

    package func realms(appID: String) async throws -> [StoredRealm] {
        var realms: [StoredRealm] = []
        for row in try await client.query(
            "SELECT \(unescaped: Self.realmColumns) FROM realms WHERE app_id = \(appID) ORDER BY id", logger: logger
        ).collect().map({ try $0.decode(RealmRow.self) }) { realms.append(Self.realm(row)) }
        return realms
    }

    package func latestServerVersion(realmID: Int64) async throws -> Int64 {
        for try await version in try await client.execute(PostgresStatements.LatestVersion(realmID: realmID), logger: logger) {
            return version
        }
        throw ServerStoreError(.notFound, "no realm \(realmID)")
    }

    package func latestServerVersions(realmIDs: [Int64]) async throws -> [Int64: Int64] {
        var versions: [Int64: Int64] = [:]
        guard !realmIDs.isEmpty else { return versions }
        for try await (id, version) in try await client.execute(PostgresStatements.LatestVersions(realmIDs: realmIDs), logger: logger) {
            versions[id] = version
        }
        return versions
    }

    /// Locks the realm's row for the rest of the transaction (every writer of its history takes
    /// this lock first, on every node) and returns its latest version, epoch and compaction point.
    static func lockRealm(_ connection: PostgresConnection, _ realmID: Int64, logger: Logger) async throws
        -> (latest: Int64, epoch: SyncEpoch, compactedThrough: Int64)
    {
        for (latest, epoch, compacted) in try await connection.query(
            "SELECT latest_version, epoch, compacted_through FROM realms WHERE id = \(realmID) FOR UPDATE", logger: logger
        ).collect().map({ try $0.decode((Int64, Int64, Int64).self) }) {
            return (latest, SyncEpoch(rawValue: UInt64(bitPattern: epoch)), compacted)
        }
        throw ServerStoreError(.notFound, "no realm \(realmID)")
    }

    // MARK: Client files

    package func newClientFile(realmID: Int64, salt: Int64, now: Date, userID: String?, maxPerUser: Int?) async throws -> StoredClientFile {
        try await transaction { connection in
            if let userID, let maxPerUser {
                // One registration of a user at a time, on every node, so the limit holds exactly.
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.userLockClass), hashtext(\(userID)))", logger: logger)
                var count = 0
                for n in try await connection.query(
                    "SELECT COUNT(*) FROM client_files WHERE user_id = \(userID)", logger: logger
                ).collect().map({ try $0.decode(Int.self) }) { count = n }
                guard count < maxPerUser else {
                    throw ServerStoreError(.limitExceeded, "user \(userID) has \(count) client files, the most allowed (\(maxPerUser))")
                }
            }
            var ident: Int64?
            for next in try await connection.query(
                "UPDATE realms SET next_file_ident = next_file_ident + 1 WHERE id = \(realmID) RETURNING next_file_ident - 1",
                logger: logger
            ).collect().map({ try $0.decode(Int64.self) }) { ident = next }
            guard let ident else { throw ServerStoreError(.notFound, "no realm \(realmID)") }
            try await connection.query(
                """
                INSERT INTO client_files (realm_id, ident, salt, created_at, last_seen, user_id)
                VALUES (\(realmID), \(ident), \(salt), \(now.timeIntervalSince1970), \(now.timeIntervalSince1970), \(userID))
                """, logger: logger)
            return StoredClientFile(realmID: realmID, ident: FileIdent(ident: ident, salt: salt), lastIntegratedClientVersion: 0, createdAt: now)
        }
    }

    /// The first key of the advisory locks taken per user (the second is the id's hash).
    static let userLockClass: Int32 = 0x4174_6F01

    package func clientFile(realmID: Int64, ident: Int64) async throws -> StoredClientFile? {
        for row in try await client.query(
            """
            SELECT salt, last_client_version, created_at, last_seen, last_server_version
            FROM client_files WHERE realm_id = \(realmID) AND ident = \(ident)
            """, logger: logger
        ).collect().map({ try $0.decode((Int64, Int64, Double, Double?, Int64).self) }) {
            return StoredClientFile(
                realmID: realmID, ident: FileIdent(ident: ident, salt: row.0), lastIntegratedClientVersion: row.1,
                createdAt: Date(timeIntervalSince1970: row.2), lastSeen: row.3.map(Date.init(timeIntervalSince1970:)),
                lastServerVersion: row.4)
        }
        return nil
    }

    // MARK: History

    /// Entries read per query while paging through history.
    static let historyPage = 256

    package func history(realmID: Int64, after serverVersion: Int64, maxBytes: Int) async throws -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        var bytes = 0
        var after = serverVersion
        while true {
            var read = 0
            for try await (version, data) in try await client.execute(
                PostgresStatements.HistoryPage(realmID: realmID, after: after, limit: Int64(Self.historyPage)), logger: logger
            ) {
                read += 1
                after = version
                // As SQLite's: the entry that reaches maxBytes is in, so a page holds at least one.
                guard bytes < maxBytes || entries.isEmpty else { continue }
                entries.append(try HistoryEntry.stored(serverVersion: version, data))
                bytes += data.count
            }
            if read < Self.historyPage || bytes >= maxBytes { return entries }
        }
    }

    /// Every history entry of a realm after `serverVersion` (through `through` when given), in order.
    static func readHistory(_ connection: PostgresConnection, realmID: Int64, after serverVersion: Int64, through: Int64 = .max,
                            logger: Logger) async throws -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        for (version, data) in try await connection.query(
            """
            SELECT server_version, changeset FROM history
            WHERE realm_id = \(realmID) AND server_version > \(serverVersion) AND server_version <= \(through)
            ORDER BY server_version
            """, logger: logger
        ).collect().map({ try $0.decode((Int64, Data).self) }) {
            entries.append(try HistoryEntry.stored(serverVersion: version, data))
        }
        return entries
    }

    package func lastClientVersion(realmID: Int64, fileIdent: Int64, atOrBefore serverVersion: Int64) async throws -> Int64 {
        // Changesets a compaction folded into its snapshot count through `compacted_client_version`.
        for version in try await client.query(
            """
            SELECT GREATEST(
                COALESCE((SELECT MAX(origin_client_version) FROM history
                          WHERE realm_id = \(realmID) AND origin_file_ident = \(fileIdent) AND server_version <= \(serverVersion)), 0),
                COALESCE((SELECT f.compacted_client_version FROM client_files f JOIN realms r ON r.id = f.realm_id
                          WHERE f.realm_id = \(realmID) AND f.ident = \(fileIdent) AND r.compacted_through <= \(serverVersion)), 0))
            """, logger: logger
        ).collect().map({ try $0.decode(Int64.self) }) { return version }
        return 0
    }

    static func insertEntry(_ connection: PostgresConnection, realmID: Int64, serverVersion: Int64, fileIdent: Int64,
                            clientVersion: Int64, timestamp: Int64, changeset: Data, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset)
            VALUES (\(realmID), \(serverVersion), \(fileIdent), \(clientVersion), \(timestamp), \(changeset))
            """, logger: logger)
    }

    // MARK: Restarting history

    package func restartHistory(realmID: Int64, epoch: SyncEpoch, reason: ResetReason, snapshot: Changeset) async throws {
        try await transaction { connection in
            _ = try await Self.lockRealm(connection, realmID, logger: logger)
            try await Self.restartHistory(connection, realmID: realmID, epoch: epoch, reason: reason, snapshot: snapshot, logger: logger)
        }
    }

    package func rewriteHistory(realmID: Int64, epoch: SyncEpoch, reason: ResetReason,
                               _ rewrite: @Sendable ([HistoryEntry]) throws -> Changeset?) async throws -> Bool {
        try await transaction { connection in
            _ = try await Self.lockRealm(connection, realmID, logger: logger)
            let entries = try await Self.readHistory(connection, realmID: realmID, after: 0, logger: logger)
            guard let snapshot = try rewrite(entries) else { return false }
            try await Self.restartHistory(connection, realmID: realmID, epoch: epoch, reason: reason, snapshot: snapshot, logger: logger)
            return true
        }
    }

    static func restartHistory(_ connection: PostgresConnection, realmID: Int64, epoch: SyncEpoch, reason: ResetReason,
                               snapshot: Changeset, logger: Logger) async throws {
        try await connection.query("DELETE FROM history WHERE realm_id = \(realmID)", logger: logger)
        try await connection.query("DELETE FROM client_files WHERE realm_id = \(realmID)", logger: logger)
        let hasData = !snapshot.instructions.isEmpty
        if hasData {
            try await insertEntry(connection, realmID: realmID, serverVersion: 1, fileIdent: 0, clientVersion: 0,
                                  timestamp: snapshot.timestamp, changeset: snapshot.encoded(), logger: logger)
        }
        try await connection.query(
            """
            UPDATE realms SET epoch = \(Int64(bitPattern: epoch.rawValue)), epoch_reason = \(Int16(reason.rawValue)),
                              latest_version = \(hasData ? Int64(1) : 0), compacted_through = 0
            WHERE id = \(realmID)
            """, logger: logger)
    }
}
