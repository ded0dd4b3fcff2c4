import AtollCore
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
}
