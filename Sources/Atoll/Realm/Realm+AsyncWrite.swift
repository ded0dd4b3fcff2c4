import AtollCore
import Foundation

/// Identifies an asynchronous write or commit callback, for `cancelAsyncWrite(_:)`.
public typealias AsyncTransactionId = UInt32

/// The asynchronous writes of one realm, in the order they were asked for. Touched only on the
/// realm's own queue or actor.
final class AsyncWrites {
    struct Begin {
        let id: AsyncTransactionId
        let block: () -> Void
        /// Where a failure to start the transaction goes (`writeAsync`'s completion); without one
        /// the program stops, as `beginWrite()` does.
        let onFailure: ((Swift.Error) -> Void)?
    }

    struct Completion {
        let id: AsyncTransactionId
        let block: (Swift.Error?) -> Void
        let error: Swift.Error?
    }

    var begins: [Begin] = []
    var completions: [Completion] = []
    private var lastId: AsyncTransactionId = 0
    /// A turn of `runAsyncWrites` is scheduled on the realm's queue or actor.
    var scheduled = false
    /// Waiting for another realm of this process to finish its write.
    var waitingForLock = false
    /// An asynchronous write's block is running.
    var running = false

    func nextId() -> AsyncTransactionId {
        lastId &+= 1
        if lastId == 0 { lastId = 1 }
        return lastId
    }

    var isEmpty: Bool { begins.isEmpty && completions.isEmpty && !scheduled && !waitingForLock && !running }
}

