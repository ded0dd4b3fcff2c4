@_spi(Testing) import Atoll
import AtollCore
import AtollRealmFile
import AtollTesting
import Foundation
import Testing

/// Files Realm wrote open through `Realm(configuration:)`: converted once, in place, without loss
/// (issue 22 §2). The fixtures are realm-core's own files (Tests/AtollRealmFileTests/Fixtures).
@Suite struct RealmFormatConversionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("AtollRealmFileTests/Fixtures")

    /// Fixtures with app-level (`class_`) tables.
    static let objectStoreFixtures = ["sync-metadata-v5.realm", "sync-metadata-v6.realm", "test_flx_metadata_tables_v1.realm",
                                      "allTypes_v24.realm", "synced_tasks_v0.realm", "synced_partition_v24.realm", "synced_flexible_v24.realm"]

    /// A copy of fixture `name` as `default.realm` in a new folder.
    static func copy(_ name: String, in folder: TemporaryFolder) throws -> URL {
        let url = folder.url.appendingPathComponent("default.realm")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent(name), to: url)
        return url
    }

    /// What the realm must hold after the conversion, computed from the reader's view of the
    /// file: objects by type and primary key (row = key + 1 without one), links by primary key,
    /// embedded objects inline.
    static func expectedObjects(_ file: RealmFile) throws -> [String: [Value: [String: Value]]] {
        var result: [String: [Value: [String: Value]]] = [:]
        for table in file.classTables where table.kind != .embedded {
            var objects: [Value: [String: Value]] = [:]
            for object in try table.allObjects() {
                objects[try identity(file, table, object)] = try fields(file, table, object)
            }
            result[table.className] = objects
        }
        return result
    }

    static func identity(_ file: RealmFile, _ table: RealmTable, _ object: RealmObject) throws -> Value {
        guard let pk = table.primaryKey else { return .int(object.key + 1) }
        return try value(file, object[pk] ?? .null, link: nil)
    }

    static func fields(_ file: RealmFile, _ table: RealmTable, _ object: RealmObject) throws -> [String: Value] {
        var fields: [String: Value] = [:]
        for column in table.columns where column.name != table.primaryKey {
            fields[column.name] = try value(file, object[column.name] ?? .null, link: column.targetTable)
        }
        return fields
    }

    static func value(_ file: RealmFile, _ value: RealmValue, link target: String?) throws -> Value {
        switch value {
        case .null: return .null
        case .int(let v): return .int(v)
        case .bool(let v): return .bool(v)
        case .string(let v): return .string(v)
        case .binary(let v): return .data(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .timestamp(let t): return .date(t.date)
        case .decimal128(let d): return .decimal(Decimal128(bid: d.high, low: d.low))
        case .objectId(let o): return .objectId(ObjectId(bytes: Data(o.bytes)))
        case .uuid(let u): return .uuid(u)
        case .link(let link):
            let table = try file.table(named: link.table)
            guard let object = try table.object(key: link.objectKey) else { return .null }
            if table.kind == .embedded { return .object(try fields(file, table, object)) }
            return .link(ObjectLink(objectType: table.className, primaryKey: try identity(file, table, object)))
        case .list(let elements): return .list(try elements.map { try Self.value(file, $0, link: target) })
        case .set(let elements): return .set(try elements.map { try Self.value(file, $0, link: target) })
        case .dictionary(let entries):
            var map: [String: Value] = [:]
            for entry in entries { map[entry.key] = try Self.value(file, entry.value, link: target) }
            return .map(map)
        }
    }

    /// A primary key read through the dynamic API, as a `Value`.
    static func swiftValue(_ value: Any?) -> Value {
        switch value {
        case let v as String: .string(v)
        case let v as Int: .int(Int64(v))
        case let v as Atoll.ObjectId: .objectId(v)
        case let v as UUID: .uuid(v)
        default: .null
        }
    }

    /// Sets compare as sets; NaNs equal NaNs; a negative zero reads back as zero (SQLite keeps
    /// no sign on a zero: docs/from-realm.md); everything else as it is.
    static func same(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): x.isNaN ? y.isNaN : x == y
        case (.float(let x), .float(let y)): x.isNaN ? y.isNaN : x == y
        case (.decimal(let x), .decimal(let y)): x.isNaN ? y.isNaN : x == y
        case (.set(let x), .set(let y)): Set(x) == Set(y) && x.count == y.count
        case (.list(let x), .list(let y)): x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.map(let x), .map(let y)): x.keys == y.keys && x.allSatisfy { same($0.value, y[$0.key]!) }
        case (.object(let x), .object(let y)): x.keys == y.keys && x.allSatisfy { same($0.value, y[$0.key]!) }
        default: a == b
        }
    }

    @Test(arguments: objectStoreFixtures)
    func everyObjectOfAFileRealmWroteIsThereAfterTheConversion(_ name: String) throws {
        let folder = try TemporaryFolder("realm-format")
        defer { folder.remove() }
        let url = try Self.copy(name, in: folder)
        let original = try Data(contentsOf: url)
        let file = try RealmFile(path: url.path)
        let expected = try Self.expectedObjects(file)
        #expect(!expected.isEmpty)

        let configuration = Realm.Configuration(fileURL: url, schemaVersion: file.schemaVersion ?? 0, objectTypes: [])
        let realm = try Realm(configuration: configuration)
        let state = try realm.replicaState()
        for (type, objects) in expected {
            #expect(Set(state.primaryKeys(of: type)) == Set(objects.keys), "\(type)")
            for (key, fields) in objects {
                let stored = state.objects[type]?[key] ?? [:]
                for (property, value) in fields {
                    #expect(Self.same(stored[property] ?? .null, value), "\(type)[\(key)].\(property): \(stored[property] ?? .null) ≠ \(value)")
                }
            }
        }
        // Unsorted results list objects in the file's order (object key order).
        for table in file.classTables where table.kind != .embedded {
            guard let pk = table.primaryKey else { continue }
            let fileOrder = try table.allObjects().map { try Self.identity(file, table, $0) }
            let realmOrder = realm.dynamicObjects(table.className).map { object -> Value in
                state.objects[table.className]?.keys.first { key in
                    Self.same(key, Self.swiftValue(object[pk]))
                } ?? .null
            }
            #expect(Array(realmOrder) == fileOrder, "\(table.className)")
        }
        // The original is kept, byte for byte, beside the converted file.
        #expect(try Data(contentsOf: URL(fileURLWithPath: url.path + ".before-atoll")) == original)
        #expect(try Data(contentsOf: url) != original)
    }

    /// Realm keeps NaNs; SQLite would store NULL for one (and a file converted from Realm has them).
    @Test func aNaNIsStoredAsANaN() throws {
        let t = try TestRealm()
        let realm = try t.open()
        try realm.write {
            realm.add(AllTypes(value: ["double": Double.nan, "float": Float.nan] as [String: Any]))
            realm.add(AllTypes(value: ["double": 2.5, "float": Float(1.5)] as [String: Any]))
        }
        let reopened = try Realm(configuration: t.configuration)
        let values = reopened.objects(AllTypes.self).map { ($0.double, $0.float) }
        #expect(values.count == 2)
        #expect(values.contains { $0.0.isNaN && $0.1.isNaN })
        #expect(reopened.objects(AllTypes.self).where { $0.double == 2.5 }.count == 1)
    }

    @Test func theFileIsConvertedOnceAndKeepsItsSchemaVersion() throws {
        let folder = try TemporaryFolder("realm-format")
        defer { folder.remove() }
        let url = try Self.copy("sync-metadata-v6.realm", in: folder)
        let version = try #require(try RealmFile(path: url.path).schemaVersion)
        #expect(version > 0)
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: version, objectTypes: []))
            try realm.write { realm.dynamicCreate("current_user_identity", value: ["current_user_identity": "added"]) }
        }
        #expect(try schemaVersionAtURL(url) == version)
        // Opened again: an Atoll file now, with the write, not converted again.
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: version, objectTypes: []))
            #expect(realm.dynamicObjects("current_user_identity").contains { ($0["current_user_identity"] as? String) == "added" })
        }
        // A lower schema version than the file's is Realm's error.
        #expect(throws: Realm.Error.self) {
            _ = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: version - 1, objectTypes: []))
        }
    }

    @Test func theMigrationBlockSeesTheOldObjectsAndTheOldVersion() throws {
        let folder = try TemporaryFolder("realm-format")
        defer { folder.remove() }
        let url = try Self.copy("sync-metadata-v6.realm", in: folder)
        let file = try RealmFile(path: url.path)
        let version = try #require(file.schemaVersion)
        let users = try file.table(named: "class_UserMetadata").objectCount()
        let seen = Locked<(old: UInt64, objects: Int)?>(nil)
        let configuration = Realm.Configuration(fileURL: url, schemaVersion: version + 1, migrationBlock: { migration, old in
            var count = 0
            migration.enumerateObjects(ofType: "UserMetadata") { oldObject, newObject in
                // The configuration declares no classes: the new schema has none of the old ones.
                #expect(oldObject != nil && newObject == nil)
                count += 1
            }
            seen.withLock { $0 = (old, count) }
        }, objectTypes: [])
        _ = try Realm(configuration: configuration)
        #expect(seen.withLock { $0 }?.old == version)
        #expect(seen.withLock { $0 }?.objects == users)
    }

    @Test func aDamagedRealmFileIsAnErrorAndStaysAsItWas() throws {
        let folder = try TemporaryFolder("realm-format")
        defer { folder.remove() }
        let url = try Self.copy("sync-metadata-v6.realm", in: folder)
        var bytes = try Data(contentsOf: url)
        bytes = bytes.prefix(bytes.count / 2)
        try bytes.write(to: url)
        #expect(throws: Realm.Error.self) {
            _ = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: []))
        }
        #expect(try Data(contentsOf: url) == bytes)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".before-atoll"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0 != "default.realm" }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test func aReadOnlyRealmFileIsReadThroughAConvertedCopy() throws {
        let folder = try TemporaryFolder("realm-format")
        defer { folder.remove() }
        let url = try Self.copy("sync-metadata-v6.realm", in: folder)
        let original = try Data(contentsOf: url)
        let version = try #require(try RealmFile(path: url.path).schemaVersion)
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url, readOnly: true, schemaVersion: version, objectTypes: []))
        #expect(realm.dynamicObjects("UserMetadata").count == (try RealmFile(path: url.path).table(named: "class_UserMetadata").objectCount()))
        #expect(try Data(contentsOf: url) == original)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".before-atoll"))
    }

    @Test func aSeedFileRealmWroteIsCopiedAndConverted() throws {
        let folder = try TemporaryFolder("realm-format")
        defer { folder.remove() }
        let seed = Self.fixtures.appendingPathComponent("test_flx_metadata_tables_v1.realm")
        let version = try RealmFile(path: seed.path).schemaVersion ?? 0
        let url = folder.url.appendingPathComponent("seeded.realm")
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: version, objectTypes: [], seedFilePath: seed))
        #expect(realm.dynamicObjects("TopLevel").count == (try RealmFile(path: seed.path).table(named: "class_TopLevel").objectCount()))
    }

    @Test func deletingTheRealmsFilesDeletesTheBackupOfTheOriginal() throws {
        let folder = try TemporaryFolder("realm-format")
        defer { folder.remove() }
        let url = try Self.copy("sync-metadata-v6.realm", in: folder)
        try Data().write(to: URL(fileURLWithPath: url.path + ".lock"))  // as Realm leaves it
        let configuration = Realm.Configuration(fileURL: url, schemaVersion: try schemaVersionAtURL(url), objectTypes: [])
        do { _ = try Realm(configuration: configuration) }
        #expect(FileManager.default.fileExists(atPath: url.path + ".before-atoll"))
        #expect(try Realm.deleteFiles(for: configuration))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    @Test func aStaleWorkFileFromACrashIsReplaced() throws {
        let folder = try TemporaryFolder("realm-format")
        defer { folder.remove() }
        let url = try Self.copy("sync-metadata-v6.realm", in: folder)
        let work = folder.url.appendingPathComponent(".default.realm.atoll-conversion")
        try Data("half a conversion".utf8).write(to: work)
        let version = try RealmFile(path: url.path).schemaVersion ?? 0
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: version, objectTypes: []))
        #expect(realm.dynamicObjects("UserMetadata").count > 0)
        #expect(!FileManager.default.fileExists(atPath: work.path))
    }
}
