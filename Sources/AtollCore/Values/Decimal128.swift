import Foundation

/// An IEEE 754-2008 decimal128 number in BID encoding: the same 128 bits as
/// BSON's and Realm's Decimal128. 34 significant digits, exponents
/// -6176...6111; results are rounded half-even.
///
/// Equality is numeric (`1.0 == 1.00`, `0 == -0`) and NaN is unequal to
/// everything, itself included, as with `Double`. Ordering is numeric too,
/// but total: NaN sorts before every other value (and is not `<` another NaN),
/// so `sort()` works on arrays that contain NaN.
///
/// ```swift
/// let price = try Decimal128(string: "19.99")
/// let total = price * 3          // 59.97
/// total.description              // "59.97"
/// let tiny: Decimal128 = "1E-100"
/// ```
public struct Decimal128: Sendable {
    private var high: UInt64
    private var low: UInt64

    /// Zero.
    public init() {
        self.init(bid: Self.zeroExponentBits, low: 0)
    }

    /// The number with these BID bits: `high` holds the sign, combination
    /// field and the top 49 bits of the coefficient.
    ///
    /// ```swift
    /// Decimal128(bid: 0x3040_0000_0000_0000, low: 1)  // 1
    /// ```
    public init(bid high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The BID bits, exactly as stored (not normalized).
    public var bid: (high: UInt64, low: UInt64) { (high, low) }

    /// Parses a decimal literal: `"1.5"`, `"-0.000123"`, `"1e10"`, `"1.23E-5"`,
    /// `".5"`, `"NaN"`, `"Inf"`, `"-Infinity"` (words in any case).
    /// More than 34 significant digits round half-even; exponents too large
    /// give ±Infinity and too small give zero, as IEEE 754 says.
    ///
    /// ```swift
    /// let x = try Decimal128(string: "1.23E-5")   // 0.0000123
    /// ```
    /// - Throws: ``Decimal128Error`` saying what is wrong and where.
    public init(string: String) throws(Decimal128Error) {
        var copy = string
        let result = copy.withUTF8 { Self.parse($0) }
        switch result {
        case .number(let value): self = value
        case .invalid(let reason): throw Decimal128Error(input: string, reason: reason)
        }
    }

    /// The exact value of `value`.
    public init(_ value: Int) {
        self = Self.make(negative: value < 0, U128(value.magnitude), exponent: 0)
    }

    /// The shortest decimal that converts back to `value` (its `description`),
    /// so `Decimal128(0.1)` is exactly 0.1 and `Decimal128(2.0)` is 2.
    public init(_ value: Double) {
        if value.isNaN {
            self.init(bid: Self.nanBits, low: 0)
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        guard case .number(let parsed) = text.withUTF8({ Self.parse($0) }) else {
            preconditionFailure("Double.description gave unparsable \"\(text)\"")
        }
        self = parsed
    }

    /// Same as `init(_: Double)`; the name Realm Swift uses.
    public init(number: Double) { self.init(number) }

    /// The value of a Foundation `Decimal`, rounded to 34 digits if longer.
    ///
    /// ```swift
    /// Decimal128(Decimal(string: "3.14")!)   // 3.14
    /// ```
    public init(_ value: Decimal) {
        let text = value.isNaN ? "NaN" : "\(value.sign == .minus ? "-" : "")\(value.significand)E\(value.exponent)"
        self = (try? Decimal128(string: text)) ?? Self(bid: Self.nanBits, low: 0)
    }

    /// 16 bytes as BSON stores them: little-endian, low word first.
    public func bsonBytes() -> [UInt8] {
        (0..<16).map { index in
            let word = index < 8 ? low : high
            return UInt8(truncatingIfNeeded: word >> UInt64((index % 8) * 8))
        }
    }

    /// The number in 16 BSON bytes (little-endian, low word first).
    ///
    /// ```swift
    /// let same = Decimal128(bsonBytes: x.bsonBytes())
    /// ```
    /// - Precondition: `bsonBytes.count == 16`.
    public init(bsonBytes: some Collection<UInt8>) {
        precondition(bsonBytes.count == 16, "Decimal128 needs exactly 16 bytes, got \(bsonBytes.count)")
        var low: UInt64 = 0
        var high: UInt64 = 0
        for (index, byte) in bsonBytes.enumerated() {
            if index < 8 {
                low |= UInt64(byte) << UInt64(index * 8)
            } else {
                high |= UInt64(byte) << UInt64((index - 8) * 8)
            }
        }
        self.init(bid: high, low: low)
    }

    /// True for quiet and signaling NaNs.
    public var isNaN: Bool { (high >> 58) & 0x1F == 0x1F }

    /// True for a signaling NaN (which arithmetic turns into a quiet one).
    public var isSignaling: Bool { isNaN && high & Self.signalingBit != 0 }

    /// True for +Infinity and -Infinity.
    public var isInfinite: Bool { (high >> 58) & 0x1F == 0x1E }

    /// The absolute value (the sign bit cleared).
    public var magnitude: Decimal128 { Decimal128(bid: high & ~Self.signBit, low: low) }

    /// The nearest `Double` (correctly rounded); ±infinity when too large.
    public var doubleValue: Double {
        switch form {
        case .nan: return .nan
        case .infinity: return isNegative ? -.infinity : .infinity
        case .finite(let coefficient, let exponent):
            // Both operands are exact doubles, so one operation rounds correctly.
            if coefficient < U128(UInt64(1) << 53), (-22...22).contains(exponent) {
                let significand = Double(coefficient.low)
                let scale = Self.doublePowers[abs(exponent)]
                let value = exponent < 0 ? significand / scale : significand * scale
                return isNegative ? -value : value
            }
            return Double(description) ?? .nan
        }
    }

    /// Same as ``description``; the name Realm Swift uses.
    public var stringValue: String { description }
}

// MARK: - Encoding

extension Decimal128 {
    static let bias = 6176
    static let minExponent = -6176
    static let maxExponent = 6111
    static let precision = 34
    static let signBit: UInt64 = 1 << 63
    static let signalingBit: UInt64 = 1 << 57
    static let nanBits: UInt64 = 0x7C00_0000_0000_0000
    static let infinityBits: UInt64 = 0x7800_0000_0000_0000
    static let zeroExponentBits: UInt64 = UInt64(bias) << 49
    static let maxCoefficient: U128 = powersOfTen[34] - 1

    /// 10^0 ... 10^38, all that fit in 128 bits.
    static let powersOfTen: [U128] = {
        var powers: [U128] = [1]
        for _ in 1...38 { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()

    static let zeroStrippingSteps = [16, 4, 1]
    static let doublePowers: [Double] = (0...22).map { Double("1e\($0)") ?? 1 }

    enum Form {
        case nan, infinity
        case finite(coefficient: U128, exponent: Int)
    }

    var isNegative: Bool { high & Self.signBit != 0 }

    /// The decoded value; non-canonical coefficients (above 10^34 - 1) read as zero.
    var form: Form {
        if (high >> 61) & 0b11 == 0b11 {
            switch (high >> 58) & 0x1F {
            case 0x1F: return .nan
            case 0x1E: return .infinity
            default:
                // The "large coefficient" form: always above the maximum, so zero.
                return .finite(coefficient: 0, exponent: Int((high >> 47) & 0x3FFF) - Self.bias)
            }
        }
        let coefficient = U128(high: high & 0x1_FFFF_FFFF_FFFF, low: low)
        return .finite(
            coefficient: coefficient > Self.maxCoefficient ? 0 : coefficient,
            exponent: Int((high >> 49) & 0x3FFF) - Self.bias
        )
    }

    static func nan() -> Decimal128 { Decimal128(bid: nanBits, low: 0) }

    static func infinity(negative: Bool) -> Decimal128 {
        Decimal128(bid: infinityBits | (negative ? signBit : 0), low: 0)
    }

    /// Number of decimal digits; 0 has none.
    static func digitCount(_ value: U128) -> Int {
        let bits = 128 - value.leadingZeroBitCount
        var count = (bits * 1233) >> 12  // floor(bits * log10(2)), at most one short
        if count < powersOfTen.count, value >= powersOfTen[count] { count += 1 }
        return count
    }

    /// Rounds `±(value + fraction) × 10^exponent` to 34 digits and the
    /// exponent range, half-even, where `sticky` says a fraction strictly
    /// between 0 and 1 was dropped below `value`. Callers with `sticky` keep
    /// at least 35 digits in `value`, so the rounding digit is present.
    static func make(negative: Bool, _ value: U128, exponent: Int, sticky: Bool = false) -> Decimal128 {
        var coefficient = value
        var exponent = exponent
        let shift = max(digitCount(value) - precision, minExponent - exponent, 0)
        if shift > 0 {
            if shift >= powersOfTen.count {
                coefficient = 0  // value < 2^128 < half of 10^39
            } else {
                let divisor = powersOfTen[shift]
                let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
                let half = divisor / 2
                let roundUp = remainder > half || (remainder == half && (sticky || quotient.isOdd))
                coefficient = roundUp ? quotient + 1 : quotient
            }
            exponent += shift
            if coefficient > maxCoefficient {  // 9…9 rounded up to 10^34
                coefficient /= 10
                exponent += 1
            }
        }
        if exponent > maxExponent {
            let room = precision - digitCount(coefficient)
            if coefficient == 0 {
                exponent = maxExponent
            } else if exponent - maxExponent <= room {
                coefficient *= powersOfTen[exponent - maxExponent]
                exponent = maxExponent
            } else {
                return infinity(negative: negative)
            }
        }
        let biased = UInt64(exponent + bias)
        return Decimal128(
            bid: (negative ? signBit : 0) | biased << 49 | coefficient.high,
            low: coefficient.low
        )
    }
}

// MARK: - Parsing and formatting

extension Decimal128 {
    enum Parsed {
        case number(Decimal128)
        case invalid(Decimal128Error.Reason)
    }

    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Parsed {
        guard !text.isEmpty else { return .invalid(.empty) }
        var index = 0
        let negative = text[0] == UInt8(ascii: "-")
        if negative || text[0] == UInt8(ascii: "+") { index = 1 }

        if index < text.count, (UInt8(ascii: "A")...UInt8(ascii: "z")).contains(text[index]) {
            let word = String(decoding: text[index...], as: UTF8.self).lowercased()
            switch word {
            case "inf", "infinity": return .number(infinity(negative: negative))
            case "nan", "snan":
                let bits = nanBits | (negative ? signBit : 0) | (word == "snan" ? signalingBit : 0)
                return .number(Decimal128(bid: bits, low: 0))
            default: break
            }
        }

        func character(at byteOffset: Int) -> Decimal128Error.Reason {
            let rest = String(decoding: text[byteOffset...], as: UTF8.self)
            let offset = String(decoding: text[..<byteOffset], as: UTF8.self).count
            return .unexpectedCharacter(rest.unicodeScalars.first.map(Character.init) ?? "\u{FFFD}", offset: offset)
        }

        // Significand: keep up to 38 significant digits; later ones only count.
        var coefficient: U128 = 0
        var kept = 0, dropped = 0, fractionDigits = 0
        var sticky = false, sawDigit = false, sawPoint = false
        significand: while index < text.count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = byte - UInt8(ascii: "0")
                sawDigit = true
                if sawPoint { fractionDigits += 1 }
                if kept < 38 {
                    if coefficient != 0 || digit != 0 {
                        coefficient = coefficient * 10 + U128(digit)
                        kept += 1
                    }
                } else {
                    dropped += 1
                    sticky = sticky || digit != 0
                }
            case UInt8(ascii: ".") where !sawPoint:
                sawPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                break significand
            default:
                return .invalid(character(at: index))
            }
            index += 1
        }
        guard sawDigit else { return .invalid(.missingDigits) }

        // Exponent, saturated far beyond the representable range.
        var exponent = 0
        if index < text.count {
            index += 1  // the "e"
            var exponentNegative = false
            if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
                exponentNegative = text[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < text.count else { return .invalid(.missingExponentDigits) }
            while index < text.count {
                let byte = text[index]
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                    return .invalid(character(at: index))
                }
                exponent = min(exponent * 10 + Int(byte - UInt8(ascii: "0")), 1_000_000_000)
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        return .number(make(negative: negative, coefficient, exponent: exponent - fractionDigits + dropped, sticky: sticky))
    }
}

extension Decimal128: CustomStringConvertible {
    /// The BSON / IEEE scientific string: `"1.5"`, `"-0.000123"`, `"1E+10"`,
    /// `"1.0E-7"`, `"NaN"`, `"-Infinity"`. Trailing zeros are kept, so
    /// `1.0` and `1.00` print differently though they are equal.
    public var description: String {
        let sign = isNegative ? "-" : ""
        switch form {
        case .nan: return "NaN"
        case .infinity: return sign + "Infinity"
        case .finite(let coefficient, let exponent):
            let digits = String(coefficient)
            let adjusted = exponent + digits.count - 1
            if exponent <= 0, adjusted >= -6 {
                let integerDigits = digits.count + exponent
                if exponent == 0 { return sign + digits }
                if integerDigits > 0 {
                    return "\(sign)\(digits.prefix(integerDigits)).\(digits.dropFirst(integerDigits))"
                }
                return "\(sign)0.\(String(repeating: "0", count: -integerDigits))\(digits)"
            }
            let fraction = digits.count > 1 ? ".\(digits.dropFirst())" : ""
            return "\(sign)\(digits.prefix(1))\(fraction)E\(adjusted < 0 ? "-" : "+")\(abs(adjusted))"
        }
    }
}

// MARK: - Comparison and hashing

extension Decimal128: Hashable, Comparable {
    /// Numeric equality: `1.0 == 1.00`, `0 == -0`, and NaN equals nothing.
    public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
        switch (lhs.form, rhs.form) {
        case (.infinity, .infinity): return lhs.isNegative == rhs.isNegative
        case (.finite, .finite): return compare(lhs, rhs) == 0
        default: return false
        }
    }

    /// Numeric order, with NaN before everything else (-Infinity included).
    public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool {
        if rhs.isNaN { return false }
        if lhs.isNaN { return true }
        return compare(lhs, rhs) < 0
    }

    /// Hashes the numeric value, so equal numbers hash equally.
    public func hash(into hasher: inout Hasher) {
        switch form {
        case .nan: hasher.combine(0 as UInt8)
        case .infinity: hasher.combine(isNegative ? 1 : 2 as UInt8)
        case .finite(var coefficient, var exponent):
            guard coefficient != 0 else { return hasher.combine(3 as UInt8) }
            for step in Self.zeroStrippingSteps {  // strip trailing zeros: one member per cohort
                while coefficient % Self.powersOfTen[step] == 0 {
                    coefficient /= Self.powersOfTen[step]
                    exponent += step
                }
            }
            hasher.combine(isNegative)
            hasher.combine(coefficient)
            hasher.combine(exponent)
        }
    }

    /// -1, 0 or 1 for two non-NaN values.
    private static func compare(_ lhs: Decimal128, _ rhs: Decimal128) -> Int {
        switch (lhs.form, rhs.form) {
        case (.infinity, .infinity): return lhs.isNegative == rhs.isNegative ? 0 : (lhs.isNegative ? -1 : 1)
        case (.infinity, _): return lhs.isNegative ? -1 : 1
        case (_, .infinity): return rhs.isNegative ? 1 : -1
        case (.finite(let c1, let e1), .finite(let c2, let e2)):
            let lhsNegative = lhs.isNegative && c1 != 0, rhsNegative = rhs.isNegative && c2 != 0
            if lhsNegative != rhsNegative { return lhsNegative ? -1 : 1 }
            let order = compareMagnitudes(c1, e1, c2, e2)
            return lhsNegative ? -order : order
        default: return 0
        }
    }

    /// Compares `c1 × 10^e1` with `c2 × 10^e2` (coefficients up to 34 digits).
    static func compareMagnitudes(_ c1: U128, _ e1: Int, _ c2: U128, _ e2: Int) -> Int {
        if c1 == 0 || c2 == 0 { return c1 == c2 ? 0 : (c1 == 0 ? -1 : 1) }
        let top1 = e1 + digitCount(c1), top2 = e2 + digitCount(c2)
        if top1 != top2 { return top1 < top2 ? -1 : 1 }
        // Same leading digit position, so the exponents differ by at most 33.
        let a = e1 > e2 ? c1 * powersOfTen[e1 - e2] : c1
        let b = e2 > e1 ? c2 * powersOfTen[e2 - e1] : c2
        return a == b ? 0 : (a < b ? -1 : 1)
    }
}

// MARK: - Arithmetic

extension Decimal128: SignedNumeric {
    public static var zero: Decimal128 { Decimal128() }

    /// The integer's value, or `nil` if it needs more than 34 significant digits.
    public init?<T: BinaryInteger>(exactly source: T) {
        let digits = String(source.magnitude)
        let significant = digits.count - digits.reversed().prefix { $0 == "0" }.count
        guard significant <= Self.precision,
              let value = try? Decimal128(string: source < 0 ? "-" + digits : digits),
              !value.isInfinite
        else { return nil }
        self = value
    }

    /// Flips the sign (NaN and zero included).
    public static prefix func - (operand: Decimal128) -> Decimal128 {
        Decimal128(bid: operand.high ^ signBit, low: operand.low)
    }

    public mutating func negate() { high ^= Self.signBit }

    /// The sum, rounded to 34 digits. Exact sums keep the smaller exponent: `1.0 + 1.00` is `2.00`.
    public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        switch (lhs.form, rhs.form) {
        case (.nan, _), (_, .nan): return nan()
        case (.infinity, .infinity): return lhs.isNegative == rhs.isNegative ? lhs.canonicalInfinity : nan()
        case (.infinity, _): return lhs.canonicalInfinity
        case (_, .infinity): return rhs.canonicalInfinity
        case (.finite(let c1, let e1), .finite(let c2, let e2)):
            // a is the operand with the larger exponent.
            let swap = e1 < e2
            let (aNegative, bNegative) = swap ? (rhs.isNegative, lhs.isNegative) : (lhs.isNegative, rhs.isNegative)
            var (a, b) = swap ? (c2, c1) : (c1, c2)
            var ea = swap ? e2 : e1
            let eb = swap ? e1 : e2
            if a == 0 { ea = eb }  // zero scales freely
            var sticky = false
            // Shift a up to at most 37 digits; anything left shifts b down into `sticky`.
            let up = min(ea - eb, max(0, 37 - digitCount(a)))
            a *= powersOfTen[up]
            let down = ea - eb - up
            if down > 0 {
                if down >= powersOfTen.count {
                    sticky = b != 0
                    b = 0
                } else {
                    let (quotient, remainder) = b.quotientAndRemainder(dividingBy: powersOfTen[down])
                    (b, sticky) = (quotient, remainder != 0)
                }
            }
            let exponent = eb + down
            if aNegative == bNegative {
                return make(negative: aNegative, a + b, exponent: exponent, sticky: sticky)
            }
            // a ≥ 10^36 whenever `sticky`, so a - b - 1 cannot underflow.
            if a > b || sticky {
                return make(negative: aNegative, a - b - (sticky ? 1 : 0), exponent: exponent, sticky: sticky)
            }
            if b > a { return make(negative: bNegative, b - a, exponent: exponent) }
            return make(negative: false, 0, exponent: exponent)
        }
    }

    public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 { lhs + -rhs }

    /// The product, rounded to 34 digits. Exact products add exponents: `1.5 * 1.5` is `2.25`.
    public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        let negative = lhs.isNegative != rhs.isNegative
        switch (lhs.form, rhs.form) {
        case (.nan, _), (_, .nan): return nan()
        case (.infinity, .finite(let c, _)), (.finite(let c, _), .infinity):
            return c == 0 ? nan() : infinity(negative: negative)
        case (.infinity, .infinity): return infinity(negative: negative)
        case (.finite(let c1, let e1), .finite(let c2, let e2)):
            let (high, low) = c1.multipliedFullWidth(by: c2)
            if high == 0 { return make(negative: negative, low, exponent: e1 + e2) }
            // Drop low digits into `sticky` until the product fits 128 bits (keeps ≥ 37 digits).
            let bits = 256 - high.leadingZeroBitCount
            var shift = ((bits - 128) * 1233) >> 12
            var (quotient, remainder) = divide((high, low), by: powersOfTen[shift])
            var sticky = remainder != 0
            while quotient.high != 0 {
                (quotient, remainder) = divide(quotient, by: 10)
                sticky = sticky || remainder != 0
                shift += 1
            }
            return make(negative: negative, quotient.low, exponent: e1 + e2 + shift, sticky: sticky)
        }
    }

    /// The quotient, rounded to 34 digits; `x / 0` is ±Infinity and `0 / 0` is NaN.
    /// Exact quotients use the exponent nearest `lhs` minus `rhs` exponents: `1.00 / 2` is `0.50`.
    public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        let negative = lhs.isNegative != rhs.isNegative
        switch (lhs.form, rhs.form) {
        case (.nan, _), (_, .nan), (.infinity, .infinity): return nan()
        case (.infinity, _): return infinity(negative: negative)
        case (_, .infinity): return make(negative: negative, 0, exponent: minExponent)
        case (.finite(let c1, let e1), .finite(let c2, let e2)):
            if c2 == 0 { return c1 == 0 ? nan() : infinity(negative: negative) }
            if c1 == 0 { return make(negative: negative, 0, exponent: e1 - e2) }
            // Scale the dividend so the quotient has 36 or 37 digits.
            let scale = 36 + digitCount(c2) - digitCount(c1)
            var dividend = c1.multipliedFullWidth(by: powersOfTen[min(scale, 38)])
            if scale > 38 {
                let (carry, low) = dividend.low.multipliedFullWidth(by: powersOfTen[scale - 38])
                dividend = (dividend.high &* powersOfTen[scale - 38] &+ carry, low)
            }
            var (quotient, remainder) = divide(dividend, by: c2)
            var exponent = e1 - e2 - scale
            if remainder == 0 {  // exact: move toward the preferred exponent e1 - e2
                while exponent < e1 - e2, quotient.low % 10 == 0 {
                    quotient.low /= 10
                    exponent += 1
                }
            }
            return make(negative: negative, quotient.low, exponent: exponent, sticky: remainder != 0)
        }
    }

