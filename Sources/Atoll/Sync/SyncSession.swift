import AtollCore
import Foundation

/// The sync session of one synced realm: its connection state, progress and controls.
///
/// ```swift
/// let session = realm.syncSession!
/// try await session.wait(for: .upload)
/// session.suspend()
/// ```
///
/// An `NSObject`, as realm-swift's: on Apple platforms `state` and `connectionState` are key-value
/// observable (`session.observe(\.connectionState, options: [.initial]) { … }` returns Foundation's
/// `NSKeyValueObservation`); elsewhere Atoll's own observation has the same shape
/// (SyncSession+Observe.swift).
public final class SyncSession: NSObject, @unchecked Sendable {
    /// Waits of `nextConnectionFailure()`.
    let connectionFailureWaiters = Locked<[UUID: FailureWaitBox]>([:])
    public enum ProgressDirection: Sendable, Hashable { case upload, download }

    /// How long a progress notification keeps reporting.
    public enum ProgressMode: Sendable, Hashable {
        /// Reports every change of the transfer, for as long as the token is kept.
        case reportIndefinitely
        /// Reports until what is outstanding when the notification is added is transferred, then stops.
        case forCurrentlyOutstandingWork
    }

    /// Bytes transferred in one direction.
    public struct Progress: Sendable, Hashable {
        public let transferredBytes: Int
        public let transferrableBytes: Int

        public init(transferredBytes: Int, transferrableBytes: Int) {
            self.transferredBytes = transferredBytes
            self.transferrableBytes = transferrableBytes
        }

        /// Whether everything transferrable is transferred.
        public var isTransferComplete: Bool { transferredBytes >= transferrableBytes }

        /// The transferred fraction, in 0...1 (1 when there is nothing to transfer).
        public var fractionTransferred: Double {
            guard transferrableBytes > 0 else { return 1 }
            return min(1, Double(transferredBytes) / Double(transferrableBytes))
        }

        /// An estimate of the transfer's completion, in 0...1.
        public var progressEstimate: Double { fractionTransferred }
    }

    /// Keep it to keep getting progress notifications; `invalidate()` stops them.
    public typealias ProgressNotificationToken = NotificationToken

    let engine: SessionEngine
    private let lock = NSLock()
    private var _state: State = .inactive
    private var _connectionState: ConnectionState = .disconnected
    /// Hear every change of `state` or `connectionState`: (old, new) of both.
    private var observers: [UUID: @Sendable (Snapshot, Snapshot) -> Void] = [:]

    /// The two observable values at one moment.
    struct Snapshot: Equatable, Sendable {
        var state: State
        var connectionState: ConnectionState
    }
    /// The commands of the public API, run one after another on the engine in call order.
    private var commandTail: _Concurrency.Task<Void, Never>?
    private var latestProgress: [ProgressDirection: Progress] = [:]
    private var progressObservers: [UUID: ProgressObserver] = [:]

    private struct ProgressObserver {
        let direction: ProgressDirection
        let mode: ProgressMode
        /// For `.forCurrentlyOutstandingWork`: the transferred byte count that completes it, once known.
        var target: Int?
        let block: @Sendable (Progress) -> Void
    }

    #if canImport(ObjectiveC)
    /// Serializes `update`, so that key-value observers hear each change between its
    /// `willChangeValue` and `didChangeValue`. Recursive: an observer may suspend or resume.
    private let updateLock = NSRecursiveLock()
    #endif

    init(engine: SessionEngine) {
        self.engine = engine
        super.init()
    }

    #if canImport(ObjectiveC)
    /// Whether the session syncs; key-value observable.
    @objc public dynamic var state: State { lock.withLock { _state } }
    /// The state of the connection the session uses; key-value observable.
    @objc public dynamic var connectionState: ConnectionState { lock.withLock { _connectionState } }
    #else
    /// Whether the session syncs; observable with `observe(_:options:changeHandler:)`.
    public var state: State { lock.withLock { _state } }
    /// The state of the connection the session uses; observable with `observe(_:options:changeHandler:)`.
    public var connectionState: ConnectionState { lock.withLock { _connectionState } }
    #endif

    /// The user the session syncs as.
    public var user: User? { engine.sync.user }

    /// The user the session syncs as (Realm's name).
    public func parentUser() -> User? { user }

    /// Stops syncing until `resume()`.
    public func suspend() {
        update(state: .inactive)
        // Uploads are held from now on, in the same step as the suspension is queued: a resume
        // racing on another thread cannot leave them held behind a resumed session.
        enqueue({ await $0.suspend() }, whileQueueing: { $0.suspensionRequested.store(true, ordering: .sequentiallyConsistent) })
    }

    /// Syncs again after `suspend()`.
    public func resume() {
        enqueue({ await $0.resume() }, whileQueueing: { $0.suspensionRequested.store(false, ordering: .sequentiallyConsistent) })
    }

    /// Connects at once if the session waits to reconnect (after a failed connection, with a
    /// growing delay); a connected session stays as it is.
    public func reconnect() {
        enqueue { await $0.reconnect() }
    }

