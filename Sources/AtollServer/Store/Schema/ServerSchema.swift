/// The server store's tables, columns, keys and indexes, declared once (``tables``) with the
/// migration step of each store that brought each in, and rendered into each store's SQL
/// (``ServerSchema/statements(for:step:)``).
///
/// The two stores' histories differ (SQLite grew over ten migrations, PostgreSQL started at the
/// seventh of those), so an element names its step in each store (``Since``); an element one store
/// lacks, or declares its own way, says so where it is declared. Never change what a shipped step
/// renders: add a step, and declare the new elements with it.
enum ServerSchema {
    enum Store: Sendable, Hashable {
        case sqlite, postgres
    }

    /// The step of each store that brought an element in; nil where that store does not have it.
    struct Since: Sendable, Hashable {
        var sqlite: Int?
        var postgres: Int?

        init(sqlite: Int?, postgres: Int?) {
            self.sqlite = sqlite
            self.postgres = postgres
        }

        /// The same step number in both stores.
        static func both(_ step: Int) -> Since { Since(sqlite: step, postgres: step) }
        static func sqlite(_ step: Int) -> Since { Since(sqlite: step, postgres: nil) }
        static func postgres(_ step: Int) -> Since { Since(sqlite: nil, postgres: step) }

        func step(in store: Store) -> Int? {
            switch store {
            case .sqlite: sqlite
            case .postgres: postgres
            }
        }
    }

    /// A column's type, portable: each store spells it its own way (``ServerSchema/sql(_:in:)``).
    enum ColumnType: Sendable, Hashable {
        case text, double, bool, int16, int32, int64, bytes
        /// A point in time the database fills in (PostgreSQL only).
        case timestamp
    }

    enum Default: Sendable, Hashable {
        case bool(Bool)
        case int(Int)
        /// The time of the insert (PostgreSQL's `now()`).
        case now
    }

    struct Column: Sendable, Hashable {
        var name: String
        var type: ColumnType
        var nullable = false
        var defaultValue: Default? = nil
        /// `table(column)` of a foreign key, whose rows' deletion deletes this row.
        var references: String? = nil
        /// Numbered by the database on insert (an identity, or SQLite's `AUTOINCREMENT` key).
        var identity = false
        /// When a later step than the table's added it (nil: with the table).
        var since: Since? = nil
    }

    struct Index: Sendable, Hashable {
        var name: String
        var columns: [String]
        /// A partial index's condition.
        var condition: String? = nil
        var since: Since
    }

    struct Table: Sendable, Hashable {
        var name: String
        var since: Since
        var columns: [Column]
        var primaryKey: [String]
        var unique: [[String]] = []
        var indexes: [Index] = []
        /// SQLite keeps the rows in the primary key's b-tree (no rowid).
        var withoutRowID = false
        /// SQLite's column order where it differs from ``columns``' (its steps added them in
        /// another order than PostgreSQL's first step created them).
        var sqliteColumnOrder: [String]? = nil

        func column(_ name: String) -> Column? { columns.first { $0.name == name } }
    }

    /// One migration of one store: its identity in the database (SQLite: `name`, recorded by
    /// GRDB; PostgreSQL: `number`, recorded in `atoll_migrations` with `name`), and the data
    /// statements it runs after its tables and columns exist and before its indexes.
    struct Step: Sendable, Hashable {
        var number: Int
        var name: String
        var data: [String] = []
    }
}