extension Realm {
    /// Runs `block` in a write transaction later, on this realm's queue or actor, without
    /// waiting here: the call returns at once, and `onComplete` is called there once the
    /// transaction committed (or failed). Writes asked for this way run in order.
    ///
    /// ```swift
    /// realm.writeAsync {
    ///     realm.add(Dog(value: ["name": "Rex"]))
    /// } onComplete: { error in
    ///     if let error { print("not saved: \(error)") }
    /// }
    /// ```
    /// The block may call `commitWrite()` or `cancelWrite()` itself. The realm must be confined
    /// to the main thread, a serial dispatch queue (`Realm(configuration:queue:)`) or an actor.
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        enqueueBegin(onFailure: onComplete.map { callback in { error in callback(error) } }) { [self] in
            block()
            if isInWriteTransaction {
                commitAsyncWrite(onComplete)
            } else if let onComplete {
                // The block committed or cancelled on its own: report success once it returns.
                deliverLater(onComplete, nil)
            }
        }
    }

    /// Starts a write transaction later, on this realm's queue or actor, and calls
    /// `asyncWriteBlock` inside it; returns at once. The block ends with `commitAsyncWrite()` or
    /// `commitWrite()`; returning without either cancels the transaction.
    ///
    /// ```swift
    /// realm.beginAsyncWrite {
    ///     dog.age += 1
    ///     realm.commitAsyncWrite { error in … }
    /// }
    /// ```
    @discardableResult
    public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        enqueueBegin(onFailure: nil, asyncWriteBlock)
    }

    /// Commits the open write transaction and calls `onComplete` later, on this realm's queue or
    /// actor, with the error if the commit failed. The returned id cancels the callback (never
    /// the commit). `allowGrouping` is accepted: every commit is its own SQLite transaction.
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        verifyThread()
        guard isInWriteTransaction else {
            preconditionFailure("Can't commit a non-existing write transaction")
        }
        var failure: Swift.Error?
        do {
            try commitWrite()
        } catch {
            failure = error
        }
        let id = asyncWrites.nextId()
        if let onComplete {
            asyncWrites.completions.append(.init(id: id, block: onComplete, error: failure))
            scheduleAsyncWrites()
        }
        return id
    }

    /// Cancels a queued asynchronous write (its block never runs) or a commit's pending callback
    /// (the commit stays). An id already run, or unknown, is ignored.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        verifyThread()
        asyncWrites.begins.removeAll { $0.id == asyncTransactionId }
        asyncWrites.completions.removeAll { $0.id == asyncTransactionId }
    }

    /// Whether asynchronous writes or their callbacks are still to run.
    public var isPerformingAsynchronousWriteOperations: Bool { !asyncWrites.isEmpty }

    // MARK: Plumbing

    private func enqueueBegin(onFailure: ((Swift.Error) -> Void)?, _ block: @escaping () -> Void) -> AsyncTransactionId {
        verifyThread()
        guard !isFrozen else { preconditionFailure("Can't perform transactions on a frozen Realm") }
        guard !configuration.readOnly else { preconditionFailure("Can't perform transactions on a read-only Realm") }
        requireAsyncContext()
        let id = asyncWrites.nextId()
        asyncWrites.begins.append(.init(id: id, block: block, onFailure: onFailure))
        scheduleAsyncWrites()
        return id
    }

    private func deliverLater(_ block: @escaping (Swift.Error?) -> Void, _ error: Swift.Error?) {
        asyncWrites.completions.append(.init(id: asyncWrites.nextId(), block: block, error: error))
        scheduleAsyncWrites()
    }

    /// Called when a write transaction of this realm ended: queued writes may go on.
    func asyncWritesMayContinue() {
        if !asyncWrites.begins.isEmpty || !asyncWrites.completions.isEmpty { scheduleAsyncWrites() }
    }

    private func requireAsyncContext() {
        if case .thread = confinement, !isMainThreadRealm {
            preconditionFailure("Asynchronous writes need a Realm confined to the main thread, a serial dispatch queue (Realm(configuration:queue:)) or an actor; this one belongs to a thread with nothing to run them on")
        }
    }

    /// Schedules one turn of `runAsyncWrites` on the realm's own queue or actor (never inline:
    /// the caller returns first). The scheduled turn keeps the realm open.
    func scheduleAsyncWrites() {
        guard !asyncWrites.scheduled, !asyncWrites.waitingForLock else { return }
        asyncWrites.scheduled = true
        let keep = UncheckedRealm(strong: self)
        runOnOwnContext(keep) { realm in
            realm.asyncWrites.scheduled = false
            realm.runAsyncWrites()
        }
    }

    /// Runs `body` with the realm on its queue or actor, later. Reads only the immutable
    /// `confinement`, so any thread may call it.
    private func runOnOwnContext(_ keep: UncheckedRealm, _ body: @escaping @Sendable (Realm) -> Void) {
        switch confinement {
        case .actor(let actor):
            _Concurrency.Task { await runIsolated(actor) { body(keep.strong!) } }
        case .queue(let queue, _):
            queue.async { body(keep.strong!) }
        case .thread:
            DispatchQueue.main.async { body(keep.strong!) }
        case .frozen:
            break
        }
    }

    /// One turn: the commit callbacks due, then the next queued write once the write lock is free.
    private func runAsyncWrites() {
        while !asyncWrites.completions.isEmpty {
            let completion = asyncWrites.completions.removeFirst()
            completion.block(completion.error)
        }
        guard !asyncWrites.begins.isEmpty, !isInWriteTransaction else { return }
        if FileAccess.isSuspended(coordinator.path) {
            // Asynchronous writes wait for Realm.resumeFileAccess() rather than fail.
            asyncWrites.waitingForLock = true
            let keep = UncheckedRealm(strong: self)
            FileAccess.whenResumed(coordinator.path) {
                keep.strong!.runOnOwnContext(keep) { realm in
                    realm.asyncWrites.waitingForLock = false
                    realm.runAsyncWrites()
                }
            }
            return
        }
        if coordinator.writers.load(ordering: .sequentiallyConsistent) > 0 {
            // Another realm of this process holds or waits for the write lock: wait for it off
            // this queue or actor, then come back.
            asyncWrites.waitingForLock = true
            let keep = UncheckedRealm(strong: self)
            coordinator.whenWritersIdle {
                keep.strong!.runOnOwnContext(keep) { realm in
                    realm.asyncWrites.waitingForLock = false
                    realm.runAsyncWrites()
                }
            }
            return
        }
        let next = asyncWrites.begins.removeFirst()
        do {
            try beginWriteTransaction()
        } catch {
            if FileAccess.isSuspended(coordinator.path) {
                // Suspended since the check above: wait for the resumption like the others.
                asyncWrites.begins.insert(next, at: 0)
                runAsyncWrites()
                return
            }
            guard let onFailure = next.onFailure else { preconditionFailure("\(error)") }
            onFailure(error)
            asyncWritesMayContinue()
            return
        }
        asyncWrites.running = true
        next.block()
        asyncWrites.running = false
        if isInWriteTransaction { cancelWrite() }
        asyncWritesMayContinue()
    }
}
