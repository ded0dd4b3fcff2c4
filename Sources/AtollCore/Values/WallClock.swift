import Foundation

/// A wall clock: what time it is, and waiting for a time. The server and the SDK read every time
/// they record and wait for every deadline through one (token expiry, reconnect delays, timeouts,
/// compaction), so tests move time with AtollTesting's `ManualClock` instead of sleeping. Pure
/// code in AtollCore never reads it: it takes the time as a parameter.
///
/// ```swift
/// let server = try await AtollServer(configuration: configuration, clock: .system).start()
/// ```
package struct WallClock: Sendable {
    /// The time now.
    package let now: @Sendable () -> Date
    /// Returns once ``now`` reached `deadline`; throws `CancellationError` when the task is cancelled first.
    package let sleep: @Sendable (_ deadline: Date) async throws -> Void

    package init(now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (_ deadline: Date) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// Returns once `seconds` passed on this clock.
    package func sleep(for seconds: TimeInterval) async throws {
        try await sleep(now().addingTimeInterval(seconds))
    }

    /// The system's clock.
    package static let system = WallClock(now: { Date() }) { deadline in
        try await Task.sleep(for: .seconds(max(0, deadline.timeIntervalSinceNow)))
    }
}
