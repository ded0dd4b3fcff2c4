import Foundation

/// Dates as whole seconds and nanoseconds since 1970 — Realm's `Timestamp`, and the query
/// language's `T<seconds>:<nanoseconds>` — converted as realm-swift converts them
/// (`RLMTimestampToNSDate`, `RLMTimestampForNSDate`): through seconds since 2001, `Date`'s own
/// representation, so no bit is lost on the way to or from a `Date`.
///
/// ```swift
/// let date = Date(seconds: 1_700_000_000, nanoseconds: 123_456_789)
/// date.timestamp  // (seconds: 1_700_000_000, nanoseconds: 123_456_789)
/// ```
///
/// A `Date` holds more than nanoseconds only within 2^23 s (about 97 days) of 2001-01-01, where
/// its `Double` steps by a nanosecond or less; everywhere else `Date(seconds:nanoseconds:)` of
/// ``timestamp`` is `==` to the date.
extension Date {
    /// The date `seconds` and `nanoseconds` after 1970-01-01 00:00 UTC. Both have the same sign
    /// (or are zero), as in Realm.
    package init(seconds: Int64, nanoseconds: Int64) {
        self.init(timeIntervalSinceReferenceDate:
            Double(seconds) - Date.timeIntervalBetween1970AndReferenceDate + Double(nanoseconds) / 1e9)
    }

    /// Whole seconds since 1970 (rounded down) and the nanoseconds after them (0..<1e9, rounded to
    /// the nearest). Dates beyond what 64-bit seconds hold are clamped to them.
    package var timestamp: (seconds: Int64, nanoseconds: Int64) {
        let t = timeIntervalSinceReferenceDate
        guard t.isFinite else { return t.isNaN ? (0, 0) : (t < 0 ? (Int64.min, 0) : (Int64.max, 999_999_999)) }
        var whole = t.rounded(.down)
        // Exact: `t - whole` is a fraction of a number that already holds it.
        var nanos = ((t - whole) * 1e9).rounded()
        if nanos >= 1e9 { whole += 1; nanos = 0 }
        let shifted = whole + Date.timeIntervalBetween1970AndReferenceDate
        guard shifted > -9.2e18 else { return (Int64.min, 0) }
        guard shifted < 9.2e18 else { return (Int64.max, 999_999_999) }
        return (Int64(shifted), Int64(nanos))
    }
}
