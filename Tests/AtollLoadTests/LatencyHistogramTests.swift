@testable import AtollLoad
import Testing

@Suite struct LatencyHistogramTests {
    @Test func valuesBelow256MicrosecondsAreExact() {
        var histogram = LatencyHistogram()
        for value in 0..<256 { histogram.record(microseconds: UInt64(value)) }
        #expect(histogram.count == 256)
        #expect(histogram.percentile(50) == 127)
        #expect(histogram.percentile(100) == 255)
        #expect(histogram.minValue == 0 && histogram.maxValue == 255)
    }

    /// A bucket is never wider than 1/128 of the values it holds, and a percentile is the top of
    /// its bucket: never below the true value, at most 0.8 % above it.
    @Test func everyBucketHoldsItsValueWithinOnePart128() {
        var value: UInt64 = 1
        while value < 1 << 35 {
            for probe in [value, value + 1, value * 3 / 2, value * 2 - 1] {
                let index = LatencyHistogram.index(of: probe)
                let top = LatencyHistogram.highestValue(in: index)
                #expect(top >= probe)
                #expect(Double(top - probe) <= Double(probe) / 128)
                #expect(index == 0 || LatencyHistogram.highestValue(in: index - 1) < probe)
            }
            value *= 2
        }
    }

    @Test func percentilesOfAKnownDistribution() {
        var histogram = LatencyHistogram()
        // 1…10,000 ms in µs: p50 is 5,000 ms, p99 9,900 ms, p99.9 9,990 ms.
        for ms in 1...10_000 { histogram.record(microseconds: UInt64(ms) * 1000) }
        for (percent, truth) in [(50.0, 5_000_000.0), (99.0, 9_900_000.0), (99.9, 9_990_000.0)] {
            let measured = Double(histogram.percentile(percent))
            #expect(measured >= truth && measured <= truth * (1 + 1.0 / 128), "p\(percent): \(measured) for \(truth)")
        }
        #expect(histogram.percentile(100) == 10_000_000)
        #expect(abs(histogram.mean - 5_000_500) < 1)
    }

    @Test func mergingAddsTheCounts() {
        var a = LatencyHistogram(), b = LatencyHistogram(), both = LatencyHistogram()
        for v in stride(from: UInt64(0), to: 50_000, by: 7) { a.record(microseconds: v); both.record(microseconds: v) }
        for v in stride(from: UInt64(3), to: 90_000, by: 11) { b.record(microseconds: v); both.record(microseconds: v) }
        a.merge(b)
        #expect(a == both)
        #expect(LatencyHistogram().percentile(99) == 0)
    }

    @Test func anEnormousLatencyLandsInTheLastBucket() {
        var histogram = LatencyHistogram()
        histogram.record(microseconds: .max)
        #expect(histogram.count == 1)
        #expect(histogram.percentile(99) == LatencyHistogram.highestValue(in: LatencyHistogram.index(of: .max)))
    }
}
