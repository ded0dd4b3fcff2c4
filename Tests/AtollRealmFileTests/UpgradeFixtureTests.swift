import AtollRealmFile
import Foundation
import Testing

/// The `test_upgrade_database_*` files written by realm-core's upgrade tests (formats 22 and 23).
@Suite struct UpgradeFixtureTests {
    static let beatlesDictionary: [String: RealmValue] = [
        "one": .int(1), "two": .double(2), "three": .string("John"), "four": .string("Paul"),
        "five": .string("George"), "six": .string("Ringo"), "seven": .string("Morgan"),
        "eight": .timestamp(RealmTimestamp(seconds: 4, nanoseconds: 5)),
    ]

    @Test(arguments: ["test_upgrade_database_4_22.realm", "test_upgrade_database_1000_22.realm"])
    func format22DictionaryAndSetOfMixed(name: String) throws {
        let file = try Fixtures.open(name)
        #expect(file.formatVersion == 22)
        #expect(file.tables.map(\.name) == ["table", "target"])
        #expect(file.schemaVersion == nil)
        let table = try file.table(named: "table")
        #expect(table.primaryKey == "id")
        #expect(table.column(named: "dict")?.collection == .dictionary(keyType: .string))
        #expect(table.column(named: "dict")?.type == .mixed)
        #expect(table.column(named: "set")?.collection == .set)
        #expect(table.column(named: "set")?.isNullable == true)

        let object = try #require(try table.object(primaryKey: .int(1)))
        let target = try file.table(named: "target")
        let beatle47 = try #require(try target.object(primaryKey: .int(47)))
        #expect(beatle47.backlinkCount == 2)

        let entries = try #require(object["dict"]?.entries)
        #expect(entries.count == 9)
        var byKey: [String: RealmValue] = [:]
        for entry in entries { byKey[entry.key] = entry.value }
        for (key, value) in Self.beatlesDictionary { #expect(byKey[key] == value, "dict[\(key)]") }
        let link = try #require(byKey["nine"]?.linkValue)
        #expect(link.table == "target")
        #expect(try target.object(key: link.objectKey)?["id"] == .int(47))

        // realm-core's BinaryData("literal") keeps the C string's terminating NUL.
        let set = try #require(object["set"]?.elements)
        let targetLink = RealmValue.link(RealmLink(table: "target", objectKey: beatle47.key))
        let expected: Set<RealmValue> = [.int(1), .double(2), .string("John"), .string("Ringo"), .binary(Data("Paul\0".utf8)),
                                         .binary(Data("George\0".utf8)), .string("Beatles"), targetLink]
        #expect(set.count == 8)
        #expect(Set(set) == expected)
    }

    @Test(arguments: [("test_upgrade_database_4_23.realm", 40), ("test_upgrade_database_1000_23.realm", 10_000)])
    func format23LinksFromManyObjects(name: String, count: Int) throws {
        let file = try Fixtures.open(name)
        #expect(file.formatVersion == 23)
        #expect(file.tables.map(\.name) == ["table", "target", "table_for_mixed", "table2"])
        let table = try file.table(named: "table")
        let link = try #require(table.column(named: "link"))
        #expect(link.type == .link && link.targetTable == "target" && link.collection == .single && link.isNullable)
        #expect(try table.objectCount() == count)

        let target = try file.table(named: "target")
        let targetObject = try #require(try target.object(primaryKey: .int(1)))
        #expect(targetObject.backlinkCount == count)

        var cursor = table.objects()
        var expectedID: Int64 = 0
        var previousKey: Int64 = -1
        while let object = try cursor.next() {
            #expect(object["id"] == .int(expectedID))
            #expect(object.key > previousKey)
            #expect(object["link"] == .link(RealmLink(table: "target", objectKey: targetObject.key)))
            previousKey = object.key
            expectedID += 1
        }
        #expect(expectedID == Int64(count))
    }

    @Test(arguments: ["test_upgrade_database_4_23.realm", "test_upgrade_database_1000_23.realm"])
    func objectKeysRoundTrip(name: String) throws {
        let table = try Fixtures.open(name).table(named: "table")
        let objects = try table.allObjects()
        // Keys are dense in these files, so a wrongly inferred offset for compact inner nodes would show here.
        #expect(objects.map(\.key) == (0..<Int64(objects.count)).map { $0 })
        for object in objects.filter({ $0.key % 97 == 0 || $0.key == Int64(objects.count - 1) }) {
            #expect(try table.object(key: object.key) == object)
        }
        #expect(try table.object(key: Int64(objects.count)) == nil)
    }

    static func upgrade23SetValues() -> (mixed: Set<RealmValue>, strings: Set<RealmValue>, binaries: Set<RealmValue>) {
        let base = String(repeating: "a", count: 200)
        let long = ["aaaaa", "aaaaA", "aaaaʄ", "aaaaÆ", "aaaaæ"].map { base + $0 }
        let shortStrings = ["John", "Ringo", "Æ", "æ", "ÿ", "ʄ", "Beatles", "john", "ringo", "", "\0", "\0\u{1}", "\0\0\u{1}", "\u{1}\0"]
        let strings = Set((shortStrings + long).map(RealmValue.string)).union([.null])
        // realm-core's BinaryData("literal") keeps the C string's terminating NUL.
        let binaries = Set((["Paul\0", "George\0"] + long).map { RealmValue.binary(Data($0.utf8)) }).union([.null])
        let others: Set<RealmValue> = [.int(1), .double(2), .timestamp(RealmTimestamp(seconds: 0, nanoseconds: 0)),
                                       .objectId(RealmObjectId(hex: "abcdefabcdefabcdefabcdef")!), .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))]
        return (strings.union(binaries).union(others), strings, binaries)
    }

    @Test(arguments: ["test_upgrade_database_4_23.realm", "test_upgrade_database_1000_23.realm"])
    func format23SetsOfMixedStringAndBinary(name: String) throws {
        let file = try Fixtures.open(name)
        let table = try file.table(named: "table_for_mixed")
        #expect(table.column(named: "id")?.isNullable == true)
        #expect(table.column(named: "stringSet")?.type == .string)
        #expect(table.column(named: "binarySet")?.type == .binary)
        let object = try #require(try table.object(primaryKey: .int(1)))
        let expected = Self.upgrade23SetValues()
        let mixed = try #require(object["mixedSet"]?.elements)
        let strings = try #require(object["stringSet"]?.elements)
        let binaries = try #require(object["binarySet"]?.elements)
        #expect(mixed.count == 32 && Set(mixed) == expected.mixed)
        #expect(strings.count == 20 && Set(strings) == expected.strings)
        #expect(binaries.count == 8 && Set(binaries) == expected.binaries)
        #expect(mixed.contains(.objectId(RealmObjectId(hex: "abcdefabcdefabcdefabcdef")!)))
        #expect(strings.contains(.string("\0\0\u{1}")))
        #expect(strings.contains(.string(String(repeating: "a", count: 200) + "aaaaʄ")))
    }

    @Test(arguments: ["test_upgrade_database_4_23.realm", "test_upgrade_database_1000_23.realm"])
    func format23StringPrimaryKeysWithIndexedMixed(name: String) throws {
        let table = try Fixtures.open(name).table(named: "table2")
        #expect(table.primaryKey == "id")
        #expect(table.column(named: "id")?.type == .string)
        #expect(table.column(named: "id")?.isNullable == true)
        #expect(table.column(named: "mixed")?.isIndexed == true)
        let objects = try table.allObjects()
        #expect(objects.count == 20)
        for object in objects { #expect(object["mixed"] == object["id"]) }
        #expect(Set(objects.compactMap { $0["id"] }) == Self.upgrade23SetValues().strings)
    }
}
