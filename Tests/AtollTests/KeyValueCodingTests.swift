import Atoll
import AtollTesting
import Foundation
import Testing

enum KVCMood: String, PersistableEnum { case calm, grumpy }

final class KVCOwner: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var city = ""
    @Persisted var age = 0
    @Persisted var nickname: String?
    @Persisted var mood = KVCMood.calm
    @Persisted var pets: List<KVCPet>
    @Persisted var luckyNumbers: List<Int>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var petsByName: Map<String, KVCPet?>
    @Persisted var favourite: KVCPet?
}

final class KVCPet: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted var weight: Double?
    @Persisted var owner: KVCOwner?
}

/// Key-value coding on objects and on the bulk forms of `Results`, `List`, `MutableSet` and `Map`.
@Suite struct KeyValueCodingTests {
    private func realm() throws -> (TestRealm, Realm) {
        let t = try TestRealm(objectTypes: [KVCOwner.self, KVCPet.self])
        return (t, try t.open())
    }

    /// Ann with two pets (Rex 3, Tom 5), in a realm.
    private func ann(in realm: Realm) throws -> KVCOwner {
        let ann = KVCOwner(value: ["name": "Ann", "city": "Montreal", "age": 40, "mood": "grumpy",
                                   "pets": [["name": "Rex", "age": 3, "weight": 12.5], ["name": "Tom", "age": 5]],
                                   "luckyNumbers": [7, 13], "tags": ["a", "b"], "scores": ["math": 90]])
        try realm.write { realm.add(ann) }
        return ann
    }

    // MARK: Objects

    @Test func valueForKeyReadsEveryKindOfPropertyOfUnmanagedAndManagedObjects() throws {
        let (t, realm) = try realm()
        _ = t
        let unmanaged = KVCOwner(value: ["name": "Bo", "age": 7, "mood": KVCMood.grumpy])
        let managed = try ann(in: realm)
        for object in [unmanaged, managed] {
            #expect(object.value(forKey: "name") as? String == object.name)
            #expect(object.value(forKey: "age") as? Int == object.age)
            #expect(object.value(forKey: "nickname") == nil)
            // An enum reads as its raw value, as Realm's Objective-C bridge gives it.
            #expect(object.value(forKey: "mood") as? String == "grumpy")
            #expect((object.value(forKey: "luckyNumbers") as? List<Int>) === object.luckyNumbers)
            #expect(object["name"] as? String == object.name)
        }
        #expect((managed["pets"] as? List<KVCPet>)?.map(\.name) == ["Rex", "Tom"])
        #expect(managed.value(forKey: "favourite") == nil)
    }

    @Test func setValueForKeyConvertsLikeObjectValueDoes() throws {
        let (t, realm) = try realm()
        _ = t
        let owner = KVCOwner()
        owner.setValue("Cy", forKey: "name")
        owner.setValue("calm", forKey: "mood")
        owner.setValue(["name": "Fido", "age": 2], forKey: "favourite")
        owner.setValue([1, 2, 3], forKey: "luckyNumbers")
        owner["nickname"] = "C"
        #expect(owner.name == "Cy" && owner.mood == .calm && owner.favourite?.name == "Fido")
        #expect(Array(owner.luckyNumbers) == [1, 2, 3] && owner.nickname == "C")
        try realm.write { realm.add(owner) }
        try realm.write {
            owner.setValue(41, forKey: "age")
            owner.setValue(KVCMood.grumpy, forKey: "mood")
            owner["nickname"] = nil
            owner.setValue(["name": "Rex", "age": 9], forKey: "favourite")
        }
        let read = try #require(realm.object(ofType: KVCOwner.self, forPrimaryKey: "Cy"))
        #expect(read.age == 41 && read.mood == .grumpy && read.nickname == nil && read.favourite?.age == 9)
    }

