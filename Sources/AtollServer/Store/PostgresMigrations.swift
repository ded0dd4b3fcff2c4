import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// The PostgreSQL store's schema, one numbered migration per change, applied when a store opens.
///
/// Never edit a shipped migration: add one. Migrations run in one transaction under an advisory
/// lock, so nodes starting together apply each once; a node whose binary is older than the
/// database (its newest migration is below the database's) refuses to start rather than write
/// rows it does not understand.
enum PostgresMigrations {
    struct Migration {
        var version: Int
        var name: String
        /// Statements run in order (the extended protocol takes one statement per query).
        var statements: [String]
        /// Run after the statements, in the same transaction: a change SQL alone cannot make.
        var rewrite: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil
    }

    /// The key of the advisory lock migrations take.
    static let lockKey: Int64 = 0x4174_6F6C_6C00_0001

    static let all: [Migration] = [
        Migration(version: 1, name: "apps, users, identities, tokens, keys, realms, client files, history, e-mail accounts", statements: [
            """
            CREATE TABLE apps (
                id TEXT PRIMARY KEY,
                created_at DOUBLE PRECISION NOT NULL,
                sync_enabled BOOLEAN NOT NULL DEFAULT TRUE,
                client_recovery BOOLEAN,
                max_offline_time DOUBLE PRECISION
            )
            """,
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                email TEXT,
                name TEXT,
                password_hash TEXT,
                disabled BOOLEAN NOT NULL DEFAULT FALSE,
                created_at DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX users_app ON users(app_id, created_at, id)",
            """
            CREATE TABLE identities (
                app_id TEXT NOT NULL,
                provider_type TEXT NOT NULL,
                identity_id TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                PRIMARY KEY (app_id, provider_type, identity_id)
            )
            """,
            "CREATE INDEX identities_user ON identities(user_id)",
            """
            CREATE TABLE refresh_tokens (
                digest TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                app_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                revoked BOOLEAN NOT NULL DEFAULT FALSE
            )
            """,
            "CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id)",
            """
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                app_id TEXT NOT NULL,
                name TEXT NOT NULL,
                digest TEXT NOT NULL,
                disabled BOOLEAN NOT NULL DEFAULT FALSE,
                created_at DOUBLE PRECISION NOT NULL,
                UNIQUE (app_id, digest)
            )
            """,
            "CREATE INDEX api_keys_user ON api_keys(user_id)",
            """
            CREATE TABLE realms (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                path TEXT NOT NULL,
                epoch BIGINT NOT NULL,
                epoch_reason SMALLINT NOT NULL DEFAULT 1,
                latest_version BIGINT NOT NULL DEFAULT 0,
                next_file_ident BIGINT NOT NULL DEFAULT 1,
                compacted_through BIGINT NOT NULL DEFAULT 0,
                created_at DOUBLE PRECISION NOT NULL,
                UNIQUE (app_id, path)
            )
            """,
            """
            CREATE TABLE client_files (
                realm_id BIGINT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                ident BIGINT NOT NULL,
                salt BIGINT NOT NULL,
                last_client_version BIGINT NOT NULL DEFAULT 0,
                compacted_client_version BIGINT NOT NULL DEFAULT 0,
                last_server_version BIGINT NOT NULL DEFAULT 0,
                created_at DOUBLE PRECISION NOT NULL,
                last_seen DOUBLE PRECISION,
                user_id TEXT,
                PRIMARY KEY (realm_id, ident)
            )
            """,
            "CREATE INDEX client_files_by_user ON client_files(user_id)",
            """
            CREATE TABLE history (
                realm_id BIGINT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                server_version BIGINT NOT NULL,
                origin_file_ident BIGINT NOT NULL,
                origin_client_version BIGINT NOT NULL,
                origin_timestamp BIGINT NOT NULL,
                changeset BYTEA NOT NULL,
                PRIMARY KEY (realm_id, server_version)
            )
            """,
            "CREATE INDEX history_origin ON history(realm_id, origin_file_ident, server_version)",
            """
            CREATE TABLE pending_users (
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                email TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (app_id, email)
            )
            """,
            """
            CREATE TABLE account_tokens (
                seq BIGINT GENERATED ALWAYS AS IDENTITY,
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                email TEXT NOT NULL,
                purpose TEXT NOT NULL,
                digest TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX account_tokens_owner ON account_tokens(app_id, email, purpose, created_at)",
            "CREATE INDEX account_tokens_expiry ON account_tokens(expires_at)",
        ]),
        Migration(version: 2, name: "secrets the nodes share", statements: [
            "CREATE TABLE shared_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        ]),
        Migration(version: 3, name: "backups every node reads", statements: [
            """
            CREATE TABLE backups (
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                body BYTEA NOT NULL
            )
            """,
            "CREATE INDEX backups_app ON backups(app_id, created_at, id)",
        ]),
        Migration(version: 4, name: "passwords per e-mail identity, the API key of a login, logins by device", statements: [
            // A user's password belonged to the user; it now belongs to its e-mail identity.
            "ALTER TABLE identities ADD COLUMN password_hash TEXT",
            """
            UPDATE identities SET password_hash = users.password_hash FROM users
            WHERE users.id = identities.user_id AND identities.provider_type = 'local-userpass'
            """,
            "UPDATE users SET password_hash = NULL",
            "ALTER TABLE refresh_tokens ADD COLUMN api_key_id TEXT",
            "CREATE INDEX refresh_tokens_api_key ON refresh_tokens(api_key_id) WHERE api_key_id IS NOT NULL",
            "CREATE INDEX refresh_tokens_device ON refresh_tokens(device_id)",
            "CREATE INDEX pending_users_created ON pending_users(app_id, created_at)",
        ]),
        // Realms made before are no one's: they count against no user's limit.
        Migration(version: 5, name: "the user who created each realm", statements: [
            "ALTER TABLE realms ADD COLUMN created_by TEXT",
            "CREATE INDEX realms_by_creator ON realms(app_id, created_by)",
        ]),
        Migration(version: 6, name: "dates in history as seconds since 2001", statements: [],
                  rewrite: { try await reencodeHistoryDates($0, logger: $1) }),
        Migration(version: 7, name: "the custom JWT metadata fields of each user", statements: [
            "ALTER TABLE users ADD COLUMN metadata TEXT",
        ]),
    ]

    /// The newest migration this binary knows.
    static var latestVersion: Int { all.last?.version ?? 0 }

    /// Applies the migrations the database lacks, in one transaction.
    /// - Throws: ``PostgresStoreError`` when the database has migrations this binary does not know.
    static func migrate(_ client: PostgresClient, upTo target: Int = latestVersion, logger: Logger) async throws {
        try await PostgresServerStore.unwrappingTransactionErrors { try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS atoll_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """, logger: logger)
            let applied = try await connection.query("SELECT COALESCE(MAX(version), 0) FROM atoll_migrations", logger: logger)
                .collect().first.map { try $0.decode(Int.self) } ?? 0
            guard applied <= latestVersion else {
                throw PostgresStoreError(
                    "the database's schema is at migration \(applied), newer than this atoll-server knows (\(latestVersion)): "
                        + "run a newer atoll-server against it")
            }
            for migration in all where migration.version > applied && migration.version <= target {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await migration.rewrite?(connection, logger)
                try await connection.query(
                    "INSERT INTO atoll_migrations (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger)
                logger.info("store migrated", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            }
        } }
    }
}

/// A `postgres://` URL read into a postgres-nio configuration:
/// `postgres://user:password@host:port/database?sslmode=disable|prefer|require`.
///
/// `sslmode` defaults to `require` (a server without TLS is refused: the password and every
/// changeset cross the network) unless the host is a loopback address, where it defaults to
/// `prefer` (TLS when the server offers it), as libpq does. The password may also come from
/// `PGPASSWORD`.
package struct PostgresURL: Sendable, Hashable {
    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    package var database: String
    package var sslMode: String

    package init(_ text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              ["postgres", "postgresql"].contains(scheme.lowercased())
        else { throw PostgresStoreError("a store URL starts with postgres:// (got \(Self.redacted(text)))") }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresStoreError("the store URL has no host (\(Self.redacted(text)))")
        }
        self.host = host
        port = components.port ?? 5432
        username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        password = components.password.flatMap { $0.removingPercentEncoding } ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? username : path
        sslMode = components.queryItems?.first { $0.name == "sslmode" }?.value
            ?? (ServerConfiguration.isLoopback(host) ? "prefer" : "require")
        guard ["disable", "prefer", "require"].contains(sslMode) else {
            throw PostgresStoreError("sslmode must be disable, prefer or require (got \(sslMode))")
        }
    }