    /// Runs now what a sync error left to do with a realm's file (the token of
    /// `SyncError.clientResetInfo()` or `deleteRealmUserInfo()`): back it up and delete it, or
    /// delete it. Close every `Realm` of the file first: while one is open in the process nothing
    /// is touched, the action stays pending (for a later call or the next `App` start) and this
    /// returns `false`.
    ///
    /// ```swift
    /// if let (backupPath, token) = syncError.clientResetInfo() {
    ///     SyncSession.immediatelyHandleError(token, syncManager: app.syncManager)
    /// }
    /// ```
    @discardableResult
    public static func immediatelyHandleError(_ token: SyncError.ActionToken, syncManager: SyncManager) -> Bool {
        syncManager.runFileAction(for: token)
    }

    /// Waits until every local change up to now is uploaded, or every server change downloaded.
    /// Throws at once for an invalid session (its user logged out).
    public func wait(for direction: ProgressDirection) async throws {
        if state == .invalid { throw SyncError(.clientUserError, "the sync session is invalid: its user logged out or was removed") }
        try await engine.wait(for: direction == .upload ? .upload : .download)
    }

    /// Calls `block` whenever the connection state changes; keep the token to keep observing.
    public func observeConnectionState(_ block: @escaping @Sendable (ConnectionState) -> Void) -> NotificationToken {
        let id = addObserver { old, new in
            if old.connectionState != new.connectionState { block(new.connectionState) }
        }
        return NotificationToken(realm: nil) { [weak self] in self?.removeObserver(id) }
    }

    /// Adds a hearer of every change of the observable values; returns its id.
    func addObserver(_ observer: @escaping @Sendable (Snapshot, Snapshot) -> Void) -> UUID {
        let id = UUID()
        lock.withLock { observers[id] = observer }
        return id
    }

    func removeObserver(_ id: UUID) {
        _ = lock.withLock { observers.removeValue(forKey: id) }
    }

    /// The observable values now.
    var snapshot: Snapshot { lock.withLock { Snapshot(state: _state, connectionState: _connectionState) } }

    /// Calls `block` with the progress of uploads or downloads, on an arbitrary thread.
    ///
    /// With `.reportIndefinitely` the block hears every change for as long as the token is kept
    /// (at once with the progress known now). With `.forCurrentlyOutstandingWork` it hears the
    /// transfer of what is outstanding now, as `transferred` of that amount, and stops after
    /// reporting it complete.
    ///
    /// ```swift
    /// let token = session.addProgressNotification(for: .upload, mode: .forCurrentlyOutstandingWork) { progress in
    ///     print(progress.progressEstimate)
    /// }
    /// ```
    public func addProgressNotification(for direction: ProgressDirection, mode: ProgressMode,
                                        block: @escaping @Sendable (Progress) -> Void) -> ProgressNotificationToken? {
        let id = UUID()
        let current: Progress? = lock.withLock {
            progressObservers[id] = ProgressObserver(direction: direction, mode: mode, target: nil, block: block)
            return mode == .reportIndefinitely ? latestProgress[direction] : nil
        }
        if let current { block(current) }
        if mode == .forCurrentlyOutstandingWork {
            // The engine first takes in local commits it has not seen, then says what is outstanding.
            let engine = engine
            _Concurrency.Task { await engine.snapshotProgress(direction == .upload ? .upload : .download) }
        }
        return NotificationToken(realm: nil) { [weak self] in
            _ = self?.lock.withLock { self?.progressObservers.removeValue(forKey: id) }
        }
    }

    // MARK: From the engine

    /// Runs `command` on the engine after every command enqueued before it; `whileQueueing` runs
    /// at once, in the same critical section, so what it sets is in the order of the commands.
    func enqueue(_ command: @escaping @Sendable (SessionEngine) async -> Void, whileQueueing: ((SessionEngine) -> Void)? = nil) {
        lock.withLock {
            whileQueueing?(engine)
            let previous = commandTail
            let engine = engine
            commandTail = _Concurrency.Task {
                await previous?.value
                await command(engine)
            }
        }
    }

    /// The values after an update of `old`: an invalid session stays invalid, and only disconnects.
    static func updated(_ old: Snapshot, state: State?, connection: ConnectionState?) -> Snapshot {
        var new = old
        if let state, new.state != .invalid { new.state = state }
        if let connection, new.state != .invalid || connection == .disconnected { new.connectionState = connection }
        return new
    }

