import Atoll
import AtollTesting
import Foundation
import Testing

/// `ThreadConfined`, `ThreadSafeReference` for every kind of managed value, `@ThreadSafe`,
/// `realm.freeze/thaw`, realms confined to a dispatch queue, and observation on an actor.
@Suite struct ThreadConfinedTests {
    private func seededPerson(_ t: TestRealm, in opened: Realm? = nil) throws -> (Realm, Person) {
        let realm = try opened ?? t.open()
        let person = Person(value: ["name": "Ann", "age": 40])
        try realm.write {
            realm.add(person)
            person.dogs.append(objectsIn: [Dog(value: ["name": "Rex", "age": 3]), Dog(value: ["name": "Fido", "age": 5])])
            person.tags.insert(objectsIn: ["a", "b"])
            person.scores["math"] = 9
            person.nicknames.append("Annie")
        }
        return (realm, person)
    }

    // MARK: ThreadSafeReference

    @Test func listsSetsAndMapsResolveOnAnotherThread() throws {
        let t = try TestRealm()
        let (_, person) = try seededPerson(t)
        let dogs = ThreadSafeReference(to: person.dogs)
        let tags = ThreadSafeReference(to: person.tags)
        let scores = ThreadSafeReference(to: person.scores)
        let nicknames = ThreadSafeReference(to: person.nicknames)
        let configuration = Unchecked(t.configuration)
        let read = try onAnotherThread { () -> [String] in
            let realm = try Realm(configuration: configuration.value)
            let list = try #require(realm.resolve(dogs))
            let set = try #require(realm.resolve(tags))
            let map = try #require(realm.resolve(scores))
            let values = try #require(realm.resolve(nicknames))
            return list.map(\.name) + set.sorted() + ["\(map["math"] ?? nil ?? -1)"] + Array(values)
        }
        #expect(read == ["Rex", "Fido", "a", "b", "9", "Annie"])
    }

    @Test func linkingObjectsAndAnyRealmCollectionResolveOnAnotherThread() throws {
        let t = try TestRealm(objectTypes: [Assignee.self, Chore.self])
        let realm = try t.open()
        let chore = Chore(value: ["title": "dishes"])
        try realm.write {
            realm.add(Assignee(value: ["name": "Ann", "chores": [chore]]))
            realm.add(Assignee(value: ["name": "Bob", "chores": [chore]]))
        }
        let assignees = ThreadSafeReference(to: chore.assignees)
        let any = ThreadSafeReference(to: AnyRealmCollection(realm.objects(Assignee.self).filter("name != 'Bob'")))
        let configuration = Unchecked(t.configuration)
        let (names, others) = try onAnotherThread { () -> ([String], [String]) in
            let realm = try Realm(configuration: configuration.value)
            let linking = try #require(realm.resolve(assignees))
            let collection = try #require(realm.resolve(any))
            return (linking.map(\.name).sorted(), collection.map(\.name))
        }
        #expect(names == ["Ann", "Bob"])
        #expect(others == ["Ann"])
    }

    @Test func aReferenceResolvesOnceAndTheCollectionOfADeletedOwnerIsNil() throws {
        let t = try TestRealm()
        let (realm, person) = try seededPerson(t)
        let reference = ThreadSafeReference(to: person)
        #expect(!reference.isInvalidated)
        #expect(realm.resolve(reference)?.name == "Ann")
        #expect(reference.isInvalidated)

        let dogs = ThreadSafeReference(to: person.dogs)
        try realm.write { realm.delete(person) }
        let configuration = Unchecked(t.configuration)
        let found = try onAnotherThread { try Realm(configuration: configuration.value).resolve(dogs) != nil }
        #expect(!found)
    }

