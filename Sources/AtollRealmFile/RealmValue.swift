import Foundation

/// A value read from a Realm file.
public enum RealmValue: Sendable, Equatable, Hashable {
    case null
    case int(Int64)
    case bool(Bool)
    case string(String)
    case binary(Data)
    case float(Float)
    case double(Double)
    case timestamp(RealmTimestamp)
    case decimal128(RealmDecimal128)
    case objectId(RealmObjectId)
    case uuid(UUID)
    /// A link to an object of another (or the same) table, by object key.
    case link(RealmLink)
    /// An ordered list.
    case list([RealmValue])
    /// A set, in the order the file stores it.
    case set([RealmValue])
    /// A dictionary, as key/value pairs in the order the file stores them.
    case dictionary([RealmDictionaryEntry])

    /// The integer payload, if this is `.int`.
    public var intValue: Int64? { if case let .int(v) = self { v } else { nil } }
    /// The string payload, if this is `.string`.
    public var stringValue: String? { if case let .string(v) = self { v } else { nil } }
    /// The link payload, if this is `.link`.
    public var linkValue: RealmLink? { if case let .link(v) = self { v } else { nil } }
    /// The elements, if this is a list or a set.
    public var elements: [RealmValue]? {
        switch self {
        case let .list(v), let .set(v): v
        default: nil
        }
    }
    /// The entries, if this is a dictionary.
    public var entries: [RealmDictionaryEntry]? { if case let .dictionary(v) = self { v } else { nil } }
}

extension RealmValue {
    /// Values are equal when they hold the same stored data: floats and doubles compare by their bits, so a NaN
    /// equals the same NaN (two reads of a file compare equal) and 0.0 differs from -0.0.
    public static func == (lhs: RealmValue, rhs: RealmValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.int(a), .int(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.binary(a), .binary(b)): a == b
        case let (.float(a), .float(b)): a.bitPattern == b.bitPattern
        case let (.double(a), .double(b)): a.bitPattern == b.bitPattern
        case let (.timestamp(a), .timestamp(b)): a == b
        case let (.decimal128(a), .decimal128(b)): a == b
        case let (.objectId(a), .objectId(b)): a == b
        case let (.uuid(a), .uuid(b)): a == b
        case let (.link(a), .link(b)): a == b
        case let (.list(a), .list(b)): a == b
        case let (.set(a), .set(b)): a == b
        case let (.dictionary(a), .dictionary(b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case let .int(v): hasher.combine(1); hasher.combine(v)
        case let .bool(v): hasher.combine(2); hasher.combine(v)
        case let .string(v): hasher.combine(3); hasher.combine(v)
        case let .binary(v): hasher.combine(4); hasher.combine(v)
        case let .float(v): hasher.combine(5); hasher.combine(v.bitPattern)
        case let .double(v): hasher.combine(6); hasher.combine(v.bitPattern)
        case let .timestamp(v): hasher.combine(7); hasher.combine(v)
        case let .decimal128(v): hasher.combine(8); hasher.combine(v)
        case let .objectId(v): hasher.combine(9); hasher.combine(v)
        case let .uuid(v): hasher.combine(10); hasher.combine(v)
        case let .link(v): hasher.combine(11); hasher.combine(v)
        case let .list(v): hasher.combine(12); hasher.combine(v)
        case let .set(v): hasher.combine(13); hasher.combine(v)
        case let .dictionary(v): hasher.combine(14); hasher.combine(v)
        }
    }
}

/// One key/value pair of a Realm dictionary.
public struct RealmDictionaryEntry: Sendable, Equatable, Hashable {
    public let key: String
    public let value: RealmValue

    public init(key: String, value: RealmValue) {
        self.key = key
        self.value = value
    }
}

/// A link target: the target table's name and the object's key in that table.
public struct RealmLink: Sendable, Equatable, Hashable {
    /// Name of the target table as stored in the file (with any `class_` prefix).
    public let table: String
    /// Object key inside the target table; use `RealmTable.object(key:)` to read it.
    public let objectKey: Int64

    public init(table: String, objectKey: Int64) {
        self.table = table
        self.objectKey = objectKey
    }

