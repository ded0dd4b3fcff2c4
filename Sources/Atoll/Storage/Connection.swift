import AtollCore
import Foundation
import GRDB
import GRDBSQLite

/// One SQLite connection to a realm file, owned by one `Realm` instance.
///
/// The connection keeps a read transaction open between calls, which pins the snapshot the realm
/// sees (MVCC: a reader keeps its version while writers commit). `beginWrite` ends it and takes the
/// write lock, which also moves the realm to the newest version.
final class Connection {
    /// How much of the file SQLite reads through a memory map (256 MiB).
    static let mmapSize = 268_435_456
    let queue: DatabaseQueue
    /// Set while a closure already runs on the connection's queue, so nested calls reuse it.
    private var current: Database?
    /// The thread inside `run` while `current` is set (GRDB runs the closure on its own queue,
    /// on the calling thread).
    private var currentThread: pthread_t?

    /// Set for connections that several threads may use at once (frozen realms): every call, and
    /// the caches of accessors reading through the connection, hold it.
    let sharedLock: NSRecursiveLock?
    let readOnly: Bool

    /// Opens the file at `path`; with `key`, through the encrypting VFS shim.
    init(path: String, readOnly: Bool, shared: Bool = false, key: EncryptionKey? = nil) throws {
        sharedLock = shared ? NSRecursiveLock() : nil
        self.readOnly = readOnly
        do {
            queue = try Connection.databaseQueue(path: path, key: key) { config in
                config.readonly = readOnly
                config.allowsUnsafeTransactions = true
                config.busyMode = .timeout(30)
                config.journalMode = readOnly ? .default : .wal
                config.label = "atoll"
                config.prepareDatabase { db in
                    // WAL with synchronous=NORMAL: a commit survives a crash of the process; the
                    // bench baseline uses the same. What is uploaded is synced first
                    // (`RealmFiles.syncLog`, docs/storage.md "Durability").
                    if !readOnly { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                    if !readOnly { try Connection.syncToTheMedium(db) }
                    // Checkpoints run in the background (WALCheckpointer), not inside commits.
                    if !readOnly { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
                    // Read pages through a memory map, as Realm does, instead of copying them with
                    // read() (an encrypted file is never mapped: its pages are decrypted on read).
                    try db.execute(sql: "PRAGMA mmap_size = \(Connection.mmapSize)")
                    Connection.registerFunctions(db)
                }
            }
        } catch let error as Realm.Error {
            throw error
        } catch {
            throw Self.openError(error, path: path, readOnly: readOnly)
        }
    }

    /// On Apple platforms `fsync` reaches only the drive's cache, not the medium: the syncs
    /// SQLite makes (checkpoints) use F_FULLFSYNC instead, as Realm's do. Commits themselves are
    /// not synced (`synchronous = NORMAL`, which GRDB sets for WAL): a synced realm syncs its log
    /// before anything that depends on a commit leaves the device (`RealmFiles.syncLog`).
    static func syncToTheMedium(_ db: Database) throws {
        #if canImport(Darwin)
        try db.execute(sql: "PRAGMA fullfsync = ON")
        try db.execute(sql: "PRAGMA checkpoint_fullfsync = ON")
        #endif
    }

    /// Copies the database as this connection sees it (its open read transaction's snapshot, if
    /// any) to a new file at `path`, with SQLite's online backup in one step; encrypted with
    /// `key` when given (the backup copies pages as SQLite sees them: decrypted on read,
    /// encrypted again for the copy, so a copy may change or drop the key).
    func copy(toPath path: String, key: EncryptionKey? = nil) throws {
        try run { db in
            let destination = try Connection.databaseQueue(path: path, key: key) { $0.journalMode = .wal }
            try destination.inDatabase { try db.backup(to: $0) }
            try destination.close()
        }
    }

    /// Why the file at `path` could not be opened, as a `Realm.Error` with a code callers can match.
    static func openError(_ error: any Error, path: String, readOnly: Bool) -> Realm.Error {
        let underlying: any Error & Sendable = error
        let files = FileManager.default
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            if CipherVFS.isEncryptedFile(atPath: path) {
                return Realm.Error(.invalidDatabase, "'\(path)' is encrypted: open it with its encryption key", path: path, underlying: underlying)
            }
            return Realm.Error(.invalidDatabase, "\(path) is not a realm file (\(error.message ?? "not a database"))", underlying: underlying)
        }
        var isFolder: ObjCBool = false
        if files.fileExists(atPath: path, isDirectory: &isFolder) {
            if isFolder.boolValue {
                return Realm.Error(.fileAccess, "cannot open \(path): it is a folder", underlying: underlying)
            }
            if !files.isReadableFile(atPath: path) || (!readOnly && !files.isWritableFile(atPath: path)) {
                return Realm.Error(.filePermissionDenied, "permission denied to \(readOnly ? "read" : "read and write") \(path)", underlying: underlying)
            }
        } else if !readOnly, case let folder = (path as NSString).deletingLastPathComponent,
                  files.fileExists(atPath: folder), !files.isWritableFile(atPath: folder) {
            return Realm.Error(.filePermissionDenied, "permission denied to create \(path)", underlying: underlying)
        }
        return Realm.Error(.fileAccess, "cannot open \(path): \(error)", underlying: underlying)
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
        if let sharedLock {
            sharedLock.lock()
            defer { sharedLock.unlock() }
            return try runUnlocked(body)
        }
        return try runUnlocked(body)
    }

    /// Runs `body` under the shared lock when the connection has one.
    func serialized<T>(_ body: () throws -> T) rethrows -> T {
        guard let sharedLock else { return try body() }
        sharedLock.lock()
        defer { sharedLock.unlock() }
        return try body()
    }

    private func runUnlocked<T>(_ body: (Database) throws -> T) throws -> T {
        if let db = current { return try body(db) }
        return try queue.inDatabase { db in
            current = db
            currentThread = pthread_self()
            defer { current = nil; currentThread = nil }
            return try body(db)
        }
    }

    /// Ends the open transaction, if any, and puts the memory map back to its usual limit, so the
    /// connection can serve another realm. False when it cannot (it should be closed then).
    func resetForReuse() -> Bool {
        do {
            try run { db in
                if db.isInsideTransaction { try db.execute(sql: "ROLLBACK") }
            }
            try setMemoryMapLimit(Connection.mmapSize)
            return true
        } catch {
            return false
        }
    }

    /// Whether `thread` is inside a `run` call of this connection: a call nested in one that was
    /// already checked (a realm confined to a queue is checked outside GRDB's queue).
    func isRunning(on thread: pthread_t) -> Bool {
        guard let currentThread else { return false }
        return pthread_equal(currentThread, thread) != 0
    }

    func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        try run { db in try step(sql, arguments, db) }
    }

