import AtollRealmFile
import Foundation
import Testing

/// File header validation, top-ref selection and the streaming form.
@Suite struct HeaderTests {
    static let sample = "test_upgrade_database_4_22.realm"

    static func patched(_ name: String = sample, _ edit: (inout [UInt8]) -> Void) throws -> Data {
        var bytes = [UInt8](try Fixtures.data(name))
        edit(&bytes)
        return Data(bytes)
    }

    static func write(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
        for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }

    static func read(at offset: Int, in bytes: [UInt8]) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    @Test func missingFileIsAFileAccessError() {
        #expect {
            _ = try RealmFile(path: "/nonexistent/nothing.realm")
        } throws: { error in
            if case .fileAccess = error as? RealmFileError { return true }
            return false
        }
    }

    @Test func emptyAndTinyInputsAreInvalid() {
        #expect(throws: RealmFileError.self) { _ = try RealmFile(data: Data()) }
        #expect(throws: RealmFileError.self) { _ = try RealmFile(data: Data(repeating: 0, count: 23)) }
    }

    @Test func wrongMnemonicIsInvalid() throws {
        let data = try Self.patched { $0[16] = UInt8(ascii: "X") }
        #expect { _ = try RealmFile(data: data) } throws: { error in
            guard case let .invalidDatabase(reason) = error as? RealmFileError else { return false }
            return reason.contains("T-DB")
        }
    }

    @Test(arguments: [5, 19, 25, 255])
    func unsupportedFormatVersionsNameTheVersion(version: UInt8) throws {
        let data = try Self.patched { bytes in
            let selector = Int(bytes[23] & 1)
            bytes[20 + selector] = version
        }
        #expect { _ = try RealmFile(data: data) } throws: { error in
            guard case let .unsupportedFormat(found, hint) = error as? RealmFileError else { return false }
            return found == Int(version) && !hint.isEmpty
        }
    }

    @Test func flagsByteSelectsTheTopRef() throws {
        // Point the other slot at garbage: only the selected slot may be used.
        let data = try Self.patched { bytes in
            let other = 1 - Int(bytes[23] & 1)
            Self.write(0xDEAD_BEE1, at: other * 8, in: &bytes)
            bytes[20 + other] = 99
        }
        #expect(try RealmFile(data: data).tables.count == 2)
        // Flipping the selector onto the garbage slot must fail cleanly.
        let flipped = try Self.patched { bytes in
            let other = 1 - Int(bytes[23] & 1)
            Self.write(0xDEAD_BEE1, at: other * 8, in: &bytes)
            bytes[23] ^= 1
        }
        #expect(throws: RealmFileError.self) { _ = try RealmFile(data: flipped) }
    }

    @Test func unalignedAndOutOfFileTopRefsAreInvalid() throws {
        for bad: UInt64 in [12, 1 << 40, 0xFFFF_FFFF_FFFF_FFF8] {
            let data = try Self.patched { bytes in Self.write(bad, at: Int(bytes[23] & 1) * 8, in: &bytes) }
            #expect(throws: RealmFileError.self) { _ = try RealmFile(data: data) }
        }
    }

    /// Rewrites a file between the two header forms: streaming (top ref in a footer) and slot-selected.
    static func toggledForm(_ name: String) throws -> Data {
        try patched(name) { bytes in
            if read(at: 0, in: bytes) == .max && bytes[23] & 1 == 0 {
                let topRef = read(at: bytes.count - 16, in: bytes)
                bytes.removeLast(16)
                write(topRef, at: 8, in: &bytes)
                bytes[21] = bytes[20]
                bytes[23] = 1
            } else {
                let topRef = read(at: Int(bytes[23] & 1) * 8, in: bytes)
                bytes[20] = bytes[20 + Int(bytes[23] & 1)]
                write(.max, at: 0, in: &bytes)
                write(0, at: 8, in: &bytes)
                bytes[23] = 0
                bytes += [UInt8](repeating: 0, count: 16)
                write(topRef, at: bytes.count - 16, in: &bytes)
                write(0x3034_1252_37E5_26C8, at: bytes.count - 8, in: &bytes)
            }
        }
    }

    @Test(arguments: Fixtures.all)
    func bothHeaderFormsReadTheSameObjects(name: String) throws {
        let original = try Fixtures.open(name)
        let toggled = try Self.toggledForm(name)
        let file = try RealmFile(data: toggled)
        #expect(file.isStreamingForm != original.isStreamingForm)
        #expect(file.formatVersion == original.formatVersion)
        #expect(file.topRef == original.topRef)
        for (a, b) in zip(original.tables, file.tables) { #expect(try a.allObjects() == b.allObjects()) }

        let streaming = [UInt8](original.isStreamingForm ? try Fixtures.data(name) : toggled)
        var badCookie = streaming
        badCookie[badCookie.count - 1] ^= 0xFF
        #expect(throws: RealmFileError.self) { _ = try RealmFile(data: Data(badCookie)) }
    }

    @Test func emptyFileWithoutTopRefHasNoTables() throws {
        var bytes = [UInt8](repeating: 0, count: 24)
        Array("T-DB".utf8).enumerated().forEach { bytes[16 + $0.offset] = $0.element }
        let file = try RealmFile(data: Data(bytes))
        #expect(file.tables.isEmpty)
        #expect(file.topRef == 0)
        #expect(file.schemaVersion == nil)
    }

    @Test func unknownTableIsNotFound() throws {
        #expect(throws: RealmFileError.notFound("table nope")) { _ = try Fixtures.open(Self.sample).table(named: "nope") }
    }
}

/// Value types that carry their own decoding logic.
@Suite struct ValueTypeTests {
    @Test func decimalDescriptions() {
        #expect(RealmDecimal128(low: 1250, high: UInt64(6176 - 2) << 49 | 1 << 63).description == "-12.50")
        #expect(RealmDecimal128(low: 0, high: 0x3040_0000_0000_0000).description == "0")
        #expect(RealmDecimal128(low: 0xaa, high: 0x7c00_0000_0000_0000).description == "NaN")
        #expect(RealmDecimal128(low: 0, high: 0x7800_0000_0000_0000).description == "Infinity")
        #expect(RealmDecimal128(low: 7, high: UInt64(6176 + 3) << 49).description == "7E+3")
    }

    @Test func objectIdHexRoundTrips() {
        let id = RealmObjectId(hex: "abcdefabcdefabcdefabcdef")
        #expect(id?.hexString == "abcdefabcdefabcdefabcdef")
        #expect(RealmObjectId(hex: "abc") == nil)
        #expect(RealmObjectId(hex: "zzcdefabcdefabcdefabcdef") == nil)
    }
}
