@_spi(Testing) import Atoll
import AtollTesting
import Foundation
import Observation
import Testing

/// Counts the `onChange` calls of the `withObservationTracking` scopes it runs, from any thread.
final class TrackedChanges: @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0
    /// Whether each call ran on the queue marked with `queueKey`.
    private var onQueue: [Bool] = []
    let queueKey = DispatchSpecificKey<Int>()

    var count: Int { lock.withLock { calls } }
    var callsOnQueue: [Bool] { lock.withLock { onQueue } }

    /// Runs `read` inside `withObservationTracking`; its `onChange` counts.
    @discardableResult
    func track<T>(_ read: () -> T) -> T {
        withObservationTracking(read) { [self] in
            let here = DispatchQueue.getSpecific(key: queueKey) == 1
            lock.withLock {
                calls += 1
                onQueue.append(here)
            }
        }
    }
}

final class ObservedPlace: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var visitors = 0
}

/// Swift Observation (`withObservationTracking`, what a SwiftUI body uses): a read of a managed
/// object or collection registers it, a committed change to it fires the change handler once, on
/// the realm's isolation; unmanaged objects behave like `@Observable` classes.
@Suite struct ObservationTests {
    private func seeded() throws -> (TestRealm, Realm, Dog, Dog) {
        let t = try TestRealm()
        let realm = try t.open()
        let (rex, fido) = try realm.write {
            (realm.create(Dog.self, value: ["name": "Rex", "age": 3]), realm.create(Dog.self, value: ["name": "Fido", "age": 5]))
        }
        return (t, realm, rex, fido)
    }

    // MARK: Objects

    @Test func aCommittedChangeOfATrackedPropertyFiresOnceAndTrackingAgainSeesTheNext() throws {
        let (t, realm, rex, _) = try seeded()
        _ = t
        let changes = TrackedChanges()
        #expect(changes.track { rex.name } == "Rex")
        realm.beginWrite()
        rex.name = "Max"
        #expect(changes.count == 0, "nothing fires before the commit")
        try realm.commitWrite()
        #expect(changes.count == 1)
        #expect(rex.name == "Max")

        // The handler is one-shot: a later commit without tracking again calls nothing.
        try realm.write { rex.name = "Bo" }
        #expect(changes.count == 1)

        changes.track { rex.name }
        try realm.write { rex.name = "Rex" }
        #expect(changes.count == 2)
    }

    @Test func oneCommitChangingSeveralTrackedPropertiesCallsTheHandlerOnce() throws {
        let (t, realm, rex, fido) = try seeded()
        _ = t
        let changes = TrackedChanges()
        changes.track { (rex.name, rex.age, fido.age) }
        try realm.write {
            rex.name = "Max"
            rex.age = 4
            fido.age = 6
        }
        #expect(changes.count == 1)
        changes.track { (rex.name, rex.age, fido.age) }
        try realm.write { fido.age = 7 }
        #expect(changes.count == 2)
    }

    @Test func anUntrackedPropertyOrAnotherObjectOfTheClassDoesNotFire() throws {
        let (t, realm, rex, fido) = try seeded()
        _ = t
        let changes = TrackedChanges()
        changes.track { rex.name }
        try realm.write {
            rex.age = 10
            fido.name = "Max"
        }
        realm.refresh()
        #expect(changes.count == 0)
        // Still tracked: the property itself does fire.
        try realm.write { rex.name = "Max" }
        #expect(changes.count == 1)
    }

    @Test func anotherAccessorOfTheSameObjectSeesTheChange() throws {
        let (t, realm, rex, _) = try seeded()
        _ = t
        let changes = TrackedChanges()
        changes.track { rex.name }
        try realm.write { realm.objects(Dog.self).where { $0.name == "Rex" }.first!.name = "Max" }
        #expect(changes.count == 1)
    }