    /// The URL without its password, for logs and errors.
    package static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? "postgres://…"
    }

    func clientConfiguration() throws -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = switch sslMode {
        case "disable": .disable
        case "require": .require(.makeClientConfiguration())
        default: .prefer(.makeClientConfiguration())
        }
        return PostgresClient.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
    }
}

extension PostgresServerStore {
    /// Tests only: makes the database at `url` as a server of migration `version` left it, with
    /// `rows` (SQL statements) written by that server, so a test can open it with this one.
    static func prepareForTesting(url: String, upTo version: Int, rows: [String], logger: Logger) async throws {
        let older = PostgresServerStore(configuration: try PostgresURL(url).clientConfiguration(), logger: logger)
        do {
            try await PostgresMigrations.migrate(older.client, upTo: version, logger: logger)
            for statement in rows { try await older.client.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
        } catch {
            await older.shutdown()
            throw error
        }
        await older.shutdown()
    }

    /// Tests only: records a migration as applied (as a newer binary would have).
    func recordMigrationForTesting(version: Int, name: String) async throws {
        try await client.query("INSERT INTO atoll_migrations (version, name) VALUES (\(version), \(name))", logger: logger)
    }

    /// Tests only: every history row's changeset bytes as stored, by realm and server version.
    func historyBytesForTesting() async throws -> [Data] {
        try await client.query("SELECT changeset FROM history ORDER BY realm_id, server_version", logger: logger)
            .collect().map { try $0.decode(Data.self) }
    }

    /// Tests only: the migrations applied, in order.
    func appliedMigrationsForTesting() async throws -> [(Int, String)] {
        try await client.query("SELECT version, name FROM atoll_migrations ORDER BY version", logger: logger)
            .collect().map { try $0.decode((Int, String).self) }
    }
}

extension PostgresServerStore {
    package func sharedSecret(named name: String, making: @Sendable () -> String) async throws -> String? {
        // The first node's secret wins; the others read it.
        try await client.query(
            "INSERT INTO shared_secrets (name, value) VALUES (\(name), \(making())) ON CONFLICT (name) DO NOTHING", logger: logger)
        let rows = try await client.query("SELECT value FROM shared_secrets WHERE name = \(name)", logger: logger).collect()
        guard let value = try rows.first?.decode(String.self) else { throw PostgresStoreError("the shared secret \(name) went away") }
        return value
    }

    package func replaceSharedSecret(named name: String, stored: String, with replacement: String) async throws -> Bool {
        try await count(client.query(
            "UPDATE shared_secrets SET value = \(replacement) WHERE name = \(name) AND value = \(stored) RETURNING 1", logger: logger)) == 1
    }
}
