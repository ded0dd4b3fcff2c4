import AtollCore
import Foundation
import GRDB

extension SQLiteServerStore {
    // MARK: Realms

    package func realm(appID: String, path: String, creatingWith epoch: SyncEpoch, now: Date, creator: String?, maxPerCreator: Int?)
        async throws -> StoredRealm
    {
        if let existing = try await pool.read({ db in try Self.fetchRealm(db, appID: appID, path: path) }) { return existing }
        return try await writer.write { db in
            if let existing = try Self.fetchRealm(db, appID: appID, path: path) { return existing }
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM apps WHERE id = ?"), arguments: [appID]) == true else {
                throw ServerStoreError(.missingOwner, "no app \(appID)")
            }
            if let creator, let maxPerCreator {
                let count = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM realms WHERE app_id = ? AND created_by = ?"), arguments: [appID, creator]) ?? 0
                guard count < maxPerCreator else {
                    throw ServerStoreError(.limitExceeded, "user \(creator) made \(count) realms of app \(appID), the most allowed (\(maxPerCreator))")
                }
            }
            try db.cachedStatement(
                sql: "INSERT INTO realms (app_id, path, epoch, created_at, created_by) VALUES (?, ?, ?, ?, ?)").execute(
                arguments: [appID, path, Int64(bitPattern: epoch.rawValue), now.timeIntervalSince1970, creator])
            return StoredRealm(id: db.lastInsertedRowID, appID: appID, path: path, epoch: epoch, createdAt: now)
        }
    }

    static func fetchRealm(_ db: Database, appID: String, path: String) throws -> StoredRealm? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM realms WHERE app_id = ? AND path = ?"), arguments: [appID, path]).map(realm)
    }

    static func realm(_ row: Row) -> StoredRealm {
        StoredRealm(
            id: row["id"], appID: row["app_id"], path: row["path"], epoch: SyncEpoch(rawValue: UInt64(bitPattern: row["epoch"])),
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            epochReason: ResetReason(rawValue: row["epoch_reason"]) ?? .epochChanged, compactedThrough: row["compacted_through"])
    }

    package func latestServerVersion(realmID: Int64) async throws -> Int64 {
        try await pool.read { db in try Self.latestVersion(db, realmID: realmID) }
    }

    static func latestVersion(_ db: Database, realmID: Int64) throws -> Int64 {
        guard let version = try Int64.fetchOne(db.cachedStatement(sql: "SELECT latest_version FROM realms WHERE id = ?"), arguments: [realmID])
        else { throw ServerStoreError(.notFound, "no realm \(realmID)") }
        return version
    }

    // MARK: Client files

    package func newClientFile(realmID: Int64, salt: Int64, now: Date, userID: String?, maxPerUser: Int?) async throws -> StoredClientFile {
        try await writer.write { db in
            if let userID, let maxPerUser {
                let count = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM client_files WHERE user_id = ?"), arguments: [userID]) ?? 0
                guard count < maxPerUser else {
                    throw ServerStoreError(.limitExceeded, "user \(userID) has \(count) client files, the most allowed (\(maxPerUser))")
                }
            }
            guard let ident = try Int64.fetchOne(db.cachedStatement(sql: "SELECT next_file_ident FROM realms WHERE id = ?"), arguments: [realmID])
            else { throw ServerStoreError(.notFound, "no realm \(realmID)") }
            try db.cachedStatement(sql: "UPDATE realms SET next_file_ident = ? WHERE id = ?").execute(arguments: [ident + 1, realmID])
            try db.cachedStatement(
                sql: "INSERT INTO client_files (realm_id, ident, salt, created_at, last_seen, user_id) VALUES (?, ?, ?, ?, ?, ?)").execute(
                arguments: [realmID, ident, salt, now.timeIntervalSince1970, now.timeIntervalSince1970, userID])
            return StoredClientFile(
                realmID: realmID, ident: FileIdent(ident: ident, salt: salt), lastIntegratedClientVersion: 0, createdAt: now)
        }
    }

    package func clientFile(realmID: Int64, ident: Int64) async throws -> StoredClientFile? {
        try await pool.read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM client_files WHERE realm_id = ? AND ident = ?"), arguments: [realmID, ident]
            ).map {
                StoredClientFile(
                    realmID: realmID, ident: FileIdent(ident: ident, salt: $0["salt"]),
                    lastIntegratedClientVersion: $0["last_client_version"],
                    createdAt: Date(timeIntervalSince1970: $0["created_at"]),
                    lastSeen: ($0["last_seen"] as Double?).map(Date.init(timeIntervalSince1970:)),
                    lastServerVersion: $0["last_server_version"])
            }
        }
    }

    // MARK: History

    package func history(realmID: Int64, after serverVersion: Int64, maxBytes: Int) async throws -> [HistoryEntry] {
        try await pool.read { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT server_version, changeset FROM history WHERE realm_id = ? AND server_version > ? ORDER BY server_version"),
                arguments: [realmID, serverVersion])
            var entries: [HistoryEntry] = []
            var bytes = 0
            while let row = try rows.next() {
                let data: Data = row["changeset"]
                entries.append(try HistoryEntry.stored(serverVersion: row["server_version"], data))
                bytes += data.count
                if bytes >= maxBytes { break }
            }
            return entries
        }
    }

    package func lastClientVersion(realmID: Int64, fileIdent: Int64, atOrBefore serverVersion: Int64) async throws -> Int64 {
        // Changesets a compaction folded into its snapshot count through `compacted_client_version`.
        try await pool.read { db in
            let inHistory = try Int64.fetchOne(db.cachedStatement(sql: """
                    SELECT MAX(origin_client_version) FROM history
                    WHERE realm_id = ? AND origin_file_ident = ? AND server_version <= ?
                    """),
                arguments: [realmID, fileIdent, serverVersion]) ?? 0
            let compacted = try Int64.fetchOne(db.cachedStatement(sql: """
                    SELECT f.compacted_client_version FROM client_files f JOIN realms r ON r.id = f.realm_id
                    WHERE f.realm_id = ? AND f.ident = ? AND r.compacted_through <= ?
                    """),
                arguments: [realmID, fileIdent, serverVersion]) ?? 0
            return max(inHistory, compacted)
        }
    }

    package func integrate(
        realmID: Int64, fileIdent: Int64, baseServerVersion: Int64, historyAfter: Int64,
        _ integrate: @Sendable (IntegrationInput) throws -> [Changeset]
    ) async throws -> IntegrationResult {
        let from = historyAfter
        return try await writer.write { db in
            let latest = try Self.latestVersion(db, realmID: realmID)
            guard
                let lastClientVersion = try Int64.fetchOne(db.cachedStatement(sql: "SELECT last_client_version FROM client_files WHERE realm_id = ? AND ident = ?"),
                    arguments: [realmID, fileIdent])
            else { throw ServerStoreError(.notFound, "no client file \(fileIdent) in realm \(realmID)") }
            var after: [HistoryEntry] = []
            if from < latest {
                let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT server_version, changeset FROM history WHERE realm_id = ? AND server_version > ? ORDER BY server_version"),
                    arguments: [realmID, from])
                while let row = try rows.next() {
                    after.append(try HistoryEntry.stored(serverVersion: row["server_version"], row["changeset"]))
                }
            }
            let realm = try Row.fetchOne(db.cachedStatement(sql: "SELECT epoch, compacted_through FROM realms WHERE id = ?"), arguments: [realmID])
            let input = IntegrationInput(
                historyAfterBase: after, historyAfter: from, lastIntegratedClientVersion: lastClientVersion, latestServerVersion: latest,
                epoch: SyncEpoch(rawValue: UInt64(bitPattern: realm?["epoch"] ?? 0)), compactedThrough: realm?["compacted_through"] ?? 0)
            var result = IntegrationResult.stamping(
                try integrate(input), fileIdent: fileIdent, after: latest, lastIntegratedClientVersion: lastClientVersion)
            // Encoded once here; the fan-out sends these same bytes to every session.
            for i in result.appended.indices { result.appended[i].encodeOnce() }
            for entry in result.appended {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version,
                                             origin_timestamp, changeset)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """).execute(
                    arguments: [realmID, entry.serverVersion, entry.changeset.fileIdent, entry.changeset.version,
                                entry.changeset.timestamp, entry.encoded])
            }
            if !result.appended.isEmpty {
                try db.cachedStatement(sql: "UPDATE realms SET latest_version = ? WHERE id = ?").execute(arguments: [result.latestServerVersion, realmID])
                try db.cachedStatement(
                    sql: "UPDATE client_files SET last_client_version = ? WHERE realm_id = ? AND ident = ?").execute(
                    arguments: [result.lastIntegratedClientVersion, realmID, fileIdent])
            }
            return result
        }
    }
}