    /// Runs an `INSERT` and returns the row number it gave the new row.
    func insert(_ sql: String, _ arguments: [SQLValue]) throws -> Int64 {
        try run { db in
            try step(sql, arguments, db)
            return sqlite3_last_insert_rowid(db.sqliteConnection)
        }
    }

    /// Runs `sql`'s cached statement once with `arguments`, on the connection's queue.
    private func step(_ sql: String, _ arguments: [SQLValue], _ db: Database) throws {
        let statement = try db.cachedStatement(sql: sql)
        let raw = try bind(statement, arguments, db)
        let code = sqlite3_step(raw)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw failure(code, sql, db) }
        sqlite3_reset(raw)
    }

    /// Every row of a query, columns decoded straight from SQLite (the hot path of reads).
    func fetchAll(_ sql: String, _ arguments: [SQLValue] = []) throws -> [[SQLValue]] {
        try run { db in
            let statement = try db.cachedStatement(sql: sql)
            let raw = try bind(statement, arguments, db)
            defer { sqlite3_reset(raw) }
            let columns = sqlite3_column_count(raw)
            var rows: [[SQLValue]] = []
            while true {
                let code = sqlite3_step(raw)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw failure(code, sql, db) }
                var values: [SQLValue] = []
                values.reserveCapacity(Int(columns))
                for i in 0..<columns { values.append(Self.column(raw, i)) }
                rows.append(values)
            }
            return rows
        }
    }

    /// Rows whose first column is the row number, split from the other columns as results and
    /// accessors keep them.
    func fetchRows(_ sql: String, _ arguments: [SQLValue]) throws -> [(row: Int64, values: [SQLValue])] {
        try run { db in
            let statement = try db.cachedStatement(sql: sql)
            let raw = try bind(statement, arguments, db)
            defer { sqlite3_reset(raw) }
            let columns = sqlite3_column_count(raw)
            var rows: [(row: Int64, values: [SQLValue])] = []
            while true {
                let code = sqlite3_step(raw)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw failure(code, sql, db) }
                var values: [SQLValue] = []
                values.reserveCapacity(Int(columns) - 1)
                for i in 1..<max(columns, 1) { values.append(Self.column(raw, i)) }
                rows.append((sqlite3_column_int64(raw, 0), values))
            }
            return rows
        }
    }

    private func bind(_ statement: Statement, _ arguments: [SQLValue], _ db: Database) throws -> OpaquePointer {
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
        for (offset, value) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(raw, index)
            case .integer(let i): code = sqlite3_bind_int64(raw, index, i)
            case .real(let d): code = sqlite3_bind_double(raw, index, d)
            case .text(let s): code = sqlite3_bind_text(raw, index, s, -1, Self.transient)
            case .blob(let d):
                code = d.withUnsafeBytes { sqlite3_bind_blob(raw, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), Self.transient) }
            }
            guard code == SQLITE_OK else { throw failure(code, statement.sql, db) }
        }
        return raw
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func column(_ raw: OpaquePointer, _ i: Int32) -> SQLValue {
        switch sqlite3_column_type(raw, i) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(raw, i))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(raw, i))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(raw, i))
            guard let text = sqlite3_column_text(raw, i) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(raw, i))
            guard let bytes = sqlite3_column_blob(raw, i), count > 0 else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }

    private func failure(_ code: Int32, _ sql: String, _ db: Database) -> DatabaseError {
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
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

/// Raw SQLite access to a realm file, for tests that inspect or damage what the store wrote.
@_spi(Testing)
public enum RawSQLite {
    /// Runs `sql` (one or more statements) on the file at `path`, outside any realm (an
    /// encrypted one with its `encryptionKey`).
    public static func execute(_ sql: String, path: String, encryptionKey: Data? = nil) throws {
        let queue = try Connection.databaseQueue(path: path, key: EncryptionKey.make(encryptionKey))
        try queue.inDatabase { try $0.execute(sql: sql) }
        try queue.close()
    }

    /// The rows of `sql` on the file at `path`, each column as text (`nil` for NULL).
    public static func fetch(_ sql: String, path: String, encryptionKey: Data? = nil) throws -> [[String?]] {
        let queue = try Connection.databaseQueue(path: path, key: EncryptionKey.make(encryptionKey)) { $0.readonly = true }
        let rows = try queue.inDatabase { db in
            try Row.fetchAll(db, sql: sql).map { row in
                (0..<row.count).map { index -> String? in
                    let value: DatabaseValue = row[index]
                    return value.isNull ? nil : text(value)
                }
            }
        }
        try queue.close()
        return rows
    }

    private static func text(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: ""
        case .int64(let i): String(i)
        case .double(let d): String(d)
        case .string(let s): s
        case .blob(let d): d.map { String(format: "%02x", $0) }.joined()
        }
    }
}
