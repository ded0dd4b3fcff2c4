import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// A realm isolated to an actor that watches sorted dogs, through a block or an async sequence.
actor DogWatcher {
    private var realm: Realm?
    private var token: NotificationToken?
    private var changes: NotificationSequence<RealmCollectionChange<Results<Dog>>>.Iterator?
    private var objectChanges: NotificationSequence<ObjectChange<ObjectBase>>.Iterator?
    let seen = Recorder<SeenChange>()

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func observe() throws {
        let seen = seen
        token = try #require(realm).objects(Dog.self).sorted(byKeyPath: "age").observe { seen.append(SeenChange($0)) }
    }

    func streamChanges() throws {
        changes = try #require(realm).objects(Dog.self).sorted(byKeyPath: "age").changesets.makeAsyncIterator()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func nextChange() async -> SeenChange? {
        guard var iterator = changes else { return nil }
        let change = await iterator.next(isolation: self)
        changes = iterator
        return change.map(SeenChange.init)
    }

    func streamObjectChanges(named name: String) throws {
        let dog = try #require(realm?.objects(Dog.self).filter("name == %@", name).first)
        objectChanges = dog.changes.makeAsyncIterator()
    }

    /// The next object change as its property names, "deleted", or nil when the stream ended.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func nextObjectChange() async -> [String]? {
        guard var iterator = objectChanges else { return nil }
        let change = await iterator.next(isolation: self)
        objectChanges = iterator
        switch change {
        case .change(_, let properties)?: return properties.map(\.name)
        case .deleted?: return ["deleted"]
        case .error?: return ["error"]
        case nil: return nil
        }
    }

    func add(_ name: String, age: Int) throws {
        let realm = try #require(realm)
        try realm.write { realm.add(Dog(value: ["name": name, "age": age])) }
    }

    func count() -> Int { realm?.objects(Dog.self).count ?? -1 }

    func close() {
        token?.invalidate()
        token = nil
        changes = nil
        objectChanges = nil
        realm = nil
    }
}

/// Writes on a realm of the file opened on another thread, from `configuration`.
private func writeOnAnotherThread(_ configuration: Realm.Configuration, _ body: @escaping @Sendable (Realm) throws -> Void) async throws {
    try await onAnotherThread {
        let realm = try Realm(configuration: configuration)
        try realm.write { try body(realm) }
    }
}

private func dog(_ realm: Realm, _ name: String) throws -> Dog {
    try #require(realm.objects(Dog.self).filter("name == %@", name).first)
}

