import AtollRealmFile
import Foundation
import Testing

/// Valid-looking content the reader does not decode must throw `.unsupported`, not misread.
///
/// The patches target the column-types array of table `table` in `test_upgrade_database_4_22.realm`:
/// a node at offset 0x30 holding three 32-bit types (Int; Mixed dictionary with String keys; Mixed).
@Suite struct UnsupportedContentTests {
    static let typesNode = 0x30

    static func patchedSample(_ edit: (inout [UInt8]) -> Void) throws -> Data {
        var bytes = [UInt8](try Fixtures.data(HeaderTests.sample))
        // Guard the assumption about the fixture's layout before patching it.
        #expect(Array(bytes[typesNode..<typesNode + 8]) == [0x41, 0x41, 0x41, 0x41, 0x06, 0x00, 0x00, 0x03])
        #expect(Array(bytes[typesNode + 8..<typesNode + 20]) == [0, 0, 0, 0, 6, 0, 2, 0, 6, 0, 0, 0])
        edit(&bytes)
        return Data(bytes)
    }

    static func isUnsupported(_ error: any Error, mentioning text: String) -> Bool {
        guard case let .unsupported(message) = error as? RealmFileError else { return false }
        return message.contains(text)
    }

    @Test func legacyColumnTypeIsUnsupported() throws {
        let data = try Self.patchedSample { $0[Self.typesNode + 8] = 7 } // pre-format-10 DateTime
        #expect { _ = try RealmFile(data: data) } throws: { Self.isUnsupported($0, mentioning: "legacy or unknown type 7") }
    }

    @Test func unknownWidthSchemeIsUnsupported() throws {
        let data = try Self.patchedSample { $0[Self.typesNode + 4] |= 0x18 }
        #expect { _ = try RealmFile(data: data) } throws: { Self.isUnsupported($0, mentioning: "width scheme") }
    }

    @Test func integerDictionaryKeysAreUnsupported() throws {
        // Dictionary key type Int (0) instead of String (2).
        let data = try Self.patchedSample { $0[Self.typesNode + 14] = 0 }
        let table = try RealmFile(data: data).table(named: "table")
        #expect(table.column(named: "dict")?.collection == .dictionary(keyType: .int))
        #expect { _ = try table.allObjects() } throws: { Self.isUnsupported($0, mentioning: "dictionary keys") }
    }
}
