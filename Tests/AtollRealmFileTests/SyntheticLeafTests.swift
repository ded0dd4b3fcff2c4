import AtollRealmFile
import Foundation
import Testing

/// Leaf layouts the Realm-written fixtures do not contain, checked on files built node by node.
@Suite struct SyntheticLeafTests {
    typealias Builder = SyntheticFileBuilder
    static let nullable: Int64 = 16, list: Int64 = 32, set: Int64 = 128, dictionary: Int64 = 64

    static let objectId = RealmObjectId(hex: "0123456789abcdef01234567")!
    static let uuidBytes: [UInt8] = Array(0..<16)
    static let decimal = RealmDecimal128(low: 1250, high: UInt64(6176 - 2) << 49)

    /// Table `AllTypes` with three objects, one column per layout.
    static func allTypesFile() -> Data {
        var b = Builder()
        var columns: [Builder.Column] = []
        func add(_ name: String, _ type: Int64, _ attributes: Int64, target: Int64 = 0, _ leaf: Int64) {
            columns.append(.init(name: name, type: type, attributes: attributes, target: target, leaf: leaf))
        }
        add("id", 0, 0, b.ints([10, -5, 1 << 40]))
        add("bits2", 0, 0, b.ints([0, 3, 2]))
        add("bits4", 0, 0, b.ints([15, 9, 0]))
        add("optInt", 0, nullable, b.ints([Int64.min, Int64.min, 7, -1]))
        add("flag", 1, 0, b.ints([1, 0, 1]))
        add("optFlag", 1, nullable, b.ints([3, 1, 0]))
        add("float", 9, 0, b.wide([[UInt64(Float(1.5).bitPattern)], [UInt64(Float(-2).bitPattern)], [0]], width: 4))
        add("optDouble", 10, nullable, b.wide([[0x7ff8_0000_0000_00aa], [Double(2.25).bitPattern], [Double.infinity.bitPattern]], width: 8))
        add("text", 2, nullable, b.shortStrings(["héllo", nil, ""]))
        add("enumText", 2, 0, b.ints([1, 0, 1]))
        add("blob", 4, nullable, b.smallBlobs([[1, 2, 3], nil, []]))
        let seconds = b.ints([Int64.min, 1_700_000_000, Int64.min, -1])
        add("when", 8, nullable, b.refs([seconds, b.ints([500, 0, -5])]))
        add("decimal", 11, nullable, b.wide([[decimal.low, decimal.high], [0xaa, 0x7c00_0000_0000_0000], [0, 0x3040_0000_0000_0000]], width: 16))
        add("oid", 15, nullable, b.fixedBytes([objectId.bytes, nil, objectId.bytes], size: 12))
        add("uuid", 17, nullable, b.fixedBytes([nil, uuidBytes, nil], size: 16))
        add("link", 12, nullable, target: 0, b.ints([0, 1, 3]))
        add("typed", 16, nullable, b.ints([1, 3, 0, 0, 1, 1]))
        // A list stored as a B+tree: inner node (2 elements per child) over two leaves.
        let listTree = b.ints([Builder.tagged(2), b.ints([1, 2]), b.ints([3]), Builder.tagged(3)], hasRefs: true, inner: true)
        add("numbers", 0, list, b.refs([listTree, 0, b.ints([-7])]))
        add("tags", 2, set | nullable, b.refs([b.shortStrings([nil, "a", "b"]), 0, 0]))
        add("linkList", 12, list, target: 0, b.refs([b.ints([2, 0]), 0, 0]))
        // Mixed leaf: composite tags plus ints, pairs and strings side arrays.
        let composite = b.ints([
            5 << 8 | 1,                 // Int 5 inline
            0 << 8 | 1 << 5 | 1,        // Int from ints[0]
            1 << 8 | 3 << 5 | 3,        // String strings[1]
            1 << 8 | 1 << 5 | 11,       // Double from ints[1]
            1 << 8 | 2,                 // Bool true
            0 << 8 | 2 << 5 | 9,        // Timestamp pairs[0, 1]
            1 << 8 | 2 << 5 | 17,       // TypedLink pairs[2, 3]
            2 << 8 | 3 << 5 | 16,       // ObjectId strings[2]
            0,                          // null
        ])
        let side = b.ints([1 << 50, Int64(bitPattern: Double(0.5).bitPattern)])
        let pairs = b.ints([9, 8, 0, 2])
        let strings = b.smallBlobs([[0], Array("mixed\0".utf8), objectId.bytes + [0]])
        add("any", 6, nullable, b.refs([composite, side, pairs, strings, 0, 0]))
        let dict = b.refs([b.shortStrings(["k1", "k2"]), b.refs([b.ints([3 << 8 | 1, 0 << 8 | 3 << 5 | 3]), 0, 0, b.shortStrings(["v"]), 0, 0])])
        add("map", 6 | 2 << 16, dictionary | nullable, b.refs([dict, 0, 0]))
        let enumKeys = b.shortStrings(["red", "green"])
        let enumIndex = columns.firstIndex { $0.name == "enumText" }!
        let table = b.table(key: 0, columns: columns, count: 3, primaryKey: 0, enumKeys: [enumIndex: enumKeys])
        return b.finish(tableNames: ["class_AllTypes"], tables: [table])
    }