/// Changes committed by one `Realm` instance reach observers of other instances of the same file,
/// on their thread or actor.
@Suite struct CrossRealmNotificationTests {
    @MainActor @Test func changesFromABackgroundThreadReachAMainActorObserver() async throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10), ("c", 30)])
        let realm = try await Realm(configuration: t.configuration, actor: MainActor.shared)
        let seen = Recorder<SeenChange>()
        let token = realm.objects(Dog.self).sorted(byKeyPath: "age").observe { seen.append(SeenChange($0)) }
        try await writeOnAnotherThread(t.configuration) { other in
            other.add(Dog(value: ["name": "b", "age": 20]))
            try dog(other, "a").age = 40
        }
        #expect(await waitUntil { seen.count == 2 })
        // a10 c30 → b20 c30 a40
        #expect(seen.all == [.initial(count: 2), .update(deletions: [0], insertions: [0, 2], modifications: [])])
        #expect(realm.objects(Dog.self).count == 3, "the realm itself advanced")
        token.invalidate()
    }

    @Test func changesFromAnotherActorReachAnActorObserver() async throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10)])
        let watcher = DogWatcher(), writer = DogWatcher()
        try await watcher.open(t.configuration)
        try await writer.open(t.configuration)
        try await watcher.observe()
        try await writer.add("b", age: 5)
        #expect(await waitUntil { watcher.seen.count == 2 })
        #expect(watcher.seen.all == [.initial(count: 1), .update(deletions: [], insertions: [0], modifications: [])])
        await watcher.close()
        await writer.close()
        t.expectAllRealmsClosed()
    }

    @Test func aThreadConfinedRealmReceivesOtherRealmsChangesAtRefresh() throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10), ("b", 20)])
        let realm = try t.open()
        let seen = Recorder<SeenChange>()
        let token = realm.objects(Dog.self).sorted(byKeyPath: "age").observe { seen.append(SeenChange($0)) }
        let configuration = t.configuration
        try onAnotherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.delete(try dog(other, "a")) }
            try other.write { try dog(other, "b").name = "B" }
        }
        #expect(seen.all == [.initial(count: 2)], "a thread without a run loop advances only when asked")
        #expect(realm.refresh())
        #expect(seen.all == [.initial(count: 2), .update(deletions: [0], insertions: [], modifications: [0])],
                "two commits arrive as one change")
        token.invalidate()
    }

    @Test func everyCommitOfAConcurrentWriterIsNotifiedExactlyOnce() async throws {
        let t = try TestRealm()
        let watcher = DogWatcher()
        try await watcher.open(t.configuration)
        try await watcher.observe()
        let commits = 150
        try await onAnotherThread(timeout: .seconds(60)) { [configuration = t.configuration] in
            let writer = try Realm(configuration: configuration)
            for i in 0..<commits {
                try writer.write { writer.add(Dog(value: ["name": "dog\(i)", "age": i])) }
            }
        }
        let updates = { watcher.seen.all.dropFirst() }
        let insertions = { updates().reduce(0) { total, change in
            guard case .update(_, let inserted, _) = change else { return total }
            return total + inserted.count
        } }
        #expect(await waitUntil { insertions() == commits }, "deliveries: \(updates().count), insertions: \(insertions())")
        #expect(updates().allSatisfy { $0 != .error && $0 != .initial(count: 0) })
        #expect(updates().allSatisfy { if case .update(let d, _, let m) = $0 { d.isEmpty && m.isEmpty } else { false } })
        #expect(await watcher.count() == commits)
        await watcher.close()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func changesetsDeliverInitialAndUpdatesOnAnActor() async throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10)])
        let watcher = DogWatcher()
        try await watcher.open(t.configuration)
        try await watcher.streamChanges()
        #expect(try await withTimeout { await watcher.nextChange() } == .initial(count: 1))
        try await watcher.add("b", age: 5)
        #expect(try await withTimeout { await watcher.nextChange() } == .update(deletions: [], insertions: [0], modifications: []))
        try await writeOnAnotherThread(t.configuration) { other in other.add(Dog(value: ["name": "c", "age": 50])) }
        #expect(try await withTimeout { await watcher.nextChange() } == .update(deletions: [], insertions: [2], modifications: []))
        await watcher.close()
        t.expectAllRealmsClosed()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func objectChangesStreamReportsChangesAndEndsWithDeletion() async throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10)])
        let watcher = DogWatcher()
        try await watcher.open(t.configuration)
        try await watcher.streamObjectChanges(named: "a")
        try await writeOnAnotherThread(t.configuration) { other in try dog(other, "a").age = 11 }
        #expect(try await withTimeout { await watcher.nextObjectChange() } == ["age"])
        try await writeOnAnotherThread(t.configuration) { other in other.delete(try dog(other, "a")) }
        #expect(try await withTimeout { await watcher.nextObjectChange() } == ["deleted"])
        #expect(try await withTimeout { await watcher.nextObjectChange() } == nil, "the stream ends after .deleted")
        await watcher.close()
    }

    @Test func observeOnAQueueDeliversFrozenResultsThere() async throws {
        let t = try TestRealm()
        try t.seedDogs([("a", 10)])
        let realm = try t.open()
        let queue = DispatchQueue(label: "observer")
        let seen = Recorder<String>()
        let token = realm.objects(Dog.self).sorted(byKeyPath: "age").observe(on: queue) { change in
            dispatchPrecondition(condition: .onQueue(queue))
            switch change {
            case .initial(let dogs): seen.append("initial \(dogs.map(\.name)) frozen=\(dogs.isFrozen)")
            case .update(let dogs, let d, let i, let m): seen.append("update \(dogs.map(\.name)) \(d) \(i) \(m) frozen=\(dogs.isFrozen)")
            case .error: seen.append("error")
            }
        }
        try realm.write { realm.add(Dog(value: ["name": "b", "age": 5])) }
        #expect(await waitUntil { seen.count == 2 })
        #expect(seen.all == ["initial [\"a\"] frozen=true", "update [\"b\", \"a\"] [] [0] [] frozen=true"])
        token.invalidate()
    }
}

@Suite struct SameThreadRealmTests {
    @Test func anotherRealmOfTheSameThreadIsNotifiedWhenTheWriteCommits() throws {
        let t = try TestRealm()
        let observer = try t.open()
        let writer = try t.open()
        let seen = Recorder<SeenChange>()
        let token = observer.objects(Dog.self).sorted(byKeyPath: "name").observe { seen.append(SeenChange($0)) }
        defer { token.invalidate() }
        try writer.write {
            writer.add(Dog(value: ["name": "Rex"]))
            writer.add(Dog(value: ["name": "Ace"]))
        }
        #expect(seen.all == [.initial(count: 0), .update(deletions: [], insertions: [0, 1], modifications: [])])
        #expect(observer.objects(Dog.self).count == 2, "the observing realm advanced with the commit")
    }
}
