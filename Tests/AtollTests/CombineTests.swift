#if canImport(Combine)
import Combine
#else
import OpenCombine
import OpenCombineDispatch
#endif
import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// Realm's Combine publishers (realm-swift's Combine.swift), against OpenCombine on Linux: what
/// each emits, when, on which thread, and that cancelling ends the observation.
@Suite struct CombineTests {
    private func realmWithDogs(_ t: TestRealm, _ names: [String] = ["a"]) throws -> Realm {
        try t.seedDogs(names.enumerated().map { ($1, $0 + 1) })
        return try t.open()
    }

    // MARK: Objects

    @Test func objectWillChangeFiresAfterEachCommitThatChangesTheObjectAndStopsWhenCancelled() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t, ["a", "b"])
        let a = try #require(realm.objects(Dog.self).filter("name == 'a'").first)
        let b = try #require(realm.objects(Dog.self).filter("name == 'b'").first)
        var count = 0
        let cancellable = a.objectWillChange.sink { count += 1 }
        #expect(count == 0, "no signal at subscription")
        try realm.write { a.age = 10 }
        #expect(count == 1)
        try realm.write { b.age = 10 }
        #expect(count == 1, "another object's change is not this one's")
        try realm.write { a.name = "A"; a.age = 11 }
        #expect(count == 2, "one signal per commit")
        cancellable.cancel()
        try realm.write { a.age = 12 }
        #expect(count == 2)
    }

    @Test func valuePublisherEmitsTheObjectOnEachChangeAndFinishesWhenItIsDeleted() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t)
        let dog = try #require(realm.objects(Dog.self).first)
        var ages: [Int] = []
        var finished = false
        let cancellable = valuePublisher(dog).sink(receiveCompletion: { _ in finished = true }, receiveValue: { ages.append($0.age) })
        try realm.write { dog.age = 5 }
        try realm.write { dog.age = 6 }
        #expect(ages == [5, 6])
        #expect(!finished)
        try realm.write { realm.delete(dog) }
        #expect(finished)
        cancellable.cancel()
    }

    @Test func valuePublisherWithKeyPathsIgnoresOtherProperties() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t)
        let dog = try #require(realm.objects(Dog.self).first)
        var seen = 0
        let cancellable = valuePublisher(dog, keyPaths: ["name"]).sink(receiveCompletion: { _ in }, receiveValue: { _ in seen += 1 })
        try realm.write { dog.age = 5 }
        #expect(seen == 0)
        try realm.write { dog.name = "z" }
        #expect(seen == 1)
        cancellable.cancel()
    }

    @Test func changesetPublisherOfAnObjectReportsPropertiesAndFinishesOnDeletion() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t)
        let dog = try #require(realm.objects(Dog.self).first)
        var names: [[String]] = []
        var finished = false
        let cancellable = changesetPublisher(dog).sink(receiveCompletion: { _ in finished = true }) { change in
            if case .change(_, let properties) = change { names.append(properties.map(\.name)) }
        }
        try realm.write { dog.age = 9 }
        try realm.write { realm.delete(dog) }
        #expect(names == [["age"]])
        #expect(finished)
        cancellable.cancel()
    }

    @Test func embeddedObjectsAndProjectionsAreObservableObjects() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person(value: ["name": "p", "address": ["street": "s", "city": "c"]])
        try realm.write { realm.add(person) }
        let address = try #require(person.address)
        var signals = 0
        let first = address.objectWillChange.sink { signals += 1 }
        try realm.write { address.city = "d" }
        #expect(signals == 1)
        first.cancel()
    }

    // MARK: Collections

    @Test func collectionPublisherEmitsTheResultsAtOnceAndAfterEachChange() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t)
        var counts: [Int] = []
        let cancellable = realm.objects(Dog.self).collectionPublisher
            .sink(receiveCompletion: { _ in }, receiveValue: { counts.append($0.count) })
        #expect(counts == [1])
        try realm.write { realm.add(Dog(value: ["name": "b"])) }
        #expect(counts == [1, 2])
        cancellable.cancel()
        try realm.write { realm.add(Dog(value: ["name": "c"])) }
        #expect(counts == [1, 2])
    }

    @Test func changesetPublisherOfResultsGivesInitialThenIndices() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t, ["a", "b"])
        var seen: [SeenChange] = []
        let cancellable = realm.objects(Dog.self).sorted(byKeyPath: "name").changesetPublisher.sink { seen.append(SeenChange($0)) }
        try realm.write { realm.add(Dog(value: ["name": "c"])) }
        #expect(seen == [.initial(count: 2), .update(deletions: [], insertions: [2], modifications: [])])
        cancellable.cancel()
    }

    @Test func objectWillChangeOfListsSetsMapsAndResultsSignalsUpdatesOnly() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person(value: ["name": "p"])
        try realm.write { realm.add(person) }
        var signals: [String] = []
        var cancellables: [AnyCancellable] = []
        person.dogs.objectWillChange.sink { signals.append("list") }.store(in: &cancellables)
        person.tags.objectWillChange.sink { signals.append("set") }.store(in: &cancellables)
        person.scores.objectWillChange.sink { signals.append("map") }.store(in: &cancellables)
        realm.objects(Person.self).objectWillChange.sink { signals.append("results") }.store(in: &cancellables)
        #expect(signals.isEmpty, "subscribing is no change")
        try realm.write { person.dogs.append(Dog(value: ["name": "d"])) }
        #expect(signals.sorted() == ["list", "results"])
        signals = []
        try realm.write { person.tags.insert("x"); person.scores["k"] = 1 }
        #expect(signals.sorted() == ["map", "results", "set"])
    }

    @Test func mapChangesetPublisherReportsKeys() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person(value: ["name": "p"])
        try realm.write { realm.add(person) }
        var inserted: [[String]] = []
        let cancellable = person.scores.changesetPublisher.sink { change in
            if case .update(_, _, let insertions, _) = change { inserted.append(insertions) }
        }
        try realm.write { person.scores["a"] = 1 }
        #expect(inserted == [["a"]])
        cancellable.cancel()
    }

    @Test func sectionedResultsPublishTheirSections() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t, ["ab", "ac", "b"])
        let sectioned = realm.objects(Dog.self).sectioned(by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "name")])
        var sectionCounts: [Int] = []
        let cancellable = sectioned.collectionPublisher.sink(receiveCompletion: { _ in }) { sectionCounts.append($0.count) }
        try realm.write { realm.add(Dog(value: ["name": "c"])) }
        #expect(sectionCounts == [2, 3])
        cancellable.cancel()
    }

    @Test func realmObjectWillChangeFiresOnEachWriteAndSaveTokenSkipsTheWritesItNames() throws {
        let t = try TestRealm()
        let realm = try t.open()
        final class Holder { var token: NotificationToken? }
        let holder = Holder()
        var count = 0
        let cancellable = realm.objectWillChange.saveToken(on: holder, for: \.token).sink { count += 1 }
        try realm.write { realm.add(Dog(value: ["name": "a"])) }
        #expect(count == 1)
        let token = try #require(holder.token)
        try realm.write(withoutNotifying: [token]) { realm.add(Dog(value: ["name": "b"])) }
        #expect(count == 1)
        cancellable.cancel()
    }

    @Test func collectionSaveTokenStoresTheToken() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t)
        final class Holder { var token: NotificationToken? }
        let holder = Holder()
        var counts: [Int] = []
        let cancellable = realm.objects(Dog.self).collectionPublisher.saveToken(on: holder, at: \.token)
            .sink(receiveCompletion: { _ in }) { counts.append($0.count) }
        let token = try #require(holder.token)
        try realm.write(withoutNotifying: [token]) { realm.add(Dog(value: ["name": "b"])) }
        try realm.write { realm.add(Dog(value: ["name": "c"])) }
        #expect(counts == [1, 3])
        cancellable.cancel()
    }

    // MARK: Threads

    @Test func freezeMakesEachValueFrozen() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t)
        var frozen: [Bool] = []
        let cancellable = realm.objects(Dog.self).collectionPublisher.freeze()
            .sink(receiveCompletion: { _ in }) { frozen.append($0.isFrozen) }
        var changes: [Bool] = []
        let second = realm.objects(Dog.self).changesetPublisher.freeze().sink { change in
            if case .initial(let dogs) = change { changes.append(dogs.isFrozen) }
        }
        #expect(frozen == [true])
        #expect(changes == [true])
        cancellable.cancel()
        second.cancel()
    }

    @Test func receiveOnHandsLiveValuesOverToTheQueuesRealm() async throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t)
        let queue = DispatchQueue(label: "combine-receive")
        let seen = Locked<[String]>([])
        let dog = try #require(realm.objects(Dog.self).first)
        let cancellable = valuePublisher(dog).receive(on: queue).sink(receiveCompletion: { _ in }) { dog in
            dispatchPrecondition(condition: .onQueue(queue))
            // A live object of a realm of the queue: usable here, and writable.
            try! dog.realm!.write { dog.age += 100 }
            seen.withLock { $0.append("\(dog.name) \(dog.isFrozen) \(dog.age)") }
        }
        try realm.write { dog.age = 1 }
        #expect(await waitUntil { seen.withLock { !$0.isEmpty } })
        #expect(seen.withLock { $0.first } == "a false 101")
        cancellable.cancel()
    }

    @Test func threadSafeReferenceThenReceiveOnHandsChangesetsOver() async throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t, ["a", "b"])
        let queue = DispatchQueue(label: "combine-tsr")
        let seen = Locked<[String]>([])
        let cancellable = realm.objects(Dog.self).changesetPublisher.threadSafeReference().receive(on: queue).sink { change in
            dispatchPrecondition(condition: .onQueue(queue))
            if case .initial(let dogs) = change { seen.withLock { $0.append("initial \(dogs.count) \(dogs.isFrozen)") } }
        }
        #expect(await waitUntil { seen.withLock { !$0.isEmpty } })
        #expect(seen.withLock { $0 } == ["initial 2 false"])
        cancellable.cancel()
    }

    @Test func subscribeOnDeliversOnTheQueue() throws {
        let t = try TestRealm()
        let realm = try realmWithDogs(t)
        let queue = DispatchQueue(label: "combine-subscribe")
        let counts = Locked<[Int]>([])
        let cancellable = realm.objects(Dog.self).collectionPublisher.subscribe(on: queue)
            .sink(receiveCompletion: { _ in }) { dogs in
                dispatchPrecondition(condition: .onQueue(queue))
                counts.withLock { $0.append(dogs.count) }
            }
        #expect(pollUntil { counts.withLock { $0 == [1] } })
        try realm.write { realm.add(Dog(value: ["name": "b"])) }
        #expect(pollUntil { counts.withLock { $0 == [1, 2] } })
        cancellable.cancel()
    }

    @Test func asyncOpenPublisherOpensOnTheQueueAndFinishes() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "combine-open")
        let events = Locked<[String]>([])
        let cancellable = Realm.asyncOpen(configuration: t.configuration).receive(on: queue)
            .sink(receiveCompletion: { completion in
                let text = if case .finished = completion { "finished" } else { "failed" }
                events.withLock { $0.append(text) }
            }, receiveValue: { realm in
                dispatchPrecondition(condition: .onQueue(queue))
                events.withLock { $0.append("realm \(realm.isEmpty)") }
            })
        #expect(await waitUntil { events.withLock { $0.count == 2 } })
        #expect(events.withLock { $0 } == ["realm true", "finished"])
        cancellable.cancel()
    }

    @Test func objectKeyIdentifiableIdsAreStablePerObjectAndDistinctPerUnmanagedObject() throws {
        final class Pet: Object, ObjectKeyIdentifiable {
            @Persisted var name = ""
        }
        let t = try TestRealm(objectTypes: [Pet.self])
        let realm = try t.open()
        let pet = Pet()
        let other = Pet()
        #expect(pet.id != other.id)
        try realm.write { realm.add([pet, other]) }
        let again = try #require(realm.objects(Pet.self).first)
        #expect(again.id == realm.objects(Pet.self).first!.id)
        #expect(Set(realm.objects(Pet.self).map(\.id)).count == 2)
    }
}

/// Polls `condition` on this thread (a realm test that must stay on its thread), for at most 10 s.
func pollUntil(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while !condition() {
        if Date() > deadline { return false }
        Thread.sleep(forTimeInterval: 0.005)
    }
    return true
}
