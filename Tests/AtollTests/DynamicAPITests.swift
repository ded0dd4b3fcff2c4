@_spi(Testing) import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

final class DynDog: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted var owner: DynOwner?
}

final class DynOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var nickname: String?
    @Persisted var dogs: List<DynDog>
    @Persisted var tags: List<String>
    @Persisted var favourites: MutableSet<DynDog>
    @Persisted var luckyNumbers: MutableSet<Int>
    @Persisted var dogsByRoom: Map<String, DynDog?>
    @Persisted var scores: Map<String, Double>
    override class func propertiesMapping() -> [String: String] { ["nickname": "nick_name"] }
}

@Suite struct DynamicAPITests {
    private func realm() throws -> (TestRealm, Realm) {
        let t = try TestRealm(objectTypes: [DynDog.self, DynOwner.self])
        let realm = try t.open()
        try realm.write {
            let ann = DynOwner(value: ["id": 1, "name": "Ann", "tags": ["a", "b"]])
            realm.add(ann)
            for (name, age) in [("Rex", 2), ("Fido", 5), ("Lassie", 9)] {
                let dog = DynDog(value: ["name": name, "age": age, "owner": ann])
                realm.add(dog)
                ann.dogs.append(dog)
            }
        }
        return (t, realm)
    }

    @Test func dynamicObjectsReadEveryObjectOfATypeByName() throws {
        let (t, realm) = try realm()
        _ = t
        let dogs = realm.dynamicObjects("DynDog")
        #expect(dogs.count == 3)
        #expect(dogs.map { $0["name"] as? String } == ["Rex", "Fido", "Lassie"])
        #expect(dogs.map { $0["age"] as? Int } == [2, 5, 9])
        // Dynamic member lookup reads the same values.
        #expect(dogs.first?.name as? String == "Rex")
        #expect(dogs.first?.objectSchema.name == "DynDog")
    }

    @Test func dynamicResultsFilterSortAndStayLive() throws {
        let (t, realm) = try realm()
        _ = t
        let old = realm.dynamicObjects("DynDog").filter("age > 3").sorted(byKeyPath: "age", ascending: false)
        #expect(old.map { $0["name"] as! String } == ["Lassie", "Fido"])
        try realm.write { realm.add(DynDog(value: ["name": "Buddy", "age": 12])) }
        #expect(old.map { $0["name"] as! String } == ["Buddy", "Lassie", "Fido"])
        #expect(realm.dynamicObjects("DynDog").count == 4)
    }

    @Test func dynamicObjectForPrimaryKeyFindsTheObjectOrNil() throws {
        let (t, realm) = try realm()
        _ = t
        let fido = try #require(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Fido"))
        #expect(fido["age"] as? Int == 5)
        #expect(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Nobody") == nil)
        #expect(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 1)?["name"] as? String == "Ann")
        // The same row as the typed accessor.
        #expect(fido.isSameObject(as: realm.object(ofType: DynDog.self, forPrimaryKey: "Fido")))
    }

    @Test func settingBySubscriptInAWriteChangesTheStoredObject() throws {
        let (t, realm) = try realm()
        _ = t
        let rex = try #require(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Rex"))
        try realm.write {
            rex["age"] = 3
            rex.age = 4
        }
        #expect(realm.object(ofType: DynDog.self, forPrimaryKey: "Rex")?.age == 4)
        #expect(rex["age"] as? Int == 4)
    }

