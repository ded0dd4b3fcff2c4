@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

@Suite struct StoreTests {
    @Test func schemaDiscoveryFindsEveryPropertyKind() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let schema = try #require(realm.schema["StoreAllTypes"])
        #expect(schema.properties.count == 33)
        #expect(schema.primaryKey == "_id")
        #expect(schema[property: "optInt"]?.isOptional == true)
        #expect(schema[property: "int8"]?.type == .int)
        #expect(schema[property: "decimal"]?.type == .decimal128)
        #expect(schema[property: "intList"]?.collection == .list)
        #expect(schema[property: "optStringList"]?.isOptional == true)
        #expect(schema[property: "stringSet"]?.collection == .set)
        #expect(schema[property: "dogMap"]?.collection == .map)
        #expect(schema[property: "dogMap"]?.objectType == "Dog")
        #expect(schema[property: "link"]?.objectType == "Dog")
        #expect(realm.schema["Address"]?.isEmbedded == true)
        #expect(realm.schema["Task"]?[property: "owner"]?.isIndexed == true)
    }

    @Test func addedObjectIsManagedAndReadBack() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let dog = Dog(value: ["name": "Rex", "age": 3])
        #expect(dog.realm == nil)
        try realm.write { realm.add(dog) }
        #expect(dog.realm != nil)
        let found = try #require(realm.object(ofType: Dog.self, forPrimaryKey: dog._id))
        #expect(found.name == "Rex")
        #expect(found.age == 3)
        #expect(realm.objects(Dog.self).count == 1)
    }

    @Test func everyPropertyKindRoundTrips() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let object = AllTypes()
        object.bool = true; object.int = -5; object.int8 = 8; object.int16 = 16; object.int32 = 32; object.int64 = 64
        object.double = 2.5; object.float = 1.5; object.string = "héllo"; object.date = Date(timeIntervalSince1970: 1000)
        object.data = Data([1, 2, 3]); object.decimal = try Decimal128(string: "1.25")
        object.optInt = 7; object.optString = "x"
        object.intList.append(objectsIn: [3, 1, 2])
        object.optStringList.append(contentsOf: ["a", nil])
        object.stringSet.insert("s")
        object.embedded = Address(value: ["street": "Main", "city": "Springfield"])
        object.embeddedList.append(Address(value: ["street": "Elm"]))
        let rex = Dog(value: ["name": "Rex"])
        object.link = rex
        object.dogList.append(rex)
        object.dogMap["best"] = rex
        try realm.write { realm.add(object) }
        let read = try #require(realm.objects(AllTypes.self).first)
        #expect(read.bool && read.int == -5 && read.int8 == 8 && read.int16 == 16 && read.int32 == 32 && read.int64 == 64)
        #expect(read.double == 2.5 && read.float == 1.5 && read.string == "héllo")
        #expect(read.date == Date(timeIntervalSince1970: 1000) && read.data == Data([1, 2, 3]))
        #expect(read.decimal == (try Decimal128(string: "1.25")))
        #expect(read.optInt == 7 && read.optString == "x" && read.optBool == nil && read.optDate == nil)
        #expect(Array(read.intList) == [3, 1, 2])
        #expect(Array(read.optStringList) == ["a", nil])
        #expect(read.stringSet.contains("s"))
        #expect(read.embedded?.street == "Main" && read.embedded?.city == "Springfield")
        #expect(read.embeddedList.first?.street == "Elm")
        #expect(read.link?.name == "Rex")
        #expect(read.dogList.first?.name == "Rex")
        #expect(read.dogMap["best"]??.name == "Rex")
        #expect(realm.objects(Dog.self).count == 1, "one dog, linked three times")
        #expect(read.objectId == object.objectId && read.uuid == object.uuid)
    }

    @Test func duplicatePrimaryKeyFailsTheWriteAndRollsBack() throws {
        let t = try TestRealm()
        let realm = try t.open()
        try realm.write { realm.add(Person(value: ["name": "Ann"])) }
        #expect(throws: Realm.Error.self) {
            try realm.write {
                realm.add(Person(value: ["name": "Bob"]))
                realm.add(Person(value: ["name": "Ann"]))
            }
        }
        #expect(realm.objects(Person.self).count == 1)
        #expect(!realm.isInWriteTransaction)
    }

    @Test func errorThrownInsideWriteRollsEverythingBack() throws {
        struct Stop: Error {}
        let t = try TestRealm()
        let realm = try t.open()
        #expect(throws: Stop.self) {
            try realm.write {
                realm.add(Dog(value: ["name": "Gone"]))
                throw Stop()
            }
        }
        #expect(realm.objects(Dog.self).isEmpty)
    }

    @Test func updatePoliciesModifyExistingObjects() throws {
        let t = try TestRealm()
        let realm = try t.open()
        try realm.write { realm.add(Person(value: ["name": "Ann", "age": 30])) }
        try realm.write { realm.add(Person(value: ["name": "Ann", "age": 31]), update: .modified) }
        #expect(realm.objects(Person.self).count == 1)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: "Ann")?.age == 31)
        try realm.write { realm.create(Person.self, value: ["name": "Ann", "height": 1.7], update: .modified) }
        let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Ann"))
        #expect(ann.age == 31, "create with a partial dictionary keeps other properties")
        #expect(ann.height == 1.7)
    }

    @Test func deletedObjectIsInvalidatedAndUnlinked() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person(value: ["name": "Ann"])
        let dog = Dog(value: ["name": "Rex"])
        person.dogs.append(dog)
        try realm.write { realm.add(person) }
        try realm.write { realm.delete(dog) }
        #expect(dog.isInvalidated)
        #expect(person.dogs.isEmpty)
    }

    @Test func historyRecordsEveryCommittedTransaction() throws {
        let t = try TestRealm(recordingHistory: true)
        let realm = try t.open()
        let dog = Dog(value: ["name": "Rex"])
        let id = dog._id
        try realm.write { realm.add(dog) }
        try realm.write { dog.age = 4 }
        try realm.write { realm.delete(dog) }
        let history = try realm.historyChangesets()
        #expect(history.count == 3)
        #expect(history[0].instructions.contains(.createObject(ObjectID(type: "Dog", primaryKey: .objectId(id)))))
        #expect(history[1].instructions == [.set(ObjectID(type: "Dog", primaryKey: .objectId(id)), path: [.property("age")], value: .int(4))])
        #expect(history[2].instructions == [.eraseObject(ObjectID(type: "Dog", primaryKey: .objectId(id)))])
    }

    /// A write transaction starts from the newest version: an object another realm deleted since
    /// it was read is gone, and changing it fails the write. Recording the change instead (on a
    /// null key, as once happened) made the server refuse every upload of that client, forever.
    @Test func changingAnObjectDeletedElsewhereFailsTheWriteAndRecordsNothing() throws {
        let t = try TestRealm(recordingHistory: true)
        let realm = try t.open()
        let person = Person(value: ["name": "Ann"])
        try realm.write { realm.add(person) }
        // Another thread's realm deletes Ann; this realm has not refreshed yet.
        let configuration = realm.configuration
        let failures = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            do {
                let other = try Realm(configuration: configuration)
                try other.write { other.delete(other.objects(Person.self)) }
            } catch {
                failures.append("\(error)")
            }
            done.signal()
        }.start()
        done.wait()
        #expect(failures.all.isEmpty)
        // Read before the writes refresh the realm: the other realm's delete is one more version.
        let recorded = try realm.historyChangesets().count + 1
        for change in [{ person.age = 5 }, { person.nicknames.append("Annie") }, { person.tags.insert("x") }, { person.scores["a"] = 1 }] {
            #expect(throws: Realm.Error.self) { try realm.write { change() } }
        }
        #expect(try realm.historyChangesets().count == recorded)
        #expect(person.isInvalidated)
    }
}

enum TaskStatus: String, PersistableEnum {
    case open, inProgress, done
}

final class StatusTask: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var status = TaskStatus.inProgress
    @Persisted var lastStatus: TaskStatus?
}

@Suite struct PersistableEnumTests {
    @Test func enumsPersistByRawValueAndQueryLikeIt() throws {
        let t = try TestRealm(objectTypes: [StatusTask.self])
        let realm = try t.open()
        #expect(realm.schema["StatusTask"]?[property: "status"]?.type == .string)
        try realm.write {
            realm.add(StatusTask())
            realm.add(StatusTask(value: ["status": TaskStatus.done, "lastStatus": TaskStatus.open]))
        }
        let tasks = realm.objects(StatusTask.self)
        #expect(tasks.where { $0.status == .done }.count == 1)
        #expect(tasks.filter("status == 'inProgress'").count == 1)
        #expect(tasks.where { $0.lastStatus == nil }.first?.status == .inProgress)
        #expect(tasks.where { $0.lastStatus == .open }.count == 1)
    }
}