    @Test func aWrongTypeOnAManagedObjectFailsTheWriteAndWritesNothing() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try ann(in: realm)
        let error = try #require(throws: Realm.Error.self) {
            try realm.write {
                ann.city = "Toronto"
                ann.setValue("forty", forKey: "age")
            }
        }
        #expect(error.code == .invalidValue)
        #expect(error.message.contains("'KVCOwner.age'") && error.message.contains("forty"))
        #expect(ann.city == "Montreal" && ann.age == 40)
        let nilForRequired = try #require(throws: Realm.Error.self) { try realm.write { ann["city"] = nil } }
        #expect(nilForRequired.code == .invalidValue)
    }

    @Test func anUnknownKeyOnAManagedObjectFailsTheWrite() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try ann(in: realm)
        let error = try #require(throws: Realm.Error.self) { try realm.write { ann.setValue("x", forKey: "colour") } }
        #expect(error.code == .invalidValue)
        #expect(error.message.contains("'colour'") && error.message.contains("KVCOwner"))
    }

    @Test func anUnknownKeyOrAWrongTypeOnAnUnmanagedObjectStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = KVCOwner().value(forKey: "colour")
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Invalid property name 'colour'"))
        await #expect(processExitsWith: .failure) { KVCOwner().setValue("x", forKey: "colour") }
        await #expect(processExitsWith: .failure) { KVCOwner().setValue("forty", forKey: "age") }
    }

    @Test func settingAManagedObjectOutsideAWriteStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let t = try! TestRealm(objectTypes: [KVCOwner.self, KVCPet.self])
            let realm = try! t.open()
            let owner = KVCOwner(value: ["name": "Ann"])
            try! realm.write { realm.add(owner) }
            owner.setValue(1, forKey: "age")
        }
    }

    @Test func keyPathsFollowLinksAndAggregateCollections() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try ann(in: realm)
        try realm.write { ann.favourite = ann.pets[0]; ann.pets[0].owner = ann }
        #expect(ann.value(forKeyPath: "favourite.name") as? String == "Rex")
        #expect(ann.value(forKeyPath: "favourite.owner.city") as? String == "Montreal")
        #expect(ann.value(forKeyPath: "pets.name") as? [String] == ["Rex", "Tom"])
        #expect(ann.value(forKeyPath: "pets.@count") as? Int == 2)
        #expect(ann.value(forKeyPath: "pets.@sum.age") as? Int == 8)
        #expect(ann.value(forKeyPath: "pets.@avg.age") as? Double == 4)
        #expect(ann.value(forKeyPath: "pets.@max.age") as? Int == 5)
        #expect(ann.value(forKeyPath: "scores.math") as? Int == 90)
        try realm.write { ann.setValue(4, forKeyPath: "favourite.age") }
        #expect(ann.pets[0].age == 4)
        try realm.write { ann.setValue(9, forKeyPath: "pets.age") }
        #expect(ann.pets.map(\.age) == [9, 9])
    }

    @Test func dictionaryWithValuesAndSetValuesForKeysWorkByName() throws {
        let owner = KVCOwner(value: ["name": "Di", "age": 30])
        let fields = owner.dictionaryWithValues(forKeys: ["name", "age", "nickname"])
        #expect(fields["name"] as? String == "Di" && fields["age"] as? Int == 30 && fields["nickname"] is NSNull)
        owner.setValuesForKeys(["age": 31, "nickname": NSNull(), "city": "Oslo"])
        #expect(owner.age == 31 && owner.nickname == nil && owner.city == "Oslo")
        let names = owner.objectSchema.properties.map(\.name)
        #expect(owner.dictionaryWithValues(forKeys: names).count == names.count)
    }

    // MARK: Results

    @Test func resultsValueForKeyGivesEachObjectsValueInOrder() throws {
        let (t, realm) = try realm()
        _ = t
        _ = try ann(in: realm)
        let pets = realm.objects(KVCPet.self).sorted(byKeyPath: "name")
        #expect(pets.value(forKey: "name") as? [String] == ["Rex", "Tom"])
        let weights = try #require(pets.value(forKey: "weight") as? [Any])
        #expect(weights.first as? Double == 12.5 && weights.last is NSNull)
        #expect((pets.value(forKey: "self") as? [KVCPet])?.map(\.age) == [3, 5])
        #expect(realm.objects(KVCOwner.self).value(forKey: "mood") as? [String] == ["grumpy"])
        #expect(pets.filter("age > 10").value(forKey: "name") as? [String] == [])
    }

    @Test func resultsSetValueSetsEveryObjectEvenOnesTheChangeTakesOut() throws {
        let (t, realm) = try realm()
        _ = t
        try realm.write {
            for (name, city) in [("A", "Montreal"), ("B", "Montreal"), ("C", "Paris")] {
                realm.add(KVCOwner(value: ["name": name, "city": city]))
            }
        }
        let montreal = realm.objects(KVCOwner.self).where { $0.city == "Montreal" }
        try realm.write { montreal.setValue("Toronto", forKey: "city") }
        #expect(montreal.isEmpty)
        #expect(realm.objects(KVCOwner.self).sorted(byKeyPath: "name").map(\.city) == ["Toronto", "Toronto", "Paris"])
    }

    @Test func resultsSetValueWithAWrongTypeOrAnUnknownKeyFailsTheWrite() throws {
        let (t, realm) = try realm()
        _ = t
        _ = try ann(in: realm)
        let pets = realm.objects(KVCPet.self)
        let wrongType = try #require(throws: Realm.Error.self) { try realm.write { pets.setValue("old", forKey: "age") } }
        #expect(wrongType.code == .invalidValue)
        let unknown = try #require(throws: Realm.Error.self) { try realm.write { pets.setValue(1, forKey: "legs") } }
        #expect(unknown.code == .invalidValue && unknown.message.contains("'legs'"))
        #expect(pets.sorted(byKeyPath: "name").map(\.age) == [3, 5])
    }

    @Test func resultsValueForKeyPathFollowsLinksAndAggregates() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try ann(in: realm)
        try realm.write { for pet in ann.pets { pet.owner = ann } }
        let pets = realm.objects(KVCPet.self).sorted(byKeyPath: "age")
        #expect(pets.value(forKeyPath: "owner.name") as? [String] == ["Ann", "Ann"])
        #expect(pets.value(forKeyPath: "@count") as? Int == 2)
        #expect(pets.value(forKeyPath: "@sum.age") as? Int == 8)
        #expect(pets.value(forKeyPath: "@avg.age") as? Double == 4)
        #expect(pets.value(forKeyPath: "@min.age") as? Int == 3)
        #expect(pets.value(forKeyPath: "@max.weight") as? Double == 12.5)
        #expect(pets.filter("age > 10").value(forKeyPath: "@avg.age") is NSNull)
    }

    @Test func resultsValueForAnUnknownKeyStopsTheProgramEvenWhenEmpty() async {
        await #expect(processExitsWith: .failure) {
            let t = try! TestRealm(objectTypes: [KVCOwner.self, KVCPet.self])
            _ = try! t.open().objects(KVCPet.self).value(forKey: "legs")
        }
    }

    // MARK: List, MutableSet, Map

    @Test func listValueForKeyAndSetValueActOnEachElement() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try ann(in: realm)
        let names: [AnyObject] = ann.pets.value(forKey: "name")
        #expect(names as? [String] == ["Rex", "Tom"])
        #expect(ann.pets.value(forKeyPath: "@sum.age") as? [Int] == [8])
        try realm.write { ann.pets.setValue(1, forKey: "age") }
        #expect(realm.objects(KVCPet.self).map(\.age) == [1, 1])
        // A list of values answers "self", for reading and for replacing every element.
        #expect(ann.luckyNumbers.value(forKey: "self") as? [Int] == [7, 13])
        try realm.write { ann.luckyNumbers.setValue(0, forKey: "self") }
        #expect(Array(ann.luckyNumbers) == [0, 0])
        // Unmanaged lists too.
        let unmanaged = List<KVCPet>()
        unmanaged.append(KVCPet(value: ["name": "Zed"]))
        unmanaged.setValue(4, forKey: "age")
        #expect(unmanaged.value(forKey: "age") as? [Int] == [4])
    }

    @Test func mutableSetValueForKeyActsOnEachElement() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try ann(in: realm)
        #expect(Set(ann.tags.value(forKey: "self") as? [String] ?? []) == ["a", "b"])
        let pets = MutableSet<KVCPet>()
        pets.insert(KVCPet(value: ["name": "Zed", "age": 2]))
        #expect(pets.value(forKey: "age") as? [Int] == [2])
        pets.setValue(6, forKey: "age")
        #expect(pets.map(\.age) == [6])
    }

    @Test func mapValueForKeyReadsAnEntryAndSetValueWritesOrRemovesIt() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try ann(in: realm)
        #expect(ann.scores.value(forKey: "math") as? Int == 90)
        #expect(ann.scores.value(forKey: "art") == nil)
        try realm.write {
            ann.scores.setValue(75, forKey: "art")
            ann.scores.setValue(nil, forKey: "math")
            ann.petsByName.setValue(ann.pets[1], forKey: "tom")
        }
        #expect(ann.scores.keys == ["art"] && ann.scores["art"] == 75)
        #expect(ann.petsByName.value(forKeyPath: "tom.age") as? Int == 5)
        let error = try #require(throws: Realm.Error.self) { try realm.write { ann.scores.setValue("high", forKey: "art") } }
        #expect(error.code == .invalidValue)
        #expect(ann.scores["art"] == 75)
    }
}