    /// Whether the link targets an unresolved object (a tombstone kept for sync), which `object(key:)`
    /// does not return.
    public var isUnresolved: Bool { objectKey <= -2 }
}

/// A point in time: seconds since the Unix epoch plus nanoseconds (same sign as seconds).
public struct RealmTimestamp: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let seconds: Int64
    public let nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The same instant as a Foundation `Date`, converted as realm-swift converts it
    /// (`RLMTimestampToNSDate`): the seconds are moved to 2001 before the nanoseconds are added, so
    /// a `Date` realm-swift stored reads back `==` to the one it stored. (AtollCore's
    /// `Date(seconds:nanoseconds:)` is the same formula.)
    public var date: Date {
        Date(timeIntervalSinceReferenceDate:
            Double(seconds) - Date.timeIntervalBetween1970AndReferenceDate + Double(nanoseconds) / 1e9)
    }
    public var description: String { "Timestamp(\(seconds)s, \(nanoseconds)ns)" }
}

/// A 12-byte MongoDB-style ObjectId.
public struct RealmObjectId: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Creates an ObjectId from exactly 12 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 12 else { return nil }
        self.bytes = bytes
    }

    /// Creates an ObjectId from 24 hexadecimal digits.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 24 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 24, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    /// 24 lowercase hexadecimal digits.
    public var hexString: String { bytes.map { String(format: "%02x", $0) }.joined() }
    public var description: String { hexString }
}

