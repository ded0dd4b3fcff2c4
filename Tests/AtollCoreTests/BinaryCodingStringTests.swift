import AtollCore
import Foundation
import Testing

/// `BinaryReader.string()` takes well-formed UTF-8 only (checked without `String(validating:)`,
/// which needs macOS 15 / iOS 18).
@Suite struct BinaryCodingStringTests {
    @Test(arguments: ["", "Bree", "Elrond's café", "日本語", "🧝‍♀️ and \u{0}", "\u{FFFD} as written"])
    func wellFormedStringsReadBack(text: String) throws {
        var writer = BinaryWriter()
        writer.string(text)
        var reader = BinaryReader(writer.bytes)
        #expect(try reader.string() == text)
    }

    @Test(arguments: [[0xFF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x61, 0x80, 0x62]] as [[UInt8]])
    func illFormedUTF8IsRefused(bytes: [UInt8]) {
        var writer = BinaryWriter()
        writer.blob(bytes)
        var reader = BinaryReader(writer.bytes)
        #expect(throws: DecodingFailure.self) { try reader.string() }
    }

    /// `String(utf8Validating:)`: exactly the well-formed UTF-8 byte strings, through the memory
    /// comparison (arrays, slices, Data) and the generic one (a lazy collection).
    @Test func utf8ValidatingAcceptsExactlyWellFormedUTF8() {
        let valid: [[UInt8]] = [[], Array("héllo 🌍".utf8), [0x7F], [0xEF, 0xBF, 0xBD], [0xF4, 0x8F, 0xBF, 0xBF]]
        let invalid: [[UInt8]] = [[0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
                                  [0x61, 0xFF, 0x62], [0xF0, 0x9F, 0x8C]]
        for bytes in valid {
            #expect(String(utf8Validating: bytes) == String(decoding: bytes, as: UTF8.self))
            #expect(String(utf8Validating: Data(bytes)) != nil && String(utf8Validating: bytes.lazy.map { $0 }) != nil)
            #expect(String(utf8Validating: ([0x20] + bytes)[1...]) != nil)
        }
        for bytes in invalid {
            #expect(String(utf8Validating: bytes) == nil, "\(bytes)")
            #expect(String(utf8Validating: Data(bytes)) == nil && String(utf8Validating: bytes.lazy.map { $0 }) == nil)
        }
    }
}