    func update(state: State? = nil, connection: ConnectionState? = nil) {
        #if canImport(ObjectiveC)
        updateLock.lock()
        defer { updateLock.unlock() }
        let expected = Self.updated(snapshot, state: state, connection: connection)
        let now = snapshot
        let keys = (now.state != expected.state ? ["state"] : []) + (now.connectionState != expected.connectionState ? ["connectionState"] : [])
        for key in keys { willChangeValue(forKey: key) }
        defer { for key in keys.reversed() { didChangeValue(forKey: key) } }
        #endif
        let (old, new, observers): (Snapshot, Snapshot, [@Sendable (Snapshot, Snapshot) -> Void]) = lock.withLock {
            let old = Snapshot(state: _state, connectionState: _connectionState)
            let new = Self.updated(old, state: state, connection: connection)
            (_state, _connectionState) = (new.state, new.connectionState)
            return (old, new, old == new ? [] : Array(self.observers.values))
        }
        if old != new {
            let name = engine.configuration.fileURL?.path ?? engine.configuration.storageKey
            if old.connectionState != new.connectionState {
                Logger.log(.detail, Category.Sync.Client.session, "sync session \(name): connection \(old.connectionState) -> \(new.connectionState)")
            }
            if old.state != new.state {
                Logger.log(.debug, Category.Sync.Client.session, "sync session \(name): \(old.state) -> \(new.state)")
            }
        }
        for observer in observers { observer(old, new) }
    }

    /// New byte counts of the session (cumulative since it started).
    func reportProgress(_ direction: ProgressDirection, _ progress: Progress) {
        var calls: [(@Sendable (Progress) -> Void, Progress)] = []
        lock.withLock {
            latestProgress[direction] = progress
            for (id, observer) in progressObservers where observer.direction == direction {
                switch observer.mode {
                case .reportIndefinitely:
                    calls.append((observer.block, progress))
                case .forCurrentlyOutstandingWork:
                    guard let target = observer.target else { continue }
                    let reported = Progress(transferredBytes: min(progress.transferredBytes, target), transferrableBytes: target)
                    calls.append((observer.block, reported))
                    if reported.isTransferComplete { progressObservers.removeValue(forKey: id) }
                }
            }
        }
        for (block, progress) in calls { block(progress) }
    }

    /// What is outstanding now: fixes the target of the `.forCurrentlyOutstandingWork`
    /// notifications added since the last snapshot.
    func progressSnapshot(_ direction: ProgressDirection, _ progress: Progress) {
        var calls: [(@Sendable (Progress) -> Void, Progress)] = []
        lock.withLock {
            if latestProgress[direction] == nil { latestProgress[direction] = progress }
            for (id, var observer) in progressObservers
            where observer.direction == direction && observer.mode == .forCurrentlyOutstandingWork && observer.target == nil {
                let target = progress.transferrableBytes
                observer.target = target
                let reported = Progress(transferredBytes: min(progress.transferredBytes, target), transferrableBytes: target)
                calls.append((observer.block, reported))
                if reported.isTransferComplete {
                    progressObservers.removeValue(forKey: id)
                } else {
                    progressObservers[id] = observer
                }
            }
        }
        for (block, progress) in calls { block(progress) }
    }
}

extension SyncSession {
    /// Throws the session's next connection failure (code 12): what an asynchronous open with
    /// `cancelAsyncOpenOnNonFatalErrors` fails with instead of retrying.
    /// Tests only: returns at the session's next failed connection attempt, with its error.
    @_spi(Testing)
    public func nextConnectionFailureForTesting() async -> SyncError? {
        do { try await nextConnectionFailure() } catch { return error as? SyncError }
    }

    func nextConnectionFailure() async throws -> Never {
        let box = FailureWaitBox()
        let error: SyncError = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard box.arm(continuation) else { return }
                connectionFailureWaiters.withLock { $0[box.id] = box }
            }
        } onCancel: {
            box.cancel()
        }
        connectionFailureWaiters.withLock { $0[box.id] = nil }
        if box.wasCancelled { throw CancellationError() }
        throw error
    }

    /// A connection attempt failed (the session retries with backoff).
    func connectionFailed(_ error: SyncError) {
        let waiters = connectionFailureWaiters.withLock { waiters in
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume(error) }
    }
}

/// One wait for a connection failure; resumed once, by a failure or by cancellation.
final class FailureWaitBox: @unchecked Sendable {
    let id = UUID()
    private let lock = NSLock()
    private var continuation: CheckedContinuation<SyncError, Never>?
    private(set) var wasCancelled = false
    private var done = false

    /// Keeps the continuation; false (resumed at once) when cancelled already.
    func arm(_ continuation: CheckedContinuation<SyncError, Never>) -> Bool {
        let cancelled = lock.withLock {
            if wasCancelled { return true }
            self.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(returning: SyncError(.connectionFailed, "cancelled")) }
        return !cancelled
    }

    func resume(_ error: SyncError) {
        let c = lock.withLock { () -> CheckedContinuation<SyncError, Never>? in
            guard !done else { return nil }
            done = true
            defer { continuation = nil }
            return continuation
        }
        c?.resume(returning: error)
    }

    func cancel() {
        lock.withLock { wasCancelled = true }
        resume(SyncError(.connectionFailed, "cancelled"))
    }
}

extension Realm {
    /// The realm's sync session, for a synced realm.
    public var syncSession: SyncSession? {
        guard let sync = configuration.syncConfiguration else { return nil }
        return sync.user.core.syncClient.session(for: configuration)
    }
}

extension User {
    /// The sync sessions of the user's open synced realms.
    public var allSessions: [SyncSession] { core.syncClient.sessions(of: self) }
}
