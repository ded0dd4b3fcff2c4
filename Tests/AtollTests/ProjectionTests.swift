import Atoll
import AtollTesting
import Foundation
import Testing

final class PJAddress: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var country = ""
}

final class PJPerson: Object {
    @Persisted(primaryKey: true) var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var address: PJAddress?
    @Persisted var friends: List<PJPerson>
    @Persisted var nicknames: MutableSet<PJPerson>
}

final class PJPersonProjection: Projection<PJPerson> {
    @Projected(\PJPerson.firstName) var firstName
    @Projected(\PJPerson.lastName.localizedUppercase) var lastNameCaps
    @Projected(\PJPerson.age) var years
    @Projected(\PJPerson.address?.city) var homeCity
    @Projected(\PJPerson.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
}

/// Projections: `@Projected` properties over an object, results of them, their notifications.
@Suite struct ProjectionTests {
    private func seeded() throws -> (TestRealm, Realm) {
        let t = try TestRealm(objectTypes: [PJPerson.self, PJAddress.self])
        let realm = try t.open()
        try realm.write {
            let dany = realm.create(PJPerson.self, value: ["firstName": "Daenerys", "lastName": "Targaryen", "age": 20,
                                                           "address": ["city": "King's Landing"]])
            let jon = realm.create(PJPerson.self, value: ["firstName": "Jon", "lastName": "Snow", "age": 25,
                                                          "address": ["city": "Winterfell"]])
            jon.friends.append(dany)
            dany.friends.append(jon)
            realm.create(PJPerson.self, value: ["firstName": "Arya", "lastName": "Stark", "age": 12])
        }
        return (t, realm)
    }

    @Test func projectionReadsThroughKeyPaths() throws {
        let (t, realm) = try seeded()
        _ = t
        let jon = try #require(realm.object(ofType: PJPerson.self, forPrimaryKey: "Jon"))
        let projection = PJPersonProjection(projecting: jon)
        #expect(projection.firstName == "Jon")
        #expect(projection.lastNameCaps == "SNOW")
        #expect(projection.years == 25)
        #expect(projection.homeCity == "Winterfell")
        #expect(Array(projection.friendsFirstNames) == ["Daenerys"])
        #expect(projection.rootObject === jon || projection.rootObject == jon)
        #expect(projection.realm === realm)
        #expect(!projection.isFrozen)
    }

    @Test func writesGoToTheRootInsideAWrite() throws {
        let (t, realm) = try seeded()
        _ = t
        let arya = try #require(realm.objects(PJPersonProjection.self).filter("lastName == 'Stark'").first)
        try realm.write { arya.years = 13 }
        #expect(realm.object(ofType: PJPerson.self, forPrimaryKey: "Arya")?.age == 13)
    }

    @Test func resultsOfProjectionsFilterSortAndQueryTheRootsProperties() throws {
        let (t, realm) = try seeded()
        _ = t
        let all: Results<PJPersonProjection> = realm.objects(PJPersonProjection.self)
        #expect(all.count == 3)
        #expect(all.sorted(byKeyPath: "firstName").map(\.firstName) == ["Arya", "Daenerys", "Jon"])
        #expect(all.sorted(byKeyPath: "age", ascending: false).first?.firstName == "Jon")
        #expect(all.sorted(by: \PJPerson.age).map(\.years) == [12, 20, 25])
        #expect(all.filter("lastName == %@", "Snow").first?.homeCity == "Winterfell")
        #expect(all.where { $0.lastName == "Snow" }.map(\.firstName) == ["Jon"])
        #expect(all.where { $0.age > 15 && $0.address.city.starts(with: "King") }.map(\.firstName) == ["Daenerys"])
        #expect(all.max(ofProperty: "age") as Int? == 25)
        let jon = try #require(realm.object(ofType: PJPerson.self, forPrimaryKey: "Jon"))
        let viaResults = try #require(all.filter("firstName == 'Jon'").first)
        #expect(viaResults == PJPersonProjection(projecting: jon))
        #expect(viaResults != all.filter("firstName == 'Arya'").first)
        #expect(all.index(of: PJPersonProjection(projecting: jon)) != nil)
        #expect(Set(all).count == 3)
        // Generic code over RealmCollection takes results of projections too.
        func oldest<C: RealmCollection>(_ people: C) -> C.Element? { people.sorted(byKeyPath: "age", ascending: false).first }
        #expect(oldest(all)?.firstName == "Jon")
        #expect(AnyRealmCollection(all).filter("age < 15").first?.firstName == "Arya")
    }

    @Test func frozenProjectionsAndResultsReadFromAnotherThread() throws {
        let (t, realm) = try seeded()
        _ = t
        let frozen = realm.objects(PJPersonProjection.self).sorted(byKeyPath: "firstName").freeze()
        #expect(frozen.isFrozen)
        let one = try #require(realm.objects(PJPersonProjection.self).filter("firstName == 'Jon'").first).freeze()
        #expect(one.isFrozen && one.friendsFirstNames.isFrozen)
        let box = Unchecked((frozen, one))
        let read = try onAnotherThread { () -> [String] in
            box.value.0.map(\.firstName) + [box.value.1.homeCity ?? "-"] + Array(box.value.1.friendsFirstNames)
        }
        #expect(read == ["Arya", "Daenerys", "Jon", "Winterfell", "Daenerys"])
        try realm.write { realm.object(ofType: PJPerson.self, forPrimaryKey: "Jon")!.age = 26 }
        #expect(one.years == 25)
        #expect(one.thaw()?.years == 26)
    }

