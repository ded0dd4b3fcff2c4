import AtollCore
import Foundation

/// Every internal table of a realm file, prefixed `_atoll_`. The installer creates them all with
/// a new file and brings an older file up to ``format`` when it is opened for writing; nothing
/// else creates tables of its own.
enum InternalTables {
    /// The storage format: 2 added unresolved links (the `link` column of object collections,
    /// `_atoll_links`, `_atoll_unresolved`); 3 made every file hold the sync tables (sync state,
    /// pending reset, subscriptions), created until then on first use, and dropped the unused
    /// `_atoll_sync`; 4 stores dates as seconds since 2001, `Date`'s own `Double`, instead of
    /// since 1970, so they read back `==` (InternalTables+Dates.swift), and records the local
    /// version each subscription set was committed at (`client_version`), which orders the set's
    /// upload after the writes made before it.
    static let format: Int64 = 4

    static let statements = [
        "CREATE TABLE IF NOT EXISTS _atoll_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID",
        // One record per local commit: the changeset that describes it.
        "CREATE TABLE IF NOT EXISTS _atoll_history (version INTEGER PRIMARY KEY, timestamp INTEGER NOT NULL, changeset BLOB NOT NULL)",
        // To-one links to an object that no longer exists: the column holds NULL, the link's
        // target (an encoded `Value.link`) is kept here until the object is created again.
        "CREATE TABLE IF NOT EXISTS _atoll_links (owner_type TEXT NOT NULL, owner_row INTEGER NOT NULL, prop TEXT NOT NULL, target BLOB NOT NULL, PRIMARY KEY (owner_type, owner_row, prop)) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS _atoll_links_target ON _atoll_links(target)",
        // Targets that unresolved links (to-one or in collections) may name: creating one of them
        // resolves its links. May hold stale entries; never misses one.
        "CREATE TABLE IF NOT EXISTS _atoll_unresolved (target BLOB PRIMARY KEY) WITHOUT ROWID",
        // The file's place in the server's history, by key (SyncStateStore).
        "CREATE TABLE IF NOT EXISTS \(SyncStateStore.stateTable) (key TEXT PRIMARY KEY, value) WITHOUT ROWID",
        // An automatic client reset applied and not yet acknowledged (docs/client-reset.md).
        """
        CREATE TABLE IF NOT EXISTS \(SyncStateStore.pendingResetTable)
        (id INTEGER PRIMARY KEY CHECK (id = 1), action TEXT NOT NULL, date REAL NOT NULL, recovered_version INTEGER)
        """,
    ] + subscriptionStatements

    /// The flexible-sync subscription tables (SubscriptionStorage). Dates are seconds since 2001
    /// (`Date`'s own representation, so they read back exactly).
    static let subscriptionStatements = [
        """
        CREATE TABLE IF NOT EXISTS \(SubscriptionStorage.setsTable) (
            version INTEGER PRIMARY KEY, state TEXT NOT NULL, error TEXT, created_at REAL NOT NULL,
            client_version INTEGER NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE IF NOT EXISTS \(SubscriptionStorage.subscriptionsTable) (
            set_version INTEGER NOT NULL, position INTEGER NOT NULL, id TEXT NOT NULL, name TEXT,
            object_type TEXT NOT NULL, query TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
            PRIMARY KEY (set_version, position)) WITHOUT ROWID
        """,
    ]

    /// Creates the tables of a new file and records its format.
    static func create(_ connection: Connection) throws {
        for statement in statements { try connection.execute(statement) }
        try connection.execute("INSERT OR REPLACE INTO _atoll_meta (key, value) VALUES ('format', ?)", [.integer(format)])
    }

    /// The format of an existing file (1 before formats were recorded).
    static func storedFormat(_ connection: Connection) throws -> Int64 {
        try connection.fetchInt("SELECT value FROM _atoll_meta WHERE key = 'format'") ?? 1
    }

    /// Brings a file of an older format up to ``format``, in the caller's write transaction: the
    /// internal tables it lacks, the `link` column of object collections, no `_atoll_sync`, dates
    /// since 2001, the subscription sets' `client_version`.
    static func upgrade(_ connection: Connection, _ stored: [AtollCore.ObjectSchema]) throws {
        let current = try storedFormat(connection)
        guard current < format else { return }
        for statement in statements { try connection.execute(statement) }
        if current < 3 { try addLinkColumns(connection, stored) }
        if current < 4 {
            try upgradeDates(connection, stored)
            try addSubscriptionClientVersion(connection)
        }
        try connection.execute("INSERT OR REPLACE INTO _atoll_meta (key, value) VALUES ('format', ?)", [.integer(format)])
    }

    private static func addLinkColumns(_ connection: Connection, _ stored: [AtollCore.ObjectSchema]) throws {
        for schema in stored {
            for property in schema.properties where property.type == .object && !property.isSingle {
                let table = StorageLayout.quote(StorageLayout.collectionTable(schema.name, property))
                let columns = try connection.fetchAll("SELECT name FROM pragma_table_info('\(StorageLayout.collectionTable(schema.name, property))')")
                guard !columns.contains(where: { $0.first == .text("link") }) else { continue }
                try connection.execute("ALTER TABLE \(table) ADD COLUMN link BLOB")
            }
        }
        try connection.execute("DROP TABLE IF EXISTS _atoll_sync")
    }

    private static func addSubscriptionClientVersion(_ connection: Connection) throws {
        let setColumns = try connection.fetchAll("SELECT name FROM pragma_table_info('\(SubscriptionStorage.setsTable)')")
        guard !setColumns.contains(where: { $0.first == .text("client_version") }) else { return }
        // Sets committed before format 4 order after no particular write (0).
        try connection.execute("ALTER TABLE \(SubscriptionStorage.setsTable) ADD COLUMN client_version INTEGER NOT NULL DEFAULT 0")
    }
}
