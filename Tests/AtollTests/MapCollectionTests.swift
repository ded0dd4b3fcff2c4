import Atoll
import AtollTesting
import Foundation
import Testing

/// `Map` as realm-swift has it: observable by key, mergeable, freezable, and a map of objects is
/// queried like results.
@Suite struct MapCollectionTests {
    @Test func mergeKeysAndFreeze() throws {
        let t = try TestRealm()
        let realm = try t.open()
        try realm.write { realm.create(Person.self, value: ["name": "Ali", "scores": ["a": 1, "b": 2]]) }
        let ali = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Ali"))
        try realm.write {
            ali.scores.merge(["b": 10, "c": 3]) { old, new in old + new }
            ali.scores.merge([(key: "d", value: 4)]) { _, new in new }
        }
        #expect(ali.scores.sortedKeys == ["a", "b", "c", "d"])
        #expect(ali.scores["b"] == 12 && ali.scores.contains(key: "d") && !ali.scores.contains(key: "z"))
        let frozen = ali.scores.freeze()
        try realm.write { ali.scores.removeAll() }
        #expect(frozen.isFrozen && frozen.count == 4 && ali.scores.isEmpty)
        #expect(frozen.thaw()?.isEmpty == true)
        let unmanaged = Map<String, Int>()
        unmanaged.merge(["x": 1]) { $1 }
        #expect(unmanaged["x"] == 1)
    }

    @Test func observersGetKeysDeletedInsertedAndModified() throws {
        let t = try TestRealm()
        let realm = try t.open()
        try realm.write { realm.create(Person.self, value: ["name": "Ali", "scores": ["a": 1, "b": 2]]) }
        let ali = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Ali"))
        let seen = Recorder<String>()
        let token = ali.scores.observe { (change: RealmMapChange<Map<String, Int>>) in
            switch change {
            case .initial(let map): seen.append("initial \(map.count)")
            case .update(let map, let d, let i, let m): seen.append("\(map.count) d\(d) i\(i) m\(m)")
            case .error: seen.append("error")
            }
        }
        try realm.write {
            ali.scores["a"] = 5
            ali.scores["c"] = 3
            ali.scores.removeObject(for: "b")
        }
        try realm.write { ali.age = 3 }  // the owner changed, not the map
        try realm.write { ali.scores["a"] = 5 }  // the same value
        #expect(seen.all == ["initial 2", "2 d[\"b\"] i[\"c\"] m[\"a\"]"])
        token.invalidate()
    }

    @Test func aMapOfObjectsIsQueriedAndSeesItsObjectsChange() throws {
        let t = try TestRealm()
        let realm = try t.open()
        try realm.write {
            let rex = realm.create(Dog.self, value: ["name": "Rex", "age": 3])
            let fido = realm.create(Dog.self, value: ["name": "Fido", "age": 7])
            realm.create(AllTypes.self, value: ["dogMap": ["r": rex, "f": fido]])
        }
        let owner = try #require(realm.objects(AllTypes.self).first)
        #expect(owner.dogMap.filter("age > 5").map(\.name) == ["Fido"])
        #expect(owner.dogMap.sorted(byKeyPath: "age").map(\.name) == ["Rex", "Fido"])
        #expect(owner.dogMap.where { $0.name == "Rex" }.count == 1)
        #expect(owner.dogMap.max(ofProperty: "age") == 7)
        let seen = Recorder<String>()
        let token = owner.dogMap.observe(keyPaths: ["age"]) { change in
            if case .update(_, let d, let i, let m) = change { seen.append("d\(d) i\(i) m\(m)") }
        }
        let rex = try #require(realm.objects(Dog.self).filter("name == 'Rex'").first)
        try realm.write { rex.name = "Rexy" }  // not a watched key path
        try realm.write { rex.age = 4 }
        #expect(seen.all == ["d[] i[] m[\"r\"]"])
        token.invalidate()
    }
}
