import Atoll
import AtollTesting
import Foundation
import Testing

/// Call sites written for realm-swift compile and behave the same: `beginWrite()` without `try`,
/// the types nested in `Realm`, and the schema's member names.
@Suite struct RealmAPIShapeTests {
    // MARK: beginWrite

    @Test func beginWriteNeedsNoTryAndCommitWriteKeepsTheChanges() throws {
        let t = try TestRealm(objectTypes: [Dog.self, Person.self, Address.self])
        let realm = try t.open()
        realm.beginWrite()
        #expect(realm.isInWriteTransaction)
        realm.add(Dog(value: ["name": "Rex"]))
        try realm.commitWrite()
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(Dog.self).map(\.name) == ["Rex"])

        realm.beginWrite()
        realm.add(Dog(value: ["name": "Fido"]))
        realm.cancelWrite()
        #expect(realm.objects(Dog.self).count == 1)
    }

    @Test func beginWriteMovesToTheNewestVersionFirst() throws {
        let t = try TestRealm(objectTypes: [Dog.self, Person.self, Address.self])
        let reader = try t.open()
        reader.autorefresh = false
        // Another thread's realm: this thread's `Realm()` is `reader` itself.
        let configuration = t.configuration
        try onAnotherThread {
            let writer = try Realm(configuration: configuration)
            try writer.write { writer.add(Dog(value: ["name": "Rex"])) }
        }
        #expect(reader.objects(Dog.self).isEmpty)
        reader.beginWrite()
        #expect(reader.objects(Dog.self).count == 1)
        reader.cancelWrite()
    }

    @Test func beginWriteInsideAWriteTransactionStopsTheProcess() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let t = try TestRealm(objectTypes: [Dog.self, Person.self, Address.self])
            let realm = try t.open()
            realm.beginWrite()
            realm.beginWrite()
        }
        let output = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(output.contains("The Realm is already in a write transaction"))
    }

    @Test func beginWriteOnAReadOnlyRealmStopsTheProcess() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let t = try TestRealm(objectTypes: [Dog.self, Person.self, Address.self])
            do { _ = try t.open() }
            var configuration = t.configuration
            configuration.readOnly = true
            let realm = try Realm(configuration: configuration)
            realm.beginWrite()
        }
        let output = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(output.contains("Can't perform transactions on a read-only Realm"))
    }

    // MARK: Types nested in Realm

    @Test func updatePolicyIsNestedInRealm() throws {
        let t = try TestRealm(objectTypes: [Person.self, Dog.self, Address.self])
        let realm = try t.open()
        let policy: Realm.UpdatePolicy = .modified
        try realm.write {
            realm.add(Person(value: ["name": "Ann", "age": 30]))
            realm.add(Person(value: ["name": "Ann", "age": 31]), update: policy)
            realm.create(Person.self, value: ["name": "Ann", "age": 32], update: Realm.UpdatePolicy.all)
        }
        #expect(realm.objects(Person.self).map(\.age) == [32])
        #expect(Realm.UpdatePolicy(rawValue: 1) == .error && Realm.UpdatePolicy.all.rawValue == 2 && Realm.UpdatePolicy.modified.rawValue == 3)
    }

    @Test func openBehaviorIsNestedInRealm() async throws {
        let t = try TestRealm(objectTypes: [Dog.self, Person.self, Address.self])
        let behaviors: [Realm.OpenBehavior] = [.never, .once, .always]
        for behavior in behaviors {
            // A local realm opens at once whatever the behaviour.
            let realm = try await Realm(configuration: t.configuration, downloadBeforeOpen: behavior)
            #expect(realm.isEmpty)
        }
    }

    @Test func asyncOpenReturnsARealmAsyncOpenTask() async throws {
        let t = try TestRealm(objectTypes: [Dog.self, Person.self, Address.self])
        let queue = DispatchQueue(label: "open")
        let opened: Bool = await withCheckedContinuation { done in
            let task: Realm.AsyncOpenTask = Realm.asyncOpen(configuration: t.configuration, callbackQueue: queue) { result in
                done.resume(returning: (try? result.get()) != nil)
            }
            task.addProgressNotification(queue: queue) { _ in }
        }
        #expect(opened)
    }

    // MARK: Schema

    @Test func schemaListsEveryObjectSchemaByRealmSwiftsNames() throws {
        let t = try TestRealm(objectTypes: [Person.self, Dog.self, Address.self])
        let realm = try t.open()
        let schema = realm.schema
        #expect(schema.objectSchema.map(\.className) == ["Address", "Dog", "Person"])
        let person = try #require(schema["Person"])
        #expect(schema["Cat"] == nil)
        #expect(person.className == "Person")
        #expect(ObjectIdentifier(person.objectClass) == ObjectIdentifier(Person.self))
        #expect(!person.isEmbedded && !person.isAsymmetric)
        #expect(schema["Address"]?.isEmbedded == true)
        #expect(person.primaryKeyProperty?.name == "name")
        #expect(person.properties.map(\.name) == ["name", "age", "height", "dogs", "tags", "scores", "address", "nicknames"])
        #expect(person.description.contains("name: string (primary key)"))
        #expect(schema.description.contains("Dog {"))
    }

    @Test func propertiesTellTheirTypeOptionalityAndTarget() throws {
        let t = try TestRealm(objectTypes: [Person.self, Dog.self, Address.self])
        let person = try #require(try t.open().schema["Person"])

        let age = try #require(person["age"])
        #expect(age.type == .int && !age.isOptional && !age.isArray && !age.isSet && !age.isMap)
        #expect(age.objectClassName == nil)
        #expect(age.columnName == "age")
        #expect(person["height"]?.isOptional == true)
        #expect(person["height"]?.type == .double)

        let dogs = try #require(person["dogs"])
        #expect(dogs.type == .object && dogs.isArray && dogs.objectClassName == "Dog")
        #expect(person["tags"]?.isSet == true && person["tags"]?.type == .string)
        #expect(person["scores"]?.isMap == true && person["scores"]?.type == .int)
        #expect(person["address"]?.objectClassName == "Address")
        #expect(person["nicknames"].map(\.description) == "nicknames: List<string>")
        #expect(person["unknown"] == nil)

        let dog = try #require(try t.open().schema["Dog"])
        #expect(dog["_id"]?.type == .objectId)
        #expect(dog["owner"]?.isOptional == true)
        // realm-swift's case names, in an exhaustive switch as apps write one.
        func name(_ type: PropertyType) -> String {
            switch type {
            case .int: "int"
            case .bool: "bool"
            case .float: "float"
            case .double: "double"
            case .UUID: "uuid"
            case .string: "string"
            case .data: "data"
            case .any: "any"
            case .date: "date"
            case .objectId: "objectId"
            case .decimal128: "decimal128"
            case .object: "object"
            case .linkingObjects: "linkingObjects"
            }
        }
        #expect(name(dog["_id"]!.type) == "objectId")
        // The stored names stay Atoll's; linking objects are never a stored type.
        #expect(PropertyType(storedName: "uuid") == .UUID && PropertyType(storedName: "mixed") == .any)
        #expect(PropertyType(storedName: "linkingObjects") == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PropertyType.self, from: Data(#""linkingObjects""#.utf8)) }
    }
}