    @Test func mappedPropertiesReadByTheirSwiftOrStoredName() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try #require(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 1))
        #expect(ann["nickname"] == nil)
        try realm.write { ann["nickname"] = "Annie" }
        #expect(ann["nick_name"] as? String == "Annie")
        #expect(realm.objects(DynOwner.self).first?.nickname == "Annie")
        try realm.write { ann["nickname"] = nil }
        #expect(realm.objects(DynOwner.self).first?.nickname == nil)
    }

    @Test func aWrongValueOrUnknownNameInAWriteFailsTheWrite() throws {
        let (t, realm) = try realm()
        _ = t
        let rex = try #require(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Rex"))
        let wrongType = try #require(throws: Realm.Error.self) { try realm.write { rex["age"] = "old" } }
        #expect(wrongType.code == .invalidValue)
        #expect(wrongType.message.contains("DynDog.age"))
        let unknown = try #require(throws: Realm.Error.self) { try realm.write { rex["colour"] = "brown" } }
        #expect(unknown.code == .invalidValue)
        #expect(unknown.message.contains("Invalid property name 'colour'") && unknown.message.contains("DynDog"))
        let nilForRequired = try #require(throws: Realm.Error.self) { try realm.write { rex["age"] = nil } }
        #expect(nilForRequired.code == .invalidValue)
        #expect(rex["age"] as? Int == 2, "nothing was written")
    }

    @Test func anUnknownNameOrAWriteOutsideATransactionStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let t = try! TestRealm(objectTypes: [DynDog.self, DynOwner.self])
            let realm = try! t.open()
            try! realm.write { realm.add(DynDog(value: ["name": "Rex"])) }
            _ = realm.dynamicObjects("DynDog").first!["colour"]
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Invalid property name 'colour' for class 'DynDog'"))
        let outside = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let t = try! TestRealm(objectTypes: [DynDog.self, DynOwner.self])
            let realm = try! t.open()
            try! realm.write { realm.add(DynDog(value: ["name": "Rex"])) }
            realm.dynamicObjects("DynDog").first!["age"] = 3
        }
        let outsideMessage = String(decoding: outside?.standardErrorContent ?? [], as: UTF8.self)
        #expect(outsideMessage.contains("outside of a write transaction"))
        await #expect(processExitsWith: .failure) {
            let t = try! TestRealm(objectTypes: [DynDog.self, DynOwner.self])
            _ = try! t.open().dynamicObjects("NoSuchType")
        }
    }

    @Test func linksReadAsDynamicObjectsAndAreSetByObject() throws {
        let (t, realm) = try realm()
        _ = t
        let rex = try #require(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Rex"))
        let owner = try #require(rex["owner"] as? DynamicObject)
        #expect(owner["name"] as? String == "Ann")
        try realm.write {
            let bob = realm.dynamicCreate("DynOwner", value: ["id": 2, "name": "Bob"])
            rex["owner"] = bob
        }
        #expect(realm.object(ofType: DynDog.self, forPrimaryKey: "Rex")?.owner?.name == "Bob")
        try realm.write { rex["owner"] = nil }
        #expect(realm.object(ofType: DynDog.self, forPrimaryKey: "Rex")?.owner == nil)
        // A link must point at an object of the property's type.
        let error = try #require(throws: Realm.Error.self) {
            try realm.write { rex["owner"] = realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Fido") }
        }
        #expect(error.code == .invalidValue)
    }

    @Test func listsOfObjectsAndOfValuesAreLiveAndWritable() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try #require(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 1))
        let dogs = try #require(ann["dogs"] as? List<DynamicObject>)
        #expect(dogs.map { $0["name"] as! String } == ["Rex", "Fido", "Lassie"])
        #expect(ann.dynamicList("dogs").count == 3)
        let tags = try #require(ann["tags"] as? List<String>)
        #expect(Array(tags) == ["a", "b"])
        try realm.write {
            dogs.remove(at: 0)
            dogs.append(realm.dynamicCreate("DynDog", value: ["name": "Max", "age": 1]))
            tags.append("c")
        }
        let typed = try #require(realm.objects(DynOwner.self).first)
        #expect(typed.dogs.map(\.name) == ["Fido", "Lassie", "Max"])
        #expect(Array(typed.tags) == ["a", "b", "c"])
        // The typed object's list, read dynamically.
        #expect(typed.dynamicList("dogs").map { $0["name"] as! String } == ["Fido", "Lassie", "Max"])
        #expect(dogs.filter("age > 4").count == 2)
        // Assigning an array replaces the contents.
        try realm.write { ann["tags"] = ["x"] }
        #expect(Array(typed.tags) == ["x"])
    }

    @Test func setsAndMapsReadAndWriteByName() throws {
        let (t, realm) = try realm()
        _ = t
        let ann = try #require(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 1))
        let fido = try #require(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Fido"))
        try realm.write {
            ann.dynamicMutableSet("favourites").insert(fido)
            (ann["luckyNumbers"] as! MutableSet<Int>).insert(7)
            let rooms: Map<String, DynamicObject?> = ann.dynamicMap("dogsByRoom")
            rooms["kitchen"] = fido
            (ann["scores"] as! Map<String, Double>)["agility"] = 9.5
        }
        let typed = try #require(realm.objects(DynOwner.self).first)
        #expect(typed.favourites.map(\.name) == ["Fido"])
        #expect(Array(typed.luckyNumbers) == [7])
        #expect(typed.dogsByRoom["kitchen"]??.name == "Fido")
        #expect(typed.scores["agility"] == 9.5)
        #expect((ann["dogsByRoom"] as? Map<String, DynamicObject?>)?["kitchen"]??["age"] as? Int == 5)
        #expect(ann.dynamicMutableSet("favourites").contains(fido))
    }

    @Test func dynamicCreateAddsAnObjectAndUpdatesByPrimaryKey() throws {
        let (t, realm) = try realm()
        _ = t
        try realm.write {
            realm.dynamicCreate("DynDog", value: ["name": "Bolt", "age": 4])
            realm.dynamicCreate("DynDog", value: ["Pongo", 6])
        }
        #expect(realm.object(ofType: DynDog.self, forPrimaryKey: "Bolt")?.age == 4)
        #expect(realm.object(ofType: DynDog.self, forPrimaryKey: "Pongo")?.age == 6)
        try realm.write { realm.dynamicCreate("DynDog", value: ["name": "Bolt", "age": 7], update: .modified) }
        #expect(realm.object(ofType: DynDog.self, forPrimaryKey: "Bolt")?.age == 7)
        let duplicate = try #require(throws: Realm.Error.self) {
            try realm.write { realm.dynamicCreate("DynDog", value: ["name": "Bolt"]) }
        }
        #expect(duplicate.code == .primaryKeyExists)
        #expect(realm.objects(DynDog.self).count == 5)
    }

    @Test func dynamicObjectsAreDeletedAndInvalidated() throws {
        let (t, realm) = try realm()
        _ = t
        let rex = try #require(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Rex"))
        try realm.write { realm.delete(rex) }
        #expect(rex.isInvalidated)
        #expect(realm.objects(DynDog.self).count == 2)
        #expect(realm.objects(DynOwner.self).first?.dogs.count == 2)
    }

    @Test func dynamicResultsAndObjectsNotify() throws {
        let (t, realm) = try realm()
        _ = t
        let seen = Recorder<String>()
        let token = realm.dynamicObjects("DynDog").observe { change in
            switch change {
            case .initial(let dogs): seen.append("initial \(dogs.count)")
            case .update(let dogs, _, let insertions, _): seen.append("update \(dogs.count) \(insertions)")
            case .error: seen.append("error")
            }
        }
        try realm.write { realm.dynamicCreate("DynDog", value: ["name": "Bolt"]) }
        #expect(seen.all == ["initial 3", "update 4 [3]"])
        token.invalidate()

        let rex = try #require(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Rex"))
        let changes = Recorder<String>()
        let objectToken = rex.observe { (change: ObjectChange<DynamicObject>) in
            if case .change(let object, let properties) = change {
                changes.append("\(properties.map(\.name)) \(object["age"] as? Int ?? -1) \(properties.first?.newValue as? Int ?? -1)")
            }
        }
        try realm.write { rex["age"] = 8 }
        #expect(changes.all == ["[\"age\"] 8 8"])
        objectToken.invalidate()
    }

    @Test func frozenDynamicObjectsReadTheirSnapshot() throws {
        let (t, realm) = try realm()
        _ = t
        let rex = try #require(realm.dynamicObject(ofType: "DynDog", forPrimaryKey: "Rex"))
        let frozen = rex.freeze()
        try realm.write { rex["age"] = 10 }
        #expect(frozen.isFrozen)
        #expect(frozen["age"] as? Int == 2)
        #expect(frozen.thaw()?["age"] as? Int == 10)
    }
}

/// Writes by name sync as typed writes do.
@MainActor @Suite(.serialized) struct DynamicSyncTests {
    private func open(_ user: User, _ behavior: Realm.OpenBehavior) async throws -> Realm {
        var configuration = user.configuration(partitionValue: "shire")
        configuration.objectTypes = [SyncedTask.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: behavior)
    }

    @Test func dynamicWritesReachAnotherDevice() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let realmA = try await open(frodo, .never)
            let id = ObjectId.generate()
            try realmA.write {
                let task = realmA.dynamicCreate("SyncedTask", value: ["_id": id, "name": "Carry the ring", "owner": "Frodo"] as [String: Any])
                task["done"] = true
            }
            try realmA.write { realmA.dynamicObject(ofType: "SyncedTask", forPrimaryKey: id)?["name"] = "Carry the ring home" }
            try await realmA.syncSession!.wait(for: .upload)
            let realmB = try await open(sam, .always)
            let task = try #require(realmB.object(ofType: SyncedTask.self, forPrimaryKey: id))
            #expect(task.name == "Carry the ring home" && task.done && task.owner == "Frodo")
            #expect(realmB.dynamicObjects("SyncedTask").filter("done == true").count == 1)
        }
    }
}
