import Atomics
import Foundation

/// A 12-byte, BSON-compatible object identifier, as in MongoDB and Realm.
///
/// Layout (big-endian): a 4-byte timestamp in seconds since 1970, a 5-byte
/// value random per process, and a 3-byte counter that starts at a random
/// value. Ids generated later usually sort later.
///
/// ```swift
/// let id = ObjectId.generate()
/// let same = try ObjectId(string: id.stringValue)   // == id
/// let fixed: ObjectId = "5f1b2c3d4e5f60718293a4b5"
/// ```
public struct ObjectId: Sendable {
    /// Bytes 0...7, big-endian, so that comparing integers compares bytes.
    private var high: UInt64
    /// Bytes 8...11, big-endian.
    private var low: UInt32

    @usableFromInline
    init(high: UInt64, low: UInt32) {
        self.high = high
        self.low = low
    }

    /// A new, probably unique id for the current time.
    ///
    /// ```swift
    /// let id = ObjectId.generate()
    /// ```
    public static func generate() -> ObjectId {
        let seconds = UInt64(Self.seconds(since1970: Date().timeIntervalSince1970))
        let random = Self.processRandom
        return ObjectId(
            high: seconds << 32 | random >> 8,
            low: UInt32(truncatingIfNeeded: random & 0xFF) << 24 | Self.nextCount()
        )
    }

    /// The zero id (all twelve bytes 0), as Realm Swift's `ObjectId()` is. Use ``generate()`` for a
    /// new, unique id; `@Persisted var _id: ObjectId` generates one by default.
    public init() {
        self.init(bytes: [UInt8](repeating: 0, count: 12))
    }

    /// Parses 24 hexadecimal digits, in either case.
    ///
    /// ```swift
    /// let id = try ObjectId(string: "5F1B2C3D4E5F60718293A4B5")
    /// ```
    /// - Throws: ``ObjectIdError`` saying whether the length or a character is wrong.
    public init(string: String) throws(ObjectIdError) {
        if let parsed = Self.parseHex(string.utf8) {
            self = parsed
            return
        }
        let length = string.count
        guard length == 24 else {
            throw ObjectIdError(input: string, reason: .wrongLength(length))
        }
        for (offset, character) in string.enumerated() where !(character.isASCII && character.isHexDigit) {
            throw ObjectIdError(input: string, reason: .invalidCharacter(character, offset: offset))
        }
        // 24 ASCII hex characters always parse; kept so every path throws something true.
        throw ObjectIdError(input: string, reason: .wrongLength(length))
    }

    /// An id with the given timestamp (whole seconds, clamped to the 32-bit
    /// range), the low 3 bytes of `machineId`, the low 2 bytes of `processId`
    /// and the next value of the shared counter.
    ///
    /// ```swift
    /// let id = ObjectId(timestamp: Date(), machineId: 0x1234, processId: 42)
    /// ```
    public init(timestamp: Date, machineId: Int, processId: Int32) {
        let seconds = UInt64(Self.seconds(since1970: timestamp.timeIntervalSince1970))
        let machine = UInt64(truncatingIfNeeded: machineId) & 0xFF_FFFF
        let process = UInt64(truncatingIfNeeded: processId) & 0xFFFF
        self.init(
            high: seconds << 32 | machine << 8 | process >> 8,
            low: UInt32(truncatingIfNeeded: process & 0xFF) << 24 | Self.nextCount()
        )
    }

