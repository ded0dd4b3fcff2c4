import Atoll
import AtollTesting
import Foundation
import Testing

@Suite struct CollectionQueryTests {
    private func ownerWithDogs(_ realm: Realm) throws -> Person {
        let ann = Person(value: ["name": "Ann"])
        for (name, age) in [("Rex", 5), ("Ace", 1), ("Max", 3), ("Bo", 1)] {
            ann.dogs.append(Dog(value: ["name": name, "age": age]))
        }
        try realm.write {
            realm.add(ann)
            realm.add(Dog(value: ["name": "Stray", "age": 1]))
        }
        return ann
    }

    @Test func listQueryKeepsListOrderAndOnlyTheListsObjects() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let ann = try ownerWithDogs(realm)
        #expect(ann.dogs.where { $0.age < 4 }.map(\.name) == ["Ace", "Max", "Bo"])
        #expect(ann.dogs.filter("age == 1").map(\.name) == ["Ace", "Bo"])
        #expect(realm.objects(Dog.self).filter("age == 1").count == 3)
    }

    @Test func listSortedAndDistinct() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let ann = try ownerWithDogs(realm)
        #expect(ann.dogs.sorted(byKeyPath: "name").map(\.name) == ["Ace", "Bo", "Max", "Rex"])
        #expect(ann.dogs.sorted(by: \.age, ascending: false).map(\.name) == ["Rex", "Max", "Ace", "Bo"])
        #expect(ann.dogs.distinct(by: ["age"]).map(\.name) == ["Rex", "Ace", "Max"])
    }

    @Test func listResultsAreLive() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let ann = try ownerWithDogs(realm)
        let young = ann.dogs.where { $0.age < 2 }
        #expect(young.count == 2)
        try realm.write {
            ann.dogs.insert(Dog(value: ["name": "Pup", "age": 0]), at: 0)
            ann.dogs.remove(at: 2)  // Ace
        }
        #expect(young.map(\.name) == ["Pup", "Bo"])
    }

    @Test func resultsMadeBeforeTheFirstObjectSeeIt() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var configuration = folder.configuration()
        // Named: the test binary has two classes called Task (SeedSampleTests has one), and the
        // default schema would hold whichever registered first.
        configuration.objectTypes = [Task.self]
        let realm = try Realm(configuration: configuration)
        let tasks = realm.objects(Task.self).where { $0.owner == "Sam" }
        #expect(tasks.isEmpty)
        try realm.write { realm.add(Task(value: ["name": "Pack", "owner": "Sam"])) }
        #expect(tasks.count == 1)
    }
}
