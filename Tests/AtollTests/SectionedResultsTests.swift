import Atoll
import AtollTesting
import Foundation
import Testing

/// `sectioned(by:)`: results grouped by a key, live, observable section by section.
@Suite struct SectionedResultsTests {
    private func realm(_ t: TestRealm, _ people: [(String, Int)]) throws -> Realm {
        let realm = try t.open()
        try realm.write { for (name, age) in people { realm.create(Assignee.self, value: ["name": name, "age": age]) } }
        return realm
    }

    @Test func sectionsByAKeyPathFollowTheSortAndHoldTheirObjectsInOrder() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try realm(t, [("Ali", 30), ("Bo", 20), ("Cy", 30), ("Di", 20), ("Ed", 40)])
        let byAge = realm.objects(Assignee.self).sectioned(by: \.age, ascending: true)
        #expect(byAge.allKeys == [20, 30, 40])
        #expect(byAge.count == 3)
        #expect(byAge.map { $0.map(\.name) } == [["Bo", "Di"], ["Ali", "Cy"], ["Ed"]])
        #expect(byAge[1].key == 30 && byAge[1].count == 2 && byAge[1].id == 30)
        #expect(byAge[IndexPath(item: 1, section: 0)].name == "Di")
        #expect(byAge[key: 40]?.first?.name == "Ed")
        #expect(byAge[key: 50] == nil)
        let descending = realm.objects(Assignee.self).sectioned(by: \.age, ascending: false)
        #expect(descending.allKeys == [40, 30, 20])
    }

    @Test func aClosureKeyGroupsByWhatItDerives() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try realm(t, [("Anna", 1), ("Bob", 2), ("Al", 3), ("Bea", 4), ("Cat", 5)])
        let byLetter = realm.objects(Assignee.self).sectioned(by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "name")])
        #expect(byLetter.allKeys == ["A", "B", "C"])
        #expect(byLetter.map { $0.map(\.name) } == [["Al", "Anna"], ["Bea", "Bob"], ["Cat"]])
        for section in byLetter { #expect(section.allSatisfy { $0.name.hasPrefix(section.key) }) }
    }

    @Test func theyAreLiveAndFreeze() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try realm(t, [("Ali", 30)])
        let byAge = realm.objects(Assignee.self).sectioned(by: \.age)
        let frozen = byAge.freeze()
        try realm.write { realm.create(Assignee.self, value: ["name": "Bo", "age": 20]) }
        #expect(byAge.allKeys == [20, 30])
        #expect(frozen.allKeys == [30] && frozen.isFrozen)
    }

    @Test func observersGetIndexPathsAndSectionChanges() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try realm(t, [("Ali", 30), ("Bo", 20)])
        let byAge = realm.objects(Assignee.self).sectioned(by: \.age)
        let seen = Recorder<String>()
        let token = byAge.observe { change in
            switch change {
            case .initial(let sections): seen.append("initial \(sections.allKeys)")
            case .update(let sections, let d, let i, let m, let si, let sd):
                seen.append("\(sections.allKeys) d\(d.map { [$0.section, $0.item] }) i\(i.map { [$0.section, $0.item] }) "
                    + "m\(m.map { [$0.section, $0.item] }) +\(Array(si)) -\(Array(sd))")
            }
        }
        // Cy joins Ali's section; Di starts a new one.
        try realm.write {
            realm.create(Assignee.self, value: ["name": "Cy", "age": 30])
            realm.create(Assignee.self, value: ["name": "Di", "age": 40])
        }
        // Bo's section goes; Ali changes in place.
        let bo = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Bo"))
        let ali = try #require(realm.object(ofType: Assignee.self, forPrimaryKey: "Ali"))
        try realm.write {
            realm.delete(bo)
            ali.chores.append(realm.create(Chore.self, value: ["title": "x"]))
        }
        #expect(seen.all == [
            "initial [20, 30]",
            "[20, 30, 40] d[] i[[1, 1]] m[] +[2] -[]",
            "[30, 40] d[] i[] m[[0, 0]] +[] -[0]",
        ])
        token.invalidate()
    }

    @Test func aSectionIsObservedOnItsOwn() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try realm(t, [("Ali", 30), ("Bo", 20)])
        let thirty = try #require(realm.objects(Assignee.self).sectioned(by: \.age)[key: 30])
        let seen = Recorder<String>()
        let token = thirty.observe { change in
            switch change {
            case .initial(let section): seen.append("initial \(section.count)")
            case .update(let section, let d, let i, _, _, _): seen.append("\(section.count) d\(d.map(\.item)) i\(i.map(\.item))")
            }
        }
        try realm.write { realm.create(Assignee.self, value: ["name": "Bob", "age": 20]) }  // another section: nothing
        try realm.write { realm.create(Assignee.self, value: ["name": "Cy", "age": 30]) }
        #expect(seen.all == ["initial 1", "2 d[] i[1]"])
        token.invalidate()
    }
}
