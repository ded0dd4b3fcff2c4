@testable import AtollCore
import Testing

/// `U128` (Decimal128's coefficient) against the standard library's `UInt128`, which it replaces
/// below macOS 15 / iOS 18: the same results for the operations Decimal128 uses. (Suites cannot be
/// marked `@available`; the tests that use `UInt128` are.)
@Suite struct U128Tests {
    /// Edge values and a seeded spread of widths (small, one limb, two limbs, near the top).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func samples(count: Int) -> [UInt128] {
        var generator = SplitMix64(seed: 0x5EED_1280)
        var values: [UInt128] = [0, 1, 2, 9, 10, 11, UInt128(UInt64.max), UInt128(UInt64.max) + 1, UInt128.max, UInt128.max - 1,
                                 UInt128(String(repeating: "9", count: 34))!, UInt128(String(repeating: "9", count: 38))!]
        for index in 0..<count {
            let full = UInt128(generator.next()) << 64 | UInt128(generator.next())
            values.append(full >> (index % 128))
        }
        return values
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func u(_ value: UInt128) -> U128 { U128(high: UInt64(value >> 64), low: UInt64(truncatingIfNeeded: value)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func wide(_ value: U128) -> UInt128 { UInt128(value.high) << 64 | UInt128(value.low) }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func arithmeticMatchesUInt128() {
        let values = Self.samples(count: 60)
        for a in values {
            #expect(Self.u(a).leadingZeroBitCount == a.leadingZeroBitCount)
            #expect(Self.u(a).description == String(a))
            #expect(U128(String(a)) == Self.u(a))
            for b in values {
                let (x, y) = (Self.u(a), Self.u(b))
                #expect((x < y) == (a < b) && (x == y) == (a == b))
                let sum = a.addingReportingOverflow(b), mySum = x.addingReportingOverflow(y)
                #expect(Self.wide(mySum.partialValue) == sum.partialValue && mySum.overflow == sum.overflow)
                let difference = a.subtractingReportingOverflow(b), myDifference = x.subtractingReportingOverflow(y)
                #expect(Self.wide(myDifference.partialValue) == difference.partialValue && myDifference.overflow == difference.overflow)
                let product = a.multipliedFullWidth(by: b), myProduct = x.multipliedFullWidth(by: y)
                #expect(Self.wide(myProduct.high) == product.high && Self.wide(myProduct.low) == product.low, "\(a) × \(b)")
                #expect(Self.wide(x &* y) == a &* b)
                guard b != 0 else { continue }
                let division = a.quotientAndRemainder(dividingBy: b), myDivision = x.quotientAndRemainder(dividingBy: y)
                #expect(Self.wide(myDivision.quotient) == division.quotient && Self.wide(myDivision.remainder) == division.remainder, "\(a) / \(b)")
                // 256-by-128: a dividend whose high half is below the divisor.
                let high = a % b
                let full = b.dividingFullWidth((high, a)), myFull = y.dividingFullWidth((Self.u(high), x))
                #expect(Self.wide(myFull.quotient) == full.quotient && Self.wide(myFull.remainder) == full.remainder, "(\(high), \(a)) / \(b)")
            }
        }
    }

    @Test func parsingRefusesWhatUInt128Refuses() {
        for text in ["", "-1", "1a", " 1", "340282366920938463463374607431768211456"] {
            #expect(U128(text) == nil, "\(text)")
        }
        #expect(U128("340282366920938463463374607431768211455") == .max)
        #expect(U128("0") == .zero)
    }
}
