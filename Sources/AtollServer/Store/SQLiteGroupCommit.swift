import AtollCore
import Foundation
import GRDB

/// The embedded store's writer: write transactions that queue while one commits share the next
/// commit, and with it one sync of the log.
///
/// With `synchronous = FULL` every commit waits for the disk (milliseconds), and SQLite has one
/// writer: without grouping, one user's burst of writes (new client files, bookkeeping) makes
/// every other user's upload wait for each of those syncs in turn. Here a write that arrives while
/// a group is being committed joins the next group, so it waits for at most one sync besides its
/// own. Each write runs in a savepoint of its own, so a write that throws undoes only itself; a
/// failed commit fails every write of its group (none of them is durable).
///
/// A write's result is returned only after its group committed, as with `DatabasePool.write`.
/// A group ends when no write is waiting, at ``maxWritesPerGroup`` writes, or once its writes
/// held the lock for ``maxGroupDuration``, so one group never holds the writer unboundedly.
final class SQLiteGroupCommit: Sendable {
    private let pool: DatabasePool
    private let waiting = Locked(Queue())

    /// The most writes committed together.
    let maxWritesPerGroup: Int
    /// How long a group takes writes in before it commits.
    let maxGroupDuration: Duration

    private struct Queue {
        var writes: [any PendingWrite] = []
        var head = 0
        var committing = false

        mutating func next() -> (any PendingWrite)? {
            guard head < writes.count else { return nil }
            defer {
                head += 1
                if head == writes.count { writes.removeAll(keepingCapacity: true); head = 0 }
            }
            return writes[head]
        }
    }

    init(pool: DatabasePool, maxWritesPerGroup: Int = 64, maxGroupDuration: Duration = .milliseconds(20)) {
        self.pool = pool
        self.maxWritesPerGroup = maxWritesPerGroup
        self.maxGroupDuration = maxGroupDuration
    }

    /// Runs `body` in a write transaction shared with the writes queued beside it and returns its
    /// result once that transaction committed.
    func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        // The write is run before its continuation resumes, and lets go of `body` once run.
        try await withoutActuallyEscaping(body) { body in
            try await withCheckedThrowingContinuation { continuation in
                enqueue(Write(body: body, continuation: continuation))
            }
        }
    }

    /// Writes queued and not yet taken into a group (for tests).
    var queuedWrites: Int { waiting.withLock { $0.writes.count - $0.head } }

    private func enqueue(_ write: any PendingWrite) {
        let startsCommitting = waiting.withLock { queue -> Bool in
            queue.writes.append(write)
            guard !queue.committing else { return false }
            queue.committing = true
            return true
        }
        guard startsCommitting else { return }
        pool.asyncWriteWithoutTransaction { db in self.commitGroups(db) }
    }

    /// Commits groups until no write is waiting.
    private func commitGroups(_ db: Database) {
        while true {
            guard let first = waiting.withLock({ queue -> (any PendingWrite)? in
                let next = queue.next()
                if next == nil { queue.committing = false }
                return next
            }) else { return }
            var group = [first]
            var commitError: (any Error)?
            do {
                try db.inTransaction(.immediate) {
                    let start = ContinuousClock.now
                    first.run(db)
                    while group.count < maxWritesPerGroup, ContinuousClock.now - start < maxGroupDuration,
                          let next = waiting.withLock({ $0.next() }) {
                        group.append(next)
                        next.run(db)
                    }
                    return .commit
                }
            } catch {
                commitError = error
            }
            for write in group { write.finish(commitError: commitError) }
        }
    }
}

/// One queued write: runs in its savepoint, then learns whether its group committed.
private protocol PendingWrite: Sendable {
    func run(_ db: Database)
    func finish(commitError: (any Error)?)
}

private final class Write<T: Sendable>: PendingWrite, @unchecked Sendable {
    // `body` and `outcome` are used by `run` and then `finish`, both on the writer's queue, in
    // order. `body` is let go once run: the caller's closure must not outlive its call.
    private var body: (@Sendable (Database) throws -> T)?
    private let continuation: CheckedContinuation<T, any Error>
    private var outcome: Result<T, any Error>?

    init(body: @escaping @Sendable (Database) throws -> T, continuation: CheckedContinuation<T, any Error>) {
        self.body = body
        self.continuation = continuation
    }

    func run(_ db: Database) {
        guard let body else { return }
        self.body = nil
        // SQLite ends a transaction itself on some errors (a full disk, an I/O error): a savepoint
        // opened then would be a transaction of its own, committed outside the group.
        guard db.isInsideTransaction else {
            outcome = .failure(DatabaseError(resultCode: .SQLITE_ABORT, message: "the write's group was rolled back"))
            return
        }
        do {
            var value: T?
            try db.inSavepoint {
                value = try body(db)
                return .commit
            }
            outcome = .success(value!)
        } catch {
            outcome = .failure(error)
        }
    }

    func finish(commitError: (any Error)?) {
        switch (outcome, commitError) {
        case (.failure(let error)?, _): continuation.resume(throwing: error)
        case (_, let error?): continuation.resume(throwing: error)
        case (.success(let value)?, nil): continuation.resume(returning: value)
        case (nil, nil): continuation.resume(throwing: DatabaseError(resultCode: .SQLITE_MISUSE, message: "a write was not run"))
        }
    }
}
