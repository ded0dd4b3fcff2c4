@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

// Successive versions of the same stored type: each overrides `className()` so they all name "Member".

/// Version 1.
final class MemberV1: Object {
    override class func className() -> String { "Member" }
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
}

/// Version 1 plus new properties of several kinds.
final class MemberWithExtras: Object {
    override class func className() -> String { "Member" }
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var email = "unset"
    @Persisted var score = 0.0
    @Persisted var note: String?
    @Persisted var badge: ObjectId
    @Persisted var token: UUID
    @Persisted var balance: Decimal128
    @Persisted var joined: Date
    @Persisted var tags: List<String>
}

/// `firstName` + `lastName` become `fullName`; `age` becomes a String.
final class MemberV2: Object {
    override class func className() -> String { "Member" }
    @Persisted var fullName = ""
    @Persisted var age = ""
}

/// `lastName` removed.
final class MemberWithoutLastName: Object {
    override class func className() -> String { "Member" }
    @Persisted var firstName = ""
    @Persisted var age = 0
}

/// `firstName` renamed to `givenName`.
final class MemberRenamed: Object {
    override class func className() -> String { "Member" }
    @Persisted var givenName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
}

/// `lastName` indexed.
final class MemberIndexed: Object {
    override class func className() -> String { "Member" }
    @Persisted var firstName = ""
    @Persisted(indexed: true) var lastName = ""
    @Persisted var age = 0
}

/// Keyed by `code`, then by `email`.
final class AccountV1: Object {
    override class func className() -> String { "Account" }
    @Persisted(primaryKey: true) var code = 0
    @Persisted var email = ""
    @Persisted var owner: MemberV1?
}

final class AccountByEmail: Object {
    override class func className() -> String { "Account" }
    @Persisted var code = 0
    @Persisted(primaryKey: true) var email = ""
    @Persisted var owner: MemberV1?
}

final class Team: Object {
    @Persisted var name = ""
    @Persisted var lead: MemberWithExtras?
    @Persisted var members: List<MemberWithExtras>
}

/// Owners with dog names as strings, then with pet objects (`years` renamed `age`).
final class MigOwnerV1: Object {
    override class func className() -> String { "MigOwner" }
    @Persisted var name = ""
    @Persisted var dogNames: List<String>
    @Persisted var years = 0
    @Persisted var walker: MigWalker?
}

final class MigWalker: Object {
    @Persisted var name = ""
}

final class MigOwnerV2: Object {
    override class func className() -> String { "MigOwner" }
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var dogs: List<MigPet>
    @Persisted var bestFriend: MigPet?
}

final class MigPet: Object {
    @Persisted var name = ""
    @Persisted var walkedBy = ""
    @Persisted var owner: MigOwnerV2?
}

/// A kennel's residents, then also its favourite and their number.
final class MigKennelV1: Object {
    override class func className() -> String { "MigKennel" }
    @Persisted var name = ""
    @Persisted var residents: List<MigPet>
}

final class MigKennelV2: Object {
    override class func className() -> String { "MigKennel" }
    @Persisted var name = ""
    @Persisted var residents: List<MigPet>
    @Persisted var favourite: MigPet?
    @Persisted var size = 0
}

final class MigAddress: EmbeddedObject {
    @Persisted var street = ""
}

final class MigKennelV3: Object {
    override class func className() -> String { "MigKennel" }
    @Persisted var name = ""
    @Persisted var residents: List<MigPet>
    @Persisted var address: MigAddress?
}

@Suite struct MigrationTests {
    /// Writes two members with the version-1 schema, then releases the realm.
    private func seed(_ t: TestRealm, schemaVersion: UInt64 = 0) throws {
        let realm = try Realm(configuration: t.configuration([MemberV1.self], schemaVersion: schemaVersion))
        try realm.write {
            realm.add(MemberV1(value: ["firstName": "Ada", "lastName": "Lovelace", "age": 36]))
            realm.add(MemberV1(value: ["firstName": "Alan", "lastName": "Turing", "age": 41]))
        }
    }

