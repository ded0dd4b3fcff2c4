import Foundation

/// Appends values in Atoll's binary form: little-endian fixed integers, LEB128 lengths, UTF-8.
package struct BinaryWriter: Sendable {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    package mutating func byte(_ b: UInt8) { bytes.append(b) }

    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Zig-zag encoded signed integer.
    package mutating func int(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    package mutating func fixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    package mutating func blob<C: Collection>(_ data: C) where C.Element == UInt8 {
        varint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }
}

/// Reads what ``BinaryWriter`` wrote; every read checks bounds and throws ``DecodingFailure``.
package struct BinaryReader {
    let bytes: [UInt8]
    package private(set) var offset = 0

    package init<C: Collection>(_ data: C) where C.Element == UInt8 { bytes = Array(data) }

    package var isAtEnd: Bool { offset >= bytes.count }

    /// How many more values and instructions may be decoded: a bound on what a message costs
    /// in memory once decoded (a 2-byte instruction takes about 70 bytes as a value).
    package var elementBudget = Int.max

    /// Counts one decoded value or instruction against ``elementBudget``.
    package mutating func spendElement() throws(DecodingFailure) {
        guard elementBudget > 0 else {
            throw DecodingFailure("the message decodes to more values and instructions than the limit allows (at byte \(offset))")
        }
        elementBudget -= 1
    }

    package mutating func byte() throws(DecodingFailure) -> UInt8 {
        guard offset < bytes.count else { throw DecodingFailure("unexpected end of data at byte \(offset)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func varint() throws(DecodingFailure) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw DecodingFailure("varint too long at byte \(offset)") }
            result |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    package mutating func int() throws(DecodingFailure) -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    package mutating func count(limit: Int = 1 << 30) throws(DecodingFailure) -> Int {
        let raw = try varint()
        guard raw <= UInt64(limit), raw <= UInt64(bytes.count - offset) || limit != 1 << 30 else {
            throw DecodingFailure("length \(raw) at byte \(offset) exceeds the data")
        }
        return Int(raw)
    }

    package mutating func fixed64() throws(DecodingFailure) -> UInt64 {
        guard offset + 8 <= bytes.count else { throw DecodingFailure("unexpected end of data at byte \(offset)") }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return value
    }

    package mutating func blob() throws(DecodingFailure) -> [UInt8] {
        let n = try count()
        guard offset + n <= bytes.count else { throw DecodingFailure("blob of \(n) bytes at byte \(offset) exceeds the data") }
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    package mutating func string() throws(DecodingFailure) -> String {
        let raw = try blob()
        guard let s = String(utf8Validating: raw) else { throw DecodingFailure("invalid UTF-8 at byte \(offset)") }
        return s
    }
}

extension String {
    /// The text of `bytes` if they are well-formed UTF-8, else nil: `String(validating:as:)`,
    /// which needs macOS 15 / iOS 18. Decoding repairs ill-formed UTF-8, so the bytes come back
    /// unchanged exactly when they were valid.
    package init?(utf8Validating bytes: some Collection<UInt8>) {
        var decoded = String(decoding: bytes, as: UTF8.self)
        // Compared as memory where both are contiguous (a native string always is): the generic
        // comparison was a tenth of a data import's CPU.
        let same = bytes.withContiguousStorageIfAvailable { raw in
            decoded.withUTF8 { utf8 in
                utf8.count == raw.count && (raw.isEmpty || memcmp(utf8.baseAddress!, raw.baseAddress!, raw.count) == 0)
            }
        }
        guard same ?? decoded.utf8.elementsEqual(bytes) else { return nil }
        self = decoded
    }
}

/// Malformed binary input: says what and where.
package struct DecodingFailure: Error, Sendable, CustomStringConvertible, Equatable {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { "Malformed data: \(message)" }
}
