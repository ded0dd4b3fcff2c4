import AtollCore
import Foundation

/// A wall clock a test moves: the real time plus an offset that ``advance(by:)`` grows. A server
/// started with ``server`` reads it, and its timers (token expiry, compaction) wake as soon as an
/// advance passes their deadline.
///
/// ```swift
/// let clock = ManualClock()
/// let server = try await AtollServer(configuration: configuration, clock: clock.wall).start()
/// clock.advance(by: 3600)  // an hour later, at once
/// ```
package final class ManualClock: Sendable {
    private struct State {
        var offset: TimeInterval = 0
        /// Counts advances, so a sleeper that read the time before one does not miss it.
        var generation: UInt64 = 0
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }
    // NSLock, not Synchronization's Mutex: under the full suite's load the futex-based Mutex
    // trapped ("Unknown error occurred while attempting to acquire a Mutex") in advance(by:).
    private let lock = NSLock()
    nonisolated(unsafe) private var _state = State()
    private var state: Locked { Locked(clock: self) }

    /// `state.withLock { … }` over the NSLock.
    private struct Locked {
        let clock: ManualClock
        func withLock<T>(_ body: (inout State) -> T) -> T {
            clock.lock.lock()
            defer { clock.lock.unlock() }
            return body(&clock._state)
        }
    }

    package init() {}

    package func now() -> Date { Date().addingTimeInterval(state.withLock { $0.offset }) }

    /// Moves the clock forward and wakes every sleeper, which checks its deadline again.
    package func advance(by seconds: TimeInterval) {
        let woken = state.withLock { state in
            state.offset += seconds
            state.generation += 1
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in woken { waiter.resume() }
    }

    /// Returns once ``now()`` reached `deadline`, by real time passing or by an advance.
    ///
    /// - Throws: `CancellationError` when the task is cancelled first.
    package func sleep(until deadline: Date) async throws {
        while true {
            try Task.checkCancellation()
            let (offset, generation) = state.withLock { ($0.offset, $0.generation) }
            let left = deadline.timeIntervalSince(Date().addingTimeInterval(offset))
            if left <= 0 { return }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await Task.sleep(for: .seconds(left)) }
                group.addTask { await self.nextAdvance(after: generation) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// This clock for a server (`AtollServer(configuration:logger:clock:)`) or an app (`App(id:configuration:clock:)`).
    package var wall: WallClock {
        WallClock(now: { self.now() }, sleep: { try await self.sleep(until: $0) })
    }

    /// Returns at the first advance after `generation` (at once if one happened), or on cancellation.
    private func nextAdvance(after generation: UInt64) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let waitsNow = state.withLock { state in
                    guard state.generation == generation, !Task.isCancelled else { return false }
                    state.waiters[id] = waiter
                    return true
                }
                if !waitsNow { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