    @Test func aCommitFromAnotherThreadFiresWhenTheRealmAdvances() throws {
        let (t, realm, rex, _) = try seeded()
        let changes = TrackedChanges()
        changes.track { rex.age }
        let configuration = Unchecked(t.configuration)
        try onAnotherThread {
            let other = try Realm(configuration: configuration.value)
            try other.write { other.objects(Dog.self).where { $0.name == "Rex" }.first!.age = 30 }
        }
        // A realm confined to a thread with no run loop advances when asked.
        #expect(changes.count == 0)
        realm.refresh()
        #expect(changes.count == 1)
        #expect(rex.age == 30)
    }

    @Test func aRealmConfinedToAQueueFiresOnItsQueue() async throws {
        let t = try TestRealm()
        try t.seedDogs([("Rex", 3)])
        let queue = DispatchQueue(label: "observation-tests")
        let changes = TrackedChanges()
        queue.setSpecific(key: changes.queueKey, value: 1)
        let configuration = Unchecked(t.configuration)
        // Opened and tracked on the queue; the object stays alive in the queue's realm.
        let held = try queue.sync {
            let realm = try Realm(configuration: configuration.value, queue: queue)
            let rex = realm.objects(Dog.self).first!
            changes.track { rex.age }
            return Unchecked((realm, rex))
        }
        try await onAnotherThread {
            let other = try Realm(configuration: configuration.value)
            try other.write { other.objects(Dog.self).first!.age = 4 }
        }
        #expect(await waitUntil { changes.count == 1 })
        #expect(changes.callsOnQueue == [true])
        queue.sync { withExtendedLifetime(held) {} }
    }

    @Test func deletingATrackedObjectFires() throws {
        let (t, realm, rex, fido) = try seeded()
        _ = t
        let changes = TrackedChanges()
        changes.track { rex.name }
        let other = TrackedChanges()
        other.track { fido.name }
        try realm.write { realm.delete(rex) }
        #expect(changes.count == 1)
        #expect(rex.isInvalidated)
        #expect(other.count == 0)
    }

