@testable import AtollServer
import AtollCore
import Foundation
import GRDB
import Testing

/// The embedded store's group commit: writes queued behind a commit share the next one, each
/// undone alone when it throws, and a group never grows past its bound.
@Suite struct SQLiteGroupCommitTests {
    /// Counts the transactions that committed on a pool.
    final class CommitCounter: TransactionObserver, @unchecked Sendable {
        let count = Locked(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    struct Refused: Error, Equatable { let n: Int }

    static func pool() throws -> (DatabasePool, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("group-commit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: folder.appendingPathComponent("db.sqlite").path)
        try pool.write { try $0.execute(sql: "CREATE TABLE t (n INTEGER PRIMARY KEY)") }
        return (pool, folder)
    }

    /// Holds the writer in a first write (it inserts -1) until `count` more writes are queued
    /// behind it, then lets them all run; returns the first write's result and the queued ones'
    /// in order of `n`.
    static func queueBehindABlockedWrite(
        _ writer: SQLiteGroupCommit, count: Int, _ body: @escaping @Sendable (Database, Int) throws -> Int
    ) async throws -> (first: Result<Int, any Error>, queued: [Result<Int, any Error>]) {
        let release = DispatchSemaphore(value: 0)
        let running = Locked(false)
        let blocked = Task { () -> Result<Int, any Error> in
            do {
                return .success(try await writer.write { db -> Int in
                    running.withLock { $0 = true }
                    release.wait()
                    try db.execute(sql: "INSERT INTO t (n) VALUES (-1)")
                    return -1
                })
            } catch {
                return .failure(error)
            }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while !running.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let queued = Task {
            await withTaskGroup(of: (Int, Result<Int, any Error>).self) { group in
                for n in 0..<count {
                    group.addTask {
                        do {
                            return (n, .success(try await writer.write { try body($0, n) }))
                        } catch {
                            return (n, .failure(error))
                        }
                    }
                }
                var results: [(Int, Result<Int, any Error>)] = []
                for await result in group { results.append(result) }
                return results.sorted { $0.0 < $1.0 }.map(\.1)
            }
        }
        while writer.queuedWrites < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(writer.queuedWrites == count)
        release.signal()
        return (await blocked.value, await queued.value)
    }

    @Test func writesQueuedBehindACommitShareTheNextOne() async throws {
        let (pool, folder) = try Self.pool()
        defer { try? FileManager.default.removeItem(at: folder) }
        let commits = CommitCounter()
        pool.add(transactionObserver: commits)
        let writer = SQLiteGroupCommit(pool: pool, maxWritesPerGroup: 64, maxGroupDuration: .seconds(60))
        let (first, results) = try await Self.queueBehindABlockedWrite(writer, count: 200) { db, n in
            try db.execute(sql: "INSERT INTO t (n) VALUES (?)", arguments: [n])
            return n * 2
        }
        #expect(try first.get() == -1)
        #expect(results.map { try? $0.get() } == (0..<200).map { $0 * 2 })
        #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == 201)
        // 201 writes in groups of at most 64: 64 + 64 + 64 + 9.
        #expect(commits.count.withLock { $0 } == 4)
    }

    @Test func aWriteThatThrowsIsUndoneAloneAndItsGroupCommits() async throws {
        let (pool, folder) = try Self.pool()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = SQLiteGroupCommit(pool: pool, maxWritesPerGroup: 64, maxGroupDuration: .seconds(60))
        let (first, results) = try await Self.queueBehindABlockedWrite(writer, count: 10) { db, n in
            try db.execute(sql: "INSERT INTO t (n) VALUES (?)", arguments: [n])
            if n % 3 == 0 { throw Refused(n: n) }
            return n
        }
        #expect(try first.get() == -1)
        for (n, result) in results.enumerated() {
            if n % 3 == 0 {
                #expect(throws: Refused(n: n)) { try result.get() }
            } else {
                #expect(try result.get() == n)
            }
        }
        let stored = try await pool.read { try Int.fetchAll($0, sql: "SELECT n FROM t ORDER BY n") }
        #expect(stored == [-1, 1, 2, 4, 5, 7, 8])
    }

    @Test func aFailedCommitFailsEveryWriteOfItsGroup() async throws {
        let (pool, folder) = try Self.pool()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A deferred foreign key breaks at commit time only, whichever write of the group made it.
        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE parent (id INTEGER PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
        }
        let writer = SQLiteGroupCommit(pool: pool, maxWritesPerGroup: 64, maxGroupDuration: .seconds(60))
        let (first, results) = try await Self.queueBehindABlockedWrite(writer, count: 5) { db, n in
            try db.execute(sql: "INSERT INTO t (n) VALUES (?)", arguments: [n])
            if n == 2 { try db.execute(sql: "INSERT INTO child (id, parent) VALUES (1, 99)") }
            return n
        }
        // One group: the blocked write and the five behind it.
        #expect((try? first.get()) == nil)
        #expect(results.allSatisfy { (try? $0.get()) == nil })
        #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == 0)
        // The writer goes on after a failed group.
        #expect(try await writer.write { db -> Int in
            try db.execute(sql: "INSERT INTO t (n) VALUES (1000)")
            return 1
        } == 1)
    }

    @Test func aGroupEndsAtItsDuration() async throws {
        let (pool, folder) = try Self.pool()
        defer { try? FileManager.default.removeItem(at: folder) }
        let commits = CommitCounter()
        pool.add(transactionObserver: commits)
        let writer = SQLiteGroupCommit(pool: pool, maxWritesPerGroup: 64, maxGroupDuration: .milliseconds(1))
        _ = try await Self.queueBehindABlockedWrite(writer, count: 4) { db, n in
            Thread.sleep(forTimeInterval: 0.005)
            try db.execute(sql: "INSERT INTO t (n) VALUES (?)", arguments: [n])
            return n
        }
        // The blocked write and each queued one take longer than a group may: one commit each.
        #expect(commits.count.withLock { $0 } == 1 + 4)
    }
}
