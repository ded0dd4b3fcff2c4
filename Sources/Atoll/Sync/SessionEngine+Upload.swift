import AtollCore
import Foundation

/// Local commits handed to the session, subscription changes, and `wait(for:)`.
extension SessionEngine {
    /// A local write committed: queue its changeset.
    func localCommitted() async {
        guard let realm, let queued = session?.queuedClientVersion else { return }
        realm.refresh()
        do {
            // Read and handed over without a suspension in between: a commit noticed while an
            // earlier call awaits its actions must not be handed over twice (or out of order).
            let changesets = try realm.localChangesets(after: queued)
            guard !changesets.isEmpty else { return }
            await run { session in changesets.flatMap { session.localChangesetCommitted($0) } }
        } catch {
            report(SyncError(.clientInternalError, "cannot read local history: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    /// A new subscription set was committed: send it (at once when the session is active, after
    /// the writes committed before it).
    func subscriptionsChanged() async {
        guard let realm, session != nil else { return }
        // The writes committed before the set are handed over first: the session sends them
        // before the set, so the server checks them against the set they were written under.
        await localCommitted()
        realm.refresh()
        do {
            guard let set = try realm.latestSubscriptionSet() else { return }
            await run { $0.changeQuerySet(version: set.version, queries: set.queries, after: set.clientVersion) }
        } catch {
            report(SyncError(.clientInternalError, "cannot read the subscriptions: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    func wait(for direction: ClientSession.Direction) async throws {
        if session == nil { await start() }
        guard session != nil else { throw SyncError(.clientInternalError, "the sync session could not start") }
        // Commits reach the engine through a task; a write committed just before this wait may
        // not have been queued yet. Read the history now so the wait covers it.
        if direction == .upload { await localCommitted() }
        let box = WaitBox()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Swift.Error>) in
                if box.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let (waitID, actions) = session!.wait(for: direction)
                waits[waitID] = continuation
                box.id = waitID
                _Concurrency.Task { await self.perform(actions) }
            }
        } onCancel: {
            _Concurrency.Task { await self.cancelWait(box) }
        }
    }

    /// A caller stopped waiting (a timeout): forget the wait and let the caller go.
    func cancelWait(_ box: WaitBox) {
        guard let id = box.id else {
            box.isCancelled = true
            return
        }
        session?.cancelWait(id)
        waits.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }
}

/// Carries a wait's id from the actor to the cancellation handler.
final class WaitBox: @unchecked Sendable {
    private let lock = NSLock()
    private var _id: ClientSession.WaitID?
    private var _cancelled = false
    var id: ClientSession.WaitID? {
        get { lock.withLock { _id } }
        set { lock.withLock { _id = newValue } }
    }
    var isCancelled: Bool {
        get { lock.withLock { _cancelled } }
        set { lock.withLock { _cancelled = newValue } }
    }
}
