import GRDB

extension SQLiteServerStore {
    /// The store's migrations: the steps of ``ServerSchema/sqliteSteps`` with their SQL
    /// (``ServerSchema``), and the rewrites SQL alone cannot make. Never edit a shipped step: add one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for step in ServerSchema.sqliteSteps {
            let statements = ServerSchema.statements(for: .sqlite, step: step.number)
            let rewrite = rewrites[step.number]
            migrator.registerMigration(step.name) { db in
                for statement in statements { try db.execute(sql: statement) }
                try rewrite?(db)
            }
        }
        return migrator
    }

    /// The steps that change data in Swift, by number.
    static let rewrites: [Int: @Sendable (Database) throws -> Void] = [
        9: { try reencodeHistoryDates($0) },
    ]
}

extension SQLiteServerStore {
    /// Tests only: makes the database at `path` as a server of migration `migration` left it,
    /// with `rows` (SQL) written by that server, so a test can open it with this one.
    static func prepareForTesting(path: String, upTo migration: String, rows: String) throws {
        let queue = try DatabaseQueue(path: path)
        try migrator.migrate(queue, upTo: migration)
        try queue.write { try $0.execute(sql: rows) }
        try queue.close()
    }
}
