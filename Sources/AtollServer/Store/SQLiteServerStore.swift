import AtollCore
import Foundation
import GRDB

/// The embedded ``ServerStore``: one SQLite file in WAL mode through a GRDB `DatabasePool`, so reads run
/// alongside the single writer.
///
/// ```swift
/// let store = try SQLiteServerStore(path: dataDirectory.appendingPathComponent("atoll.sqlite").path)
/// ```
package final class SQLiteServerStore: ServerStore {
    let pool: DatabasePool
    /// Every write transaction goes through it, so writes that queue share one commit.
    let writer: SQLiteGroupCommit

    /// Opens (creating if needed) the store at `path` and brings its tables up to date.
    ///
    /// - Parameter durability: `.full` (the default) syncs every commit, so an acknowledged upload
    ///   survives a power loss; `.normal` survives a crash of the process only.
    package init(path: String, durability: ServerConfiguration.Durability = .full) throws {
        var configuration = Configuration()
        configuration.label = "atoll-server"
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try Self.setDurability(durability, db) }
        pool = try DatabasePool(path: path, configuration: configuration)
        // GRDB sets its WAL writer to NORMAL after `prepareDatabase`: set it on the writer itself.
        try pool.writeWithoutTransaction { try Self.setDurability(durability, $0) }
        try Self.migrator.migrate(pool)
        writer = SQLiteGroupCommit(pool: pool)
    }

    /// `.full`: `synchronous = FULL` syncs the log at every commit; on Apple platforms
    /// `fullfsync` makes those syncs (and the checkpoints') reach the medium, not only the drive's
    /// cache (plain `fsync` there survives a crash of the system, not a power loss).
    static func setDurability(_ durability: ServerConfiguration.Durability, _ db: Database) throws {
        try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
        #if canImport(Darwin)
        if durability == .full {
            try db.execute(sql: "PRAGMA fullfsync = ON")
            try db.execute(sql: "PRAGMA checkpoint_fullfsync = ON")
        }
        #endif
    }

    /// Closes the database. The store must not be used afterwards.
    package func close() throws {
        try pool.close()
    }

    package func shutdown() async {
        try? close()
    }

    package func checkReachable() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    // MARK: Apps

    package func app(id: String) async throws -> StoredApp? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM apps WHERE id = ?", arguments: [id]).map(Self.app)
        }
    }

    package func apps() async throws -> [StoredApp] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM apps ORDER BY id").map(Self.app)
        }
    }

    private static func app(_ row: Row) -> StoredApp {
        StoredApp(id: row["id"], createdAt: Date(timeIntervalSince1970: row["created_at"]), syncEnabled: row["sync_enabled"],
                  clientRecovery: row["client_recovery"], maxOfflineTime: row["max_offline_time"])
    }

    package func setSyncEnabled(appID: String, _ enabled: Bool) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "UPDATE apps SET sync_enabled = ? WHERE id = ?", arguments: [enabled, appID])
            return db.changesCount > 0
        }
    }

    package func realms(appID: String) async throws -> [StoredRealm] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM realms WHERE app_id = ? ORDER BY id", arguments: [appID]).map(Self.realm)
        }
    }

    package func restartHistory(realmID: Int64, epoch: SyncEpoch, reason: ResetReason, snapshot: Changeset) async throws {
        try await writer.write { db in try Self.restartHistory(db, realmID: realmID, epoch: epoch, reason: reason, snapshot: snapshot) }
    }

    package func rewriteHistory(realmID: Int64, epoch: SyncEpoch, reason: ResetReason,
                               _ rewrite: @Sendable ([HistoryEntry]) throws -> Changeset?) async throws -> Bool {
        try await writer.write { db in
            let rows = try Row.fetchCursor(
                db, sql: "SELECT server_version, changeset FROM history WHERE realm_id = ? ORDER BY server_version", arguments: [realmID])
            var entries: [HistoryEntry] = []
            while let row = try rows.next() { entries.append(try HistoryEntry.stored(serverVersion: row["server_version"], row["changeset"])) }
            guard let snapshot = try rewrite(entries) else { return false }
            try Self.restartHistory(db, realmID: realmID, epoch: epoch, reason: reason, snapshot: snapshot)
            return true
        }
    }

    static func restartHistory(_ db: Database, realmID: Int64, epoch: SyncEpoch, reason: ResetReason, snapshot: Changeset) throws {
        try db.execute(sql: "DELETE FROM history WHERE realm_id = ?", arguments: [realmID])
        try db.execute(sql: "DELETE FROM client_files WHERE realm_id = ?", arguments: [realmID])
        let hasData = !snapshot.instructions.isEmpty
        if hasData {
            try db.execute(
                sql: """
                    INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset)
                    VALUES (?, 1, 0, 0, ?, ?)
                    """,
                arguments: [realmID, snapshot.timestamp, snapshot.encoded()])
        }
        try db.execute(sql: "UPDATE realms SET epoch = ?, epoch_reason = ?, latest_version = ?, compacted_through = 0 WHERE id = ?",
                       arguments: [Int64(bitPattern: epoch.rawValue), reason.rawValue, hasData ? 1 : 0, realmID])
    }

    package func createApp(_ app: StoredApp) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO apps (id, created_at, sync_enabled, client_recovery, max_offline_time)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [app.id, app.createdAt.timeIntervalSince1970, app.syncEnabled, app.clientRecovery, app.maxOfflineTime])
        }
    }

    // MARK: Users

    package func user(id: String) async throws -> StoredUser? {
        try await pool.read { db in try Self.fetchUser(db, id: id) }
    }

    package func user(appID: String, providerType: String, identityID: String) async throws -> StoredUser? {
        try await pool.read { db in
            let userID = try String.fetchOne(
                db,
                sql: "SELECT user_id FROM identities WHERE app_id = ? AND provider_type = ? AND identity_id = ?",
                arguments: [appID, providerType, identityID])
            return try userID.flatMap { try Self.fetchUser(db, id: $0) }
        }
    }

    package func createUser(_ user: StoredUser) async throws {
        try await writer.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [user.appID]) == true else {
                throw ServerStoreError(.missingOwner, "no app \(user.appID)")
            }
            try db.execute(
                sql: """
                    INSERT INTO users (id, app_id, email, name, disabled, created_at, metadata)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [user.id, user.appID, user.email, user.name, user.disabled, user.createdAt.timeIntervalSince1970,
                            user.metadataText])
            try Self.insertIdentities(db, of: user)
        }
    }

    /// Inserts a new user's identities in order; a taken one is `.duplicateIdentity`.
    static func insertIdentities(_ db: Database, of user: StoredUser) throws {
        for (position, identity) in user.identities.enumerated() {
            do {
                try db.execute(
                    sql: """
                        INSERT INTO identities (app_id, provider_type, identity_id, user_id, position, password_hash)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [user.appID, identity.providerType, identity.id, user.id, position, identity.passwordHash])
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                throw ServerStoreError(.duplicateIdentity, "the \(identity.providerType) identity is taken")
            }
        }
    }

    package func setUserMetadata(id: String, _ metadata: [String: JSONValue]) async throws -> Bool {
        let text = StoredUser(id: id, appID: "", identities: [], createdAt: Date(), metadata: metadata).metadataText
        return try await writer.write { db in
            try db.execute(sql: "UPDATE users SET metadata = ? WHERE id = ?", arguments: [text, id])
            return db.changesCount > 0
        }
    }

    package func setUserDisabled(id: String, disabled: Bool) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "UPDATE users SET disabled = ? WHERE id = ?", arguments: [disabled, id])
            return db.changesCount > 0
        }
    }

    package func deleteUser(id: String) async throws -> Bool {
        // Identities, refresh tokens and API keys go with the user (ON DELETE CASCADE).
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    package func users(appID: String) async throws -> [StoredUser] {
        try await pool.read { db in
            let ids = try String.fetchAll(
                db, sql: "SELECT id FROM users WHERE app_id = ? ORDER BY created_at, id", arguments: [appID])
            return try ids.compactMap { try Self.fetchUser(db, id: $0) }
        }
    }

    static func fetchUser(_ db: Database, id: String) throws -> StoredUser? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [id]) else {
            return nil
        }
        let identities = try Row.fetchAll(
            db,
            sql: "SELECT provider_type, identity_id, password_hash FROM identities WHERE user_id = ? ORDER BY position",
            arguments: [id]
        ).map { StoredIdentity(id: $0["identity_id"], providerType: $0["provider_type"], passwordHash: $0["password_hash"]) }
        return StoredUser(
            id: row["id"], appID: row["app_id"], identities: identities, email: row["email"], name: row["name"],
            disabled: row["disabled"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]), metadata: StoredUser.metadata(row["metadata"]))
    }
}
