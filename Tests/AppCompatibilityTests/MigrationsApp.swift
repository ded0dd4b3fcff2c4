import Atoll
import AtollTesting
import Foundation
import Testing

// A pet-owners app three schema versions on, migrated as Realm apps do it: one configuration with
// the current schemaVersion, a block that upgrades from any older version step by step, set as
// the default configuration at launch.
//
// Version 0 stored first and last names, an age and the dogs' names as strings.
// Version 1 joined the names into fullName; version 2 renamed age to yearsOld; version 3 keeps
// dogs as objects and dropped the legacy notes.

class MigPersonV0: Object {
    override class func className() -> String { "MigPerson" }
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var dogNames: List<String>
}

class MigLegacyNote: Object {
    @Persisted var text = ""
}

class MigPerson: Object {
    @Persisted var fullName = ""
    @Persisted var yearsOld = 0
    @Persisted var dogs: List<MigDog>
}

class MigDog: Object {
    @Persisted var name = ""
    @Persisted var owner: MigPerson?
}

func migrationsAppConfiguration(fileURL: URL) -> Realm.Configuration {
    return Realm.Configuration(fileURL: fileURL, schemaVersion: 3, migrationBlock: { migration, oldSchemaVersion in
        if oldSchemaVersion < 1 {
            migration.enumerateObjects(ofType: MigPerson.className()) { oldObject, newObject in
                let firstName = oldObject!["firstName"] as! String
                let lastName = oldObject!["lastName"] as! String
                newObject!["fullName"] = "\(firstName) \(lastName)"
            }
        }
        if oldSchemaVersion < 2 {
            migration.renameProperty(onType: MigPerson.className(), from: "age", to: "yearsOld")
        }
        if oldSchemaVersion < 3 {
            migration.enumerateObjects(ofType: MigPerson.className()) { oldObject, newObject in
                let dogs = newObject!["dogs"] as! List<MigrationObject>
                for name in oldObject!["dogNames"] as! List<String> {
                    let dog = migration.create(MigDog.className(), value: ["name": name])
                    dog["owner"] = newObject
                    dogs.append(dog)
                }
            }
            migration.deleteData(forType: "MigLegacyNote")
        }
    }, objectTypes: [MigPerson.self, MigDog.self])
}

/// What the app runs at launch.
func migrationsAppLaunch(fileURL: URL) {
    Realm.Configuration.defaultConfiguration = migrationsAppConfiguration(fileURL: fileURL)
}

/// A debug screen that lists any type's objects without knowing its class.
func migrationsAppDebugListing(_ realm: Realm, typeName: String, property: String) -> [String] {
    return realm.dynamicObjects(typeName).sorted(byKeyPath: property).map { "\($0[property]!)" }
}

@Suite struct MigrationsApp {
    @Test func anOldFileIsMigratedToTheCurrentSchemaAtLaunch() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fileURL = folder.url.appendingPathComponent("default.realm")
        do {
            let old = try Realm(configuration: Realm.Configuration(fileURL: fileURL, objectTypes: [MigPersonV0.self, MigLegacyNote.self]))
            try old.write {
                old.add(MigPersonV0(value: ["firstName": "John", "lastName": "Doe", "age": 42, "dogNames": ["Marley", "Lassie"]]))
                old.add(MigPersonV0(value: ["firstName": "Jane", "lastName": "Doe", "age": 43, "dogNames": ["Toto"]]))
                old.add(MigLegacyNote(value: ["text": "remember the milk"]))
            }
        }
        // Launching sets the process-wide default configuration: do it in a process of its own,
        // so no other test sees it.
        let path = fileURL.path
        await #expect(processExitsWith: .success) { [path = path as String] in
            migrationsAppLaunch(fileURL: URL(fileURLWithPath: path))
            let realm = try Realm()
            let people = realm.objects(MigPerson.self).sorted(byKeyPath: "yearsOld")
            precondition(people.map { $0.fullName } == ["John Doe", "Jane Doe"])
            precondition(people.map { $0.yearsOld } == [42, 43])
            precondition(people[0].dogs.map { $0.name } == ["Marley", "Lassie"])
            precondition(people[1].dogs.first?.owner?.fullName == "Jane Doe")
            precondition(migrationsAppDebugListing(realm, typeName: "MigDog", property: "name") == ["Lassie", "Marley", "Toto"])
            precondition(realm.dynamicObjects("MigLegacyNote").isEmpty)
        }
        // The file now opens at version 3 without running the block again.
        #expect(try schemaVersionAtURL(fileURL) == 3)
        let realm = try Realm(configuration: migrationsAppConfiguration(fileURL: fileURL))
        #expect(realm.objects(MigDog.self).count == 3)
    }
}