    /// An id made of exactly 12 bytes, in order.
    ///
    /// ```swift
    /// let id = ObjectId(bytes: Array(repeating: 0, count: 12))
    /// ```
    /// - Precondition: `bytes.count == 12`.
    @inlinable  // specialised at the caller: the generic walk cost more than the rest of a row decode
    public init(bytes: some Collection<UInt8>) {
        precondition(bytes.count == 12, "ObjectId needs exactly 12 bytes, got \(bytes.count)")
        var high: UInt64 = 0
        var low: UInt32 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 {
                high = high << 8 | UInt64(byte)
            } else {
                low = low << 8 | UInt32(byte)
            }
        }
        self.init(high: high, low: low)
    }

    /// The 12 bytes, in storage (and sort) order.
    public var bytes: [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(12)
        for shift in stride(from: 56, through: 0, by: -8) {
            result.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
        }
        for shift in stride(from: 24, through: 0, by: -8) {
            result.append(UInt8(truncatingIfNeeded: low >> UInt32(shift)))
        }
        return result
    }

    /// The creation time stored in the first 4 bytes, to the second.
    public var timestamp: Date {
        Date(timeIntervalSince1970: TimeInterval(high >> 32))
    }

    /// The 24 lowercase hexadecimal digits.
    ///
    /// ```swift
    /// ObjectId(bytes: [UInt8](repeating: 0xAB, count: 12)).stringValue  // "abab…ab"
    /// ```
    public var stringValue: String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 24) { buffer in
            digits.withUTF8Buffer { hex in
                for index in 0..<24 {
                    let nibble = index < 16
                        ? Int(truncatingIfNeeded: high >> UInt64(60 - index * 4)) & 0xF
                        : Int(truncatingIfNeeded: low >> UInt32(28 - (index - 16) * 4)) & 0xF
                    buffer[index] = hex[nibble]
                }
            }
            return 24
        }
    }

    // MARK: Generation state

    /// 40 random bits, fixed for the life of the process.
    private static let processRandom = UInt64.random(in: 0...0xFF_FFFF_FFFF)

    private static let counter = ManagedAtomic<UInt32>(UInt32.random(in: 0...0xFF_FFFF))

    /// The next 24-bit counter value; wraps around.
    private static func nextCount() -> UInt32 {
        counter.wrappingAdd(1, ordering: .relaxed).oldValue & 0xFF_FFFF
    }

    /// Whole seconds, rounded down and clamped to `0...UInt32.max`; NaN gives 0.
    private static func seconds(since1970 interval: TimeInterval) -> UInt32 {
        guard interval > 0 else { return 0 }
        guard interval < 4_294_967_296 else { return .max }
        return UInt32(interval.rounded(.down))
    }

    private static func parseHex(_ utf8: String.UTF8View) -> ObjectId? {
        guard utf8.count == 24 else { return nil }
        var high: UInt64 = 0
        var low: UInt32 = 0
        for (index, byte) in utf8.enumerated() {
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            if index < 16 {
                high = high << 4 | UInt64(nibble)
            } else {
                low = low << 4 | UInt32(nibble)
            }
        }
        return ObjectId(high: high, low: low)
    }
}

extension ObjectId: Hashable, Comparable {
    /// Byte-wise (memcmp) order, which is also the order of ``stringValue``.
    public static func < (lhs: ObjectId, rhs: ObjectId) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

extension ObjectId: CustomStringConvertible, LosslessStringConvertible {
    /// Same as ``stringValue``.
    public var description: String { stringValue }

    /// Parses 24 hexadecimal digits; `nil` if they are not.
    public init?(_ description: String) {
        guard let parsed = try? ObjectId(string: description) else { return nil }
        self = parsed
    }
}


extension ObjectId: Codable {
    /// Decodes the 24-digit hexadecimal string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        do {
            self = try ObjectId(string: string)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes ``stringValue``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

/// Why a string is not an ``ObjectId``.
///
/// ```swift
/// do { _ = try ObjectId(string: "xyz") } catch { print(error) }
/// // Invalid ObjectId "xyz": expected 24 hexadecimal digits, found 3 characters
/// ```
public struct ObjectIdError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The string has this many characters instead of 24.
        case wrongLength(Int)
        /// This character, at this zero-based offset, is not 0-9, a-f or A-F.
        case invalidCharacter(Character, offset: Int)
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
        switch reason {
        case .wrongLength(let length):
            return "Invalid ObjectId \"\(shown)\": expected 24 hexadecimal digits, found \(length) characters"
        case .invalidCharacter(let character, let offset):
            return "Invalid ObjectId \"\(shown)\": \(Self.show(character)) at offset \(offset) is not a hexadecimal digit"
        }
    }
}

extension ObjectIdError {
    /// `'g'` for visible ASCII, `U+00A0` for anything else.
    fileprivate static func show(_ character: Character) -> String {
        if let ascii = character.asciiValue, (0x21...0x7E).contains(ascii) { return "'\(character)'" }
        return character.unicodeScalars.map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }.joined(separator: " ")
    }
}

extension ObjectIdError: LocalizedError {
    public var errorDescription: String? { description }
}
