@_spi(Testing) import Atoll
import AtollTesting
import Foundation
import Observation
import Testing

/// An object passed to `add` becomes an accessor of its new row. Its fields are bound on their
/// first access, as an accessor made for a stored row is, so until then they still hold the values
/// it was made with: every read and write must go to the realm all the same.
@Suite struct AddedObjectTests {
    @Test func readsComeFromTheRealmNotFromTheValuesItWasMadeWith() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let dog = Dog()
        dog.name = "Rex"
        dog.age = 3
        try realm.write { realm.add(dog) }
        // Changed through another accessor before `dog` read any field.
        try realm.write {
            let other = try #require(realm.object(ofType: Dog.self, forPrimaryKey: dog._id))
            other.name = "Max"
            other.age = 4
        }
        #expect(dog.name == "Max")
        #expect(dog.age == 4)
        #expect(dog.value(forKey: "name") as? String == "Max", "key-value coding reads the realm too")
        #expect(dog.realm != nil && !dog.isInvalidated)
    }

    @Test func writesGoToTheRealmBeforeAnyRead() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person()
        person.name = "Ann"
        person.nicknames.append("A")
        try realm.write {
            realm.add(person)
            person.age = 40
            person.nicknames.append("Annie")
        }
        let stored = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Ann"))
        #expect(stored.age == 40)
        #expect(Array(stored.nicknames) == ["A", "Annie"])
        #expect(Array(person.nicknames) == ["A", "Annie"])
        try realm.write { realm.delete(stored) }
        #expect(person.isInvalidated, "deleting the row through another accessor invalidates it")
    }

    @Test func aCodableObjectEncodesWhatTheRealmHolds() throws {
        let t = try TestRealm(objectTypes: [Cafe.self, CafeAddress.self, MenuItem.self, CafeOwner.self])
        let realm = try t.open()
        let cafe = Cafe()
        cafe.name = "Corner"
        try realm.write { realm.add(cafe) }
        try realm.write { realm.objects(Cafe.self).first?.name = "Renamed" }
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(cafe)) as? [String: Any]
        #expect(json?["name"] as? String == "Renamed")
    }

    @Test func aTrackedReadOfAnAddedObjectFiresOnAChange() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let dog = Dog()
        dog.name = "Rex"
        try realm.write { realm.add(dog) }
        let changes = TrackedChanges()
        #expect(changes.track { dog.name } == "Rex")
        try realm.write { realm.objects(Dog.self).first?.name = "Max" }
        #expect(changes.count == 1)
        #expect(changes.track { dog.name } == "Max")
    }
}