    @Test func aKeyPathThroughALinkFiresForTheLinkedObject() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let rex = try realm.write {
            realm.create(Dog.self, value: ["name": "Rex", "owner": ["name": "Frodo", "age": 50]] as [String: Any])
        }
        let changes = TrackedChanges()
        #expect(changes.track { rex.owner?.age } == 50)
        try realm.write { realm.object(ofType: Person.self, forPrimaryKey: "Frodo")!.age = 51 }
        #expect(changes.count == 1)
    }

    @Test func anEmbeddedObjectsPropertyFires() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let frodo = try realm.write {
            realm.create(Person.self, value: ["name": "Frodo", "address": ["street": "Bagshot Row", "city": "Hobbiton"]] as [String: Any])
        }
        let address = try #require(frodo.address)
        let changes = TrackedChanges()
        #expect(changes.track { address.city } == "Hobbiton")
        try realm.write { address.street = "Bag End" }
        #expect(changes.count == 0)
        try realm.write { address.city = "Bree" }
        #expect(changes.count == 1)
    }

    @Test func aProjectionsPropertyFires() throws {
        let t = try TestRealm(objectTypes: [PJPerson.self, PJAddress.self])
        let realm = try t.open()
        let jon = try realm.write { realm.create(PJPerson.self, value: ["firstName": "Jon", "lastName": "Snow", "age": 25]) }
        let projection = PJPersonProjection(projecting: jon)
        let changes = TrackedChanges()
        #expect(changes.track { projection.years } == 25)
        try realm.write { jon.lastName = "Targaryen" }
        #expect(changes.count == 0)
        try realm.write { jon.age = 26 }
        #expect(changes.count == 1)
        #expect(projection.years == 26)
    }

    @Test func anUnmanagedObjectBehavesLikeAnObservableClass() {
        let dog = Dog(value: ["name": "Rex"])
        let changes = TrackedChanges()
        #expect(changes.track { dog.name } == "Rex")
        dog.age = 4
        #expect(changes.count == 0)
        dog.name = "x"
        #expect(changes.count == 1)
        dog.name = "y"
        #expect(changes.count == 1)
        // An object nobody read fires nothing, and costs no registrar.
        let other = Dog()
        other.name = "z"
        #expect(other.name == "z")
    }

    @Test func aFrozenObjectReadsAsBefore() throws {
        let (t, realm, rex, _) = try seeded()
        _ = t
        let frozen = rex.freeze()
        let changes = TrackedChanges()
        #expect(changes.track { frozen.name } == "Rex")
        try realm.write { rex.name = "Max" }
        #expect(changes.count == 0)
        #expect(frozen.name == "Rex")
    }

    // MARK: Collections

    @Test func resultsFireOnAChangeOfTheirTableNotOfAnUnrelatedOne() throws {
        let (t, realm, _, _) = try seeded()
        _ = t
        let dogs = realm.objects(Dog.self)
        let changes = TrackedChanges()
        #expect(changes.track { dogs.count } == 2)
        try realm.write { realm.add(Task(value: ["name": "unrelated"])) }
        #expect(changes.count == 0)
        try realm.write { realm.add(Dog(value: ["name": "Bo"])) }
        #expect(changes.count == 1)
        #expect(dogs.count == 3)
    }

    @Test func aFilteredResultsIterationFires() throws {
        let (t, realm, _, fido) = try seeded()
        _ = t
        let old = realm.objects(Dog.self).where { $0.age > 4 }
        let changes = TrackedChanges()
        #expect(changes.track { old.map(\.name) } == ["Fido"])
        try realm.write { fido.age = 2 }
        #expect(changes.count == 1)
        #expect(old.isEmpty)
    }

    @Test func aListFiresWhenAppendedTo() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let frodo = try realm.write { realm.create(Person.self, value: ["name": "Frodo"]) }
        let sam = try realm.write { realm.create(Person.self, value: ["name": "Sam"]) }
        let dogs = frodo.dogs
        let changes = TrackedChanges()
        #expect(changes.track { dogs.count } == 0)
        try realm.write { sam.dogs.append(Dog(value: ["name": "Other"])) }
        #expect(changes.count == 0, "another owner's list")
        try realm.write { frodo.dogs.append(Dog(value: ["name": "Rex"])) }
        #expect(changes.count == 1)
        #expect(dogs.count == 1)
    }

    @Test func aMutableSetFiresWhenInsertedInto() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let frodo = try realm.write { realm.create(Person.self, value: ["name": "Frodo"]) }
        let changes = TrackedChanges()
        #expect(changes.track { frodo.tags.contains("hobbit") } == false)
        try realm.write { frodo.age = 51 }
        #expect(changes.count == 0)
        try realm.write { frodo.tags.insert("hobbit") }
        #expect(changes.count == 1)
    }

    @Test func aMapFiresWhenAKeyIsSet() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let frodo = try realm.write { realm.create(Person.self, value: ["name": "Frodo"]) }
        let scores = frodo.scores
        let changes = TrackedChanges()
        #expect(changes.track { scores["riddles"] } == nil)
        try realm.write { scores["riddles"] = 3 }
        #expect(changes.count == 1)
        #expect(scores["riddles"] == 3)
    }

    @Test func linkingObjectsFireWhenALinkToTheObjectIsAdded() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try t.open()
        let dishes = try realm.write { realm.create(Chore.self, value: ["title": "dishes"]) }
        let assignees = dishes.assignees
        let changes = TrackedChanges()
        #expect(changes.track { assignees.count } == 0)
        try realm.write { realm.create(Assignee.self, value: ["name": "Sam", "chores": [dishes]] as [String: Any]) }
        #expect(changes.count == 1)
        #expect(assignees.count == 1)
    }

    @Test func sectionedResultsFireWhenAnObjectMovesSection() throws {
        let (t, realm, rex, _) = try seeded()
        _ = t
        let byAge = realm.objects(Dog.self).sectioned(by: \.age, ascending: true)
        let changes = TrackedChanges()
        #expect(changes.track { byAge.allKeys } == [3, 5])
        try realm.write { realm.add(Task(value: ["name": "unrelated"])) }
        #expect(changes.count == 0)
        try realm.write { rex.age = 5 }
        #expect(changes.count == 1)
        #expect(byAge.allKeys == [5])
    }

    @Test func aResultsSectionFires() throws {
        let (t, realm, _, _) = try seeded()
        _ = t
        let byAge = realm.objects(Dog.self).sectioned(by: \.age, ascending: true)
        let section = byAge[0]
        let changes = TrackedChanges()
        #expect(changes.track { section.count } == 1)
        try realm.write { realm.add(Dog(value: ["name": "Bo", "age": 3])) }
        #expect(changes.count == 1)
        #expect(section.count == 2)
    }

    @Test func anyRealmCollectionFiresThroughWhatItWraps() throws {
        let (t, realm, _, _) = try seeded()
        _ = t
        let any = AnyRealmCollection(realm.objects(Dog.self))
        let changes = TrackedChanges()
        #expect(changes.track { any.count } == 2)
        try realm.write { realm.add(Dog(value: ["name": "Bo"])) }
        #expect(changes.count == 1)
    }

    @Test func registrationsOfReleasedObjectsAreDroppedAndReadsStayCorrect() throws {
        let t = try TestRealm(objectTypes: [ObservedPlace.self])
        let realm = try t.open()
        try realm.write {
            for i in 0..<3_000 { realm.add(ObservedPlace(value: ["name": "place \(i)", "visitors": i])) }
        }
        // Many accessors read and released: the registry sweeps those nothing holds.
        var total = 0
        for place in realm.objects(ObservedPlace.self) { total += place.visitors }
        #expect(total == (0..<3_000).reduce(0, +))
        #expect(realm.observationRegistrations < 3_000)
        let kept = try #require(realm.object(ofType: ObservedPlace.self, forPrimaryKey: "place 7"))
        let changes = TrackedChanges()
        changes.track { kept.visitors }
        for place in realm.objects(ObservedPlace.self) { total += place.visitors }
        try realm.write { kept.visitors = -1 }
        #expect(changes.count == 1)
    }
}

