import Atoll
import Foundation
import GRDBSQLite

final class BenchTask: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted(indexed: true) var owner = ""
    @Persisted var done = false
    @Persisted var priority = 0

    override class func className() -> String { "Task" }
}

/// W1–W3 of the local store: bulk insert, small transactions, an indexed query.
///
/// Both sides use one SQLite file in WAL mode with `synchronous = NORMAL` and a 256 MiB memory
/// map (a commit survives a
/// crash of the process, not of the machine), the same table shape and the same index on `owner`.
struct LocalBenchmark {
    let count = 100_000
    let smallTransactions = 5_000
    let queryRounds = Int(ProcessInfo.processInfo.environment["ATOLL_BENCH_QUERIES"] ?? "") ?? 100

    /// Each workload runs `rounds` times on fresh files; the best time of each side counts, which
    /// keeps a busy machine's noise out of the ratio.
    let rounds = Int(ProcessInfo.processInfo.environment["ATOLL_BENCH_ROUNDS"] ?? "") ?? 3
    /// Only this Atoll workload runs after W1 (whose data the others use), for profiling:
    /// `ATOLL_BENCH_ONLY=W3`.
    let only = ProcessInfo.processInfo.environment["ATOLL_BENCH_ONLY"]

    func run() throws {
        let rows = TaskRow.generate(count)
        let extra = TaskRow.generate(smallTransactions, seed: 7).map { row -> TaskRow in
            var row = row
            row.id[0] = 0x66
            row.preparedId = ObjectId(bytes: row.id)
            return row
        }
        var best: [String: (raw: Double, atoll: Double)] = [:]
        var bestEncrypted: [String: Double] = [:]
        var matches = 0
        for _ in 0..<rounds {
            let times = try round(rows, extra, &matches)
            for (workload, time) in times {
                let old = best[workload] ?? (.infinity, .infinity)
                best[workload] = (min(old.raw, time.raw), min(old.atoll, time.atoll))
            }
            if only == nil {
                for (workload, time) in try encryptedRound(rows, extra) { bestEncrypted[workload] = min(bestEncrypted[workload] ?? .infinity, time) }
            }
        }
        compare("W1", count: Double(count), best["W1"]!, unit: "obj/s")
        compare("W2", count: Double(smallTransactions), best["W2"]!, unit: "tx/s")
        compare("W3", count: Double(queryRounds), best["W3"]!, unit: "queries/s")
        report("atoll", "W3_matches", Double(matches), "objects")
        if let w1 = bestEncrypted["W1"], let w2 = bestEncrypted["W2"], let w3 = bestEncrypted["W3"] {
            compareEncrypted("W1", count: Double(count), encrypted: w1, best["W1"]!, unit: "obj/s")
            compareEncrypted("W2", count: Double(smallTransactions), encrypted: w2, best["W2"]!, unit: "tx/s")
            compareEncrypted("W3", count: Double(queryRounds), encrypted: w3, best["W3"]!, unit: "queries/s")
        }
    }

    private func round(_ rows: [TaskRow], _ extra: [TaskRow], _ matches: inout Int) throws -> [String: (raw: Double, atoll: Double)] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite = try RawSQLite(path: folder.appendingPathComponent("raw.sqlite").path)
        var config = Realm.Configuration(fileURL: folder.appendingPathComponent("atoll.realm"), objectTypes: [BenchTask.self])
        // `ATOLL_BENCH_RECORD_HISTORY=1`: the realm records history as a synced one does (what
        // every local realm did before 2026-11-29), to measure what keeping none saves.
        config.recordsHistoryForTesting = ProcessInfo.processInfo.environment["ATOLL_BENCH_RECORD_HISTORY"] == "1"

        let realm = try Realm(configuration: config)
        var times: [String: (raw: Double, atoll: Double)] = [:]

        // W1: every row in one write transaction.
        let rawW1 = try measure { try sqlite.insertAll(rows) }
        let atollW1 = try measure {
            try realm.write {
                for row in rows { realm.add(BenchTask(row)) }
            }
        }
        times["W1"] = (rawW1, atollW1)

        // W2: one object per write transaction.
        let rawW2 = try measure { for row in extra { try sqlite.insertOne(row) } }
        let atollW2 = only != nil && only != "W2" ? rawW2 : try measure {
            for row in extra { try realm.write { realm.add(BenchTask(row)) } }
        }
        if only != nil && only != "W2" {
            // Untimed: W3 counts the same rows on both sides.
            try realm.write { for row in extra { realm.add(BenchTask(row)) } }
        }
        times["W2"] = (rawW2, atollW2)

