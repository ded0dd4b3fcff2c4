import Atoll
import AtollTesting
import Foundation
import Testing

/// `observe(keyPaths:)` with Swift key paths counts only changes of the named properties.
@Suite struct KeyPathObservationTests {
    @Test func resultsListsAndObjectsTakeSwiftKeyPaths() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try t.open()
        try realm.write {
            let chore = realm.create(Chore.self, value: ["title": "dishes"])
            realm.create(Assignee.self, value: ["name": "Ali", "age": 30, "chores": [chore]])
        }
        let ali = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Ali"))
        let seen = Recorder<String>()
        let results = realm.objects(Assignee.self).observe(keyPaths: [\Assignee.age]) { change in
            if case .update(_, _, _, let m) = change { seen.append("results m\(m)") }
        }
        let object = ali.observe(keyPaths: [\Assignee.age]) { (change: ObjectChange<Assignee>) in
            if case .change(_, let properties) = change { seen.append("object \(properties.map(\.name))") }
        }
        let dishes = try #require(realm.object(ofType: Chore.self, forPrimaryKey: "dishes"))
        let linking = dishes.assignees.observe(keyPaths: [\.age]) { change in
            if case .update(_, _, _, let m) = change { seen.append("linking m\(m)") }
        }
        try realm.write { ali.favourite = dishes }  // not a watched property
        try realm.write { ali.age = 31 }
        #expect(Set(seen.all) == ["results m[0]", "object [\"age\"]", "linking m[0]"])
        #expect(seen.all.count == 3)
        results.invalidate(); object.invalidate(); linking.invalidate()
    }
}
