/// An unsigned 128-bit integer as two `UInt64`s: the arithmetic `Decimal128` needs, with the results
/// of the standard library's `UInt128` (macOS 15 / iOS 18), on every OS version Atoll supports.
///
/// ```swift
/// let (high, low) = U128(10).power(20).multipliedFullWidth(by: 7)  // high == 0
/// ```
///
/// `+`, `-` and `*` trap on overflow, as `UInt128`'s do; `&+` and `&*` wrap.
package struct U128: Hashable, Comparable, Sendable, LosslessStringConvertible, ExpressibleByIntegerLiteral {
    package var high: UInt64
    package var low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    package init(_ value: UInt64) { self.init(high: 0, low: value) }
    package init(_ value: UInt) { self.init(high: 0, low: UInt64(value)) }
    package init(_ value: UInt8) { self.init(high: 0, low: UInt64(value)) }
    package init(integerLiteral value: UInt64) { self.init(value) }

    package static let zero = U128(0)
    package static let max = U128(high: .max, low: .max)

    package var leadingZeroBitCount: Int { high != 0 ? high.leadingZeroBitCount : 64 + low.leadingZeroBitCount }
    package var isOdd: Bool { low & 1 == 1 }

    package static func < (lhs: U128, rhs: U128) -> Bool {
        lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
    }

    // MARK: Addition and subtraction

    package func addingReportingOverflow(_ other: U128) -> (partialValue: U128, overflow: Bool) {
        let (low, carry) = low.addingReportingOverflow(other.low)
        let (high1, overflow1) = high.addingReportingOverflow(other.high)
        let (high2, overflow2) = high1.addingReportingOverflow(carry ? 1 : 0)
        return (U128(high: high2, low: low), overflow1 || overflow2)
    }

    package func subtractingReportingOverflow(_ other: U128) -> (partialValue: U128, overflow: Bool) {
        let (low, borrow) = low.subtractingReportingOverflow(other.low)
        let (high1, overflow1) = high.subtractingReportingOverflow(other.high)
        let (high2, overflow2) = high1.subtractingReportingOverflow(borrow ? 1 : 0)
        return (U128(high: high2, low: low), overflow1 || overflow2)
    }

    package static func + (lhs: U128, rhs: U128) -> U128 {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        precondition(!overflow, "arithmetic overflow")
        return sum
    }

    package static func &+ (lhs: U128, rhs: U128) -> U128 { lhs.addingReportingOverflow(rhs).partialValue }

    package static func - (lhs: U128, rhs: U128) -> U128 {
        let (difference, overflow) = lhs.subtractingReportingOverflow(rhs)
        precondition(!overflow, "arithmetic overflow")
        return difference
    }

    // MARK: Multiplication

    /// The full 256-bit product.
    package func multipliedFullWidth(by other: U128) -> (high: U128, low: U128) {
        // Schoolbook on 64-bit limbs: (a1·2^64 + a0)(b1·2^64 + b0).
        let p00 = low.multipliedFullWidth(by: other.low)
        let p01 = low.multipliedFullWidth(by: other.high)
        let p10 = high.multipliedFullWidth(by: other.low)
        let p11 = high.multipliedFullWidth(by: other.high)
        let limb0 = p00.low
        // limb1 = p00.high + p01.low + p10.low
        var (limb1, c1) = p00.high.addingReportingOverflow(p01.low)
        var carry1: UInt64 = c1 ? 1 : 0
        (limb1, c1) = limb1.addingReportingOverflow(p10.low)
        carry1 += c1 ? 1 : 0
        // limb2 = p01.high + p10.high + p11.low + carry1
        var (limb2, c2) = p01.high.addingReportingOverflow(p10.high)
        var carry2: UInt64 = c2 ? 1 : 0
        (limb2, c2) = limb2.addingReportingOverflow(p11.low)
        carry2 += c2 ? 1 : 0
        (limb2, c2) = limb2.addingReportingOverflow(carry1)
        carry2 += c2 ? 1 : 0
        let limb3 = p11.high &+ carry2  // cannot overflow: the product fits 256 bits
        return (U128(high: limb3, low: limb2), U128(high: limb1, low: limb0))
    }

    package func multipliedReportingOverflow(by other: U128) -> (partialValue: U128, overflow: Bool) {
        let (high, low) = multipliedFullWidth(by: other)
        return (low, high != .zero)
    }

    package static func * (lhs: U128, rhs: U128) -> U128 {
        let (product, overflow) = lhs.multipliedReportingOverflow(by: rhs)
        precondition(!overflow, "arithmetic overflow")
        return product
    }

    package static func &* (lhs: U128, rhs: U128) -> U128 { lhs.multipliedReportingOverflow(by: rhs).partialValue }
    package static func *= (lhs: inout U128, rhs: U128) { lhs = lhs * rhs }

    // MARK: Division

    /// `self / divisor` and `self % divisor`; traps when `divisor` is zero.
    package func quotientAndRemainder(dividingBy divisor: U128) -> (quotient: U128, remainder: U128) {
        precondition(divisor != .zero, "division by zero")
        if divisor.high == 0 {
            if high == 0 {
                let (q, r) = low.quotientAndRemainder(dividingBy: divisor.low)
                return (U128(q), U128(r))
            }
            let (qHigh, r) = high.quotientAndRemainder(dividingBy: divisor.low)
            let (qLow, remainder) = divisor.low.dividingFullWidth((r, low))
            return (U128(high: qHigh, low: qLow), U128(remainder))
        }
        if self < divisor { return (.zero, self) }
        // The quotient fits 64 bits: shift and subtract.
        var quotient: UInt64 = 0
        var remainder = self
        let shift = divisor.leadingZeroBitCount - leadingZeroBitCount
        var shifted = divisor.shiftedLeft(shift)
        for bit in stride(from: shift, through: 0, by: -1) {
            if remainder >= shifted {
                remainder = remainder - shifted
                quotient |= 1 << UInt64(bit)
            }
            shifted = shifted.shiftedRight(1)
        }
        return (U128(quotient), remainder)
    }

    /// `dividend / self` and `dividend % self` for a 256-bit dividend whose high half is below `self`
    /// (so the quotient fits 128 bits), as `FixedWidthInteger.dividingFullWidth`.
    package func dividingFullWidth(_ dividend: (high: U128, low: U128)) -> (quotient: U128, remainder: U128) {
        precondition(self != .zero, "division by zero")
        precondition(dividend.high < self, "quotient overflow")
        if high == 0 {
            // dividend.high < self < 2^64: three 64-bit limbs left to divide.
            let (q1, r1) = low.dividingFullWidth((dividend.high.low, dividend.low.high))
            let (q0, r0) = low.dividingFullWidth((r1, dividend.low.low))
            return (U128(high: q1, low: q0), U128(r0))
        }
        // Bit by bit: 128 steps of shift in the next dividend bit, subtract when it fits.
        var remainder = dividend.high
        var quotient = U128.zero
        for bit in stride(from: 127, through: 0, by: -1) {
            let carry = remainder.high >> 63 == 1
            remainder = remainder.shiftedLeft(1)
            if dividend.low.bit(bit) { remainder.low |= 1 }
            if carry || remainder >= self {
                remainder = remainder &- self
                quotient = quotient.settingBit(bit)
            }
        }
        return (quotient, remainder)
    }

    package static func / (lhs: U128, rhs: U128) -> U128 { lhs.quotientAndRemainder(dividingBy: rhs).quotient }
    package static func % (lhs: U128, rhs: U128) -> U128 { lhs.quotientAndRemainder(dividingBy: rhs).remainder }
    package static func /= (lhs: inout U128, rhs: U128) { lhs = lhs / rhs }

    // MARK: Bits

    static func &- (lhs: U128, rhs: U128) -> U128 { lhs.subtractingReportingOverflow(rhs).partialValue }

    func shiftedLeft(_ count: Int) -> U128 {
        if count == 0 { return self }
        if count >= 128 { return .zero }
        if count >= 64 { return U128(high: low << UInt64(count - 64), low: 0) }
        return U128(high: high << UInt64(count) | low >> UInt64(64 - count), low: low << UInt64(count))
    }

    func shiftedRight(_ count: Int) -> U128 {
        if count == 0 { return self }
        if count >= 128 { return .zero }
        if count >= 64 { return U128(high: 0, low: high >> UInt64(count - 64)) }
        return U128(high: high >> UInt64(count), low: low >> UInt64(count) | high << UInt64(64 - count))
    }

    func bit(_ index: Int) -> Bool {
        index >= 64 ? (high >> UInt64(index - 64)) & 1 == 1 : (low >> UInt64(index)) & 1 == 1
    }

    func settingBit(_ index: Int) -> U128 {
        index >= 64 ? U128(high: high | 1 << UInt64(index - 64), low: low) : U128(high: high, low: low | 1 << UInt64(index))
    }

    // MARK: Text

    /// The decimal digits, as `String(UInt128)` gives them.
    package var description: String {
        if high == 0 { return String(low) }
        let chunk = U128(10_000_000_000_000_000_000)  // 10^19, the largest power of ten in a UInt64
        var parts: [UInt64] = []
        var rest = self
        while rest.high != 0 {
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: chunk)
            parts.append(remainder.low)
            rest = quotient
        }
        var text = String(rest.low)
        for part in parts.reversed() {
            let digits = String(part)
            text += String(repeating: "0", count: 19 - digits.count) + digits
        }
        return text
    }

    /// Parses decimal digits, as `UInt128(_: String)` does; `nil` for anything else or on overflow.
    package init?(_ text: String) {
        guard !text.isEmpty else { return nil }
        var value = U128.zero
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(U128(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        self = value
    }
}
