import AtollCore
import Foundation

/// Counts events per key in a sliding window and says when a key has had too many: the failed
/// logins of an account or an address, the apps created in development mode.
///
/// Memory is bounded: keys whose events all left the window are dropped as others are counted,
/// and at most ``maxKeys`` keys are kept, so a flood of distinct keys cannot grow it without end.
/// Past that bound the least recently counted keys that are under their limit go first; keys at
/// their limit (throttled now) are kept, so flooding other keys never lifts a throttle (only when
/// every key is throttled do the throttles closest to their end go).
///
/// ```swift
/// let failures = RateLimiter(limit: 10, window: 60)
/// if let wait = failures.retryAfter("ann@example.com", now: now) { throw ServerError(.tooManyRequests, …, retryAfter: wait) }
/// failures.record("ann@example.com", now: now)
/// ```
final class RateLimiter: Sendable {
    let limit: Int
    let window: TimeInterval
    let maxKeys: Int
    private let events = Locked<[String: [Date]]>([:])

    init(limit: Int, window: TimeInterval, maxKeys: Int = 100_000) {
        self.limit = limit
        self.window = window
        self.maxKeys = maxKeys
    }

    /// Whole seconds until `key` may try again, or nil when it is under the limit now.
    func retryAfter(_ key: String, now: Date) -> Int? {
        events.withLock { events in
            let recent = (events[key] ?? []).filter { now.timeIntervalSince($0) < window }
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return max(1, Int((window - now.timeIntervalSince(oldest)).rounded(.up)))
        }
    }

    /// Counts one event of `key` at `now`.
    func record(_ key: String, now: Date) {
        events.withLock { events in
            var recent = (events[key] ?? []).filter { now.timeIntervalSince($0) < window }
            recent.append(now)
            // Only the newest `limit` matter for the decision.
            if recent.count > limit { recent.removeFirst(recent.count - limit) }
            events[key] = recent
            if events.count > maxKeys { evict(from: &events, now: now) }
        }
    }

    /// Makes room: drops keys with no event in the window, then (still full: a flood of distinct
    /// keys) a tenth of ``maxKeys`` at once, so the sort is paid once per `maxKeys / 10` new keys.
    /// Keys under their limit go first, least recently counted first; throttled ones last, those
    /// whose throttle ends soonest first.
    private func evict(from events: inout [String: [Date]], now: Date) {
        events = events.filter { !$0.value.isEmpty && now.timeIntervalSince($0.value.last!) < window }
        let excess = events.count - maxKeys + maxKeys / 10
        guard events.count > maxKeys, excess > 0 else { return }
        let throttled = { (dates: [Date]) in dates.count >= self.limit && now.timeIntervalSince(dates.first!) < self.window }
        let victims = events.sorted { a, b in
            let (aThrottled, bThrottled) = (throttled(a.value), throttled(b.value))
            if aThrottled != bThrottled { return !aThrottled }
            return aThrottled ? a.value.first! < b.value.first! : a.value.last! < b.value.last!
        }.prefix(excess)
        for (key, _) in victims { events[key] = nil }
    }

    /// The number of keys kept (tests).
    var keyCount: Int { events.withLock { $0.count } }

    /// Takes back one event of `key` counted at `time` (an attempt counted up front that did not
    /// fail after all).
    func forget(_ key: String, at time: Date) {
        events.withLock { events in
            guard let index = events[key]?.lastIndex(of: time) else { return }
            events[key]!.remove(at: index)
        }
    }

    /// Forgets `key` (a successful login clears its account's failures).
    func reset(_ key: String) {
        _ = events.withLock { $0.removeValue(forKey: key) }
    }
}