    @Test func resolvingTwiceStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let t = try TestRealm()
            let realm = try t.open()
            let dog = Dog(value: ["name": "Rex"])
            try realm.write { realm.add(dog) }
            let reference = ThreadSafeReference(to: dog)
            _ = realm.resolve(reference)
            _ = realm.resolve(reference)
        }
    }

    @Test func genericCodeTakesAnyThreadConfinedValue() throws {
        func describe<T: ThreadConfined>(_ value: T) -> String {
            "\(value.realm != nil) \(value.isFrozen) \(value.freeze().isFrozen) \(value.isInvalidated)"
        }
        let t = try TestRealm()
        let (realm, person) = try seededPerson(t)
        #expect(describe(person) == "true false true false")
        #expect(describe(person.dogs) == "true false true false")
        #expect(describe(realm.objects(Dog.self)) == "true false true false")
        #expect(describe(person.scores) == "true false true false")
    }

    // MARK: freeze and thaw through the realm

    @Test func theRealmFreezesAndThawsObjectsAndCollections() throws {
        let t = try TestRealm()
        let (realm, person) = try seededPerson(t)
        let frozen = realm.freeze(person)
        let frozenDogs = realm.freeze(person.dogs)
        #expect(frozen.isFrozen && frozenDogs.isFrozen)
        try realm.write { person.age = 41; person.dogs.removeFirst() }
        #expect(frozen.age == 40 && frozenDogs.count == 2)
        let thawed = try #require(realm.thaw(frozen))
        #expect(thawed.age == 41 && !thawed.isFrozen)
        #expect(realm.thaw(frozenDogs)?.count == 1)
    }

    // MARK: @ThreadSafe

    final class Holder: @unchecked Sendable {
        @ThreadSafe var person: Person?
        @ThreadSafe var dogs: Results<Dog>?
    }

    @Test func aThreadSafePropertyReadsOnAnyThread() throws {
        let t = try TestRealm()
        let (realm, person) = try seededPerson(t)
        let holder = Holder()
        holder.person = person
        holder.dogs = realm.objects(Dog.self).filter("age > 4")
        let (name, dogs) = try onAnotherThread { (holder.person?.name, holder.dogs?.map(\.name)) }
        #expect(name == "Ann" && dogs == ["Fido"])

        // A write on the other thread is seen here through the same property once this thread's
        // realm advances (its run loop would do it; this thread has none).
        try onAnotherThread { () -> Void in
            let other = try #require(holder.person)
            try other.realm!.write { other.age = 50 }
        }
        #expect(holder.person?.age == 40, "the thread's realm does not move under it")
        realm.refresh()
        #expect(holder.person?.age == 50)

        try realm.write { realm.delete(realm.objects(Person.self)) }
        #expect(try onAnotherThread { holder.person == nil })
        holder.dogs = nil
        #expect(holder.dogs == nil)
    }

    // MARK: Realms confined to a dispatch queue

    @Test func aQueueRealmDeliversItsNotificationsOnTheQueue() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.queue-realm")
        let counts = Recorder<Int>()
        let configuration = Unchecked(t.configuration)
        let token = try queue.sync { () -> NotificationToken in
            let realm = try Realm(configuration: configuration.value, queue: queue)
            return realm.objects(Dog.self).observe { change in
                dispatchPrecondition(condition: .onQueue(queue))
                switch change {
                case .initial(let dogs), .update(let dogs, _, _, _): counts.append(dogs.count)
                case .error: break
                }
            }
        }
        try t.seedDogs([("Rex", 1), ("Fido", 2)])
        #expect(await waitUntil { counts.all == [0, 2] })
        token.invalidate()
    }

    @Test func aQueueRealmUsedOffItsQueueThrowsWrongThread() throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.queue-realm-misuse")
        let configuration = Unchecked(t.configuration)
        let realm = try queue.sync { Unchecked(try Realm(configuration: configuration.value, queue: queue)) }
        #expect(throws: Realm.Error.self) { try realm.value.write {} }
        do {
            try realm.value.write {}
        } catch let error as Realm.Error {
            #expect(error.code == .wrongThread)
        }
        // On the queue it works; `queue: nil` confines to the current thread.
        try queue.sync { try realm.value.write { realm.value.add(Dog(value: ["name": "Rex"])) } }
        let here = try Realm(configuration: t.configuration, queue: nil)
        #expect(here.objects(Dog.self).count == 1)
    }

    // MARK: Observing on an actor

    @MainActor
    @Test func resultsListsSetsMapsAndObjectsAreObservedOnAnActor() async throws {
        let t = try TestRealm()
        // A realm of the main actor, whose jobs may run on any thread.
        let (realm, person) = try seededPerson(t, in: try await Realm(configuration: t.configuration, actor: MainActor.shared))
        let counter = ChangeCounter()
        var tokens: [NotificationToken] = []
        tokens.append(await realm.objects(Dog.self).observe(on: counter) { counter, change in
            if case .update(let dogs, _, _, _) = change { counter.note("dogs \(dogs.count)") }
        })
        tokens.append(await person.dogs.observe(on: counter) { counter, change in
            if case .update(let list, _, let insertions, _) = change { counter.note("list \(list.count) \(insertions)") }
        })
        tokens.append(await person.tags.observe(on: counter) { counter, change in
            if case .update(let set, _, _, _) = change { counter.note("set \(set.count)") }
        })
        tokens.append(await person.scores.observe(on: counter) { counter, change in
            if case .update(_, _, let insertions, _) = change { counter.note("map \(insertions)") }
        })
        tokens.append(await person.observe(keyPaths: [\Person.age], on: counter) { (counter, change: ObjectChange<Person>) in
            if case .change(_, let properties) = change { counter.note("person \(properties.map(\.name))") }
        })
        #expect(await counter.notes.isEmpty, "the initial states are not updates")
        try realm.write {
            person.dogs.append(Dog(value: ["name": "Spot"]))
            person.tags.insert("c")
            person.scores["art"] = 7
            person.age = 41
        }
        #expect(await waitUntilAsync { await counter.notes.count == 5 })
        #expect(await Set(counter.notes) == ["dogs 3", "list 3 [2]", "set 3", "map [\"art\"]", "person [\"age\"]"])
        try realm.write { person.height = 1.7 }  // not an observed key path of the person
        try realm.write { person.age = 42 }
        #expect(await waitUntilAsync { await counter.notes.count == 6 })
        for token in tokens { token.invalidate() }
    }
}

/// Counts changes delivered on it.
actor ChangeCounter {
    private(set) var notes: [String] = []
    func note(_ text: String) {
        notes.append(text)
    }
}

/// `waitUntil` for a condition that has to await.
func waitUntilAsync(timeout: Duration = .seconds(10), isolation: isolated (any Actor)? = #isolation,
                    _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while await !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await _Concurrency.Task.sleep(for: .milliseconds(5))
    }
    return true
}