/// An IEEE 754-2008 decimal128 value in binary integer decimal (BID) encoding, as Realm stores it.
public struct RealmDecimal128: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Low 64 bits of the encoding.
    public let low: UInt64
    /// High 64 bits of the encoding (sign, combination field, exponent, coefficient high bits).
    public let high: UInt64

    public init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// Realm's null marker (a NaN with payload 0xaa).
    static let null = RealmDecimal128(low: 0xaa, high: 0x7c00_0000_0000_0000)

    public var isNaN: Bool { high & 0x7c00_0000_0000_0000 == 0x7c00_0000_0000_0000 }
    public var isInfinite: Bool { high & 0x7c00_0000_0000_0000 == 0x7800_0000_0000_0000 }
    public var isNegative: Bool { high >> 63 == 1 }

    /// Sign, coefficient (its high and low 64 bits: below 10^34) and unbiased exponent of a finite value.
    public var components: (negative: Bool, coefficient: (high: UInt64, low: UInt64), exponent: Int)? {
        guard !isNaN, !isInfinite else { return nil }
        if (high >> 61) & 3 == 3 {
            // Coefficients that need the long form exceed the decimal128 range: canonical zero.
            let exponent = Int((high >> 47) & 0x3FFF) - 6176
            return (isNegative, (0, 0), exponent)
        }
        let exponent = Int((high >> 49) & 0x3FFF) - 6176
        let coefficientHigh = high & 0x1_FFFF_FFFF_FFFF
        // Above 10^34 - 1 (0x1_ED09_BEAD_87C0 378D_8E63_FFFF_FFFF): non-canonical, read as zero.
        let maxHigh: UInt64 = 0x1_ED09_BEAD_87C0, maxLow: UInt64 = 0x378D_8E63_FFFF_FFFF
        let tooLarge = coefficientHigh > maxHigh || (coefficientHigh == maxHigh && low > maxLow)
        return (isNegative, tooLarge ? (0, 0) : (coefficientHigh, low), exponent)
    }

    /// The decimal digits of a 128-bit unsigned integer given as two halves.
    static func decimalDigits(high: UInt64, low: UInt64) -> String {
        if high == 0 { return String(low) }
        let chunk: UInt64 = 10_000_000_000_000_000_000  // 10^19
        var (high, low) = (high, low)
        var parts: [UInt64] = []
        while high != 0 {
            let (quotientHigh, remainderHigh) = high.quotientAndRemainder(dividingBy: chunk)
            let (quotientLow, remainder) = chunk.dividingFullWidth((remainderHigh, low))
            parts.append(remainder)
            (high, low) = (quotientHigh, quotientLow)
        }
        var text = String(low)
        for part in parts.reversed() {
            let digits = String(part)
            text += String(repeating: "0", count: 19 - digits.count) + digits
        }
        return text
    }

    /// Plain decimal text such as `-12.50`, `1E+30`, `NaN` or `Infinity`.
    public var description: String {
        if isNaN { return "NaN" }
        guard let (negative, coefficient, exponent) = components else { return isNegative ? "-Infinity" : "Infinity" }
        let digits = Self.decimalDigits(high: coefficient.high, low: coefficient.low)
        let sign = negative ? "-" : ""
        if exponent == 0 { return sign + digits }
        if exponent > 0 { return sign + digits + "E+\(exponent)" }
        let scale = -exponent
        if scale < digits.count {
            let split = digits.index(digits.endIndex, offsetBy: -scale)
            return sign + digits[..<split] + "." + digits[split...]
        }
        if scale <= 40 { return sign + "0." + String(repeating: "0", count: scale - digits.count) + digits }
        return sign + digits + "E\(exponent)"
    }

    /// Widens a BID64 encoding (8-byte Realm decimal leaves of format 24) exactly as IEEE 754 conversion does:
    /// the same value and cohort, NaN payloads scaled by 10^18, non-canonical coefficients read as zero.
    init(bid64 bits: UInt64) {
        let sign = bits & 0x8000_0000_0000_0000
        if bits & 0x7800_0000_0000_0000 == 0x7800_0000_0000_0000 {
            if bits & 0x7c00_0000_0000_0000 == 0x7800_0000_0000_0000 {
                self.init(low: 0, high: bits & 0xf800_0000_0000_0000)
                return
            }
            let payload = bits & 0x3_FFFF_FFFF_FFFF
            self.init(special: bits & 0xfc00_0000_0000_0000, payload: payload < 1_000_000_000_000_000 ? payload : 0, scale: 18)
            return
        }
        let exponent: UInt64
        var coefficient: UInt64
        if bits & 0x6000_0000_0000_0000 == 0x6000_0000_0000_0000 {
            exponent = (bits >> 51) & 0x3FF
            coefficient = (bits & 0x7_FFFF_FFFF_FFFF) | 0x20_0000_0000_0000
            if coefficient >= 10_000_000_000_000_000 { coefficient = 0 }
        } else {
            exponent = (bits >> 53) & 0x3FF
            coefficient = bits & 0x1F_FFFF_FFFF_FFFF
        }
        self.init(low: coefficient, high: sign | (exponent + 6176 - 398) << 49)
    }

    /// Widens a BID32 encoding (4-byte Realm decimal leaves of format 24), like `init(bid64:)`; NaN payloads
    /// are scaled by 10^27.
    init(bid32 bits: UInt32) {
        let wide = UInt64(bits) << 32
        let sign = wide & 0x8000_0000_0000_0000
        if bits & 0x7800_0000 == 0x7800_0000 {
            if bits & 0x7c00_0000 == 0x7800_0000 {
                self.init(low: 0, high: wide & 0xf800_0000_0000_0000)
                return
            }
            let payload = UInt64(bits & 0xF_FFFF)
            self.init(special: wide & 0xfc00_0000_0000_0000, payload: payload < 1_000_000 ? payload : 0, scale: 27)
            return
        }
        let exponent: UInt64
        var coefficient: UInt64
        if bits & 0x6000_0000 == 0x6000_0000 {
            exponent = UInt64((bits >> 21) & 0xFF)
            coefficient = UInt64(bits & 0x1F_FFFF) | 0x80_0000
            if coefficient >= 10_000_000 { coefficient = 0 }
        } else {
            exponent = UInt64((bits >> 23) & 0xFF)
            coefficient = UInt64(bits & 0x7F_FFFF)
        }
        self.init(low: coefficient, high: sign | (exponent + 6176 - 101) << 49)
    }

    /// A NaN: sign and NaN bits in `top`, the narrow payload scaled to decimal128's coefficient width.
    private init(special top: UInt64, payload: UInt64, scale: Int) {
        // payload × 10^scale in two 64-bit halves (below 10^34 for the payloads callers pass).
        var (high, low): (UInt64, UInt64) = (0, payload)
        for _ in 0..<scale {
            let (carry, product) = low.multipliedFullWidth(by: 10)
            (high, low) = (high * 10 + carry, product)
        }
        self.init(low: low, high: top | high)
    }
}
