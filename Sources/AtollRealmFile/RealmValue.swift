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

    /// The same instant as a Foundation `Date` (sub-microsecond precision may be lost).
    public var date: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }
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

    /// Sign, coefficient and unbiased exponent of a finite value.
    public var components: (negative: Bool, coefficient: UInt128, exponent: Int)? {
        guard !isNaN, !isInfinite else { return nil }
        if (high >> 61) & 3 == 3 {
            // Coefficients that need the long form exceed the decimal128 range: canonical zero.
            let exponent = Int((high >> 47) & 0x3FFF) - 6176
            return (isNegative, 0, exponent)
        }
        let exponent = Int((high >> 49) & 0x3FFF) - 6176
        let coefficient = UInt128(high & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(low)
        return (isNegative, coefficient > UInt128(String(repeating: "9", count: 34))! ? 0 : coefficient, exponent)
    }

    /// Plain decimal text such as `-12.50`, `1E+30`, `NaN` or `Infinity`.
    public var description: String {
        if isNaN { return "NaN" }
        guard let (negative, coefficient, exponent) = components else { return isNegative ? "-Infinity" : "Infinity" }
        let digits = String(coefficient)
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

    /// Widens a BID64 encoding (8-byte Realm decimal leaves of format 24).
    init(bid64 bits: UInt64) {
        let sign = bits >> 63
        if (bits >> 58) & 0x1F == 0x1F { self.init(low: bits & 0x3_FFFF_FFFF_FFFF, high: sign << 63 | 0x7c00_0000_0000_0000); return }
        if (bits >> 58) & 0x1F == 0x1E { self.init(low: 0, high: sign << 63 | 0x7800_0000_0000_0000); return }
        let exponent: UInt64
        let coefficient: UInt64
        if (bits >> 61) & 3 == 3 {
            exponent = (bits >> 51) & 0x3FF
            coefficient = (bits & 0x7_FFFF_FFFF_FFFF) | 0x20_0000_0000_0000
        } else {
            exponent = (bits >> 53) & 0x3FF
            coefficient = bits & 0x1F_FFFF_FFFF_FFFF
        }
        self.init(low: coefficient, high: sign << 63 | (exponent + 6176 - 398) << 49)
    }

    /// Widens a BID32 encoding (4-byte Realm decimal leaves of format 24).
    init(bid32 bits: UInt32) {
        let sign = UInt64(bits >> 31)
        if (bits >> 26) & 0x1F == 0x1F { self.init(low: UInt64(bits & 0xF_FFFF), high: sign << 63 | 0x7c00_0000_0000_0000); return }
        if (bits >> 26) & 0x1F == 0x1E { self.init(low: 0, high: sign << 63 | 0x7800_0000_0000_0000); return }
        let exponent: UInt64
        let coefficient: UInt64
        if (bits >> 29) & 3 == 3 {
            exponent = UInt64((bits >> 21) & 0xFF)
            coefficient = UInt64(bits & 0x1F_FFFF) | 0x80_0000
        } else {
            exponent = UInt64((bits >> 23) & 0xFF)
            coefficient = UInt64(bits & 0x7F_FFFF)
        }
        self.init(low: coefficient, high: sign << 63 | (exponent + 6176 - 101) << 49)
    }
}
