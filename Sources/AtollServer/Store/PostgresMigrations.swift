import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// The PostgreSQL store's migrations, one numbered step per change of ``ServerSchema``, applied
/// when a store opens.
///
/// Never edit a shipped step: add one. Migrations run in one transaction under an advisory
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

    /// The steps of ``ServerSchema/postgresSteps`` with their SQL (``ServerSchema``), and the
    /// rewrites SQL alone cannot make.
    static let all: [Migration] = ServerSchema.postgresSteps.map { step in
        Migration(version: step.number, name: step.name, statements: ServerSchema.statements(for: .postgres, step: step.number),
                  rewrite: rewrites[step.number])
    }

    /// The steps that change data in Swift, by version.
    static let rewrites: [Int: @Sendable (PostgresConnection, Logger) async throws -> Void] = [
        6: { try await reencodeHistoryDates($0, logger: $1) },
    ]

    /// The newest migration this binary knows.
    static var latestVersion: Int { all.last?.version ?? 0 }

    /// Applies the migrations the database lacks, in one transaction (`migrations` are ``all``
    /// but in tests of the migrations themselves).
    /// - Throws: ``PostgresStoreError`` when the database has migrations this binary does not know.
    static func migrate(_ client: PostgresClient, _ migrations: [Migration] = all, upTo target: Int = latestVersion,
                        logger: Logger) async throws {
        let latestVersion = migrations.last?.version ?? 0
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
            for migration in migrations where migration.version > applied && migration.version <= target {
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
