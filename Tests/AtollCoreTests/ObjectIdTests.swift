import AtollCore
import Foundation
import Testing

@Suite("ObjectId")
struct ObjectIdTests {
    // MARK: Strings and bytes

    @Test(arguments: [
        "000000000000000000000000",
        "ffffffffffffffffffffffff",
        "000102030405060708090a0b",
        "5f1b2c3d4e5f60718293a4b5",
    ])
    func hexStringRoundTrips(hex: String) throws {
        let id = try ObjectId(string: hex)
        #expect(id.stringValue == hex)
        #expect(id.description == hex)
    }

    @Test func parsingIgnoresCaseAndPrintsLowercase() throws {
        let upper = try ObjectId(string: "5F1B2C3D4E5F60718293A4B5")
        let mixed = try ObjectId(string: "5f1B2c3D4e5F60718293a4B5")
        #expect(upper == mixed)
        #expect(upper.stringValue == "5f1b2c3d4e5f60718293a4b5")
    }

    @Test func bytesFollowTheHexDigits() throws {
        let id = try ObjectId(string: "000102030405060708090a0b")
        #expect(id.bytes == Array(0...11))
        #expect(try ObjectId(string: "ff000000000000000000007f").bytes == [0xFF] + Array(repeating: 0, count: 10) + [0x7F])
    }

    @Test(arguments: [
        [UInt8](repeating: 0, count: 12),
        [UInt8](repeating: 0xFF, count: 12),
        [0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77],
        [0x80, 0, 0, 0, 0, 0, 0, 1, 0x80, 0, 0, 1],
    ])
    func bytesRoundTrip(bytes: [UInt8]) {
        let id = ObjectId(bytes: bytes)
        #expect(id.bytes == bytes)
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(id.stringValue == hex)
    }

    @Test func bytesInitializerAcceptsAnyCollection() throws {
        let expected = try ObjectId(string: "0102030405060708090a0b0c")
        let array: [UInt8] = Array(0...13)
        #expect(ObjectId(bytes: Data(array[1...12])) == expected)
        #expect(ObjectId(bytes: array[1...12]) == expected)
    }

