/// Latencies in microseconds, counted in buckets no wider than 1/128 of their value (HdrHistogram's
/// layout, written here: exact below 256 µs, then 128 linear buckets per power of two up to about
/// 19 hours). Memory is fixed (30 KiB), recording is O(1), and two
/// histograms merge by adding counts, so each part of a run can keep its own.
///
/// ```swift
/// var histogram = LatencyHistogram()
/// histogram.record(microseconds: 1_250)
/// histogram.percentile(99)   // 1_250: within 0.8 % above the truth, never below
/// ```
package struct LatencyHistogram: Hashable, Sendable {
    static let subBucketBits = 8
    static let subBuckets = 1 << subBucketBits
    static let halfBuckets = subBuckets / 2
    /// Values at or above 2^maxBits µs (19 hours) are counted in the last bucket.
    static let maxBits = 36

    private var counts: [UInt64]
    package private(set) var count: UInt64 = 0
    package private(set) var maxValue: UInt64 = 0
    package private(set) var minValue: UInt64 = .max
    private var sum: Double = 0

    package init() {
        counts = Array(repeating: 0, count: Self.subBuckets + (Self.maxBits - Self.subBucketBits) * Self.halfBuckets)
    }

    /// The bucket of `value`: the value itself below 256; above, tier `t` holds
    /// `[128 << t, 256 << t)` in 128 buckets of `1 << t`.
    static func index(of value: UInt64) -> Int {
        let clamped = min(value, (1 << UInt64(maxBits)) - 1)
        guard clamped >= UInt64(subBuckets) else { return Int(clamped) }
        let magnitude = 63 - clamped.leadingZeroBitCount
        let tier = magnitude - (subBucketBits - 1)
        let position = Int(clamped >> UInt64(tier))
        return subBuckets + (tier - 1) * halfBuckets + (position - halfBuckets)
    }

    /// The highest value counted in bucket `index` (what a percentile reports: never below the truth).
    static func highestValue(in index: Int) -> UInt64 {
        guard index >= subBuckets else { return UInt64(index) }
        let tier = (index - subBuckets) / halfBuckets + 1
        let position = (index - subBuckets) % halfBuckets + halfBuckets
        return (UInt64(position + 1) << UInt64(tier)) - 1
    }

    /// Counts one latency.
    ///
    /// - Complexity: O(1).
    package mutating func record(microseconds value: UInt64) {
        counts[Self.index(of: value)] += 1
        count += 1
        maxValue = max(maxValue, value)
        minValue = min(minValue, value)
        sum += Double(value)
    }

    /// Adds another histogram's counts.
    package mutating func merge(_ other: LatencyHistogram) {
        for i in counts.indices where other.counts[i] != 0 { counts[i] += other.counts[i] }
        count += other.count
        maxValue = max(maxValue, other.maxValue)
        minValue = min(minValue, other.minValue)
        sum += other.sum
    }

    /// The value at or below which `percent` % of the counted latencies fall (0 when empty), at
    /// the top of its bucket and never above the largest value counted.
    package func percentile(_ percent: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = max(1, UInt64((Double(count) * percent / 100).rounded(.up)))
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c != 0 {
            seen += c
            if seen >= rank { return min(Self.highestValue(in: i), maxValue) }
        }
        return maxValue
    }

    /// The mean of the counted latencies (0 when empty).
    package var mean: Double { count == 0 ? 0 : sum / Double(count) }
}
