import AtollCore
import Foundation

/// Bytes of frames a connection received but has not handled yet. The task reading the socket
/// waits in ``enter(_:)`` while they exceed the budget, so a client that sends faster than the
/// server integrates is slowed down by TCP itself instead of filling the server's memory.
final class InboundGate: Sendable {
    let budget: Int
    private struct State {
        var bytes = 0
        /// The reader, waiting; resumed with false to try again.
        var waiter: CheckedContinuation<Bool, Never>?
        var isClosed = false
    }
    private let state = Locked(State())

    init(budget: Int) { self.budget = budget }

    /// Waits until the queued bytes are under the budget (or the gate closed), then counts `bytes`.
    func enter(_ bytes: Int) async {
        while true {
            let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let admitted = state.withLock { state -> Bool in
                    guard state.bytes >= budget, !state.isClosed else {
                        state.bytes += bytes
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if admitted { continuation.resume(returning: true) }
            }
            if admitted { return }
        }
    }

    /// `bytes` were handled.
    func leave(_ bytes: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.bytes -= bytes
            guard state.bytes < budget, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: false)
    }

    /// Releases a waiting reader for good: the connection is gone.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.isClosed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }

    var queuedBytes: Int { state.withLock { $0.bytes } }
}

/// History notifications queued for a connection. Past the limit the client is too slow to keep
/// up: no more are queued, and the connection closes at the next one it handles (the client
/// reconnects and resumes from the last version it integrated).
final class OutboundBacklog: Sendable {
    let limit: Int
    private struct State {
        var queued = 0
        var overflowed = false
    }
    private let state = Locked(State())

    init(limit: Int) { self.limit = limit }

    /// Counts one more notification; false (the notification is dropped) once over the limit.
    func admit() -> Bool {
        state.withLock { state in
            guard !state.overflowed else { return false }
            guard state.queued < limit else {
                state.overflowed = true
                return false
            }
            state.queued += 1
            return true
        }
    }

    /// One notification was handled.
    func handled() { state.withLock { $0.queued -= 1 } }

    var hasOverflowed: Bool { state.withLock { $0.overflowed } }

    /// Whether notifications are queued that the connection has not handled yet.
    var hasQueued: Bool { state.withLock { $0.queued > 0 } }
}

/// When something a connection waits for started waiting, nil while nothing waits: the frame being
/// written to a client (a client that stopped reading leaves the write waiting for good), or the
/// next chunk of a partly received message (a client may stop sending mid-message).
/// ``stalled(clock:timeout:)`` is the connection's watchdog for it.
final class StallWatch: Sendable {
    private let started = Locked<Date?>(nil)

    func begin(at date: Date) { started.withLock { $0 = date } }
    func end() { started.withLock { $0 = nil } }

    /// Whether something has waited `timeout` by `now`.
    func hasWaited(_ timeout: TimeInterval, now: Date) -> Bool {
        started.withLock { $0 }.map { now.timeIntervalSince($0) >= timeout } ?? false
    }

    /// Returns true once something has waited `timeout` on `clock` (checked every quarter of it),
    /// false when the task is cancelled first.
    func stalled(clock: WallClock, timeout: TimeInterval) async -> Bool {
        while !Task.isCancelled {
            do { try await clock.sleep(for: timeout / 4) } catch { return false }
            if hasWaited(timeout, now: clock.now()) { return true }
        }
        return false
    }
}