    @Test func projectionNotificationsNameTheProjectionsProperties() throws {
        let (t, realm) = try seeded()
        _ = t
        let jon = PJPersonProjection(projecting: try #require(realm.object(ofType: PJPerson.self, forPrimaryKey: "Jon")))
        let seen = Recorder<SeenObjectChange>()
        let token = jon.observe { change in
            if case .change(let projection, _) = change { #expect(projection.firstName == "Jon") }
            seen.append(SeenObjectChange(change))
        }
        try realm.write { jon.years = 26 }
        try realm.write { jon.rootObject.lastName = "Targaryen" }
        try realm.write { jon.rootObject.address?.city = "Castle Black" }
        #expect(seen.all == [
            .change([.init("years", "25", "26")]),
            .change([.init("lastNameCaps", "SNOW", "TARGARYEN")]),
            .change([.init("homeCity", "nil", "Optional(\"Castle Black\")")]),
        ])
        token.invalidate()
    }

    @Test func projectionObservationWithKeyPathsCountsOnlyThose() throws {
        let (t, realm) = try seeded()
        _ = t
        let jon = PJPersonProjection(projecting: try #require(realm.object(ofType: PJPerson.self, forPrimaryKey: "Jon")))
        let byName = Recorder<SeenObjectChange>()
        let byKeyPath = Recorder<SeenObjectChange>()
        let byRootName = Recorder<SeenObjectChange>()
        let tokens = [
            jon.observe(keyPaths: ["years"]) { byName.append(SeenObjectChange($0)) },
            jon.observe(keyPaths: [\PJPersonProjection.lastNameCaps]) { byKeyPath.append(SeenObjectChange($0)) },
            jon.observe(keyPaths: ["age"]) { byRootName.append(SeenObjectChange($0)) },
        ]
        try realm.write { jon.rootObject.lastName = "Stark" }
        try realm.write { jon.years = 30 }
        #expect(byName.all == [.change([.init("years", "25", "30")])])
        #expect(byKeyPath.all == [.change([.init("lastNameCaps", "SNOW", "STARK")])])
        #expect(byRootName.all == byName.all)
        try realm.write { realm.delete(jon.rootObject) }
        #expect(byName.all.last == .deleted)
        tokens.forEach { $0.invalidate() }
    }

    @Test func resultsOfProjectionsNotify() throws {
        let (t, realm) = try seeded()
        _ = t
        let seen = Recorder<SeenChange>()
        let results = realm.objects(PJPersonProjection.self).sorted(byKeyPath: "firstName")
        let token = results.observe { change in
            if case .update(let projections, _, _, _) = change { #expect(projections.first?.firstName == "Arya") }
            seen.append(SeenChange(change))
        }
        try realm.write { realm.create(PJPerson.self, value: ["firstName": "Bran", "lastName": "Stark"]) }
        try realm.write { realm.object(ofType: PJPerson.self, forPrimaryKey: "Jon")!.age = 40 }
        #expect(seen.all == [.initial(count: 3), .update(deletions: [], insertions: [1], modifications: []),
                             .update(deletions: [], insertions: [], modifications: [3])])
        token.invalidate()
    }

    @Test func projectedCollectionIsLiveAndObservable() throws {
        let (t, realm) = try seeded()
        _ = t
        let jon = PJPersonProjection(projecting: try #require(realm.object(ofType: PJPerson.self, forPrimaryKey: "Jon")))
        let names = jon.friendsFirstNames
        #expect(names.count == 1 && names[0] == "Daenerys")
        #expect(names.index(matching: "firstName == %@", "Daenerys") == 0)
        let seen = Recorder<SeenChange>()
        let contents = Recorder<[String]>()
        let token = names.observe { change in
            seen.append(SeenChange(change))
            if case .update(let now, _, _, _) = change { contents.append(Array(now)) }
        }
        let arya = try #require(realm.object(ofType: PJPerson.self, forPrimaryKey: "Arya"))
        try realm.write { jon.rootObject.friends.append(arya) }
        try realm.write { arya.lastName = "Faceless" }   // not the projected property
        try realm.write { arya.age = 13 }
        #expect(seen.all == [.initial(count: 1), .update(deletions: [], insertions: [1], modifications: [])])
        #expect(contents.all == [["Daenerys", "Arya"]])
        #expect(names.count == 2)
        #expect(names.description.contains("[1] Arya"))
        token.invalidate()
    }

    @Test func unmanagedObjectsCanBeProjected() {
        let person = PJPerson()
        person.firstName = "Sam"
        person.address = PJAddress(value: ["city": "Oldtown"])
        let projection = PJPersonProjection(projecting: person)
        #expect(projection.homeCity == "Oldtown")
        projection.years = 3
        #expect(person.age == 3)
        #expect(projection.friendsFirstNames.isEmpty)
        #expect(projection.realm == nil)
        #expect(projection.description.contains("homeCity(\\.address) = Oldtown"))
    }
}
