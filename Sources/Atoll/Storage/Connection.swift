import AtollCore
import Foundation
import GRDB

/// One SQLite connection to a realm file, owned by one `Realm` instance.
///
/// The connection keeps a read transaction open between calls, which pins the snapshot the realm
/// sees (MVCC: a reader keeps its version while writers commit). `beginWrite` ends it and takes the
/// write lock, which also moves the realm to the newest version.
final class Connection {
    let queue: DatabaseQueue
    /// Set while a closure already runs on the connection's queue, so nested calls reuse it.
    private var current: Database?

    init(path: String, readOnly: Bool) throws {
        var config = GRDB.Configuration()
        config.readonly = readOnly
        config.allowsUnsafeTransactions = true
        config.busyMode = .timeout(30)
        config.journalMode = readOnly ? .default : .wal
        config.label = "atoll"
        config.prepareDatabase { db in Connection.registerFunctions(db) }
        queue = try DatabaseQueue(path: path, configuration: config)
    }

    static func registerFunctions(_ db: Database) {
        db.add(collation: DatabaseCollation(StorageLayout.decimalCollation) { a, b in
            QueryFunctions.compareDecimals(a, b)
        })
        for function in QueryFunctions.sqlFunctions {
            db.add(function: DatabaseFunction(function.name, argumentCount: function.arity, pure: true) { args in
                function.body(args.map(\.sqlValue)).databaseValue
            })
        }
    }

    /// Runs `body` with the database, reusing the handle when already inside a call.
    func run<T>(_ body: (Database) throws -> T) throws -> T {
        if let db = current { return try body(db) }
        return try queue.inDatabase { db in
            current = db
            defer { current = nil }
            return try body(db)
        }
    }

    func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        try run { db in
            try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments.map(\.databaseValue)))
        }
    }

    func fetchAll(_ sql: String, _ arguments: [SQLValue] = []) throws -> [[SQLValue]] {
        try run { db in
            let statement = try db.cachedStatement(sql: sql)
            let columns = statement.columnCount
            var rows: [[SQLValue]] = []
            let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(arguments.map(\.databaseValue)))
            while let row = try cursor.next() {
                var values: [SQLValue] = []
                values.reserveCapacity(columns)
                for i in 0..<columns { values.append((row[i] as DatabaseValue).sqlValue) }
                rows.append(values)
            }
            return rows
        }
    }

    func fetchOne(_ sql: String, _ arguments: [SQLValue] = []) throws -> [SQLValue]? {
        try fetchAll(sql, arguments).first
    }

    func fetchInt(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
        guard case .integer(let i)? = try fetchOne(sql, arguments)?.first else { return nil }
        return i
    }

    var lastInsertedRow: Int64 {
        get throws { try run { $0.lastInsertedRowID } }
    }

    var changesCount: Int {
        get throws { try run { $0.changesCount } }
    }
}

extension DatabaseValue {
    var sqlValue: SQLValue {
        switch storage {
        case .null: .null
        case .int64(let i): .integer(i)
        case .double(let d): .real(d)
        case .string(let s): .text(s)
        case .blob(let d): .blob(d)
        }
    }
}

extension SQLValue {
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let i): i.databaseValue
        case .real(let d): d.databaseValue
        case .text(let s): s.databaseValue
        case .blob(let d): d.databaseValue
        }
    }
}
