@testable import AtollServer
import AtollTesting
import Foundation
import GRDB
import Logging
import Testing

/// The schema declared once (``ServerSchema``) makes, step by step, what the migrations written
/// out by hand made (``LegacySchema``): a database made by the older server opens and migrates to
/// the same tables, columns, keys and indexes as a new one.
@Suite struct ServerSchemaTests {
    // MARK: The declaration

    /// Every element names steps that exist, no earlier than its table's, and indexes name
    /// columns their store has by then.
    @Test func everyElementNamesAStepOfItsStores() {
        for store in [ServerSchema.Store.sqlite, .postgres] {
            let steps = Set(ServerSchema.steps(for: store).map(\.number))
            #expect(ServerSchema.steps(for: store).map(\.number) == Array(1...steps.count), "\(store) steps are numbered in order")
            for table in ServerSchema.tables {
                guard let created = table.since.step(in: store) else {
                    #expect(table.columns.allSatisfy { $0.since?.step(in: store) == nil }, "\(table.name) is not in \(store)")
                    continue
                }
                #expect(steps.contains(created), "\(table.name) in \(store)")
                let columns = ServerSchema.columns(of: table, in: store)
                for column in columns {
                    let step = ServerSchema.step(of: column, in: table, store: store) ?? 0
                    #expect(step >= created && steps.contains(step), "\(table.name).\(column.name) in \(store)")
                }
                if store == .sqlite, let order = table.sqliteColumnOrder {
                    #expect(Set(order) == Set(columns.map(\.name)), "\(table.name)'s SQLite order names its columns")
                }
                for index in table.indexes {
                    guard let step = index.since.step(in: store) else { continue }
                    #expect(step >= created && steps.contains(step), "\(index.name) in \(store)")
                    for name in index.columns {
                        let column = columns.first { $0.name == name }
                        #expect(column.map { ServerSchema.step(of: $0, in: table, store: store)! <= step } == true,
                                "\(index.name) names \(name), which \(store) lacks at step \(step)")
                    }
                }
            }
        }
    }

    // MARK: SQLite

    /// What SQLite says of a database's schema: each object's SQL with its spacing evened out,
    /// each table's columns, foreign keys and indexes, and the migrations applied.
    static func snapshot(_ queue: DatabaseQueue) throws -> [String] {
        try queue.read { db in
            var lines: [String] = []
            let objects = try Row.fetchAll(db, sql: """
                SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name
                """)
            for object in objects {
                lines.append("\(object["type"] as String) \(object["name"] as String) on \(object["tbl_name"] as String): "
                    + normalized(object["sql"] as String? ?? ""))
                guard object["type"] as String == "table" else { continue }
                let table = object["name"] as String
                for pragma in ["table_xinfo", "foreign_key_list", "index_list"] {
                    for row in try Row.fetchAll(db, sql: "SELECT * FROM pragma_\(pragma)(?)", arguments: [table]) {
                        lines.append("  \(pragma) \(table): \(row)")
                    }
                }
            }
            let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
            return lines + applied.map { "migration \($0)" }
        }
    }

    /// `sql` with runs of white space made one space, and none next to brackets and commas.
    static func normalized(_ sql: String) -> String {
        var text = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for mark in ["(", ")", ","] {
            text = text.replacingOccurrences(of: " " + mark, with: mark).replacingOccurrences(of: mark + " ", with: mark)
        }
        return text
    }

    static func sqlite(_ folder: TemporaryFolder, _ name: String, legacyUpTo legacy: String?, thenUpTo target: String?) throws -> [String] {
        let queue = try DatabaseQueue(path: folder.url.appendingPathComponent(name).path)
        if let legacy { try LegacySchema.migrator.migrate(queue, upTo: legacy) }
        if let target { try SQLiteServerStore.migrator.migrate(queue, upTo: target) } else { try SQLiteServerStore.migrator.migrate(queue) }
        defer { try? queue.close() }
        return try snapshot(queue)
    }

    /// A new database up to the last hand-written step is the one the hand-written migrations
    /// made, and so is one they began and the declared schema finished, from every step.
    @Test func sqliteMigratesAsTheHandWrittenMigrationsDid() throws {
        let folder = try TemporaryFolder()
        let names = LegacySchema.migrator.migrations
        let last = try #require(names.last)
        #expect(names == Array(SQLiteServerStore.migrator.migrations.prefix(names.count)), "the steps keep their identifiers")
        let legacy = try Self.sqlite(folder, "legacy.sqlite", legacyUpTo: last, thenUpTo: last)
        #expect(legacy.contains { $0.hasPrefix("table history on history: CREATE TABLE history(") && $0.hasSuffix("WITHOUT ROWID") })
        let declared = try Self.sqlite(folder, "declared.sqlite", legacyUpTo: nil, thenUpTo: last)
        #expect(Self.same(declared, legacy), "\(Self.difference(declared, legacy))")
        for (i, step) in names.enumerated() {
            let resumed = try Self.sqlite(folder, "from\(i).sqlite", legacyUpTo: step, thenUpTo: last)
            #expect(Self.same(resumed, legacy), "from \(step): \(Self.difference(resumed, legacy))")
        }
        // The steps since add the runtime apps' table and nothing else.
        let newest = try Self.sqlite(folder, "newest.sqlite", legacyUpTo: last, thenUpTo: nil)
        let added = newest.filter { !legacy.contains($0) }
        #expect(added.contains("table runtime_apps on runtime_apps: CREATE TABLE runtime_apps(id TEXT PRIMARY KEY NOT NULL,configuration TEXT NOT NULL,updated_at DOUBLE NOT NULL)"),
                "\(added)")
        #expect(added.allSatisfy { $0.contains("runtime_apps") || $0.hasPrefix("migration v11") }, "\(added)")
        #expect(legacy.allSatisfy(newest.contains))
    }

    /// The data steps run as before: a password of a user made before step 7 moves to its e-mail identity.
    @Test func sqliteDataStepsRunAsBefore() throws {
        let folder = try TemporaryFolder()
        let queue = try DatabaseQueue(path: folder.url.appendingPathComponent("data.sqlite").path)
        defer { try? queue.close() }
        try LegacySchema.migrator.migrate(queue, upTo: "v6: pending e-mail registrations, confirmation and reset tokens")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO apps (id, created_at) VALUES ('a', 0);
                INSERT INTO users (id, app_id, email, password_hash, created_at) VALUES ('u', 'a', 'x@example.com', 'hash', 0);
                INSERT INTO identities (app_id, provider_type, identity_id, user_id, position) VALUES ('a', 'local-userpass', 'x@example.com', 'u', 0);
                """)
        }
        try SQLiteServerStore.migrator.migrate(queue)
        let moved = try queue.read { db in
            (try String.fetchOne(db, sql: "SELECT password_hash FROM identities"), try String?.fetchOne(db, sql: "SELECT password_hash FROM users") ?? nil)
        }
        #expect(moved.0 == "hash")
        #expect(moved.1 == nil)
    }

    // MARK: PostgreSQL

    static let logger = Logger(label: "atoll.test.schema") { _ in SwiftLogNoOpLogHandler() }

    /// What PostgreSQL's catalog says of a database's schema: columns, indexes, constraints and
    /// the migrations applied.
    static func snapshot(_ cluster: PostgresCluster, _ url: String) async throws -> [String] {
        let queries = [
            """
            SELECT 'column', table_name::text, lpad(ordinal_position::text, 3, '0'), column_name::text, data_type::text,
                   is_nullable::text, column_default::text, is_identity::text, identity_generation::text
            FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position
            """,
            "SELECT 'index', tablename::text, indexname::text, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 2, 3",
            """
            SELECT 'constraint', conrelid::regclass::text, conname::text, pg_get_constraintdef(oid)
            FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 2, 3
            """,
            "SELECT 'migration', version::text, name FROM atoll_migrations ORDER BY version",
        ]
        var lines: [String] = []
        for query in queries {
            lines += try await cluster.execute(query, onDatabaseOf: url).map { $0.map { $0 ?? "∅" }.joined(separator: " | ") }
        }
        return lines
    }

    static func postgres(_ cluster: PostgresCluster, legacyUpTo legacy: Int, thenUpTo target: Int) async throws -> [String] {
        let url = try await cluster.createDatabase()
        let store = PostgresServerStore(configuration: try PostgresURL(url).clientConfiguration(), logger: logger)
        do {
            if legacy > 0 { try await PostgresMigrations.migrate(store.client, LegacySchema.all, upTo: legacy, logger: logger) }
            try await PostgresMigrations.migrate(store.client, upTo: target, logger: logger)
        } catch {
            await store.shutdown()
            throw error
        }
        await store.shutdown()
        return try await snapshot(cluster, url)
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed (apt-get install postgresql)"))
    func postgresMigratesAsTheHandWrittenMigrationsDid() async throws {
        let cluster = try await PostgresCluster.shared()
        let last = try #require(LegacySchema.all.last?.version)
        #expect(LegacySchema.all.map(\.name) == Array(PostgresMigrations.all.map(\.name).prefix(last)), "the steps keep their names")
        let legacy = try await Self.postgres(cluster, legacyUpTo: last, thenUpTo: last)
        #expect(legacy.contains { $0.hasPrefix("index | users | users_app | CREATE INDEX users_app ON public.users USING btree (app_id, created_at, id)") })
        for from in 0..<last {
            let resumed = try await Self.postgres(cluster, legacyUpTo: from, thenUpTo: last)
            #expect(Self.same(resumed, legacy), "from \(from): \(Self.difference(resumed, legacy))")
        }
        let newest = try await Self.postgres(cluster, legacyUpTo: last, thenUpTo: PostgresMigrations.latestVersion)
        let added = newest.filter { !legacy.contains($0) }
        #expect(added.allSatisfy { $0.contains("runtime_apps") || $0.hasPrefix("migration | 8 |") }, "\(added)")
        #expect(added.contains { $0.hasPrefix("column | runtime_apps | 002 | configuration | text | NO") }, "\(added)")
        #expect(legacy.allSatisfy(newest.contains))
    }

    /// Equal, compared apart from `#expect` (which would print both whole schemas).
    static func same(_ a: [String], _ b: [String]) -> Bool { a == b }

    static func difference(_ a: [String], _ b: [String]) -> String {
        "only in the first: \(a.filter { !b.contains($0) }); only in the second: \(b.filter { !a.contains($0) })"
    }
}
