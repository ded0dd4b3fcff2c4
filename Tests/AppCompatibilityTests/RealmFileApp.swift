import Atoll
import AtollTesting
import Foundation
import Testing

// An app that shipped with RealmSwift and kept its users' data in default.realm: the same models,
// the same configuration, and a file realm-core 14 wrote with those models
// (Tests/AtollRealmFileTests/Fixtures/allTypes_v24.realm, see Tools/realm-fixtures). Switching to
// Atoll changes the import only: the first open converts the file, the data is all there, and the
// next release's migration block runs on it as it did on Realm.

class Target: Object {
    @Persisted(primaryKey: true) var _id: Int
    @Persisted var name: String
    @Persisted(originProperty: "link") var linkedFrom: LinkingObjects<AllTypes>
}

class Embedded: EmbeddedObject {
    @Persisted var name: String
    @Persisted var count: Int
}

class AllTypes: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var bool: Bool
    @Persisted var int: Int
    @Persisted var float: Float
    @Persisted var double: Double
    @Persisted var string: String
    @Persisted var data: Data
    @Persisted var date: Date
    @Persisted var decimal: Decimal128
    @Persisted var objectId: ObjectId
    @Persisted var uuid: UUID
    @Persisted var mixed: AnyRealmValue
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optDecimal: Decimal128?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optUuid: UUID?
    @Persisted var link: Target?
    @Persisted var embedded: Embedded?
    @Persisted var embeddedList: List<Embedded>
    @Persisted var intList: List<Int>
    @Persisted var stringList: List<String>
    @Persisted var optIntList: List<Int?>
    @Persisted var dateList: List<Date>
    @Persisted var decimalList: List<Decimal128>
    @Persisted var uuidList: List<UUID>
    @Persisted var objectIdList: List<ObjectId>
    @Persisted var dataList: List<Data>
    @Persisted var doubleList: List<Double>
    @Persisted var floatList: List<Float>
    @Persisted var boolList: List<Bool>
    @Persisted var mixedList: List<AnyRealmValue>
    @Persisted var intSet: MutableSet<Int>
    @Persisted var stringSet: MutableSet<String>
    @Persisted var mixedSet: MutableSet<AnyRealmValue>
    @Persisted var targetSet: MutableSet<Target>
    @Persisted var intMap: Map<String, Int>
    @Persisted var stringMap: Map<String, String>
    @Persisted var mixedMap: Map<String, AnyRealmValue>
    @Persisted var targetMap: Map<String, Target?>
    @Persisted var targetList: List<Target>
    @Persisted var publicName: String
    @Persisted(indexed: true) var indexedString: String

    override class func propertiesMapping() -> [String: String] { ["publicName": "internal_name"] }
}

class StringPK: Object {
    @Persisted(primaryKey: true) var _id: String
    @Persisted var value: Int
}

class UUIDPK: Object {
    @Persisted(primaryKey: true) var _id: UUID
    @Persisted var value: String
}

class NoPK: Object {
    @Persisted var name: String
    @Persisted var value: Int
}

let realmFileAppTypes: [ObjectBase.Type] = [AllTypes.self, Target.self, Embedded.self, StringPK.self, UUIDPK.self, NoPK.self]

@Suite struct RealmFileApp {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("AtollRealmFileTests/Fixtures")

