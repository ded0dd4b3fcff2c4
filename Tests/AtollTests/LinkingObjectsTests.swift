import Atoll
import AtollTesting
import Foundation
import Testing

final class Assignee: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted var chores: List<Chore>
    @Persisted var favourite: Chore?
    @Persisted var watched: MutableSet<Chore>
}

final class Chore: Object {
    @Persisted(primaryKey: true) var title = ""
    @Persisted(originProperty: "chores") var assignees: LinkingObjects<Assignee>
    @Persisted(originProperty: "favourite") var fans: LinkingObjects<Assignee>
    @Persisted(originProperty: "watched") var watchers: LinkingObjects<Assignee>
}

/// `LinkingObjects`: the objects linking to an object, computed from the links (lists, sets and
/// to-one links), live, queryable and observable, and never part of the stored schema.
@Suite struct LinkingObjectsTests {
    /// A realm with the two types; keep the `TestRealm` while the realm is used (its folder goes with it).
    private func testRealm() throws -> TestRealm { try TestRealm(objectTypes: [Assignee.self, Chore.self]) }

    @Test func anUnmanagedObjectHasNoLinkingObjects() {
        let chore = Chore(value: ["title": "dishes"])
        #expect(chore.assignees.isEmpty && chore.assignees.count == 0)
        #expect(chore.assignees.realm == nil)
        #expect(chore.assignees.propertyName == "chores")
        #expect(chore.fans.propertyName == "favourite")
    }

    @Test func theyAreNotStoredProperties() throws {
        let t = try testRealm()
        let realm = try t.open()
        let schema = try #require(realm.schema["Chore"])
        #expect(schema.properties.map(\.name) == ["title"])
    }

    @Test func listsSetsAndToOneLinksAreFollowedBackwards() throws {
        let t = try testRealm()
        let realm = try t.open()
        try realm.write {
            let dishes = realm.create(Chore.self, value: ["title": "dishes"])
            let laundry = realm.create(Chore.self, value: ["title": "laundry"])
            realm.create(Assignee.self, value: ["name": "Ali", "age": 30, "chores": [dishes, laundry], "favourite": dishes])
            realm.create(Assignee.self, value: ["name": "Bo", "age": 20, "chores": [dishes], "watched": [laundry]])
            realm.create(Assignee.self, value: ["name": "Cy", "age": 40])
        }
        let dishes = try #require(realm.object(ofType: Chore.self, forPrimaryKey: "dishes"))
        let laundry = try #require(realm.object(ofType: Chore.self, forPrimaryKey: "laundry"))
        #expect(Set(dishes.assignees.map(\.name)) == ["Ali", "Bo"])
        #expect(laundry.assignees.map(\.name) == ["Ali"])
        #expect(dishes.fans.map(\.name) == ["Ali"])
        #expect(laundry.fans.isEmpty)
        #expect(laundry.watchers.map(\.name) == ["Bo"])
        #expect(dishes.watchers.isEmpty)
        #expect(dishes.assignees.realm != nil)
    }

    @Test func theyAreLive() throws {
        let t = try testRealm()
        let realm = try t.open()
        try realm.write {
            let chore = realm.create(Chore.self, value: ["title": "dishes"])
            realm.create(Assignee.self, value: ["name": "Ali", "chores": [chore]])
        }
        let chore = try #require(realm.object(ofType: Chore.self, forPrimaryKey: "dishes"))
        let assignees = chore.assignees
        #expect(assignees.count == 1)
        try realm.write { realm.create(Assignee.self, value: ["name": "Bo", "chores": [chore], "favourite": chore]) }
        #expect(assignees.count == 2)
        #expect(chore.fans.map(\.name) == ["Bo"])
        let ali = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Ali"))
        try realm.write { ali.chores.removeAll() }
        #expect(assignees.map(\.name) == ["Bo"])
        let bo = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Bo"))
        try realm.write { realm.delete(bo) }
        #expect(assignees.isEmpty && chore.fans.isEmpty)
        try realm.write { realm.delete(chore) }
        #expect(assignees.isEmpty, "the linking objects of a deleted object are empty")
    }

    @Test func theyAreQueriedSortedAndAggregatedLikeResults() throws {
        let t = try testRealm()
        let realm = try t.open()
        try realm.write {
            let chore = realm.create(Chore.self, value: ["title": "dishes"])
            for (name, age) in [("Ali", 30), ("Bo", 20), ("Cy", 40)] {
                realm.create(Assignee.self, value: ["name": name, "age": age, "chores": [chore]])
            }
            realm.create(Assignee.self, value: ["name": "Di", "age": 50])
        }
        let assignees = try #require(realm.object(ofType: Chore.self, forPrimaryKey: "dishes")).assignees
        #expect(assignees.filter("age > %@", 25).sorted(byKeyPath: "name").map(\.name) == ["Ali", "Cy"])
        #expect(assignees.where { $0.age < 35 }.count == 2)
        #expect(assignees.sorted(byKeyPath: "age", ascending: false).map(\.name) == ["Cy", "Ali", "Bo"])
        #expect(assignees.sorted(by: \.age).first?.name == "Bo")
        #expect(assignees.max(ofProperty: "age") == 40)
        #expect(assignees.min(ofProperty: "age") == 20)
        #expect(assignees.sum(ofProperty: "age") == 90)
        #expect(assignees.average(ofProperty: "age") == 30.0)
        let bo = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Bo"))
        #expect(assignees.index(of: bo) != nil)
        #expect(assignees.index(matching: "name == %@", "Cy").map { assignees[$0].name } == "Cy")
        let frozen = assignees.freeze()
        #expect(frozen.isFrozen && frozen.count == 3)
        try realm.write { realm.delete(bo) }
        #expect(frozen.count == 3 && assignees.count == 2)
    }

    @Test func observersSeeObjectsStartAndStopLinking() throws {
        let t = try testRealm()
        let realm = try t.open()
        try realm.write { realm.create(Chore.self, value: ["title": "dishes"]) }
        let chore = try #require(realm.object(ofType: Chore.self, forPrimaryKey: "dishes"))
        let seen = Recorder<String>()
        let token = chore.assignees.observe { change in
            switch change {
            case .initial(let objects): seen.append("initial \(objects.count)")
            case .update(let objects, let d, let i, let m): seen.append("update \(objects.count) d\(d) i\(i) m\(m)")
            case .error: seen.append("error")
            }
        }
        try realm.write { realm.create(Assignee.self, value: ["name": "Ali", "chores": [chore]]) }
        try realm.write { realm.create(Assignee.self, value: ["name": "Bo"]) }  // links elsewhere: no change
        let ali = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Ali"))
        try realm.write { ali.age = 31 }
        try realm.write { ali.chores.removeAll() }
        #expect(seen.all == ["initial 0", "update 1 d[] i[0] m[]", "update 1 d[] i[] m[0]", "update 0 d[0] i[] m[]"])
        token.invalidate()
    }
}