    private func migrationError(_ configuration: Realm.Configuration) throws -> Realm.Error {
        try #require(throws: Realm.Error.self) { _ = try Realm(configuration: configuration) }
    }

    @Test func classNameOverrideNamesTheStoredType() throws {
        let t = try TestRealm()
        let realm = try Realm(configuration: t.configuration([AccountV1.self]))
        #expect(realm.schema.typeNames.sorted() == ["Account", "Member"])
        #expect(realm.schema["Account"]?[property: "owner"]?.objectType == "Member")
        #expect(AccountV1().objectSchema.name == "Account")
        try realm.write {
            realm.add(AccountV1(value: ["code": 1, "owner": MemberV1(value: ["firstName": "Ada"])]))
        }
        #expect(realm.objects(MemberV1.self).first?.firstName == "Ada")
        #expect(realm.objects(AccountV1.self).first?.owner?.firstName == "Ada")
        #expect(try RawSQLite.fetch("SELECT count(*) FROM class_Member", path: t.path) == [["1"]])
    }

    @Test func propertyAddedWithVersionBumpGetsItsTypeDefaultAndRunsTheBlock() throws {
        let t = try TestRealm()
        try seed(t, schemaVersion: 1)
        let versions = Recorder<UInt64>()
        let realm = try Realm(configuration: t.configuration([MemberWithExtras.self], schemaVersion: 2) { _, old in
            versions.append(old)
        })
        #expect(versions.all == [1])
        let ada = try #require(realm.objects(MemberWithExtras.self).where { $0.firstName == "Ada" }.first)
        #expect(ada.lastName == "Lovelace" && ada.age == 36)
        #expect(ada.email == "" && ada.score == 0 && ada.note == nil)
        #expect(ada.badge == ObjectId() && ada.token == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        #expect(ada.balance == Decimal128() && ada.joined == Date(timeIntervalSince1970: 0) && ada.tags.isEmpty)
        try realm.write { ada.tags.append("math") }
        #expect(Array(ada.tags) == ["math"])
    }

    @Test func propertyAddedWithoutVersionBumpIsAppliedAutomatically() throws {
        let t = try TestRealm()
        try seed(t)
        let calls = Recorder<UInt64>()
        let realm = try Realm(configuration: t.configuration([MemberWithExtras.self]) { _, old in calls.append(old) })
        #expect(calls.all.isEmpty, "an additive change needs no migration block")
        #expect(realm.objects(MemberWithExtras.self).count == 2)
        #expect(realm.objects(MemberWithExtras.self).where { $0.email == "" }.count == 2)
        try realm.write { realm.add(MemberWithExtras(value: ["firstName": "Grace", "email": "grace@navy.mil"])) }
        #expect(realm.objects(MemberWithExtras.self).where { $0.email == "grace@navy.mil" }.count == 1)
    }