    func copyOfTheUsersFile(_ name: String = "allTypes_v24.realm", in folder: TemporaryFolder) throws -> URL {
        let url = folder.url.appendingPathComponent("default.realm")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent(name), to: url)
        return url
    }

    func check(_ realm: Realm) throws {
        #expect(realm.objects(AllTypes.self).count == 3)
        #expect(realm.objects(Target.self).count == 5)
        #expect(realm.objects(StringPK.self).count == 2)
        #expect(realm.objects(UUIDPK.self).count == 2)
        #expect(realm.objects(NoPK.self).count == 2)

        let first = try #require(realm.object(ofType: AllTypes.self, forPrimaryKey: try ObjectId(string: "65f1a2b3c4d5e6f708091a01")))
        #expect(first.bool == true)
        #expect(first.int == -42)
        #expect(first.float == 3.25)
        #expect(first.double == -1234.5678)
        #expect(first.string == "héllo wörld ✓ 日本語 🎉")
        #expect(first.data == Data([1, 2, 3, 4, 5]))
        #expect(abs(first.date.timeIntervalSince1970 - 1_700_000_000.123456789) < 1e-6)
        #expect(first.decimal == Decimal128(stringLiteral: "123.456"))
        #expect(first.objectId == (try ObjectId(string: "5f1e2d3c4b5a69788796a5b4")))
        #expect(first.uuid == UUID(uuidString: "3b241101-e2bb-4255-8caf-4136c566a962"))
        #expect(first.optInt == nil && first.optString == nil && first.optDate == nil)
        #expect(first.link?._id == 1)
        #expect(first.embedded?.name == "emb0" && first.embedded?.count == 10)
        #expect(first.embeddedList.map(\.name) == ["a", "b"])
        #expect(Array(first.intList) == [1, -2, 3, 4_294_967_301, Int.max, Int.min])
        #expect(Array(first.optIntList) == [1, nil, -3])
        #expect(first.stringList.first == "" && first.stringList.count == 8)
        // Mixed with collections nested in it (file format 24).
        let nested = try #require(first.mixed.listValue)
        #expect(nested.count == 3)
        #expect(nested[0] == .int(1))
        #expect(nested[1] == .string("two"))
        #expect(nested[2].dictionaryValue?["k"] == .double(3.5))
        // The renamed property reads under its Swift name; the indexed one queries.
        #expect(realm.objects(AllTypes.self).filter("publicName != nil").count == 3)
        #expect(realm.objects(AllTypes.self).where { $0.indexedString == first.indexedString }.count >= 1)
        // Inverse relationships are computed from the converted links.
        let target = try #require(realm.object(ofType: Target.self, forPrimaryKey: 1))
        #expect(target.linkedFrom.contains(first))
    }

    @Test func theUsersFileOpensWithTheSameModelsAndConfiguration() throws {
        let folder = try TemporaryFolder("realm-file-app")
        defer { folder.remove() }
        let url = try copyOfTheUsersFile(in: folder)
        let configuration = Realm.Configuration(fileURL: url, schemaVersion: 7, objectTypes: realmFileAppTypes)
        let realm = try Realm(configuration: configuration)
        try check(realm)
        // And it keeps working as a realm: writes, queries, reopening.
        try realm.write { realm.add(Target(value: ["_id": 100, "name": "new"])) }
        #expect(realm.objects(Target.self).count == 6)
    }

    @Test func anEncryptedFileOpensWithItsKey() throws {
        let folder = try TemporaryFolder("realm-file-app")
        defer { folder.remove() }
        let url = try copyOfTheUsersFile("allTypes_v24_encrypted.realm", in: folder)
        let key = Data((0..<64).map { UInt8($0) })
        var configuration = Realm.Configuration(fileURL: url, encryptionKey: Data(repeating: 1, count: 64), schemaVersion: 7,
                                                objectTypes: realmFileAppTypes)
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: configuration) }
        configuration.encryptionKey = key
        let realm = try Realm(configuration: configuration)
        try check(realm)
    }

    @Test func theNextReleasesMigrationRunsOnTheConvertedFile() throws {
        let folder = try TemporaryFolder("realm-file-app")
        defer { folder.remove() }
        let url = try copyOfTheUsersFile(in: folder)
        #expect(try schemaVersionAtURL(url) == 7)
        var migratedFrom: UInt64?
        var seen = 0
        let configuration = Realm.Configuration(fileURL: url, schemaVersion: 8, migrationBlock: { migration, oldSchemaVersion in
            migratedFrom = oldSchemaVersion
            if oldSchemaVersion < 8 {
                migration.enumerateObjects(ofType: Target.className()) { oldObject, newObject in
                    newObject!["name"] = (oldObject!["name"] as! String).uppercased()
                    seen += 1
                }
            }
        }, objectTypes: realmFileAppTypes)
        let realm = try Realm(configuration: configuration)
        #expect(migratedFrom == 7)
        #expect(seen == 5)
        #expect(realm.objects(Target.self).allSatisfy { $0.name == $0.name.uppercased() })
    }
}
