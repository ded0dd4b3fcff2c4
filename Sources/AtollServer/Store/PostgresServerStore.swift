import AtollCore
import Foundation
import Logging
import PostgresNIO

/// The ``ServerStore`` for scale-out: every table in one PostgreSQL database, reached through a
/// postgres-nio connection pool, so that several `atoll-server` nodes can serve the same apps.
///
/// Integration is serialised per realm across nodes by a row lock on the realm (`SELECT … FOR
/// UPDATE` at the start of each transaction that appends history or hands out idents): two nodes
/// integrating uploads to one realm at once produce one history with consecutive versions, as one
/// node would. The schema is brought up to date when the store opens (``PostgresMigrations``).
///
/// ```swift
/// let store = try await PostgresServerStore.open(url: "postgres://atoll@db.internal/atoll", logger: logger)
/// defer { await store.shutdown() }
/// ```
package final class PostgresServerStore: ServerStore {
    let client: PostgresClient
    let logger: Logger
    /// This store's id among the nodes on the database: its own change notifications are skipped.
    let nodeID = UUID().uuidString
    /// Told the lag of each notification heard (``observeNotificationLag(_:)``).
    let lagObserver = Locked<(@Sendable (Duration) -> Void)?>(nil)
    /// What this node last knew of the realms it integrated into, for the one-statement append
    /// (``integrate(realmID:fileIdent:baseServerVersion:historyAfter:_:)``).
    let uploadFences = Locked(PostgresUploadFences())
    /// Seals and opens the nodes' announcements (set once the token secret is known).
    let announcementSeal = Locked<AnnouncementSeal?>(nil)
    /// Told the reason of each notification ignored as not authentic.
    let rejectionObserver = Locked<(@Sendable (String) -> Void)?>(nil)
    /// When a rejected notification was last logged (ms since 1970): at most one warning a minute.
    let rejectionWarned = Locked<Int64>(0)
    /// Sends this node's history announcements after their commits.
    let announcer: PostgresAnnouncer
    /// The task running the pool (`PostgresClient.run()`); cancelled by ``shutdown()``.
    private let runner: Task<Void, Never>

    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, with
    /// `?sslmode=require` or `disable`; see ``PostgresURL``) and migrates its schema.
    /// - Throws: ``PostgresStoreError`` for a URL it cannot read or a database whose schema is newer
    ///   than this binary; postgres-nio's `PSQLError` when the server cannot be reached.
    package static func open(url: String, maximumConnections: Int = 20, logger: Logger) async throws -> PostgresServerStore {
        var configuration = try PostgresURL(url).clientConfiguration()
        configuration.options.maximumConnections = maximumConnections
        let store = PostgresServerStore(configuration: configuration, logger: logger)
        do {
            try await PostgresMigrations.migrate(store.client, logger: logger)
        } catch {
            await store.shutdown()
            throw error
        }
        return store
    }

    init(configuration: PostgresClient.Configuration, logger: Logger) {
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        announcer = PostgresAnnouncer(client: client, channel: Self.changeChannel, logger: logger)
        runner = Task { await client.run() }
    }

    /// Closes the pool's connections. The store must not be used afterwards.
    package func shutdown() async {
        await announcer.finish()
        runner.cancel()
        await runner.value
    }

    package func checkReachable() async throws {
        _ = try await client.query("SELECT 1", logger: logger).collect()
    }

    // MARK: Helpers

    /// Runs `body` in a transaction on one connection of the pool.
    func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await Self.unwrappingTransactionErrors {
            try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// Runs `body`, rethrowing the error a transaction's closure threw rather than postgres-nio's
    /// wrapper around it (callers match on ``ServerStoreError``).
    static func unwrappingTransactionErrors<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    /// The number of rows a statement changed (`UPDATE`/`DELETE … RETURNING 1`), counted.
    func count(_ rows: PostgresRowSequence) async throws -> Int {
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// Whether `error` is PostgreSQL's unique violation (SQLSTATE 23505).
    static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }

    /// Whether `error` is PostgreSQL's foreign key violation (SQLSTATE 23503).
    static func isForeignKeyViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23503"
    }

    static func appExists(_ connection: PostgresConnection, _ appID: String, logger: Logger) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM apps WHERE id = \(appID)", logger: logger).collect().isEmpty
    }

    // MARK: Apps

    static let appColumns = "id, created_at, sync_enabled, client_recovery, max_offline_time"
    typealias AppRow = (String, Double, Bool, Bool?, Double?)

    static func app(_ row: AppRow) -> StoredApp {
        StoredApp(id: row.0, createdAt: Date(timeIntervalSince1970: row.1), syncEnabled: row.2, clientRecovery: row.3,
                  maxOfflineTime: row.4)
    }

    package func app(id: String) async throws -> StoredApp? {
        let rows = try await client.query("SELECT \(unescaped: Self.appColumns) FROM apps WHERE id = \(id)", logger: logger)
        for try await row in rows.decode(AppRow.self) { return Self.app(row) }
        return nil
    }

    package func apps() async throws -> [StoredApp] {
        let rows = try await client.query("SELECT \(unescaped: Self.appColumns) FROM apps ORDER BY id", logger: logger)
        var apps: [StoredApp] = []
        for try await row in rows.decode(AppRow.self) { apps.append(Self.app(row)) }
        return apps
    }

    package func createApp(_ app: StoredApp) async throws {
        try await client.query(
            """
            INSERT INTO apps (id, created_at, sync_enabled, client_recovery, max_offline_time)
            VALUES (\(app.id), \(app.createdAt.timeIntervalSince1970), \(app.syncEnabled), \(app.clientRecovery), \(app.maxOfflineTime))
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
    }

    package func setSyncEnabled(appID: String, _ enabled: Bool) async throws -> Bool {
        try await count(client.query("UPDATE apps SET sync_enabled = \(enabled) WHERE id = \(appID) RETURNING 1", logger: logger)) > 0
    }

    package func setClientRecovery(appID: String, _ allowed: Bool?) async throws -> Bool {
        try await count(client.query("UPDATE apps SET client_recovery = \(allowed) WHERE id = \(appID) RETURNING 1", logger: logger)) > 0
    }

    package func setMaxOfflineTime(appID: String, _ seconds: TimeInterval?) async throws -> Bool {
        try await count(client.query("UPDATE apps SET max_offline_time = \(seconds) WHERE id = \(appID) RETURNING 1", logger: logger)) > 0
    }

    // MARK: Users

    static let userColumns = "id, app_id, email, name, disabled, created_at, metadata"
    typealias UserRow = (String, String, String?, String?, Bool, Double, String?)

    static func fetchUser(_ connection: PostgresConnection, id: String, logger: Logger) async throws -> StoredUser? {
        var found: UserRow?
        for row in try await connection.query(
            "SELECT \(unescaped: userColumns) FROM users WHERE id = \(id)", logger: logger
        ).collect().map({ try $0.decode(UserRow.self) }) { found = row }
        guard let row = found else { return nil }
        var identities: [StoredIdentity] = []
        for (provider, identity, hash) in try await connection.query(
            "SELECT provider_type, identity_id, password_hash FROM identities WHERE user_id = \(id) ORDER BY position", logger: logger
        ).collect().map({ try $0.decode((String, String, String?).self) }) {
            identities.append(StoredIdentity(id: identity, providerType: provider, passwordHash: hash))
        }
        return StoredUser(id: row.0, appID: row.1, identities: identities, email: row.2, name: row.3,
                          disabled: row.4, createdAt: Date(timeIntervalSince1970: row.5), metadata: StoredUser.metadata(row.6))
    }

    package func user(id: String) async throws -> StoredUser? {
        try await client.withConnection { connection in try await Self.fetchUser(connection, id: id, logger: logger) }
    }

    package func user(appID: String, providerType: String, identityID: String) async throws -> StoredUser? {
        try await client.withConnection { connection in
            var userID: String?
            for id in try await connection.query(
                """
                SELECT user_id FROM identities
                WHERE app_id = \(appID) AND provider_type = \(providerType) AND identity_id = \(identityID)
                """, logger: logger
            ).collect().map({ try $0.decode(String.self) }) { userID = id }
            guard let userID else { return nil }
            return try await Self.fetchUser(connection, id: userID, logger: logger)
        }
    }

    package func createUser(_ user: StoredUser) async throws {
        try await transaction { connection in
            guard try await Self.appExists(connection, user.appID, logger: logger) else {
                throw ServerStoreError(.missingOwner, "no app \(user.appID)")
            }
            try await Self.insertUser(connection, user, logger: logger)
        }
    }

    /// Inserts a user row and its identities; a taken identity is `.duplicateIdentity`.
    static func insertUser(_ connection: PostgresConnection, _ user: StoredUser, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO users (id, app_id, email, name, disabled, created_at, metadata)
            VALUES (\(user.id), \(user.appID), \(user.email), \(user.name), \(user.disabled), \(user.createdAt.timeIntervalSince1970),
                    \(user.metadataText))
            """, logger: logger)
        for (position, identity) in user.identities.enumerated() {
            do {
                try await connection.query(
                    """
                    INSERT INTO identities (app_id, provider_type, identity_id, user_id, position, password_hash)
                    VALUES (\(user.appID), \(identity.providerType), \(identity.id), \(user.id), \(position), \(identity.passwordHash))
                    """, logger: logger)
            } catch where isUniqueViolation(error) {
                throw ServerStoreError(.duplicateIdentity, "the \(identity.providerType) identity is taken")
            }
        }
    }

    package func setUserMetadata(id: String, _ metadata: [String: JSONValue]) async throws -> Bool {
        let text = StoredUser(id: id, appID: "", identities: [], createdAt: Date(), metadata: metadata).metadataText
        return try await count(client.query("UPDATE users SET metadata = \(text) WHERE id = \(id) RETURNING 1", logger: logger)) > 0
    }

    package func setUserDisabled(id: String, disabled: Bool) async throws -> Bool {
        try await count(client.query("UPDATE users SET disabled = \(disabled) WHERE id = \(id) RETURNING 1", logger: logger)) > 0
    }

    package func deleteUser(id: String) async throws -> Bool {
        // Identities, refresh tokens and API keys go with the user (ON DELETE CASCADE).
        try await count(client.query("DELETE FROM users WHERE id = \(id) RETURNING 1", logger: logger)) > 0
    }

    package func users(appID: String) async throws -> [StoredUser] {
        try await client.withConnection { connection in
            var ids: [String] = []
            for id in try await connection.query(
                "SELECT id FROM users WHERE app_id = \(appID) ORDER BY created_at, id", logger: logger
            ).collect().map({ try $0.decode(String.self) }) { ids.append(id) }
            var users: [StoredUser] = []
            for id in ids { if let user = try await Self.fetchUser(connection, id: id, logger: logger) { users.append(user) } }
            return users
        }
    }

    package func addIdentity(_ identity: StoredIdentity, toUser userID: String, absorbing: String?) async throws -> StoredUser {
        try await transaction { connection in
            // The user's row is locked: two links to one user at once take positions in turn.
            _ = try await connection.query("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE", logger: logger).collect()
            guard let user = try await Self.fetchUser(connection, id: userID, logger: logger) else {
                throw ServerStoreError(.notFound, "no user \(userID)")
            }
            var owner: String?
            for id in try await connection.query(
                """
                SELECT user_id FROM identities
                WHERE app_id = \(user.appID) AND provider_type = \(identity.providerType) AND identity_id = \(identity.id)
                FOR UPDATE
                """, logger: logger
            ).collect().map({ try $0.decode(String.self) }) { owner = id }
            var position = 0
            for highest in try await connection.query(
                "SELECT MAX(position) FROM identities WHERE user_id = \(userID)", logger: logger
            ).collect().map({ try $0.decode(Int?.self) }) { position = (highest ?? -1) + 1 }
            if let owner {
                guard owner == absorbing, owner != userID, let absorbed = try await Self.fetchUser(connection, id: owner, logger: logger),
                      absorbed.identities.count == 1, !absorbed.disabled,
                      try await !Self.everLoggedIn(connection, userID: owner, logger: logger)
                else { throw ServerStoreError(.duplicateIdentity, "the \(identity.providerType) identity belongs to a user") }
                try await connection.query(
                    """
                    UPDATE identities SET user_id = \(userID), position = \(position)
                    WHERE app_id = \(user.appID) AND provider_type = \(identity.providerType) AND identity_id = \(identity.id)
                    """, logger: logger)
                // The identity moves with its own password; the user's other identities keep theirs.
                try await connection.query(
                    "UPDATE users SET email = COALESCE(email, \(absorbed.email)) WHERE id = \(userID)", logger: logger)
                try await connection.query("DELETE FROM users WHERE id = \(owner)", logger: logger)
            } else {
                try await connection.query(
                    """
                    INSERT INTO identities (app_id, provider_type, identity_id, user_id, position, password_hash)
                    VALUES (\(user.appID), \(identity.providerType), \(identity.id), \(userID), \(position), \(identity.passwordHash))
                    """, logger: logger)
            }
            guard let linked = try await Self.fetchUser(connection, id: userID, logger: logger) else {
                throw ServerStoreError(.notFound, "no user \(userID)")
            }
            return linked
        }
    }

    /// Whether a user ever had a session (refresh tokens are kept, revoked, until the user goes),
    /// an API key or a sync client file.
    static func everLoggedIn(_ connection: PostgresConnection, userID: String, logger: Logger) async throws -> Bool {
        for found in try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM refresh_tokens WHERE user_id = \(userID))
                OR EXISTS (SELECT 1 FROM api_keys WHERE user_id = \(userID))
                OR EXISTS (SELECT 1 FROM client_files WHERE user_id = \(userID))
            """, logger: logger
        ).collect().map({ try $0.decode(Bool.self) }) { return found }
        return true
    }

    // MARK: Refresh tokens

    package func insertRefreshToken(_ token: StoredRefreshToken) async throws {
        try await client.query(
            """
            INSERT INTO refresh_tokens (digest, user_id, app_id, device_id, created_at, expires_at, revoked, api_key_id)
            VALUES (\(token.digest), \(token.userID), \(token.appID), \(token.deviceID), \(token.createdAt.timeIntervalSince1970),
                    \(token.expiresAt.timeIntervalSince1970), \(token.revoked), \(token.apiKeyID))
            """, logger: logger)
    }

    package func refreshToken(digest: String) async throws -> StoredRefreshToken? {
        let rows = try await client.query(
            """
            SELECT digest, user_id, app_id, device_id, created_at, expires_at, revoked, api_key_id FROM refresh_tokens
            WHERE digest = \(digest)
            """,
            logger: logger)
        for try await row in rows.decode((String, String, String, String, Double, Double, Bool, String?).self) {
            return StoredRefreshToken(
                digest: row.0, userID: row.1, appID: row.2, deviceID: row.3, createdAt: Date(timeIntervalSince1970: row.4),
                expiresAt: Date(timeIntervalSince1970: row.5), revoked: row.6, apiKeyID: row.7)
        }
        return nil
    }

    package func revokeRefreshToken(digest: String) async throws -> Bool {
        try await count(client.query(
            "UPDATE refresh_tokens SET revoked = TRUE WHERE digest = \(digest) AND NOT revoked RETURNING 1", logger: logger)) > 0
    }

    package func revokeRefreshTokens(userID: String) async throws {
        try await client.query("UPDATE refresh_tokens SET revoked = TRUE WHERE user_id = \(userID)", logger: logger)
    }

    package func revokeRefreshTokens(apiKeyID: String) async throws -> [String] {
        try await client.query(
            "UPDATE refresh_tokens SET revoked = TRUE WHERE api_key_id = \(apiKeyID) AND NOT revoked RETURNING device_id", logger: logger
        ).collect().map { try $0.decode(String.self) }
    }

    package func liveDevices(_ deviceIDs: [String]) async throws -> Set<String> {
        var live = Set<String>()
        for start in stride(from: 0, to: deviceIDs.count, by: 1_000) {
            let chunk = Array(deviceIDs[start..<min(start + 1_000, deviceIDs.count)])
            for device in try await client.query(
                """
                SELECT t.device_id FROM refresh_tokens t JOIN users u ON u.id = t.user_id
                LEFT JOIN api_keys k ON k.id = t.api_key_id
                WHERE t.device_id = ANY(\(chunk)) AND NOT t.revoked AND NOT u.disabled
                    AND (t.api_key_id IS NULL OR NOT k.disabled)
                """, logger: logger
            ).collect().map({ try $0.decode(String.self) }) { live.insert(device) }
        }
        return live
    }

    // MARK: API keys

    static let apiKeyColumns = "id, user_id, app_id, name, digest, disabled, created_at"

    func apiKeys(_ query: PostgresQuery) async throws -> [StoredAPIKey] {
        var keys: [StoredAPIKey] = []
        for row in try await client.query(query, logger: logger).collect().map({ try $0.decode((String, String, String, String, String, Bool, Double).self) }) {
            keys.append(StoredAPIKey(id: row.0, userID: row.1, appID: row.2, name: row.3, digest: row.4, disabled: row.5,
                                     createdAt: Date(timeIntervalSince1970: row.6)))
        }
        return keys
    }

    package func insertAPIKey(_ key: StoredAPIKey) async throws {
        try await client.query(
            """
            INSERT INTO api_keys (id, user_id, app_id, name, digest, disabled, created_at)
            VALUES (\(key.id), \(key.userID), \(key.appID), \(key.name), \(key.digest), \(key.disabled),
                    \(key.createdAt.timeIntervalSince1970))
            """, logger: logger)
    }

    package func apiKeys(userID: String) async throws -> [StoredAPIKey] {
        try await apiKeys("SELECT \(unescaped: Self.apiKeyColumns) FROM api_keys WHERE user_id = \(userID) ORDER BY created_at, id")
    }

    package func apiKey(id: String, userID: String) async throws -> StoredAPIKey? {
        try await apiKeys("SELECT \(unescaped: Self.apiKeyColumns) FROM api_keys WHERE id = \(id) AND user_id = \(userID)").first
    }

    package func apiKey(appID: String, digest: String) async throws -> StoredAPIKey? {
        try await apiKeys("SELECT \(unescaped: Self.apiKeyColumns) FROM api_keys WHERE app_id = \(appID) AND digest = \(digest)").first
    }

    package func setAPIKeyDisabled(id: String, userID: String, disabled: Bool) async throws -> Bool {
        try await count(client.query(
            "UPDATE api_keys SET disabled = \(disabled) WHERE id = \(id) AND user_id = \(userID) RETURNING 1", logger: logger)) > 0
    }

    package func deleteAPIKey(id: String, userID: String) async throws -> Bool {
        try await count(client.query("DELETE FROM api_keys WHERE id = \(id) AND user_id = \(userID) RETURNING 1", logger: logger)) > 0
    }
}

/// An error of the PostgreSQL store itself (not of a request).
package struct PostgresStoreError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
