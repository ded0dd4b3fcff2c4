import Atoll
import AtollTesting
import Foundation
import Testing

/// Code written once over `RealmCollection` and `AnyRealmCollection`, run on every collection of
/// objects: `Results`, `List`, `MutableSet` and `LinkingObjects`.
@Suite struct RealmCollectionTests {
    /// Generic code as an app writes it: names of the objects matching a query, sorted.
    private func adultNames<C: RealmCollection>(_ collection: C) -> [String] where C.Element == Assignee {
        collection.filter("age >= %@", 18).sorted(byKeyPath: "name").map(\.name)
    }

    private func summary<C: RealmCollection>(_ c: C) -> String where C.Element == Assignee {
        let oldest: Int? = c.max(ofProperty: "age")
        let total: Int = c.sum(ofProperty: "age")
        let mean: Double? = c.average(ofProperty: "age")
        let bo = c.index(matching: "name == %@", "Bo").map { c[$0].name } ?? "-"
        return "\(c.count) \(oldest ?? -1) \(total) \(mean ?? -1) \(bo) \(c.objects(at: IndexSet(integer: 0)).count)"
    }

    private func fill(_ realm: Realm) throws -> (Chore, Assignee) {
        try realm.write {
            let chore = realm.create(Chore.self, value: ["title": "dishes"])
            let team = realm.create(Assignee.self, value: ["name": "Team", "age": 99])
            for (name, age) in [("Ali", 30), ("Bo", 12), ("Cy", 40)] {
                let person = realm.create(Assignee.self, value: ["name": name, "age": age, "chores": [chore]])
                team.watched.insert(chore)
                _ = person
            }
            return (chore, team)
        }
    }

    /// `for … in results` reads the results at each step: an object a write takes out of the
    /// results while iterating moves the later ones up, and the loop ends where the results do
    /// (indexing past their new end used to trap).
    @Test func iteratingResultsReadsThemAtEachStep() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try t.open()
        _ = try fill(realm)
        let adults = realm.objects(Assignee.self).where { $0.age >= 18 }.sorted(byKeyPath: "name")
        var seen: [String] = []
        try realm.write {
            for person in adults {
                seen.append(person.name)
                person.age = 0
            }
        }
        // Ali, Cy, Team: after Ali leaves, Cy is at index 0 and Team at index 1.
        #expect(seen == ["Ali", "Team"])
        #expect(Array(adults.map(\.name)) == ["Cy"])
        #expect(Array(realm.objects(Assignee.self).sorted(byKeyPath: "name")).map(\.name) == ["Ali", "Bo", "Cy", "Team"])
    }

    @Test func genericCodeRunsOnEveryKindOfCollection() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try t.open()
        let (chore, _) = try fill(realm)
        let people = realm.objects(Assignee.self).filter("name != 'Team'")
        try realm.write {
            let owner = realm.create(Assignee.self, value: ["name": "Owner", "age": 1])
            owner.chores.append(chore)
        }
        #expect(adultNames(people) == ["Ali", "Cy"])
        #expect(adultNames(chore.assignees) == ["Ali", "Cy"])
        #expect(adultNames(AnyRealmCollection(people)) == ["Ali", "Cy"])
        #expect(adultNames(AnyRealmCollection(chore.assignees)) == ["Ali", "Cy"])
        // Ali 30, Bo 12, Cy 40, Owner 1.
        #expect(summary(people) == "4 40 83 20.75 Bo 1")
        #expect(summary(chore.assignees) == "4 40 83 20.75 Bo 1")
        #expect(summary(AnyRealmCollection(people)) == "4 40 83 20.75 Bo 1")
    }

    @Test func listsAndSetsOfObjectsAreRealmCollections() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try t.open()
        try realm.write {
            let chores = ["a", "b", "c"].map { realm.create(Chore.self, value: ["title": $0]) }
            realm.create(Assignee.self, value: ["name": "Ali", "chores": chores, "watched": chores])
        }
        let ali = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Ali"))
        func titles<C: RealmCollection>(_ c: C) -> [String] where C.Element == Chore {
            c.filter("title != 'b'").sorted(byKeyPath: "title", ascending: false).map(\.title)
        }
        #expect(titles(ali.chores) == ["c", "a"])
        #expect(titles(ali.watched) == ["c", "a"])
        #expect(titles(AnyRealmCollection(ali.watched)) == ["c", "a"])
        // A set is indexable.
        #expect(Set(ali.watched.indices.map { ali.watched[$0].title }) == ["a", "b", "c"])
        #expect(ali.watched.index(matching: "title == 'b'").map { ali.watched[$0].title } == "b")
        let frozen = ali.chores.freeze()
        #expect(frozen.isFrozen && !ali.chores.isFrozen)
        try realm.write { ali.chores.removeAll() }
        #expect(frozen.count == 3 && ali.chores.isEmpty)
        #expect(frozen.thaw()?.count == 0, "thawed, it is the live list again")
        let frozenSet = ali.watched.freeze()
        #expect(frozenSet.isFrozen && frozenSet.count == 3)
    }

    @Test func notificationsCarryTheCollectionsOwnType() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try t.open()
        try realm.write { realm.create(Assignee.self, value: ["name": "Ali"]) }
        let ali = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Ali"))
        let seen = Recorder<String>()
        let listToken = ali.chores.observe { (change: RealmCollectionChange<List<Chore>>) in
            if case .update(let list, _, let insertions, _) = change { seen.append("list \(list.count) i\(insertions)") }
        }
        let setToken = ali.watched.observe { (change: RealmCollectionChange<MutableSet<Chore>>) in
            if case .update(let set, _, let insertions, _) = change { seen.append("set \(set.count) i\(insertions)") }
        }
        let anyToken = AnyRealmCollection(ali.chores).observe { (change: RealmCollectionChange<AnyRealmCollection<Chore>>) in
            if case .update(let any, _, let insertions, _) = change { seen.append("any \(any.count) i\(insertions)") }
        }
        try realm.write {
            let chore = realm.create(Chore.self, value: ["title": "dishes"])
            ali.chores.append(chore)
            ali.watched.insert(chore)
        }
        #expect(Set(seen.all) == ["list 1 i[0]", "set 1 i[0]", "any 1 i[0]"])
        listToken.invalidate(); setToken.invalidate(); anyToken.invalidate()
    }

    @Test func anyRealmCollectionHoldsAnyOfThemInOneVariable() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try t.open()
        let (chore, team) = try fill(realm)
        var collection = AnyRealmCollection(realm.objects(Assignee.self))
        #expect(collection.count == 4)
        collection = AnyRealmCollection(chore.assignees)
        #expect(collection.count == 3 && collection.realm != nil)
        collection = AnyRealmCollection(collection)  // wrapping twice keeps one box
        #expect(collection.sorted(byKeyPath: "age").first?.name == "Bo")
        #expect(collection.where { $0.age > 35 }.map(\.name) == ["Cy"])
        #expect(collection.distinct(by: ["age"]).count == 3)
        #expect(collection.min(ofProperty: "age") == 12)
        let frozen = collection.freeze()
        #expect(frozen.isFrozen)
        #expect(AnyRealmCollection(team.watched).count == 1)
        #expect(collection.description.contains("3"))
    }
}