    @Test func removedPropertyWithoutVersionBumpRequiresMigration() throws {
        let t = try TestRealm()
        try seed(t)
        let error = try migrationError(t.configuration([MemberWithoutLastName.self]))
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("'Member.lastName' has been removed"))
        // Nothing was changed: the old schema still opens with the data.
        let realm = try Realm(configuration: t.configuration([MemberV1.self]))
        #expect(realm.objects(MemberV1.self).map(\.lastName).sorted() == ["Lovelace", "Turing"])
    }

    @Test func changedPropertyTypeWithoutVersionBumpRequiresMigration() throws {
        let t = try TestRealm()
        try seed(t)
        let error = try migrationError(t.configuration([MemberV2.self]))
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("'Member.age' has been changed from 'int' to 'string'"))
        #expect(error.message.contains("'Member.firstName' has been removed"))
        #expect(!error.message.contains("fullName"), "an added property is not a reason to migrate")
    }

    @Test func removedPropertyWithVersionBumpDropsItsData() throws {
        let t = try TestRealm()
        try seed(t)
        do {
            let realm = try Realm(configuration: t.configuration([MemberWithoutLastName.self], schemaVersion: 1))
            #expect(realm.objects(MemberWithoutLastName.self).count == 2)
            #expect(realm.schema["Member"]?[property: "lastName"] == nil)
        }
        let columns = try RawSQLite.fetch("SELECT name FROM pragma_table_info('class_Member')", path: t.path).map { $0[0] ?? "" }
        #expect(!columns.contains("lastName"))
        #expect(!columns.contains { $0.hasPrefix("_atoll_old") })
    }

    @Test func migrationBlockConvertsValuesToTheNewSchema() throws {
        let t = try TestRealm()
        try seed(t)
        let configuration = t.configuration([MemberV2.self], schemaVersion: 1) { migration, old in
            #expect(old == 0)
            migration.enumerateObjects(ofType: "Member") { oldObject, newObject in
                guard let oldObject, let newObject else { return }
                let first = oldObject["firstName"] as? String ?? "?"
                let last = oldObject["lastName"] as? String ?? "?"
                newObject["fullName"] = first + " " + last
                newObject["age"] = String(oldObject["age"] as? Int ?? -1)
            }
        }
        do {
            let realm = try Realm(configuration: configuration)
            let members = realm.objects(MemberV2.self).sorted(byKeyPath: "fullName")
            #expect(members.map(\.fullName) == ["Ada Lovelace", "Alan Turing"])
            #expect(members.map(\.age) == ["36", "41"])
        }
        // Reopening at the new version runs nothing again and keeps the converted values.
        let again = try Realm(configuration: t.configuration([MemberV2.self], schemaVersion: 1) { _, _ in
            Issue.record("the migration block ran twice")
        })
        #expect(again.objects(MemberV2.self).where { $0.age == "41" }.first?.fullName == "Alan Turing")
    }

    @Test func oldObjectsReadOldValuesAndNewObjectsReadNewOnes() throws {
        let t = try TestRealm()
        try seed(t)
        let seen = Recorder<String>()
        _ = try Realm(configuration: t.configuration([MemberV2.self], schemaVersion: 1) { migration, _ in
            #expect(migration.oldSchema["Member"]?[property: "age"]?.type == .int)
            #expect(migration.newSchema["Member"]?[property: "age"]?.type == .string)
            migration.enumerateObjects(ofType: "Member") { oldObject, newObject in
                newObject?["age"] = "x"
                // The old object has the old schema's properties only (another name stops the program).
                seen.append("\(oldObject?["age"] as? Int ?? -1)/\(newObject?["age"] as? String ?? "nil")/\(migration.oldSchema["Member"]?[property: "fullName"] == nil)")
            }
        })
        #expect(seen.all.sorted() == ["36/x/true", "41/x/true"])
    }

    @Test func renamePropertyKeepsTheData() throws {
        let t = try TestRealm()
        try seed(t)
        let realm = try Realm(configuration: t.configuration([MemberRenamed.self], schemaVersion: 1) { migration, _ in
            migration.renameProperty(onType: "Member", from: "firstName", to: "givenName")
        })
        #expect(realm.objects(MemberRenamed.self).map(\.givenName).sorted() == ["Ada", "Alan"])
        #expect(realm.objects(MemberRenamed.self).map(\.lastName).sorted() == ["Lovelace", "Turing"])
    }

    @Test func migrationCanCreateAndDeleteObjects() throws {
        let t = try TestRealm()
        try seed(t)
        let realm = try Realm(configuration: t.configuration([MemberV1.self], schemaVersion: 1) { migration, _ in
            migration.enumerateObjects(ofType: "Member") { oldObject, newObject in
                if oldObject?["firstName"] as? String == "Alan", let newObject { migration.delete(newObject) }
            }
            migration.create("Member", value: ["firstName": "Grace", "lastName": "Hopper", "age": 85])
        })
        #expect(realm.objects(MemberV1.self).map(\.firstName).sorted() == ["Ada", "Grace"])
        #expect(realm.objects(MemberV1.self).where { $0.firstName == "Grace" }.first?.age == 85)
    }

    @Test func objectDeletedByAMigrationLeavesNoLinkOrCollectionBehind() throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([Team.self]))
            try realm.write {
                let ada = MemberWithExtras(value: ["firstName": "Ada"])
                let alan = MemberWithExtras(value: ["firstName": "Alan"])
                ada.tags.append(objectsIn: ["math", "poetry"])
                let team = Team(value: ["name": "engines", "lead": ada])
                team.members.append(objectsIn: [alan, ada, alan])
                realm.add(team)
            }
        }
        #expect(try RawSQLite.fetch("SELECT count(*) FROM list_Member_tags", path: t.path) == [["2"]])
        let realm = try Realm(configuration: t.configuration([Team.self], schemaVersion: 1) { migration, _ in
            migration.enumerateObjects(ofType: "Member") { oldObject, newObject in
                if oldObject?["firstName"] as? String == "Ada", let newObject { migration.delete(newObject) }
            }
        })
        #expect(realm.objects(MemberWithExtras.self).map(\.firstName) == ["Alan"])
        let team = try #require(realm.objects(Team.self).first)
        #expect(team.lead == nil)
        #expect(team.members.map(\.firstName) == ["Alan", "Alan"])
        #expect(try RawSQLite.fetch("SELECT count(*) FROM list_Member_tags", path: t.path) == [["0"]])
    }

    @Test func deleteDataForTypeEmptiesIt() throws {
        let t = try TestRealm()
        try seed(t)
        let realm = try Realm(configuration: t.configuration([MemberV1.self], schemaVersion: 1) { migration, _ in
            #expect(migration.deleteData(forType: "Member"))
            #expect(!migration.deleteData(forType: "NoSuchType"))
        })
        #expect(realm.objects(MemberV1.self).isEmpty)
    }

    @Test func failedMigrationLeavesTheFileAsItWas() throws {
        let t = try TestRealm()
        try seed(t)
        let error = try migrationError(t.configuration([MemberV2.self], schemaVersion: 1) { migration, _ in
            migration.enumerateObjects(ofType: "Member") { _, newObject in
                newObject?["fullName"] = 12   // an Int in a String property
            }
        })
        #expect(error.code == .invalidValue)
        #expect(error.message.contains("Member.fullName"))
        let realm = try Realm(configuration: t.configuration([MemberV1.self]))
        #expect(realm.objects(MemberV1.self).map(\.age).sorted() == [36, 41])
        #expect(try schemaVersionAtURL(t.configuration.fileURL!) == 0)
    }

    @Test func deleteRealmIfMigrationNeededStartsOver() throws {
        let t = try TestRealm()
        try seed(t)
        var configuration = t.configuration([MemberV2.self]) { _, _ in Issue.record("the block must not run") }
        configuration.deleteRealmIfMigrationNeeded = true
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(MemberV2.self).isEmpty)
        try realm.write { realm.add(MemberV2(value: ["fullName": "Grace Hopper", "age": "85"])) }
        #expect(realm.objects(MemberV2.self).count == 1)
    }

    @Test func deleteRealmIfMigrationNeededKeepsDataWhenNothingChanged() throws {
        let t = try TestRealm()
        try seed(t)
        var configuration = t.configuration([MemberWithExtras.self])
        configuration.deleteRealmIfMigrationNeeded = true
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(MemberWithExtras.self).count == 2, "an additive change keeps the file")
    }

    @Test func deleteRealmIfMigrationNeededStartsOverWhenTheVersionDiffers() throws {
        let t = try TestRealm()
        try seed(t, schemaVersion: 3)
        var configuration = t.configuration([MemberV1.self], schemaVersion: 1)
        configuration.deleteRealmIfMigrationNeeded = true
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(MemberV1.self).isEmpty)
        #expect(try schemaVersionAtURL(t.configuration.fileURL!) == 1)
    }

    @Test func lowerSchemaVersionThanTheFilesIsRejected() throws {
        let t = try TestRealm()
        try seed(t, schemaVersion: 5)
        let error = try migrationError(t.configuration([MemberV1.self], schemaVersion: 4))
        #expect(error.code == .fail)
        #expect(error.message.contains("4") && error.message.contains("5"))
        #expect(try schemaVersionAtURL(t.configuration.fileURL!) == 5)
    }

    @Test func changedPrimaryKeyWithoutVersionBumpRequiresMigration() throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([AccountV1.self]))
            try realm.write { realm.add(AccountV1(value: ["code": 1, "email": "a@x"])) }
        }
        let error = try migrationError(t.configuration([AccountByEmail.self]))
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("Primary key of 'Account' has changed"))
    }

    @Test func changedPrimaryKeyWithVersionBumpKeepsObjectsAndEnforcesTheNewKey() throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([AccountV1.self]))
            try realm.write {
                realm.add(AccountV1(value: ["code": 1, "email": "a@x"]))
                realm.add(AccountV1(value: ["code": 2, "email": "b@x"]))
            }
        }
        let realm = try Realm(configuration: t.configuration([AccountByEmail.self], schemaVersion: 1))
        #expect(realm.object(ofType: AccountByEmail.self, forPrimaryKey: "b@x")?.code == 2)
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.add(AccountByEmail(value: ["code": 3, "email": "a@x"])) }
        }
    }

    @Test func newPrimaryKeyWithDuplicateValuesFailsTheMigration() throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([AccountV1.self]))
            try realm.write {
                realm.add(AccountV1(value: ["code": 1, "email": "same@x"]))
                realm.add(AccountV1(value: ["code": 2, "email": "same@x"]))
            }
        }
        let error = try migrationError(t.configuration([AccountByEmail.self], schemaVersion: 1))
        #expect(error.code == .primaryKeyExists)
        #expect(error.message.contains("Account.email"))
        let realm = try Realm(configuration: t.configuration([AccountV1.self]))
        #expect(realm.objects(AccountV1.self).count == 2)
    }

    @Test func newPrimaryKeyMadeUniqueByTheBlockSucceeds() throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([AccountV1.self]))
            try realm.write {
                realm.add(AccountV1(value: ["code": 1]))
                realm.add(AccountV1(value: ["code": 2]))
            }
        }
        let realm = try Realm(configuration: t.configuration([AccountByEmail.self], schemaVersion: 1) { migration, _ in
            migration.enumerateObjects(ofType: "Account") { oldObject, newObject in
                newObject?["email"] = "user\(oldObject?["code"] as? Int ?? 0)@x"
            }
        })
        #expect(realm.objects(AccountByEmail.self).map(\.email).sorted() == ["user1@x", "user2@x"])
    }

    @Test func addedIndexIsCreatedWithoutMigration() throws {
        let t = try TestRealm()
        try seed(t)
        let indexQuery = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'class_Member'"
        #expect(try RawSQLite.fetch(indexQuery, path: t.path) == [["0"]])
        do {
            let realm = try Realm(configuration: t.configuration([MemberIndexed.self]))
            #expect(realm.schema["Member"]?[property: "lastName"]?.isIndexed == true)
            #expect(realm.objects(MemberIndexed.self).count == 2)
        }
        #expect(try RawSQLite.fetch(indexQuery, path: t.path) == [["1"]])
        // And removed again when the index goes.
        _ = try Realm(configuration: t.configuration([MemberV1.self]))
        #expect(try RawSQLite.fetch(indexQuery, path: t.path) == [["0"]])
    }

    @Test func schemaVersionAtURLReadsTheStoredVersion() throws {
        let t = try TestRealm()
        try seed(t, schemaVersion: 7)
        #expect(try schemaVersionAtURL(t.configuration.fileURL!) == 7)
        let missing = t.folder.url.appendingPathComponent("missing.realm")
        #expect(throws: Realm.Error.self) { try schemaVersionAtURL(missing) }
    }

    // MARK: Collections and links

    @Test func migrationMovesAListOfStringsToAListOfObjectsRenamesDeletesAndRelinks() throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([MigOwnerV1.self, MigWalker.self]))
            try realm.write {
                let walt = MigWalker(value: ["name": "Walt"])
                realm.add(MigOwnerV1(value: ["name": "Ann", "dogNames": ["Rex", "Fido"], "years": 30, "walker": walt]))
                realm.add(MigOwnerV1(value: ["name": "Bob", "years": 40]))
            }
        }
        let configuration = t.configuration([MigOwnerV2.self, MigPet.self], schemaVersion: 1) { migration, _ in
            migration.renameProperty(onType: "MigOwner", from: "years", to: "age")
            migration.enumerateObjects(ofType: "MigOwner") { oldObject, newObject in
                guard let oldObject, let newObject else { return }
                let names = oldObject["dogNames"] as! List<String>
                let walker = oldObject["walker"] as? MigrationObject
                let dogs = newObject["dogs"] as! List<MigrationObject>
                for name in names {
                    let pet = migration.create("MigPet", value: ["name": name, "walkedBy": walker?["name"] as? String ?? ""])
                    pet["owner"] = newObject
                    dogs.append(pet)
                }
                // A pet appended and removed again leaves nothing behind in the list.
                dogs.append(migration.create("MigPet", value: ["name": "Ghost"]))
                dogs.remove(at: dogs.count - 1)
                newObject["bestFriend"] = dogs.first
            }
            #expect(migration.deleteData(forType: "MigWalker"))
        }
        let realm = try Realm(configuration: configuration)
        let owners = realm.objects(MigOwnerV2.self).sorted(byKeyPath: "name")
        #expect(owners.map(\.age) == [30, 40])
        let ann = try #require(owners.first)
        #expect(ann.dogs.map(\.name) == ["Rex", "Fido"])
        #expect(ann.dogs.map(\.walkedBy) == ["Walt", "Walt"])
        #expect(ann.dogs.allSatisfy { $0.owner?.name == "Ann" })
        #expect(ann.bestFriend?.name == "Rex")
        #expect(owners.last?.dogs.isEmpty == true && owners.last?.bestFriend == nil)
        #expect(realm.objects(MigPet.self).map(\.name).sorted() == ["Fido", "Ghost", "Ghost", "Rex"], "one Ghost per owner, unlinked")
        #expect(try RawSQLite.fetch("SELECT count(*) FROM class_MigWalker", path: t.path) == [["0"]])
        #expect(realm.schema["MigOwner"]?[property: "dogNames"] == nil && realm.schema["MigOwner"]?[property: "years"] == nil)
    }

    @Test func oldListsOfObjectsReadAsDynamicObjectsAndLinkToTheNewRows() throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([MigKennelV1.self]))
            try realm.write {
                realm.add(MigKennelV1(value: ["name": "North", "residents": [["name": "Rex"], ["name": "Fido"], ["name": "Max"]]]))
            }
        }
        let seen = Recorder<String>()
        let realm = try Realm(configuration: t.configuration([MigKennelV2.self], schemaVersion: 1) { migration, _ in
            migration.enumerateObjects(ofType: "MigKennel") { oldObject, newObject in
                guard let oldObject, let newObject else { return }
                let residents = oldObject["residents"] as! List<DynamicObject>
                (newObject["residents"] as! List<MigrationObject>).remove(at: 0)
                // The old object keeps the list as it was.
                seen.append(residents.map { $0["name"] as! String }.joined(separator: ","))
                newObject["favourite"] = residents.last
                newObject["size"] = residents.count
            }
        })
        #expect(seen.all == ["Rex,Fido,Max"])
        let kennel = try #require(realm.objects(MigKennelV2.self).first)
        #expect(kennel.residents.map(\.name) == ["Fido", "Max"])
        #expect(kennel.favourite?.name == "Max")
        #expect(kennel.size == 3)
        #expect(realm.objects(MigPet.self).count == 3)
    }

    @Test func createdObjectsTakeArraysAndTypedObjectsAndLinks() throws {
        let t = try TestRealm()
        try seed(t)
        let realm = try Realm(configuration: t.configuration([MemberV1.self, AccountV1.self], schemaVersion: 1) { migration, _ in
            var ada: MigrationObject?
            migration.enumerateObjects(ofType: "Member") { oldObject, newObject in
                if oldObject?["firstName"] as? String == "Ada" { ada = newObject }
            }
            migration.create("Account", value: [7, "ada@x", ada as Any])
            migration.create("Account", value: ["code": 8, "owner": ["firstName": "Grace"]])
        })
        #expect(realm.object(ofType: AccountV1.self, forPrimaryKey: 7)?.owner?.lastName == "Lovelace")
        #expect(realm.object(ofType: AccountV1.self, forPrimaryKey: 7)?.email == "ada@x")
        #expect(realm.object(ofType: AccountV1.self, forPrimaryKey: 8)?.owner?.firstName == "Grace")
        #expect(realm.objects(MemberV1.self).count == 3)
    }

    @Test func performMigrationRunsTheBlockBeforeAnyRealmOpens() throws {
        let t = try TestRealm()
        try seed(t)
        let calls = Recorder<UInt64>()
        let configuration = t.configuration([MemberV2.self], schemaVersion: 1) { migration, old in
            calls.append(old)
            migration.enumerateObjects(ofType: "Member") { oldObject, newObject in
                newObject?["fullName"] = oldObject?["firstName"] as? String ?? ""
            }
        }
        try Realm.performMigration(for: configuration)
        #expect(calls.all == [0])
        #expect(try schemaVersionAtURL(configuration.fileURL!) == 1)
        let realm = try Realm(configuration: configuration)
        #expect(calls.all == [0], "opening after performMigration runs nothing again")
        #expect(realm.objects(MemberV2.self).map(\.fullName).sorted() == ["Ada", "Alan"])
    }

    @Test func renamingAPropertyThatDoesNotExistFailsTheMigration() throws {
        let t = try TestRealm()
        try seed(t)
        let error = try migrationError(t.configuration([MemberRenamed.self], schemaVersion: 1) { migration, _ in
            migration.renameProperty(onType: "Member", from: "forename", to: "givenName")
        })
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("Member.forename"))
    }

    @Test func newObjectsTakeEmbeddedObjectsAndEnumerationsNest() throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([MigKennelV1.self]))
            try realm.write {
                realm.add(MigKennelV1(value: ["name": "North", "residents": [["name": "Rex"]]]))
                realm.add(MigKennelV1(value: ["name": "South"]))
            }
        }
        let realm = try Realm(configuration: t.configuration([MigKennelV3.self], schemaVersion: 1) { migration, _ in
            migration.enumerateObjects(ofType: "MigKennel") { _, newObject in
                guard let newObject, newObject["name"] as? String == "North" else { return }
                newObject["address"] = MigAddress(value: ["street": "Broadway"])
                // Pets without a kennel go to the North one.
                migration.enumerateObjects(ofType: "MigPet") { oldPet, _ in
                    let residents = newObject["residents"] as! List<MigrationObject>
                    if !residents.contains(where: { $0["name"] as? String == oldPet?["name"] as? String }) {
                        residents.append(migration.create("MigPet", value: ["name": "stray"]))
                    }
                }
            }
        })
        let kennels = realm.objects(MigKennelV3.self).sorted(byKeyPath: "name")
        #expect(kennels.first?.address?.street == "Broadway")
        #expect(kennels.last?.address == nil)
        #expect(kennels.first?.residents.map(\.name) == ["Rex"])
    }
}
