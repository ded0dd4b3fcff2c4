/// Delays between reconnect attempts: exponential growth up to a cap, with random jitter drawn
/// from a seeded generator so tests replay exactly. ``reset()`` after a successful session start.
///
/// The n-th delay (from 0) is `min(maximum, initial × multiplier^n)` minus up to `jitter` of it.
///
/// ```swift
/// var backoff = ReconnectBackoff(seed: 42)
/// backoff.nextDelay()   // ~1 s, then ~2 s, ~4 s, … up to 5 min
/// ```
package struct ReconnectBackoff: Sendable, Hashable {
    package var initialMilliseconds: Int64
    package var maximumMilliseconds: Int64
    package var multiplier: Double
    /// The fraction of a delay that may be taken off at random, in 0...1.
    package var jitter: Double
    /// Delays handed out since the last reset.
    package private(set) var attempts = 0
    private var state: UInt64

    package init(seed: UInt64, initialMilliseconds: Int64 = 1_000, maximumMilliseconds: Int64 = 300_000,
                multiplier: Double = 2, jitter: Double = 0.25)
    {
        self.initialMilliseconds = max(1, initialMilliseconds)
        self.maximumMilliseconds = max(self.initialMilliseconds, maximumMilliseconds)
        self.multiplier = max(1, multiplier)
        self.jitter = min(1, max(0, jitter))
        state = seed
    }

    /// The delay before the next attempt; grows with every call until ``reset()``.
    package mutating func nextDelay() -> Int64 {
        var base = Double(initialMilliseconds)
        for _ in 0..<min(attempts, 64) where base < Double(maximumMilliseconds) { base *= multiplier }
        base = min(base, Double(maximumMilliseconds))
        attempts += 1
        let fraction = Double(nextRandom() >> 11) / Double(1 << 53)  // in [0, 1)
        return max(1, Int64((base * (1 - jitter * fraction)).rounded()))
    }

    /// Starts over at the initial delay.
    package mutating func reset() { attempts = 0 }

    /// SplitMix64: small, fast and good enough for jitter.
    private mutating func nextRandom() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