    @Test func everyScalarLayout() throws {
        let file = try RealmFile(data: Self.allTypesFile())
        #expect(file.formatVersion == 23)
        let table = try file.table(named: "AllTypes")
        #expect(table.primaryKey == "id")
        let objects = try table.allObjects()
        try #require(objects.count == 3)
        let (a, b, c) = (objects[0], objects[1], objects[2])
        #expect([a, b, c].map(\.key) == [0, 1, 2])
        #expect([a, b, c].map { $0["id"] } == [.int(10), .int(-5), .int(1 << 40)])
        #expect([a, b, c].map { $0["bits2"] } == [.int(0), .int(3), .int(2)])
        #expect([a, b, c].map { $0["bits4"] } == [.int(15), .int(9), .int(0)])
        #expect([a, b, c].map { $0["optInt"] } == [.null, .int(7), .int(-1)])
        #expect([a, b, c].map { $0["flag"] } == [.bool(true), .bool(false), .bool(true)])
        #expect([a, b, c].map { $0["optFlag"] } == [.null, .bool(true), .bool(false)])
        #expect([a, b, c].map { $0["float"] } == [.float(1.5), .float(-2), .float(0)])
        #expect([a, b, c].map { $0["optDouble"] } == [.null, .double(2.25), .double(.infinity)])
        #expect([a, b, c].map { $0["text"] } == [.string("héllo"), .null, .string("")])
        #expect([a, b, c].map { $0["enumText"] } == [.string("green"), .string("red"), .string("green")])
        #expect([a, b, c].map { $0["blob"] } == [.binary(Data([1, 2, 3])), .null, .binary(Data())])
        #expect([a, b, c].map { $0["when"] } == [.timestamp(RealmTimestamp(seconds: 1_700_000_000, nanoseconds: 500)), .null,
                                                .timestamp(RealmTimestamp(seconds: -1, nanoseconds: -5))])
        #expect(a["decimal"] == .decimal128(Self.decimal))
        #expect(Self.decimal.description == "12.50")
        #expect(b["decimal"] == .null)
        #expect(c["decimal"] == .decimal128(RealmDecimal128(low: 0, high: 0x3040_0000_0000_0000)))
        #expect([a, b, c].map { $0["oid"] } == [.objectId(Self.objectId), .null, .objectId(Self.objectId)])
        #expect(b["uuid"] == .uuid(UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))))
        #expect(a["uuid"] == .null)
        #expect([a, b, c].map { $0["link"] } == [.null, .link(RealmLink(table: "class_AllTypes", objectKey: 0)),
                                                .link(RealmLink(table: "class_AllTypes", objectKey: 2))])
        #expect([a, b, c].map { $0["typed"] } == [.link(RealmLink(table: "class_AllTypes", objectKey: 2)), .null,
                                                 .link(RealmLink(table: "class_AllTypes", objectKey: 0))])
    }

    @Test func collections() throws {
        let objects = try RealmFile(data: Self.allTypesFile()).table(named: "class_AllTypes").allObjects()
        #expect(objects.map { $0["numbers"] } == [.list([.int(1), .int(2), .int(3)]), .list([]), .list([.int(-7)])])
        #expect(objects[0]["tags"] == .set([.null, .string("a"), .string("b")]))
        #expect(objects[0]["linkList"] == .list([.link(RealmLink(table: "class_AllTypes", objectKey: 2)),
                                                 .link(RealmLink(table: "class_AllTypes", objectKey: 0))]))
        #expect(objects[0]["map"] == .dictionary([RealmDictionaryEntry(key: "k1", value: .int(3)),
                                                  RealmDictionaryEntry(key: "k2", value: .string("v"))]))
        #expect(objects[1]["map"] == .dictionary([]))
    }

    @Test func mixedPayloads() throws {
        let object = try #require(try RealmFile(data: Self.allTypesFile()).table(named: "AllTypes").allObjects().first)
        #expect(object["any"] == .int(5))
        // Every payload kind, one object each, through a table of nine objects over the same leaf layout.
        var b = Builder()
        let composite = b.ints([5 << 8 | 1, 0 << 8 | 1 << 5 | 1, 1 << 8 | 3 << 5 | 3, 1 << 8 | 1 << 5 | 11, 1 << 8 | 2,
                                0 << 8 | 2 << 5 | 9, 1 << 8 | 2 << 5 | 17, 2 << 8 | 3 << 5 | 16, 0])
        let side = b.ints([1 << 50, Int64(bitPattern: Double(0.5).bitPattern)])
        let pairs = b.ints([9, 8, 0, 2])
        let strings = b.smallBlobs([[0], Array("mixed\0".utf8), Self.objectId.bytes + [0]])
        let leaf = b.refs([composite, side, pairs, strings, 0, 0])
        let column = Builder.Column(name: "any", type: 6, attributes: Self.nullable, target: 0, leaf: leaf)
        let table = b.table(key: 0, columns: [column], count: 9)
        let values = try RealmFile(data: b.finish(tableNames: ["m"], tables: [table])).table(named: "m").allObjects().map { $0["any"] }
        #expect(values == [.int(5), .int(1 << 50), .string("mixed"), .double(0.5), .bool(true),
                           .timestamp(RealmTimestamp(seconds: 9, nanoseconds: 8)), .link(RealmLink(table: "m", objectKey: 2)),
                           .objectId(Self.objectId), .null])
    }

    @Test func refCycleEndsInAnError() throws {
        // A list B+tree inner node whose children are the node itself.
        var b = Builder()
        let selfRef = Int64(b.bytes.count)
        _ = b.ints([Builder.tagged(1), selfRef, selfRef, Builder.tagged(2)], hasRefs: true, inner: true)
        let column = Builder.Column(name: "numbers", type: 0, attributes: Self.list, target: 0, leaf: b.refs([selfRef]))
        let table = b.table(key: 0, columns: [column], count: 1)
        let file = try RealmFile(data: b.finish(tableNames: ["t"], tables: [table]))
        #expect(throws: RealmFileError.self) { _ = try file.table(named: "t").allObjects() }
    }
}