    public static func += (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs + rhs }
    public static func -= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs - rhs }
    public static func *= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs * rhs }
    public static func /= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs / rhs }

    private var canonicalInfinity: Decimal128 { Self.infinity(negative: isNegative) }

    /// 256-by-128-bit division; the divisor must be non-zero.
    private static func divide(
        _ dividend: (high: U128, low: U128), by divisor: U128
    ) -> (quotient: (high: U128, low: U128), remainder: U128) {
        let (highQuotient, highRemainder) = dividend.high.quotientAndRemainder(dividingBy: divisor)
        let (lowQuotient, remainder) = divisor.dividingFullWidth((highRemainder, dividend.low))
        return ((highQuotient, lowQuotient), remainder)
    }
}

// MARK: - Literals and Codable

extension Decimal128: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int) { self.init(value) }

    /// Goes through `Double`, then takes its shortest decimal form: `0.1` is exactly 0.1.
    public init(floatLiteral value: Double) { self.init(value) }

    /// Parses the literal exactly; traps if it is not a number.
    ///
    /// ```swift
    /// let precise: Decimal128 = "0.1234567890123456789012345678901234"
    /// ```
    public init(stringLiteral value: String) {
        do {
            self = try Decimal128(string: value)
        } catch {
            preconditionFailure(error.description)
        }
    }
}

