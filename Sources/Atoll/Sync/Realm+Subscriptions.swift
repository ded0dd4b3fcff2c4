import AtollCore
import Atomics
import Foundation

// Flexible-sync subscription sets of a realm: what the sync engine and waiters read and mark.
// The SQL is in Storage/SubscriptionStorage.swift.

/// The newest subscription set, as the sync engine sends it to the server.
struct SubscriptionSetRecord: Equatable, Sendable {
    var version: Int64
    var queries: [TypeQuery]
    /// Local changesets before this version go to the server before the set.
    var clientVersion: Int64 = 0
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
        return SubscriptionSetRecord(version: latest.version, queries: queries, clientVersion: latest.clientVersion)
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
    private static let listeners = Locked<[String: [UInt64: AsyncStream<Void>.Continuation]]>([:])
    private static let nextListener = ManagedAtomic<UInt64>(0)

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
    let encryptionKey: EncryptionKey?
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
        let reader = try Connection(path: databasePath, readOnly: readOnly, key: encryptionKey)
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
    /// Returns the version committed, `nil` when they did not run.
    @discardableResult
    func applyInitialSubscriptions(_ realm: Realm) throws -> Int64? {
        guard enableFlexibleSync, let initialSubscriptions else { return nil }
        let subscriptions = realm.subscriptions
        let rerun = rerunOnOpen
        let version = try subscriptions.box.commit(onlyIf: { latest in rerun || latest == 0 }) {
            initialSubscriptions.callback(subscriptions)
        }
        if version != nil, let url = realm.configuration.fileURL {
            Logger.log(.debug, "initial subscriptions of \(url.lastPathComponent) ran (set version \(version!))")
        }
        return version
    }
}