    @Test func wrongByteCountTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = ObjectId(bytes: [1, 2, 3])
        }
    }

    // MARK: Parse errors

    @Test(arguments: [
        ("", 0),
        ("abc", 3),
        ("00000000000000000000000", 23),
        ("0000000000000000000000000", 25),
        ("0000000000000000000000é", 23),  // 24 UTF-8 bytes, 23 characters
    ] as [(String, Int)])
    func wrongLengthIsRejected(input: String, length: Int) {
        #expect(throws: ObjectIdError(input: input, reason: .wrongLength(length))) {
            try ObjectId(string: input)
        }
    }

    @Test(arguments: [
        ("g00000000000000000000000", "g", 0),
        ("0x0000000000000000000000", "x", 1),
        ("0000000000 0000000000000", " ", 10),
        ("00000000000000000000000Z", "Z", 23),
        ("00000000000000000000000é", "é", 23),
        ("00000000000000000000000１", "１", 23),  // fullwidth digit one
    ] as [(String, Character, Int)])
    func nonHexCharacterIsRejected(input: String, character: Character, offset: Int) {
        #expect(throws: ObjectIdError(input: input, reason: .invalidCharacter(character, offset: offset))) {
            try ObjectId(string: input)
        }
    }

    @Test(arguments: [
        ("xyz", #"Invalid ObjectId "xyz": expected 24 hexadecimal digits, found 3 characters"#),
        ("00000000000000000000000g", #"Invalid ObjectId "00000000000000000000000g": 'g' at offset 23 is not a hexadecimal digit"#),
        ("000000000000\n00000000000", #"Invalid ObjectId "000000000000\#n00000000000": U+000A at offset 12 is not a hexadecimal digit"#),
        (String(repeating: "a", count: 50), #"Invalid ObjectId "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…": expected 24 hexadecimal digits, found 50 characters"#),
    ])
    func errorMessageSaysWhatIsWrong(input: String, message: String) {
        let error = #expect(throws: ObjectIdError.self) { try ObjectId(string: input) }
        #expect(error?.description == message)
        #expect(error?.localizedDescription == message)
    }

    // MARK: Generation

    @Test func generatedIdsAreUnique() {
        let ids = (0..<100_000).map { _ in ObjectId.generate() }
        #expect(Set(ids).count == ids.count)
    }

    @Test func concurrentlyGeneratedIdsAreUnique() async {
        let ids = await withTaskGroup(of: [ObjectId].self) { group in
            for _ in 0..<4 {
                group.addTask { (0..<20_000).map { _ in ObjectId.generate() } }
            }
            return await group.reduce(into: [ObjectId]()) { $0 += $1 }
        }
        #expect(ids.count == 80_000)
        #expect(Set(ids).count == 80_000)
    }

    @Test func generatedIdCarriesTheCurrentSecond() {
        let before = Date().timeIntervalSince1970.rounded(.down)
        let id = ObjectId.generate()
        let after = Date().timeIntervalSince1970.rounded(.down)
        #expect((before...after).contains(id.timestamp.timeIntervalSince1970))
    }

    @Test func generatedIdsShareProcessBytesAndAdvanceTheCounter() {
        let first = ObjectId.generate().bytes
        let second = ObjectId.generate().bytes
        #expect(first[4..<9] == second[4..<9])
        func counter(_ bytes: [UInt8]) -> Int { Int(bytes[9]) << 16 | Int(bytes[10]) << 8 | Int(bytes[11]) }
        // Other tests may generate ids in between, but never 2^20 of them.
        let step = (counter(second) - counter(first) + (1 << 24)) % (1 << 24)
        #expect((1..<(1 << 20)).contains(step))
    }

    @Test func defaultInitializerIsTheZeroIdAsInRealm() {
        let a = ObjectId(), b = ObjectId()
        #expect(a == b)
        #expect(a.bytes == [UInt8](repeating: 0, count: 12))
        #expect(a.stringValue == "000000000000000000000000")
        #expect(ObjectId.generate() != ObjectId.generate())
    }

    @Test func timestampInitializerLaysOutItsFields() {
        let date = Date(timeIntervalSince1970: 0x0102_0304)
        let id = ObjectId(timestamp: date, machineId: 0x05_0607, processId: 0x0809)
        #expect(Array(id.bytes[0..<9]) == [1, 2, 3, 4, 5, 6, 7, 8, 9])
        #expect(id.timestamp == date)
    }

    @Test func timestampInitializerKeepsLowBytesOfIdentifiers() {
        let id = ObjectId(timestamp: Date(timeIntervalSince1970: 0), machineId: 0x7F_AABB_CC, processId: -1)
        #expect(Array(id.bytes[4..<9]) == [0xAA, 0xBB, 0xCC, 0xFF, 0xFF])
    }

    @Test(arguments: [
        (1000.9, 1000.0),
        (0, 0),
        (-5, 0),
        (4_294_967_295.5, 4_294_967_295),
        (5e9, 4_294_967_295),
    ] as [(TimeInterval, TimeInterval)])
    func timestampIsWholeSecondsClampedTo32Bits(seconds: TimeInterval, stored: TimeInterval) {
        let id = ObjectId(timestamp: Date(timeIntervalSince1970: seconds), machineId: 0, processId: 0)
        #expect(id.timestamp.timeIntervalSince1970 == stored)
    }

    // MARK: Comparison, hashing, conversions

    @Test(arguments: [
        ("000000000000000000000000", "000000000000000000000001"),
        ("00000000000000000000ffff", "000000000000000100000000"),
        ("0000000000000000ffffffff", "000000000000000100000000"),
        ("7fffffffffffffffffffffff", "800000000000000000000000"),
        ("ffffffffffffffff00000000", "ffffffffffffffff00000001"),
    ])
    func orderFollowsBytes(smaller: String, larger: String) throws {
        let a = try ObjectId(string: smaller), b = try ObjectId(string: larger)
        #expect(a < b)
        #expect(!(b < a))
        #expect(a != b)
    }

    @Test func sortingMatchesHexStringSorting() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let ids = (0..<500).map { _ in
            ObjectId(bytes: (0..<12).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            })
        }
        #expect(ids.sorted().map(\.stringValue) == ids.map(\.stringValue).sorted())
    }

    @Test func equalIdsHashEqually() throws {
        let ids: Set<ObjectId> = [
            try ObjectId(string: "5f1b2c3d4e5f60718293a4b5"),
            try ObjectId(string: "5F1B2C3D4E5F60718293A4B5"),
            ObjectId(bytes: [0x5F, 0x1B, 0x2C, 0x3D, 0x4E, 0x5F, 0x60, 0x71, 0x82, 0x93, 0xA4, 0xB5]),
        ]
        #expect(ids.count == 1)
    }

    @Test func codableUsesTheHexString() throws {
        let id = try ObjectId(string: "5f1b2c3d4e5f60718293a4b5")
        let json = try JSONEncoder().encode(["id": id])
        #expect(String(decoding: json, as: UTF8.self) == #"{"id":"5f1b2c3d4e5f60718293a4b5"}"#)
        #expect(try JSONDecoder().decode([String: ObjectId].self, from: json) == ["id": id])
    }

    @Test func decodingRejectsAnInvalidString() {
        let json = Data(#"["5f1b2c3d"]"#.utf8)
        let error = #expect(throws: DecodingError.self) { try JSONDecoder().decode([ObjectId].self, from: json) }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription.contains("found 8 characters"))
    }

    @Test func losslessStringConversion() throws {
        let id = try ObjectId(string: "000102030405060708090a0b")
        #expect(ObjectId(id.description) == id)
        #expect(ObjectId("not an object id") == nil)
    }

    @Test func upperCaseHexParses() throws {
        #expect(try ObjectId(string: "5F1B2C3D4E5F60718293A4B5") == (try ObjectId(string: "5f1b2c3d4e5f60718293a4b5")))
    }
}
