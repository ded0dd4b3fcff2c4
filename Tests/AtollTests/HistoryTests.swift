@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// Every committed write records the instructions that describe it, addressed by type and
/// primary key (never by local row), in the same transaction as the data.
@Suite struct HistoryTests {
    private func lastInstructions(_ realm: Realm) throws -> [Instruction] {
        try #require(try realm.historyChangesets().last).instructions
    }

    private let ann = ObjectID(type: "Person", primaryKey: .string("Ann"))

    @Test func creatingAnObjectRecordsItsFieldsAndCollections() throws {
        let t = try TestRealm(recordingHistory: true)
        let realm = try t.open()
        let person = Person(value: ["name": "Ann", "age": 30])
        person.tags.insert("admin")
        person.nicknames.append("Annie")
        person.scores["math"] = 9
        try realm.write { realm.add(person) }
        let instructions = try lastInstructions(realm)
        #expect(instructions.first == .createObject(ann))
        #expect(instructions.contains(.set(ann, path: [.property("age")], value: .int(30))))
        #expect(instructions.contains(.set(ann, path: [.property("height")], value: .null)))
        #expect(instructions.contains(.setInsert(ann, path: [.property("tags")], value: .string("admin"))))
        #expect(instructions.contains(.listInsert(ann, path: [.property("nicknames")], index: 0, value: .string("Annie"))))
        #expect(instructions.contains(.set(ann, path: [.property("scores"), .key("math")], value: .int(9))))
        #expect(!instructions.contains { if case .set(_, let path, _) = $0 { path == [.property("name")] } else { false } },
                "the primary key is part of the object's identity, not a field set")
    }

    @Test func listOperationsRecordPositions() throws {
        let t = try TestRealm(recordingHistory: true)
        let realm = try t.open()
        let person = Person(value: ["name": "Ann"])
        try realm.write { realm.add(person) }
        try realm.write {
            person.nicknames.append(objectsIn: ["a", "b", "c"])
            person.nicknames.move(from: 0, to: 2)
            person.nicknames[1] = "B"
            person.nicknames.remove(at: 0)
            person.nicknames.removeAll()
        }
        let path: [PathElement] = [.property("nicknames")]
        #expect(try lastInstructions(realm) == [
            .listInsert(ann, path: path, index: 0, value: .string("a")),
            .listInsert(ann, path: path, index: 1, value: .string("b")),
            .listInsert(ann, path: path, index: 2, value: .string("c")),
            .listMove(ann, path: path, from: 0, to: 2),
            .set(ann, path: path + [.index(1)], value: .string("B")),
            .listErase(ann, path: path, index: 0),
            .clear(ann, path: path),
        ])
        #expect(Array(person.nicknames).isEmpty)
    }

    @Test func linksAreRecordedByPrimaryKey() throws {
        let t = try TestRealm(recordingHistory: true)
        let realm = try t.open()
        let person = Person(value: ["name": "Ann"])
        let rex = Dog(value: ["name": "Rex"])
        try realm.write { realm.add(person); realm.add(rex) }
        try realm.write {
            rex.owner = person
            person.dogs.append(rex)
        }
        let dog = ObjectID(type: "Dog", primaryKey: .objectId(rex._id))
        let link = Value.link(ObjectLink(objectType: "Person", primaryKey: .string("Ann")))
        #expect(try lastInstructions(realm) == [
            .set(dog, path: [.property("owner")], value: link),
            .listInsert(ann, path: [.property("dogs")], index: 0, value: .link(ObjectLink(objectType: "Dog", primaryKey: .objectId(rex._id)))),
        ])
    }

    @Test func embeddedObjectsAreAddressedFromTheirOwner() throws {
        let t = try TestRealm(recordingHistory: true)
        let realm = try t.open()
        let person = Person(value: ["name": "Ann"])
        try realm.write { realm.add(person) }
        try realm.write { person.address = Address(value: ["street": "Main", "city": "Oslo"]) }
        #expect(try lastInstructions(realm) == [
            .set(ann, path: [.property("address")], value: .object(["street": .string("Main"), "city": .string("Oslo")])),
        ])
        try realm.write { person.address?.city = "Bergen" }
        #expect(try lastInstructions(realm) == [.set(ann, path: [.property("address"), .property("city")], value: .string("Bergen"))])
    }

    @Test func deletingRecordsOneEraseAndTakesEmbeddedChildren() throws {
        let t = try TestRealm(recordingHistory: true)
        let realm = try t.open()
        let person = Person(value: ["name": "Ann"])
        person.address = Address(value: ["city": "Oslo"])
        try realm.write { realm.add(person) }
        try realm.write { realm.delete(person) }
        #expect(try lastInstructions(realm) == [.eraseObject(ann)])
        #expect(realm.objects(Person.self).isEmpty)
    }

    @Test func aRolledBackWriteRecordsNothing() throws {
        let t = try TestRealm(recordingHistory: true)
        let realm = try t.open()
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        let before = try realm.historyChangesets().count
        realm.beginWrite()
        realm.add(Dog(value: ["name": "Gone"]))
        realm.cancelWrite()
        #expect(try realm.historyChangesets().count == before)
        #expect(try realm.historyChangesets().map(\.version) == Array(1...Int64(before)))
    }
}
