import AtollCore
import Foundation
import Synchronization

// Flexible-sync subscription sets in the realm file.
//
// Every `update` of the subscriptions commits a new set version (1, 2, …) holding a copy of the
// previous set with the block's changes. Version 0 means no set was ever committed: it is complete
// and empty. A version is pending until the server completes it (its data is downloaded) or
// rejects it (error). A pending version is superseded as soon as a newer one is committed, and
// every older version once a newer one completes; superseded versions keep their row (their state)
// but not their subscriptions.
//
// The rows are raw SQL, like the sync state: they record no history and never sync as data.

/// One subscription of a committed (or draft) set.
struct StoredSubscription: Equatable {
    var id: ObjectId
    var name: String?
    var objectType: String
    /// Query text as sent to the server, arguments inlined.
    var query: String
    var createdAt: Date
    var updatedAt: Date
}

/// Where a set version stands with the server.
enum StoredSubscriptionState: Equatable {
    case pending
    case complete
    case error(String)
    case superseded
}

/// A committed set version and its subscriptions, in the order they were added.
struct StoredSubscriptionSet: Equatable {
    var version: Int64
    var subscriptions: [StoredSubscription]

    static let empty = StoredSubscriptionSet(version: 0, subscriptions: [])
}

/// The newest subscription set, as the sync engine sends it to the server.
struct SubscriptionSetRecord: Equatable, Sendable {
    var version: Int64
    var queries: [TypeQuery]
}

/// The SQL of the subscription tables, on any connection to the file (a realm's, whose snapshot
/// it reads, or a fresh one that sees the newest commit).
enum SubscriptionStorage {
    static let setsTable = "_atoll_subscription_sets"
    static let subscriptionsTable = "_atoll_subscriptions"

