import Foundation

/// The server's wall clock: what time it is, and waiting for a time. Every time the server records
/// (last seen, backups, changeset timestamps) and every deadline it checks (token expiry,
/// compaction) reads it, so tests move time with AtollTesting's `ManualClock` instead of sleeping.
///
/// ```swift
/// let server = try await AtollServer(configuration: configuration, clock: .system).start()
/// ```
public struct ServerClock: Sendable {
    /// The time now.
    public let now: @Sendable () -> Date
    /// Returns once ``now`` reached `deadline`; throws `CancellationError` when the task is cancelled first.
    public let sleep: @Sendable (_ deadline: Date) async throws -> Void

    public init(now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (_ deadline: Date) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// The system's clock.
    public static let system = ServerClock(now: { Date() }) { deadline in
        try await Task.sleep(for: .seconds(max(0, deadline.timeIntervalSinceNow)))
    }
}
