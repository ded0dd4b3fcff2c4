import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// A realm isolated to an actor, as an app's model layer would hold one.
actor DogStore {
    private(set) var realm: Realm?

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func add(_ name: String, age: Int) async throws {
        let realm = try #require(realm)
        try await realm.asyncWrite { realm.add(Dog(value: ["name": name, "age": age])) }
    }

    func names() -> [String] { realm?.objects(Dog.self).sorted(byKeyPath: "age").map(\.name) ?? [] }

    /// Hands the realm to a caller off the actor, which is a misuse the realm must catch.
    func leak() -> Unchecked<Realm?> { Unchecked(realm) }

    func close() { realm = nil }
}

/// Realm's documented actor pattern, in Swift 6 mode (ActorStoreApp has it in Swift 5 mode):
/// the realm opened in the actor's initializer and written with `asyncWrite` in its methods.
/// Swift 6.3 crashed compiling this ("Invalid bitcast") while `Realm(configuration:actor:)` took a
/// generic isolated parameter.
actor TodoStore {
    var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func add(_ name: String) async throws {
        try await realm.asyncWrite {
            realm.add(Dog(value: ["name": name]))
        }
    }

    func count() -> Int { realm.objects(Dog.self).count }

    /// Catches up with writes made through another realm of the file.
    func refreshedCount() async -> (refreshed: Bool, count: Int) {
        let refreshed = await realm.asyncRefresh()
        return (refreshed, realm.objects(Dog.self).count)
    }

    func close() { realm = nil }
}

/// Confinement of realms to threads and actors, passing data across with references and frozen
/// snapshots, and snapshot isolation between realm instances.
@Suite struct ThreadingTests {
    // MARK: Confinement

    @Test func writeFromAnotherThreadThrowsWrongThread() throws {
        let t = try TestRealm()
        let realm = Unchecked(try t.open())
        let code = try onAnotherThread { () -> Realm.Error.Code? in
            do {
                try realm.value.write { realm.value.add(Dog()) }
                return nil
            } catch let error as Realm.Error {
                return error.code
            }
        }
        #expect(code == .wrongThread)
        #expect(realm.value.objects(Dog.self).isEmpty)
    }