    static func tablesExist(_ connection: Connection) throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM sqlite_master WHERE name = ?", [.text(setsTable)]) != nil
    }

    /// Creates the tables; inside a write transaction. Dates are seconds since 2001 (`Date`'s own
    /// representation, so they read back exactly).
    static func createTables(_ connection: Connection) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS \(setsTable) (
                version INTEGER PRIMARY KEY, state TEXT NOT NULL, error TEXT, created_at REAL NOT NULL)
            """)
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS \(subscriptionsTable) (
                set_version INTEGER NOT NULL, position INTEGER NOT NULL, id TEXT NOT NULL, name TEXT,
                object_type TEXT NOT NULL, query TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
                PRIMARY KEY (set_version, position)) WITHOUT ROWID
            """)
    }

    /// The newest committed set, or `nil` when none was ever committed.
    static func latest(_ connection: Connection) throws -> StoredSubscriptionSet? {
        guard try tablesExist(connection),
              let version = try connection.fetchInt("SELECT MAX(version) FROM \(setsTable)") else { return nil }
        let rows = try connection.fetchAll("""
            SELECT id, name, object_type, query, created_at, updated_at FROM \(subscriptionsTable)
            WHERE set_version = ? ORDER BY position
            """, [.integer(version)])
        return StoredSubscriptionSet(version: version, subscriptions: try rows.map(subscription))
    }

    private static func subscription(_ row: [SQLValue]) throws -> StoredSubscription {
        guard case .text(let id) = row[0], let objectId = try? ObjectId(string: id),
              case .text(let objectType) = row[2], case .text(let query) = row[3],
              case .real(let created) = row[4], case .real(let updated) = row[5] else {
            throw Realm.Error(.invalidDatabase, "a stored flexible-sync subscription is damaged")
        }
        var name: String?
        if case .text(let text) = row[1] { name = text }
        return StoredSubscription(id: objectId, name: name, objectType: objectType, query: query,
                                  createdAt: Date(timeIntervalSinceReferenceDate: created),
                                  updatedAt: Date(timeIntervalSinceReferenceDate: updated))
    }

    static func state(of version: Int64, _ connection: Connection) throws -> StoredSubscriptionState {
        guard try tablesExist(connection) else { return .complete }
        if version == 0 {
            // The empty set is outdated once a newer set completed (the newest completed one stays
            // complete until an even newer one completes).
            let completed = try connection.fetchOne("SELECT 1 FROM \(setsTable) WHERE state = 'complete'")
            return completed == nil ? .complete : .superseded
        }
        guard let row = try connection.fetchOne("SELECT state, error FROM \(setsTable) WHERE version = ?", [.integer(version)]),
              case .text(let state) = row[0] else { return .superseded }
        switch state {
        case "pending": return .pending
        case "complete": return .complete
        case "error":
            if case .text(let message) = row[1] { return .error(message) }
            return .error("the server rejected the subscriptions")
        default: return .superseded
        }
    }

    /// Stores `subscriptions` as the next version, pending; supersedes older pending versions.
    /// Inside a write transaction, after ``createTables(_:)``.
    static func insert(_ subscriptions: [StoredSubscription], _ connection: Connection) throws -> Int64 {
        let version = (try connection.fetchInt("SELECT MAX(version) FROM \(setsTable)") ?? 0) + 1
        try connection.execute("INSERT INTO \(setsTable) (version, state, error, created_at) VALUES (?, 'pending', NULL, ?)",
                               [.integer(version), .real(Date().timeIntervalSinceReferenceDate)])
        for (position, subscription) in subscriptions.enumerated() {
            try connection.execute("""
                INSERT INTO \(subscriptionsTable) (set_version, position, id, name, object_type, query, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [
                    .integer(version), .integer(Int64(position)), .text(subscription.id.stringValue),
                    subscription.name.map(SQLValue.text) ?? .null, .text(subscription.objectType), .text(subscription.query),
                    .real(subscription.createdAt.timeIntervalSinceReferenceDate),
                    .real(subscription.updatedAt.timeIntervalSinceReferenceDate),
                ])
        }
        try connection.execute("UPDATE \(setsTable) SET state = 'superseded' WHERE version < ? AND state = 'pending'",
                               [.integer(version)])
        try dropSupersededSubscriptions(connection)
        return version
    }

    /// The server completed `version`: when it was pending it becomes complete and every older
    /// version superseded.
    static func markComplete(_ version: Int64, _ connection: Connection) throws {
        try connection.execute("UPDATE \(setsTable) SET state = 'complete', error = NULL WHERE version = ? AND state = 'pending'",
                               [.integer(version)])
        guard try state(of: version, connection) == .complete else { return }
        try connection.execute("UPDATE \(setsTable) SET state = 'superseded', error = NULL WHERE version < ? AND state != 'superseded'",
                               [.integer(version)])
        try dropSupersededSubscriptions(connection)
    }

    static func markError(_ version: Int64, message: String, _ connection: Connection) throws {
        try connection.execute("UPDATE \(setsTable) SET state = 'error', error = ? WHERE version = ? AND state = 'pending'",
                               [.text(message), .integer(version)])
    }

    private static func dropSupersededSubscriptions(_ connection: Connection) throws {
        try connection.execute("""
            DELETE FROM \(subscriptionsTable)
            WHERE set_version IN (SELECT version FROM \(setsTable) WHERE state = 'superseded')
            """)
    }
}

// MARK: - The sync engine's side

extension Realm {
    /// The newest subscription set (nil when there is none, i.e. version 0).
    ///
    /// Outside a write transaction the realm is refreshed first, so the set is the newest one
    /// committed by any realm of the file.
    func latestSubscriptionSet() throws -> SubscriptionSetRecord? {
        try checkThread()
        if transaction == nil && !isFrozen { refresh() }
        guard let latest = try SubscriptionStorage.latest(connection) else { return nil }
        var seen = Set<TypeQuery>()
        let queries = latest.subscriptions.map { TypeQuery(objectType: $0.objectType, query: $0.query) }
            .filter { seen.insert($0).inserted }
        return SubscriptionSetRecord(version: latest.version, queries: queries)
    }

    /// Called by the engine INSIDE a write transaction it already opened (this opens none): the
    /// server completed `version` (it becomes complete, every older version superseded) or
    /// rejected it (`complete: false`; it is in error with `error` as the message). Only a pending
    /// version changes; a version already superseded stays so.
    func markSubscriptionSet(version: Int64, complete: Bool, error: String?) throws {
        try checkThread()
        guard transaction != nil else {
            throw Error(.notInWriteTransaction, "Subscription set states can only change inside a write transaction")
        }
        try SubscriptionStorage.createTables(connection)
        if complete {
            try SubscriptionStorage.markComplete(version, connection)
        } else {
            try SubscriptionStorage.markError(version, message: error ?? "the server rejected the subscriptions", connection)
        }
    }

    /// The newest subscription set through this realm's snapshot (version 0 when there is none).
    func subscriptionSetInSnapshot() throws -> StoredSubscriptionSet {
        try SubscriptionStorage.latest(connection) ?? .empty
    }
}

/// Wakes whoever waits for a subscription set of a file to settle.
enum SubscriptionEvents {
    private static let listeners = Mutex<[String: [UInt64: AsyncStream<Void>.Continuation]]>([:])
    private static let nextListener = Atomic<UInt64>(0)

    /// The engine calls this after it committed a mark, so waiters (update async / onComplete /
    /// subscribe(waitForSync:)) re-read the state. `path` is the realm's `configuration.storageKey`.
    static func stateChanged(path: String) {
        let continuations = listeners.withLock { Array(($0[path] ?? [:]).values) }
        for continuation in continuations { continuation.yield() }
    }

    static func listen(path: String, _ continuation: AsyncStream<Void>.Continuation) -> UInt64 {
        let id = nextListener.add(1, ordering: .relaxed).newValue
        listeners.withLock { $0[path, default: [:]][id] = continuation }
        return id
    }

    static func stopListening(path: String, id: UInt64) {
        listeners.withLock { listeners in
            listeners[path]?.removeValue(forKey: id)
            if listeners[path]?.isEmpty == true { listeners.removeValue(forKey: path) }
        }
    }
}

/// A wait for one set version to settle: complete or superseded (returns), error (throws the
/// server's `SyncError`). It reads the file through its own connection, never through a realm, so
/// it can run on any thread.
struct SubscriptionWait: Sendable {
    let storageKey: String
    let databasePath: String
    let readOnly: Bool
    let version: Int64

    /// Waits, throwing `POSIXError(.ETIMEDOUT)` after `timeout` seconds (none when `nil` or 0)
    /// and `CancellationError` when the task is cancelled.
    func run(timeout: TimeInterval?) async throws {
        guard let timeout, timeout > 0 else { return try await untilSettled() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await untilSettled() }
            group.addTask {
                try await _Concurrency.Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                // Realm's domain and code; swift-corelibs-foundation drops a POSIXError's userInfo,
                // so no message rides along.
                throw POSIXError(.ETIMEDOUT)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private func untilSettled() async throws {
        let (events, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Listen before the first read, so a change committed in between is not missed.
        let id = SubscriptionEvents.listen(path: storageKey, continuation)
        defer {
            SubscriptionEvents.stopListening(path: storageKey, id: id)
            continuation.finish()
        }
        let reader = try Connection(path: databasePath, readOnly: readOnly)
        var iterator = events.makeAsyncIterator()
        while true {
            try _Concurrency.Task.checkCancellation()
            switch try SubscriptionStorage.state(of: version, reader) {
            case .complete, .superseded: return
            case .error(let message): throw SyncError(.invalidFlexibleSyncSubscriptions, message)
            case .pending: break
            }
            // The stream ends when the task is cancelled.
            guard await iterator.next() != nil else { throw CancellationError() }
        }
    }
}

// MARK: - Initial subscriptions

extension SyncConfiguration {
    /// Runs `initialSubscriptions` in a subscription update when the realm never had a
    /// subscription set, or on every call with `rerunOnOpen`. Commits locally and returns; it
    /// never waits for the server.
    func applyInitialSubscriptions(_ realm: Realm) throws {
        guard enableFlexibleSync, let initialSubscriptions else { return }
        let subscriptions = realm.subscriptions
        let rerun = rerunOnOpen
        try subscriptions.box.commit(onlyIf: { latest in rerun || latest == 0 }) {
            initialSubscriptions(subscriptions)
        }
    }
}
