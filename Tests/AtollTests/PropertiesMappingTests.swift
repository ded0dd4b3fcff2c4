@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// A model whose Swift names differ from the stored ones, as an app matching a server schema has.
final class MappedContact: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var phone: String?
    @Persisted var bestFriend: MappedContact?
    @Persisted var pets: List<MappedPet>
    @Persisted var labels: Map<String, String>

    override class func className() -> String { "Contact" }
    override class func propertiesMapping() -> [String: String] {
        ["id": "_id", "name": "full_name", "age": "age_years", "bestFriend": "best_friend", "pets": "pet_list",
         "notAProperty": "ignored"]
    }
}

final class MappedPet: EmbeddedObject {
    @Persisted var nickname = ""
    override class func propertiesMapping() -> [String: String] { ["nickname": "nick_name"] }
}

/// The same type as another app declares it: with the stored names as Swift names.
final class StoredContact: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var full_name = ""
    @Persisted var age_years = 0
    @Persisted var phone: String?
    @Persisted var best_friend: StoredContact?
    @Persisted var pet_list: List<StoredPet>
    @Persisted var labels: Map<String, String>

    override class func className() -> String { "Contact" }
}

final class StoredPet: EmbeddedObject {
    @Persisted var nick_name = ""
    override class func className() -> String { "MappedPet" }
}

/// Left out of the default schema.
final class HiddenNote: Object {
    @Persisted var text = ""
    override class func shouldIncludeInDefaultSchema() -> Bool { false }
}

final class NoteHolder: Object {
    @Persisted var note: LinkedHiddenNote?
}

/// Left out of the default schema, but linked from a class that is in it.
final class LinkedHiddenNote: Object {
    @Persisted var text = ""
    override class func shouldIncludeInDefaultSchema() -> Bool { false }
}

/// `propertiesMapping()` and `shouldIncludeInDefaultSchema()`.
@Suite struct PropertiesMappingTests {
    private func contacts(in realm: Realm) throws {
        try realm.write {
            realm.add(MappedContact(value: ["id": 1, "name": "Ann", "age": 40, "pets": [["nickname": "Rex"]], "labels": ["k": "v"]]))
            realm.add(MappedContact(value: ["id": 2, "name": "Bo", "age": 30, "phone": "555"]))
            realm.add(MappedContact(value: ["id": 3, "name": "Cy", "age": 30]))
            realm.object(ofType: MappedContact.self, forPrimaryKey: 1)!.bestFriend = realm.object(ofType: MappedContact.self, forPrimaryKey: 2)
        }
    }

    @Test func theFileStoresThePersistedNamesAndAClassDeclaringThemReadsIt() throws {
        let t = try TestRealm(objectTypes: [MappedContact.self, MappedPet.self])
        do {
            let realm = try t.open()
            try contacts(in: realm)
            // As in realm-swift: `name` is the Swift name, `columnName` the stored one.
            let contact = try #require(realm.schema["Contact"])
            #expect(contact.properties.map(\.columnName) == ["_id", "full_name", "age_years", "phone", "best_friend", "pet_list", "labels"])
            #expect(contact.properties.map(\.name) == ["id", "name", "age", "phone", "bestFriend", "pets", "labels"])
            #expect(realm.schema["MappedPet"]?.properties.map(\.columnName) == ["nick_name"])
        }
        do {
            let otherRealm = try Realm(configuration: t.configuration([StoredContact.self, StoredPet.self]))
            let ann = try #require(otherRealm.object(ofType: StoredContact.self, forPrimaryKey: 1))
            #expect(ann.full_name == "Ann" && ann.age_years == 40 && ann.best_friend?.full_name == "Bo")
            #expect(ann.pet_list.map(\.nick_name) == ["Rex"])
        }
    }

    @Test func objectSchemaAndPrimaryKeyShowTheSwiftNames() throws {
        let t = try TestRealm(objectTypes: [MappedContact.self, MappedPet.self])
        let realm = try t.open()
        try contacts(in: realm)
        let names = ["id", "name", "age", "phone", "bestFriend", "pets", "labels"]
        #expect(MappedContact().objectSchema.properties.map(\.name) == names)
        #expect(realm.objects(MappedContact.self).first!.objectSchema.properties.map(\.name) == names)
        #expect(MappedContact.primaryKey() == "id")
        #expect(MappedContact(value: ["name": "Di"]).description.contains("name = \"Di\""))
    }

    @Test func queriesSortsAndAggregatesUseTheSwiftName() throws {
        let t = try TestRealm(objectTypes: [MappedContact.self, MappedPet.self])
        let realm = try t.open()
        try contacts(in: realm)
        let all = realm.objects(MappedContact.self)
        #expect(all.filter("name == 'Ann'").count == 1)
        #expect(all.where { $0.name == "Bo" }.first?.id == 2)
        #expect(all.filter("bestFriend.name == %@", "Bo").first?.name == "Ann")
        #expect(all.where { $0.bestFriend.name == "Bo" }.count == 1)
        #expect(all.filter("ANY pets.nickname == 'Rex'").count == 1)
        #expect(all.where { $0.pets.nickname == "Rex" }.count == 1)
        #expect(all.filter("labels['k'] == 'v'").count == 1)
        #expect(all.filter("pets.@count > 0").count == 1)
        #expect(all.sorted(byKeyPath: "name", ascending: false).map(\.name) == ["Cy", "Bo", "Ann"])
        #expect(all.sorted(by: \.age).map(\.id) == [2, 3, 1])
        #expect(all.sorted(by: [SortDescriptor(keyPath: "age"), SortDescriptor(keyPath: "name", ascending: false)]).map(\.id) == [3, 2, 1])
        #expect(all.distinct(by: ["age"]).count == 2)
        #expect(all.max(ofProperty: "age") as Int? == 40 && all.sum(of: \.age) == 100)
        // As in Realm, the stored name works too.
        #expect(all.filter("full_name == 'Cy' AND age_years == 30").count == 1)
        // A wrong name is still an error, reported with the name as written.
        #expect(throws: Realm.Error.self) { try all.filter(query: "nmae == 'Ann'") }
    }

