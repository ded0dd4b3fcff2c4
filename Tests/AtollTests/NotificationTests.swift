import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// Results, object and realm notifications of one realm's own writes: exact index sets, key-path
/// filtering, tokens.
@Suite struct NotificationTests {
    /// Dogs a10 b20 c30 d40 e50 f60, observed sorted by age.
    private func sortedDogs(_ t: TestRealm, _ dogs: [(String, Int)] = [("a", 10), ("b", 20), ("c", 30), ("d", 40), ("e", 50), ("f", 60)])
        throws -> (Realm, Results<Dog>) {
        try t.seedDogs(dogs)
        let realm = try t.open()
        return (realm, realm.objects(Dog.self).sorted(byKeyPath: "age"))
    }

    private func dog(_ realm: Realm, _ name: String) throws -> Dog {
        try #require(realm.objects(Dog.self).filter("name == %@", name).first)
    }

    // MARK: Results

    @Test func resultsObserveDeliversInitialAtOnceThenAnUpdatePerWrite() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t, [("a", 10)])
        let seen = Recorder<SeenChange>()
        let token = dogs.observe { seen.append(SeenChange($0)) }
        #expect(seen.all == [.initial(count: 1)], "initial is delivered synchronously")
        try realm.write { realm.add(Dog(value: ["name": "b", "age": 20])) }
        #expect(seen.all == [.initial(count: 1), .update(deletions: [], insertions: [1], modifications: [])])
        token.invalidate()
    }

    @Test func sortedResultsReportInsertionsAndDeletionsOfOneWriteAtTheirIndices() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t)
        let seen = Recorder<SeenChange>()
        let token = dogs.observe { seen.append(SeenChange($0)) }
        try realm.write {
            realm.delete(try dog(realm, "b"))
            realm.delete(try dog(realm, "d"))
            realm.add(Dog(value: ["name": "x", "age": 25]))
            realm.add(Dog(value: ["name": "y", "age": 70]))
        }
        // old a10 b20 c30 d40 e50 f60 → new a10 x25 c30 e50 f60 y70
        #expect(seen.all.last == .update(deletions: [1, 3], insertions: [1, 5], modifications: []))
        #expect(dogs.map(\.name) == ["a", "x", "c", "e", "f", "y"])
        token.invalidate()
    }

    @Test func insertsDeletesAndModificationsInOneWriteHaveExactIndices() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t)
        let seen = Recorder<SeenChange>()
        let token = dogs.observe { seen.append(SeenChange($0)) }
        try realm.write {
            realm.delete(try dog(realm, "b"))
            realm.delete(try dog(realm, "e"))
            realm.add(Dog(value: ["name": "x", "age": 35]))
            realm.add(Dog(value: ["name": "y", "age": 5]))
            try dog(realm, "d").name = "D"
        }
        // old a10 b20 c30 d40 e50 f60 → new y5 a10 c30 x35 D40 f60; D was at 3, is now at 4.
        #expect(seen.all.last == .update(deletions: [1, 4], insertions: [0, 3], modifications: [4]))
        token.invalidate()
    }

    @Test func modificationIndicesAreIndicesInTheNewCollection() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t, [("a", 10), ("b", 20), ("c", 30)])
        let seen = Recorder<SeenChange>()
        let token = dogs.observe { seen.append(SeenChange($0)) }
        try realm.write {
            realm.delete(try dog(realm, "a"))
            try dog(realm, "c").name = "C"
        }
        #expect(seen.all.last == .update(deletions: [0], insertions: [], modifications: [1]))
        #expect(dogs[1].name == "C", "the reported index reads the modified object in the new results")
        token.invalidate()
    }

    @Test func sortedResultsReportAMoveAsDeleteAndInsert() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t, [("a", 10), ("b", 20), ("c", 30), ("d", 40)])
        let seen = Recorder<SeenChange>()
        let token = dogs.observe { seen.append(SeenChange($0)) }
        try realm.write { try dog(realm, "a").age = 45 }
        #expect(seen.all.last == .update(deletions: [0], insertions: [3], modifications: []),
                "a moved object is not also reported as modified")
        try realm.write { try dog(realm, "d").age = 5 }
        // b20 c30 d40 a45 → d5 b20 c30 a45
        #expect(seen.all.last == .update(deletions: [2], insertions: [0], modifications: []))
        #expect(dogs.map(\.name) == ["d", "b", "c", "a"])
        token.invalidate()
    }

    @Test func objectsEnterAndLeaveAFilterBecauseOfAModification() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10), ("b", 20), ("c", 30), ("d", 40)])
        let realm = try t.open()
        let old = realm.objects(Dog.self).filter("age >= 30").sorted(byKeyPath: "age")
        let seen = Recorder<SeenChange>()
        let token = old.observe { seen.append(SeenChange($0)) }
        #expect(seen.all == [.initial(count: 2)])
        try realm.write {
            try dog(realm, "b").age = 35   // enters
            try dog(realm, "c").age = 5    // leaves
            try dog(realm, "d").name = "D" // stays, modified
        }
        // old c30 d40 → new b35 D40
        #expect(seen.all.last == .update(deletions: [0], insertions: [0], modifications: [1]))
        token.invalidate()
    }

    @Test func unsortedResultsKeepInsertionOrderIndices() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 1), ("b", 2), ("c", 3)])
        let realm = try t.open()
        let seen = Recorder<SeenChange>()
        let token = realm.objects(Dog.self).observe { seen.append(SeenChange($0)) }
        try realm.write {
            realm.delete(try dog(realm, "a"))
            try dog(realm, "c").age = 30
            realm.add(Dog(value: ["name": "d"]))
        }
        #expect(seen.all.last == .update(deletions: [0], insertions: [2], modifications: [1]))
        token.invalidate()
    }

    @Test func aChangeOfALinkedObjectModifiesTheObjectsLinkingToIt() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let ann = Person(value: ["name": "Ann", "age": 30])
        try realm.write {
            realm.add(Dog(value: ["name": "fido"]))
            realm.add(Dog(value: ["name": "rex", "owner": ann]))
        }
        let seen = Recorder<SeenChange>()
        let token = realm.objects(Dog.self).observe { seen.append(SeenChange($0)) }
        try realm.write { ann.age = 31 }
        #expect(seen.all.last == .update(deletions: [], insertions: [], modifications: [1]))
        token.invalidate()
    }

    @Test func writesThatDoNotTouchTheResultsDeliverNothing() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t, [("a", 10)])
        let seen = Recorder<SeenChange>()
        let token = dogs.filter("age > 100").observe { seen.append(SeenChange($0)) }
        try realm.write { realm.add(Person(value: ["name": "Ann"])) }
        try realm.write { try dog(realm, "a").age = 11 }
        try realm.write { realm.add(Dog(value: ["name": "old", "age": 101])) }
        #expect(seen.all == [.initial(count: 0), .update(deletions: [], insertions: [0], modifications: [])])
        token.invalidate()
    }

    @Test func resultsKeyPathFilterIgnoresChangesOfOtherProperties() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t, [("a", 10), ("b", 20)])
        let seen = Recorder<SeenChange>()
        let token = dogs.observe(keyPaths: ["name"]) { seen.append(SeenChange($0)) }
        try realm.write { try dog(realm, "a").age = 11 }
        #expect(seen.all == [.initial(count: 2)], "an age change is not a change of 'name'")
        try realm.write { try dog(realm, "b").name = "B" }
        #expect(seen.all.last == .update(deletions: [], insertions: [], modifications: [1]))
        try realm.write { realm.add(Dog(value: ["name": "c", "age": 30])) }
        #expect(seen.all.last == .update(deletions: [], insertions: [2], modifications: []), "insertions are always reported")
        token.invalidate()
    }

    @Test func resultsKeyPathThroughALinkWatchesTheLinkedProperty() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let ann = Person(value: ["name": "Ann", "age": 30, "height": 1.6])
        try realm.write { realm.add(Dog(value: ["name": "rex", "owner": ann])) }
        let seen = Recorder<SeenChange>()
        let token = realm.objects(Dog.self).observe(keyPaths: ["owner.age"]) { seen.append(SeenChange($0)) }
        try realm.write { ann.height = 1.7 }
        #expect(seen.count == 1, "owner.height is not watched")
        try realm.write { ann.age = 31 }
        #expect(seen.all.last == .update(deletions: [], insertions: [], modifications: [0]))
        token.invalidate()
    }

    @Test func invalidatedTokenStopsDelivery() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t, [("a", 10)])
        let seen = Recorder<SeenChange>()
        let token = dogs.observe { seen.append(SeenChange($0)) }
        token.invalidate()
        token.invalidate()
        try realm.write { realm.add(Dog(value: ["name": "b"])) }
        #expect(seen.all == [.initial(count: 1)])
    }

    @Test func releasingTheTokenStopsDelivery() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t, [("a", 10)])
        let seen = Recorder<SeenChange>()
        var token: NotificationToken? = dogs.observe { seen.append(SeenChange($0)) }
        #expect(token != nil)
        token = nil
        try realm.write { realm.add(Dog(value: ["name": "b"])) }
        #expect(seen.all == [.initial(count: 1)])
    }

    @Test func writeWithoutNotifyingSkipsOnlyThatToken() throws {
        let t = try TestRealm()
        let (realm, dogs) = try sortedDogs(t, [("a", 10), ("c", 30)])
        let skipped = Recorder<SeenChange>(), other = Recorder<SeenChange>()
        let skippedToken = dogs.observe { skipped.append(SeenChange($0)) }
        let otherToken = dogs.observe { other.append(SeenChange($0)) }
        try realm.write(withoutNotifying: [skippedToken]) { realm.add(Dog(value: ["name": "b", "age": 20])) }
        #expect(skipped.all == [.initial(count: 2)])
        #expect(other.all.last == .update(deletions: [], insertions: [1], modifications: []))
        try realm.write { realm.add(Dog(value: ["name": "d", "age": 40])) }
        #expect(skipped.all.last == .update(deletions: [], insertions: [3], modifications: []),
                "the skipped write is the new baseline: only d is new")
        skippedToken.invalidate()
        otherToken.invalidate()
    }

    @Test func observedRealmClosesOnceItsTokensAreInvalidated() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10)])
        do {
            let realm = try t.open()
            let dog = try dog(realm, "a")
            let tokens = [
                realm.objects(Dog.self).observe { _ in },
                dog.observe { (_: ObjectChange<Dog>) in },
                realm.observe { _, _ in },
            ]
            try realm.write { dog.age = 11 }
            tokens.forEach { $0.invalidate() }
        }
        t.expectAllRealmsClosed()
    }

    // MARK: Objects

    @Test func objectObserveReportsChangedPropertiesWithOldAndNewValues() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10)])
        let realm = try t.open()
        let a = try dog(realm, "a")
        let seen = Recorder<SeenObjectChange>()
        let token = a.observe { (change: ObjectChange<Dog>) in seen.append(SeenObjectChange(change)) }
        try realm.write {
            a.age = 11
            a.name = "A"
        }
        #expect(seen.all == [.change([.init("name", "a", "A"), .init("age", "10", "11")])])
        try realm.write { a.age = 12 }
        #expect(seen.all.last == .change([.init("age", "11", "12")]))
        try realm.write { realm.add(Dog(value: ["name": "other"])) }
        #expect(seen.count == 2, "another object's insertion is not a change of this one")
        token.invalidate()
    }

    @Test func objectObserveReportsDeletionOnceAndThenStops() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10), ("b", 20)])
        let realm = try t.open()
        let a = try dog(realm, "a")
        let seen = Recorder<SeenObjectChange>()
        let token = a.observe { (change: ObjectChange<Dog>) in seen.append(SeenObjectChange(change)) }
        try realm.write { realm.delete(a) }
        try realm.write { realm.add(Dog(value: ["name": "c"])) }
        #expect(seen.all == [.deleted])
        token.invalidate()
    }

    @Test func objectKeyPathFilterIgnoresChangesOfOtherProperties() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10)])
        let realm = try t.open()
        let a = try dog(realm, "a")
        let seen = Recorder<SeenObjectChange>()
        let token = a.observe(keyPaths: ["name"]) { (change: ObjectChange<Dog>) in seen.append(SeenObjectChange(change)) }
        try realm.write { a.age = 11 }
        #expect(seen.all.isEmpty)
        try realm.write {
            a.age = 12
            a.name = "A"
        }
        #expect(seen.all == [.change([.init("name", "a", "A")])], "only the watched property is listed")
        token.invalidate()
    }

    @Test func objectKeyPathThroughALinkWatchesTheLinkedProperty() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let rex = Dog(value: ["name": "Rex"])
        rex.owner = Person(value: ["name": "Ann", "age": 30])
        try realm.write { realm.add(rex) }
        let seen = Recorder<[String]>()
        let token = rex.observe(keyPaths: ["owner.age"]) { (change: ObjectChange<Dog>) in
            if case .change(_, let properties) = change { seen.append(properties.map(\.name)) }
        }
        defer { token.invalidate() }
        try realm.write { rex.owner?.height = 1.7 }
        #expect(seen.all.isEmpty, "a change of another property of the owner is not watched")
        try realm.write { rex.owner?.age = 31 }
        #expect(seen.all == [["owner"]])
    }

    @Test func objectObserveReportsALinkChange() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10)])
        let realm = try t.open()
        let a = try dog(realm, "a")
        let seen = Recorder<[String]>()
        let token = a.observe { (change: ObjectChange<Dog>) in
            if case .change(let object, let properties) = change {
                seen.append(properties.map(\.name) + [object.owner?.name ?? "nil"])
            }
        }
        try realm.write { a.owner = Person(value: ["name": "Ann"]) }
        #expect(seen.all == [["owner", "Ann"]])
        token.invalidate()
    }

    // MARK: Realm

    @Test func realmObserveFiresAfterEveryCommitThatChangedSomething() throws {
        let t = try TestRealm()
        let realm = try t.open()
        _ = realm.objects(Dog.self)
        let seen = Recorder<String>()
        let token = realm.observe { notification, _ in seen.append(notification.rawValue) }
        try realm.write { realm.add(Dog(value: ["name": "a"])) }
        try realm.write { realm.add(Dog(value: ["name": "b"])) }
        #expect(seen.all == [Realm.Notification.didChange.rawValue, Realm.Notification.didChange.rawValue])
        token.invalidate()
    }
}