extension Decimal128: Codable {
    /// Decodes the string form, e.g. `"1.5"` or `"NaN"`, or a number (`1.5`; a floating-point
    /// number keeps only the precision of a `Double`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int.self) {
            self = Decimal128(integer)
            return
        }
        if let double = try? container.decode(Double.self) {
            self = Decimal128(double)
            return
        }
        let string = try container.decode(String.self)
        do {
            self = try Decimal128(string: string)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes ``description``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Why a string is not a ``Decimal128``.
///
/// ```swift
/// do { _ = try Decimal128(string: "1.2.3") } catch { print(error) }
/// // Invalid Decimal128 "1.2.3": unexpected '.' at offset 3
/// ```
public struct Decimal128Error: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The string is empty.
        case empty
        /// This character, at this zero-based offset, cannot appear there.
        case unexpectedCharacter(Character, offset: Int)
        /// There are no digits before the exponent (e.g. `"."`, `"-"`, `"e5"`).
        case missingDigits
        /// An `e` or `E` is not followed by digits (e.g. `"1e"`, `"1e+"`).
        case missingExponentDigits
    }

    /// The string that failed to parse.
    public let input: String
    public let reason: Reason

    public init(input: String, reason: Reason) {
        self.input = input
        self.reason = reason
    }

    public var description: String {
        let shown = input.count > 40 ? "\(input.prefix(40))…" : input
        let problem = switch reason {
        case .empty: "the string is empty"
        case .unexpectedCharacter(let character, let offset): "unexpected \(Self.show(character)) at offset \(offset)"
        case .missingDigits: "no digits"
        case .missingExponentDigits: "no digits after the exponent marker"
        }
        return "Invalid Decimal128 \"\(shown)\": \(problem)"
    }

    /// `'x'` for visible ASCII, `U+00A0` for anything else.
    private static func show(_ character: Character) -> String {
        if let ascii = character.asciiValue, (0x21...0x7E).contains(ascii) { return "'\(character)'" }
        return character.unicodeScalars.map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }.joined(separator: " ")
    }
}

extension Decimal128Error: LocalizedError {
    public var errorDescription: String? { description }
}