    @Test func keyValueCodingAndObjectValueUseTheSwiftName() throws {
        let t = try TestRealm(objectTypes: [MappedContact.self, MappedPet.self])
        let realm = try t.open()
        try contacts(in: realm)
        let ann = try #require(realm.object(ofType: MappedContact.self, forPrimaryKey: 1))
        #expect(ann["name"] as? String == "Ann" && ann.value(forKeyPath: "bestFriend.name") as? String == "Bo")
        try realm.write {
            ann.setValue("Anne", forKey: "name")
            realm.create(MappedContact.self, value: ["id": 2, "age": 31], update: .modified)
        }
        #expect(ann.name == "Anne" && ann.bestFriend?.age == 31)
        #expect(realm.objects(MappedContact.self).sorted(byKeyPath: "id").value(forKey: "name") as? [String] == ["Anne", "Bo", "Cy"])
    }

    @Test func notificationsNameTheSwiftProperty() throws {
        let t = try TestRealm(objectTypes: [MappedContact.self, MappedPet.self])
        let realm = try t.open()
        try contacts(in: realm)
        let ann = try #require(realm.object(ofType: MappedContact.self, forPrimaryKey: 1))
        var changed: [String] = []
        let token = ann.observe(keyPaths: ["name"]) { (change: ObjectChange<MappedContact>) in
            if case .change(_, let properties) = change { changed += properties.map(\.name) }
        }
        defer { token.invalidate() }
        var modifications: [[Int]] = []
        let results = realm.objects(MappedContact.self).sorted(byKeyPath: "id")
        let resultsToken = results.observe(keyPaths: ["bestFriend.name"]) { change in
            if case .update(_, _, _, let modified) = change { modifications.append(modified) }
        }
        defer { resultsToken.invalidate() }
        try realm.write { ann.age = 41 }
        try realm.write {
            ann.name = "Anne"
            ann.bestFriend!.name = "Bob"
        }
        #expect(changed == ["name"])
        // Ann's best friend Bo was renamed; Ann's own name is not "bestFriend.name".
        #expect(modifications == [[0]])
    }

    @Test func theHistoryRecordsThePersistedNames() throws {
        let t = try TestRealm(objectTypes: [MappedContact.self, MappedPet.self], recordingHistory: true)
        let realm = try t.open()
        try contacts(in: realm)
        let paths = try realm.historyChangesets().flatMap(\.instructions).compactMap { instruction -> String? in
            guard case .set(_, let path, _) = instruction, case .property(let name)? = path.first else { return nil }
            return name
        }
        #expect(paths.contains("full_name") && paths.contains("age_years") && paths.contains("best_friend"))
        #expect(!paths.contains("name") && !paths.contains("age") && !paths.contains("bestFriend"))
    }

    @Test func aMigrationReadsAndWritesTheNewObjectByItsSwiftName() throws {
        let t = try TestRealm(objectTypes: [StoredContact.self, StoredPet.self])
        do {
            let realm = try t.open()
            try realm.write { realm.add(StoredContact(value: ["_id": 1, "full_name": "ann"])) }
        }
        let configuration = t.configuration([MappedContact.self, MappedPet.self], schemaVersion: 1) { migration, _ in
            migration.enumerateObjects(ofType: "Contact") { old, new in
                new!["name"] = (old!["full_name"] as! String).capitalized
            }
        }
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(MappedContact.self).first?.name == "Ann")
    }

    // MARK: shouldIncludeInDefaultSchema

    @Test func aClassLeftOutOfTheDefaultSchemaIsManagedOnlyWhenListedOrLinked() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration())
        let error = try #require(throws: Realm.Error.self) { try realm.write { realm.add(HiddenNote()) } }
        #expect(error.code == .schemaMismatch && error.message.contains("shouldIncludeInDefaultSchema"))
        #expect(realm.schema["HiddenNote"] == nil)
        // A class of the schema that links to it brings it in.
        try realm.write { realm.add(NoteHolder(value: ["note": ["text": "linked"]])) }
        #expect(realm.objects(LinkedHiddenNote.self).map(\.text) == ["linked"])
        // Listed in objectTypes, it is managed like any class.
        let listed = try Realm(configuration: folder.configuration("listed.realm", objectTypes: [HiddenNote.self]))
        try listed.write { listed.add(HiddenNote(value: ["text": "listed"])) }
        #expect(listed.objects(HiddenNote.self).count == 1)
    }

    @Test func theDefaultSchemaOfANewFileLeavesTheClassOut() throws {
        _ = HiddenNote()  // the process has seen the class
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.schema["HiddenNote"] == nil)
        #expect(HiddenNote.shouldIncludeInDefaultSchema() == false && MappedContact.shouldIncludeInDefaultSchema())
    }
}