    @Test func readingARealmFromAnotherThreadTrapsWithAClearMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = try TemporaryFolder("atoll-exit")
            let realm = Unchecked(try Realm(configuration: folder.configuration(objectTypes: [Dog.self, Person.self, Address.self])))
            folder.remove()
            _ = try onAnotherThread { realm.value.objects(Dog.self).count }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Realm accessed from incorrect thread"))
    }

    @Test func readingAnObjectFromAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = try TemporaryFolder("atoll-exit")
            let realm = try Realm(configuration: folder.configuration(objectTypes: [Dog.self, Person.self, Address.self]))
            folder.remove()
            try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
            let dog = Unchecked(try #require(realm.objects(Dog.self).first))
            _ = dog.value.name
            _ = try onAnotherThread { dog.value.name }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Realm accessed from incorrect thread"))
    }

    @Test func anActorsRealmUsedOffTheActorTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = try TemporaryFolder("atoll-exit")
            let store = DogStore()
            try await store.open(folder.configuration(objectTypes: [Dog.self, Person.self, Address.self]))
            folder.remove()
            let realm = await store.leak()
            _ = try await onAnotherThread { realm.value?.objects(Dog.self).count }
        }
        // The runtime's actor check stops the process before a message of ours can be printed.
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Incorrect actor executor assumption") && message.contains("DogStore"))
    }

    // MARK: Passing data between threads

    @Test func threadSafeReferenceResolvesAnObjectOnAnotherThread() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let rex = Dog(value: ["name": "Rex", "age": 3])
        try realm.write { realm.add(rex) }
        let reference = ThreadSafeReference(to: rex)
        let configuration = t.configuration
        let (name, age) = try onAnotherThread {
            let other = try Realm(configuration: configuration)
            let dog = try #require(other.resolve(reference))
            return (dog.name, dog.age)
        }
        #expect(name == "Rex" && age == 3)
    }

    @Test func threadSafeReferenceResolvesResultsOnAnotherThread() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 5), ("b", 1), ("c", 9), ("d", 3)])
        let realm = try t.open()
        let results = realm.objects(Dog.self).filter("age > 2").sorted(byKeyPath: "age", ascending: false)
        let reference = ThreadSafeReference(to: results)
        let configuration = t.configuration
        let names = try onAnotherThread {
            let other = try Realm(configuration: configuration)
            return try #require(other.resolve(reference)).map(\.name)
        }
        #expect(names == ["c", "a", "d"])
    }

    @Test func resolvingAReferenceAdvancesAnOlderRealm() throws {
        let t = try TestRealm()
        let older = try t.open()
        older.autorefresh = false
        // Written on another thread: this thread's `Realm()` is `older` itself.
        let configuration = t.configuration
        let reference = try onAnotherThread {
            let realm = try Realm(configuration: configuration)
            let rex = Dog(value: ["name": "Rex"])
            try realm.write { realm.add(rex) }
            return ThreadSafeReference(to: rex)
        }
        #expect(older.objects(Dog.self).isEmpty, "older still reads the snapshot from before Rex")
        #expect(try #require(older.resolve(reference)).name == "Rex")
    }

    @Test func threadSafeReferenceToADeletedObjectResolvesToNil() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let rex = Dog(value: ["name": "Rex"])
        try realm.write { realm.add(rex) }
        let reference = ThreadSafeReference(to: rex)
        try realm.write { realm.delete(rex) }
        let configuration = t.configuration
        let found = try onAnotherThread { try Realm(configuration: configuration).resolve(reference) != nil }
        #expect(!found)
    }

    @Test func frozenRealmIsReadableFromAnotherThread() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 1), ("b", 2)])
        let realm = try t.open()
        let frozen = Unchecked(realm.freeze())
        #expect(frozen.value.isFrozen)
        let names = try onAnotherThread { frozen.value.objects(Dog.self).sorted(byKeyPath: "age").map(\.name) }
        #expect(names == ["a", "b"])
        #expect(throws: Realm.Error.self) { try frozen.value.write {} }
    }

    @Test func frozenResultsDoNotChangeAfterLaterWrites() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 1), ("b", 2)])
        let realm = try t.open()
        let live = realm.objects(Dog.self).sorted(byKeyPath: "age")
        let frozen = live.freeze()
        let a = live[0]
        try realm.write {
            realm.add(Dog(value: ["name": "c", "age": 0]))
            a.name = "A"
        }
        #expect(live.map(\.name) == ["c", "A", "b"])
        #expect(frozen.isFrozen)
        #expect(frozen.map(\.name) == ["a", "b"])
        let box = Unchecked(frozen)
        #expect(try onAnotherThread { box.value.map(\.name) } == ["a", "b"])
    }

    @Test func frozenObjectKeepsItsValues() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 1)])
        let realm = try t.open()
        let dog = try #require(realm.objects(Dog.self).first)
        let frozen = try #require(realm.freeze().objects(Dog.self).first)
        try realm.write { dog.age = 2 }
        #expect(dog.age == 2)
        let box = Unchecked(frozen)
        #expect(try onAnotherThread { box.value.age } == 1)
        #expect(frozen.isFrozen)
    }

    @Test func frozenResultsCanBeReadFromSeveralThreadsAtOnce() throws {
        let t = try TestRealm()
        try t.seedDogs((0..<50).map { ("dog\($0)", $0) })
        let realm = try t.open()
        let frozen = Unchecked(realm.objects(Dog.self).sorted(byKeyPath: "age").freeze())
        let totals = Recorder<Int>()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<20 {
                totals.append(frozen.value.reduce(0) { $0 + $1.age })
            }
        }
        #expect(totals.all == Array(repeating: (0..<50).reduce(0, +), count: 80))
    }

    // MARK: Snapshots

    @Test func readerKeepsItsSnapshotWhileAnotherThreadCommits() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 1)])
        let realm = try t.open()
        let live = realm.objects(Dog.self)
        #expect(live.count == 1)
        let configuration = t.configuration
        try onAnotherThread {
            let writer = try Realm(configuration: configuration)
            try writer.write { writer.add(Dog(value: ["name": "b"])) }
        }
        #expect(realm.objects(Dog.self).count == 1, "a new query still reads the old snapshot")
        #expect(live.count == 1)
        #expect(realm.refresh())
        #expect(realm.objects(Dog.self).count == 2)
        #expect(live.count == 2)
        #expect(!realm.refresh(), "nothing newer to move to")
    }

    @Test func beginWriteMovesToTheNewestVersionAndNotifies() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 1)])
        let realm = try t.open()
        let seen = Recorder<SeenChange>()
        let token = realm.objects(Dog.self).observe { seen.append(SeenChange($0)) }
        let configuration = t.configuration
        try onAnotherThread {
            let writer = try Realm(configuration: configuration)
            try writer.write { writer.add(Dog(value: ["name": "b"])) }
        }
        #expect(seen.all == [.initial(count: 1)])
        try realm.write { realm.add(Dog(value: ["name": "c"])) }
        #expect(seen.all == [.initial(count: 1),
                             .update(deletions: [], insertions: [1], modifications: []),
                             .update(deletions: [], insertions: [2], modifications: [])])
        token.invalidate()
    }

    // MARK: Actors

    @Test func realmOpenedForAnActorWritesWithAsyncWrite() async throws {
        let t = try TestRealm()
        let store = DogStore()
        try await store.open(t.configuration)
        try await store.add("b", age: 2)
        try await store.add("a", age: 1)
        #expect(await store.names() == ["a", "b"])
        await store.close()
        t.expectAllRealmsClosed()
    }

    @MainActor @Test func realmOpenUsesTheCallersActor() async throws {
        let t = try TestRealm()
        do {
            let realm = try await Realm.open(configuration: t.configuration)
            try realm.write { realm.add(Dog(value: ["name": "a"])) }
            #expect(realm.objects(Dog.self).count == 1)
        }
        t.expectAllRealmsClosed()
    }

    @Test func anActorOpensItsRealmInItsInitializer() async throws {
        let t = try TestRealm()
        let store = try await TodoStore(configuration: t.configuration)
        try await store.add("Rex")
        try await store.add("Fido")
        #expect(await store.count() == 2)
        let other = try Realm(configuration: t.configuration)
        try other.write { other.add(Dog(value: ["name": "Rover"])) }
        let after = await store.refreshedCount()
        #expect(after.refreshed && after.count == 3)
        await store.close()
    }

    @MainActor @Test func mainActorRealmWritesAndObserves() async throws {
        let t = try TestRealm()
        let realm = try await Realm(configuration: t.configuration, actor: MainActor.shared)
        let seen = Recorder<SeenChange>()
        let token = realm.objects(Dog.self).sorted(byKeyPath: "age").observe { seen.append(SeenChange($0)) }
        try await realm.asyncWrite {
            realm.add(Dog(value: ["name": "b", "age": 2]))
            realm.add(Dog(value: ["name": "a", "age": 1]))
        }
        #expect(seen.all == [.initial(count: 0), .update(deletions: [], insertions: [0, 1], modifications: [])])
        token.invalidate()
    }
}