        // W3: count and read the matches of an indexed query, a fresh query each time.
        var rawMatches = 0
        let rawW3 = try measure {
            for _ in 0..<queryRounds { rawMatches = try sqlite.queryOwner("owner-7") }
        }
        var atollMatches = rawMatches
        let atollW3 = only != nil && only != "W3" ? rawW3 : measure {
            for _ in 0..<queryRounds {
                let results = realm.objects(BenchTask.self).where { $0.owner == "owner-7" && $0.done == false }
                atollMatches = results.count
                var length = 0
                for task in results { length += task.name.utf8.count }
                precondition(length == atollMatches * 20)
            }
        }
        precondition(rawMatches == atollMatches, "both sides must find the same \(rawMatches) tasks (atoll: \(atollMatches))")
        times["W3"] = (rawW3, atollW3)
        matches = atollMatches
        return times
    }

    private func compare(_ workload: String, count: Double, _ time: (raw: Double, atoll: Double), unit: String) {
        report("sqlite", workload, count / time.raw, unit)
        report("atoll", workload, count / time.atoll, unit)
        report("atoll", workload + "_time_ratio", time.atoll / time.raw, "x")
    }
}

extension BenchTask {
    convenience init(_ row: TaskRow) {
        self.init()
        _id = row.preparedId
        name = row.name
        owner = row.owner
        done = row.done
        priority = row.priority
    }
}

/// The baseline: the SQLite C API with prepared statements, nothing else.
final class RawSQLite {
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var query: OpaquePointer?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String) throws {
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw Failure(description: "cannot open \(path)") }
        try exec("PRAGMA journal_mode = WAL")
        try exec("PRAGMA synchronous = NORMAL")
        try exec("PRAGMA mmap_size = 268435456")  // as Atoll sets it
        try exec("CREATE TABLE task (_row INTEGER PRIMARY KEY AUTOINCREMENT, _id BLOB, name TEXT, owner TEXT, done INTEGER, priority INTEGER)")
        try exec("CREATE UNIQUE INDEX task_id ON task(_id)")
        try exec("CREATE INDEX task_owner ON task(owner)")
        insert = try prepare("INSERT INTO task (_id, name, owner, done, priority) VALUES (?, ?, ?, ?, ?)")
        query = try prepare("SELECT _row, _id, name, owner, done, priority FROM task WHERE owner = ? AND done = 0 ORDER BY _row")
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_finalize(query)
        sqlite3_close(db)
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        return statement
    }

    private func bindAndStep(_ row: TaskRow) throws {
        sqlite3_reset(insert)
        _ = row.id.withUnsafeBytes { sqlite3_bind_blob(insert, 1, $0.baseAddress, 12, unsafeBitCast(-1, to: sqlite3_destructor_type.self)) }
        sqlite3_bind_text(insert, 2, row.name, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        sqlite3_bind_text(insert, 3, row.owner, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        sqlite3_bind_int64(insert, 4, row.done ? 1 : 0)
        sqlite3_bind_int64(insert, 5, Int64(row.priority))
        guard sqlite3_step(insert) == SQLITE_DONE else { throw Failure(description: String(cString: sqlite3_errmsg(db))) }
    }

    func insertAll(_ rows: [TaskRow]) throws {
        try exec("BEGIN IMMEDIATE")
        for row in rows { try bindAndStep(row) }
        try exec("COMMIT")
    }

    func insertOne(_ row: TaskRow) throws {
        try exec("BEGIN IMMEDIATE")
        try bindAndStep(row)
        try exec("COMMIT")
    }

    /// Sets the owner of `rows` in one transaction (W6's baseline).
    func updateOwners(of rows: [TaskRow], to owner: String) throws {
        try exec("BEGIN IMMEDIATE")
        for row in rows { try run("UPDATE task SET owner = ? WHERE _id = ?", owner, row.id) }
        try exec("COMMIT")
    }

    /// Deletes `rows` in one transaction (W6's baseline).
    func delete(_ rows: [TaskRow]) throws {
        try exec("BEGIN IMMEDIATE")
        for row in rows { try run("DELETE FROM task WHERE _id = ?", nil, row.id) }
        try exec("COMMIT")
    }

    /// Runs one statement with an optional text and an id blob (prepared each time: W6 is small).
    private func run(_ sql: String, _ text: String?, _ id: [UInt8]) throws {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw Failure(description: String(cString: sqlite3_errmsg(db))) }
        defer { sqlite3_finalize(statement) }
        var index: Int32 = 1
        if let text {
            sqlite3_bind_text(statement, 1, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            index = 2
        }
        _ = id.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, 12, unsafeBitCast(-1, to: sqlite3_destructor_type.self)) }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw Failure(description: String(cString: sqlite3_errmsg(db))) }
    }

    /// Reads every matching row (all columns, as an object store would) and returns the count.
    func queryOwner(_ owner: String) throws -> Int {
        sqlite3_reset(query)
        sqlite3_bind_text(query, 1, owner, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        var count = 0
        var length = 0
        while sqlite3_step(query) == SQLITE_ROW {
            count += 1
            length += Int(sqlite3_column_bytes(query, 2))
            _ = sqlite3_column_text(query, 3)
            _ = sqlite3_column_blob(query, 1)
        }
        precondition(length == count * 20)
        return count
    }
}