/// A tracked object of a synced realm fires when another device's change arrives in a download.
@MainActor @Suite(.serialized) struct ObservationSyncTests {
    @Test func aDownloadedChangeFiresTheTrackedProperty() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            var configurationA = frodo.configuration(partitionValue: "shire")
            configurationA.objectTypes = [SyncedTask.self]
            var configurationB = sam.configuration(partitionValue: "shire")
            configurationB.objectTypes = [SyncedTask.self]
            let realmA = try await Realm(configuration: configurationA, downloadBeforeOpen: .never)
            let id = ObjectId.generate()
            try realmA.write { realmA.add(SyncedTask(value: ["_id": id, "name": "Carry the ring", "owner": "Frodo"] as [String: Any])) }
            try await realmA.syncSession!.wait(for: .upload)

            let realmB = try await Realm(configuration: configurationB, downloadBeforeOpen: .always)
            let task = try #require(realmB.object(ofType: SyncedTask.self, forPrimaryKey: id))
            let changes = TrackedChanges()
            #expect(changes.track { task.name } == "Carry the ring")
            try realmA.write { realmA.object(ofType: SyncedTask.self, forPrimaryKey: id)!.done = true }
            try realmA.write { realmA.object(ofType: SyncedTask.self, forPrimaryKey: id)!.name = "Destroy the ring" }
            try await realmA.syncSession!.wait(for: .upload)
            try await realmB.syncSession!.wait(for: .download)
            // The realm of the main actor advances on its own once the download is committed.
            #expect(await waitUntil(timeout: .seconds(30)) { changes.count == 1 })
            #expect(task.name == "Destroy the ring")
        }
    }
}
