#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
@testable import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// The logic behind the SwiftUI wrappers, without SwiftUI: what a storage signals, which values it
/// hands the view, what `@AsyncOpen` goes through. (SwiftUIShellTests drives the wrappers
/// themselves through a SwiftUI stand-in.)
@Suite struct SwiftUIStorageTests {
    @Test func objectStorageSignalsCommittedChangesAndFollowsANewValue() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let a = Dog(value: ["name": "a"]), b = Dog(value: ["name": "b"])
        try realm.write { realm.add([a, b]) }
        let storage = RealmObjectStorage(a.freeze()) { Dog() }
        #expect(!storage.value.isFrozen, "the storage keeps the live object")
        #expect(storage.wrappedValue.isFrozen, "the view reads a snapshot")
        var signals = 0
        let cancellable = storage.objectWillChange.sink { signals += 1 }
        try realm.write { a.age = 3 }
        // The storage's object is of another realm of this thread: it sees the commit when it advances.
        storage.value.realm!.refresh()
        #expect(signals == 1)
        storage.value = storage.value.realm!.objects(Dog.self).filter("name == 'b'").first!
        #expect(signals == 2, "another object is a change")
        try realm.write { a.age = 4 }
        storage.value.realm!.refresh()
        #expect(signals == 2, "the old object is no longer observed")
        try realm.write { b.age = 4 }
        storage.value.realm!.refresh()
        #expect(signals == 3)
        try realm.write { realm.delete(b) }
        storage.value.realm!.refresh()
        #expect(storage.wrappedValue.name == "", "a deleted object reads as the default")
        cancellable.cancel()
    }

    @Test func aPropertyBindingWritesOnlyChangesAndKeepsTheLastValueOfADeletedObject() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let dog = Dog(value: ["name": "a"])
        try realm.write { realm.add(dog) }
        var commits = 0
        let token = realm.observe { _, _ in commits += 1 }
        let name = RealmPropertyBinding(dog.freeze(), \Dog.name, isSame: ==)
        name.set("a")
        realm.refresh()
        #expect(commits == 0, "the same value writes nothing")
        name.set("b")
        realm.refresh()
        #expect(dog.name == "b")
        #expect(name.get() == "b")
        #expect(commits == 1)
        try realm.write { realm.delete(dog) }
        #expect(name.get() == "b")
        name.set("c")  // no crash, no write
        token.invalidate()
    }

    @Test func resultsStorageIsLazySignalsChangesAndSearches() throws {
        let t = try TestRealm()
        try t.seedDogs([("rex", 1), ("max", 2), ("bella", 3)])
        let storage = ObservedResultsStorage<Dog> { $0.objects(Dog.self) }
        storage.update(environment: t.configuration)
        storage.sortDescriptors = [SortDescriptor(keyPath: "name")]
        #expect(storage.wrappedValue.map(\.name) == ["bella", "max", "rex"])
        var signals = 0
        let cancellable = storage.objectWillChange.sink { signals += 1 }
        storage.searchText("e", onKeyPath: "name")
        #expect(signals == 1, "a new query is a change")
        #expect(storage.wrappedValue.map(\.name) == ["bella", "rex"])
        let realm = storage.value.realm!
        try realm.write { realm.add(Dog(value: ["name": "teddy"])) }
        #expect(signals == 2)
        #expect(storage.wrappedValue.map(\.name) == ["bella", "rex", "teddy"])
        storage.update(environment: .defaultConfiguration)
        #expect(storage.configuration?.fileURL == t.configuration.fileURL, "the environment does not replace a configuration")
        cancellable.cancel()
    }

    @MainActor @Test func boundCollectionsEditInWritesWithFrozenArguments() throws {
        struct Bound<V>: BoundCollection where V: RealmCollection {
            typealias Element = V.Element
            let wrappedValue: V
        }
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person(value: ["name": "p"])
        let dog = Dog(value: ["name": "d"])
        try realm.write { realm.add(person); realm.add(dog) }
        let dogs = Bound(wrappedValue: person.dogs.freeze())
        dogs.append(dog.freeze())
        dogs.append(Dog(value: ["name": "e"]))
        dogs.move(fromOffsets: IndexSet(integer: 1), toOffset: 0)
        realm.refresh()
        #expect(person.dogs.map(\.name) == ["e", "d"])
        dogs.remove(atOffsets: IndexSet(integer: 0))
        realm.refresh()
        #expect(person.dogs.map(\.name) == ["d"])
        let all = Bound(wrappedValue: realm.objects(Dog.self).freeze())
        all.remove(dog.freeze())
        realm.refresh()
        #expect(realm.objects(Dog.self).map(\.name) == ["e"])
    }

    @Test func listMoveFromOffsetsMatchesSwiftUIsArrayMove() throws {
        let cases: [([Int], Int)] = [([0], 3), ([2], 0), ([0, 2], 4), ([1, 3], 1), ([4], 5), ([0, 1, 2, 3, 4], 2)]
        for (offsets, destination) in cases {
            let list = List<Int>()
            list.append(objectsIn: [0, 1, 2, 3, 4])
            list.move(fromOffsets: IndexSet(offsets), toOffset: destination)
            var expected = [0, 1, 2, 3, 4]
            let moving = offsets.map { expected[$0] }
            let before = offsets.filter { $0 < destination }.count
            for index in offsets.reversed() { expected.remove(at: index) }
            expected.insert(contentsOf: moving, at: destination - before)
            #expect(Array(list) == expected, "move \(offsets) to \(destination)")
        }
    }

    @Test func collectionsAreEqualWhenTheyAreTheSameCollection() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person(value: ["name": "p"])
        try realm.write { realm.add(person) }
        let again = realm.objects(Person.self).first!
        #expect(person.dogs == again.dogs)
        #expect(person.tags == again.tags)
        #expect(person.scores == again.scores)
        #expect(person.dogs != person.nicknames.realm.map { _ in List<Dog>() })
        let unmanaged = List<Int>()
        #expect(unmanaged == unmanaged)
        #expect(unmanaged != List<Int>())
        let results = realm.objects(Dog.self)
        #expect(results == results)
    }

    @Test func asyncOpenFollowsTheAppsUser() async throws {
        // An app id of its own: the storage finds the app by id among the process's apps.
        try await withSyncTestServer(appId: "swiftui-async-open") { server in
            let app = server.app(device: "async-open")
            let queue = DispatchQueue(label: "async-open")
            let states = Locked<[String]>([])
            let storage = AsyncOpenStorage(kind: .asyncOpen, appId: app.appId, partitionValue: "p", configuration: nil,
                                           timeout: nil, callbackQueue: queue)
            func name(_ state: AsyncOpenState) -> String {
                switch state {
                case .connecting: "connecting"
                case .waitingForUser: "waitingForUser"
                case .open: "open"
                case .progress: "progress"
                case .error(let error): "error \(error)"
                }
            }
            let cancellable = storage.$state.sink { state in states.withLock { $0.append(name(state)) } }
            #expect(states.withLock { $0 } == ["waitingForUser"])
            queue.sync { storage.setUp() }
            _ = try await app.login(credentials: .anonymous)
            // Generous limits: the open is a login and a download, slow on a loaded machine.
            let opened = await waitUntil(timeout: .seconds(60)) { states.withLock { $0.last == "open" } }
            #expect(opened, "\(states.withLock { $0 })")
            #expect(states.withLock { $0.contains("connecting") })
            try await app.currentUser!.logOut()
            #expect(await waitUntil(timeout: .seconds(60)) { states.withLock { $0.last == "waitingForUser" } }, "\(states.withLock { $0 })")
            queue.sync { storage.cancel() }
            cancellable.cancel()
        }
    }

    /// A failure before the deadline is reported once: the deadline, when it passes, does not
    /// report the open a second time (seen as two errors on a loaded machine).
    @Test func aFailedOpenIsReportedOnceEvenAfterItsDeadline() async throws {
        try await withSyncTestServer(appId: "swiftui-fails-once") { server in
            let app = server.app(device: "fails-once")
            _ = try await app.login(credentials: .anonymous)
            try await server.stop()
            let queue = DispatchQueue(label: "fails-once")
            let errors = Locked(0)
            let storage = AsyncOpenStorage(kind: .asyncOpen, appId: app.appId, partitionValue: "p", configuration: nil,
                                           timeout: 300, callbackQueue: queue)
            let cancellable = storage.$state.sink { state in
                if case .error = state { errors.withLock { $0 += 1 } }
            }
            queue.sync { storage.setUp() }
            #expect(await waitUntil(timeout: .seconds(60)) { errors.withLock { $0 } >= 1 })
            try await _Concurrency.Task.sleep(for: .milliseconds(800))
            #expect(errors.withLock { $0 } == 1)
            queue.sync { storage.cancel() }
            cancellable.cancel()
        }
    }

    @Test func autoOpenOpensTheLocalFileWhenTheServerIsGone() async throws {
        try await withSyncTestServer(appId: "swiftui-auto-open") { server in
            let app = server.app(device: "auto-open")
            _ = try await app.login(credentials: .anonymous)
            try await server.stop()
            let queue = DispatchQueue(label: "auto-open")
            let states = Locked<[String]>([])
            for kind in [AsyncOpenStorage.Kind.asyncOpen, .autoOpen] {
                let storage = AsyncOpenStorage(kind: kind, appId: app.appId, partitionValue: "p", configuration: nil,
                                               timeout: 300, callbackQueue: queue)
                let cancellable = storage.$state.sink { state in
                    let text = switch state {
                    case .open: "open"
                    case .error: "error"
                    default: ""
                    }
                    if !text.isEmpty { states.withLock { $0.append("\(kind) \(text)") } }
                }
                queue.sync { storage.setUp() }
                #expect(await waitUntil(timeout: .seconds(60)) { states.withLock { $0.count } == (kind == .asyncOpen ? 1 : 2) })
                queue.sync { storage.cancel() }
                cancellable.cancel()
            }
            #expect(states.withLock { $0 } == ["asyncOpen error", "autoOpen open"])
        }
    }
}
