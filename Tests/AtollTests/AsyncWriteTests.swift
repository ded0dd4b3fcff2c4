import Atoll
import AtollTesting
import Foundation
import Testing

/// `writeAsync`, `beginAsyncWrite`, `commitAsyncWrite` and `cancelAsyncWrite`: the call returns at
/// once, the block runs later on the realm's queue (or actor), writes run in the order asked for,
/// and waiting for another realm's write never blocks the realm's queue.
@Suite struct AsyncWriteTests {
    /// Runs `body` on `queue` with a realm confined to it and waits for it to finish.
    private func onQueue<T: Sendable>(_ queue: DispatchQueue, _ configuration: Realm.Configuration,
                                      _ body: @escaping @Sendable (Realm) throws -> T) throws -> T {
        let box = Unchecked(configuration)
        return try queue.sync { try body(Realm(configuration: box.value, queue: queue)) }
    }

    @Test func writeAsyncReturnsBeforeItsBlockRunsAndCompletesOnTheQueue() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.async-write")
        let events = Recorder<String>()
        let realm = try onQueue(queue, t.configuration) { realm -> Unchecked<Realm> in
            realm.writeAsync({
                dispatchPrecondition(condition: .onQueue(queue))
                events.append("block")
                realm.add(Dog(value: ["name": "Rex"]))
            }, onComplete: { error in
                dispatchPrecondition(condition: .onQueue(queue))
                events.append(error == nil ? "committed" : "failed")
            })
            events.append("returned")
            #expect(realm.isPerformingAsynchronousWriteOperations)
            return Unchecked(realm)
        }
        #expect(await waitUntil { events.all.count == 3 })
        #expect(events.all == ["returned", "block", "committed"])
        #expect(try t.open().objects(Dog.self).map(\.name) == ["Rex"])
        #expect(try queue.sync { !realm.value.isPerformingAsynchronousWriteOperations })
    }

    @Test func asyncWritesRunInTheOrderTheyWereAskedFor() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.async-order")
        let done = Recorder<Int>()
        let keep = try onQueue(queue, t.configuration) { realm -> Unchecked<Realm> in
            for age in 1...5 {
                realm.writeAsync({ realm.add(Dog(value: ["name": "d\(age)", "age": age])) },
                                 onComplete: { _ in done.append(age) })
            }
            return Unchecked(realm)
        }
        #expect(await waitUntil { done.count == 5 })
        #expect(done.all == [1, 2, 3, 4, 5])
        let names = try t.open().objects(Dog.self).sorted(byKeyPath: "age").map(\.name)
        #expect(names == ["d1", "d2", "d3", "d4", "d5"])
        withExtendedLifetime(keep) {}
    }

    @Test func aCancelledAsyncWriteNeverRuns() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.async-cancel")
        let done = Recorder<String>()
        let keep = try onQueue(queue, t.configuration) { realm -> Unchecked<Realm> in
            realm.writeAsync { realm.add(Dog(value: ["name": "kept"])) }
            let dropped = realm.writeAsync { realm.add(Dog(value: ["name": "dropped"])) }
            realm.writeAsync({ realm.add(Dog(value: ["name": "last"])) }, onComplete: { _ in done.append("last") })
            try realm.cancelAsyncWrite(dropped)
            try realm.cancelAsyncWrite(dropped)  // twice, or an unknown id: ignored
            try realm.cancelAsyncWrite(9_999)
            return Unchecked(realm)
        }
        #expect(await waitUntil { done.count == 1 })
        #expect(try Set(t.open().objects(Dog.self).map(\.name)) == ["kept", "last"])
        withExtendedLifetime(keep) {}
    }

    @Test func beginAsyncWriteWithCommitAsyncWriteAndACancelledCallback() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.async-begin")
        let events = Recorder<String>()
        let keep = try onQueue(queue, t.configuration) { realm -> Unchecked<Realm> in
            realm.beginAsyncWrite {
                #expect(realm.isInWriteTransaction)
                realm.add(Dog(value: ["name": "first"]))
                let callback = realm.commitAsyncWrite { _ in events.append("silenced") }
                #expect(!realm.isInWriteTransaction, "the commit itself is done at once")
                try? realm.cancelAsyncWrite(callback)
            }
            // Returning without a commit cancels the transaction.
            realm.beginAsyncWrite { realm.add(Dog(value: ["name": "never"])) }
            realm.beginAsyncWrite {
                realm.add(Dog(value: ["name": "second"]))
                realm.commitAsyncWrite(allowGrouping: true) { error in events.append(error == nil ? "second" : "failed") }
            }
            return Unchecked(realm)
        }
        #expect(await waitUntil { events.count == 1 })
        #expect(events.all == ["second"])
        #expect(try Set(t.open().objects(Dog.self).map(\.name)) == ["first", "second"])
        withExtendedLifetime(keep) {}
    }

    @Test func waitingForAnotherRealmsWriteDoesNotBlockTheQueue() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.async-lock")
        let events = Recorder<String>()
        let holderReady = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let configuration = Unchecked(t.configuration)
        // Another thread holds the write lock until told to commit.
        Thread {
            let other = try! Realm(configuration: configuration.value)
            other.beginWrite()
            other.add(Dog(value: ["name": "holder"]))
            holderReady.signal()
            release.wait()
            try! other.commitWrite()
        }.start()
        holderReady.wait()
        let keep = try onQueue(queue, t.configuration) { realm -> Unchecked<Realm> in
            realm.writeAsync({
                events.append("write")
                realm.add(Dog(value: ["name": "queued"]))
            }, onComplete: { _ in events.append("committed") })
            return Unchecked(realm)
        }
        // The queue keeps running other work while the write waits for the lock.
        for _ in 0..<3 {
            queue.sync { events.append("other work") }
            try await _Concurrency.Task.sleep(for: .milliseconds(20))
        }
        #expect(events.all == ["other work", "other work", "other work"])
        release.signal()
        #expect(await waitUntil { events.all.last == "committed" })
        #expect(events.all.suffix(2) == ["write", "committed"])
        #expect(try Set(t.open().objects(Dog.self).map(\.name)) == ["holder", "queued"])
        withExtendedLifetime(keep) {}
    }

    @Test func aFailedAsyncCommitReportsItsError() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.async-error")
        let errors = Recorder<(any Error)?>()
        let keep = try onQueue(queue, t.configuration) { realm -> Unchecked<Realm> in
            let id = ObjectId.generate()
            try realm.write { realm.add(Dog(value: ["_id": id, "name": "Rex"] as [String: Any])) }
            realm.writeAsync({
                // A duplicate primary key fails the transaction at commit.
                realm.add(Dog(value: ["_id": id, "name": "Copy"] as [String: Any]))
            }, onComplete: { errors.append($0) })
            return Unchecked(realm)
        }
        #expect(await waitUntil { errors.count == 1 })
        let error = try #require(errors.all.first ?? nil)
        #expect(error is Realm.Error)
        #expect(try t.open().objects(Dog.self).map(\.name) == ["Rex"])
        withExtendedLifetime(keep) {}
    }

    @Test func anActorsRealmWritesAsynchronouslyOnTheActor() async throws {
        let t = try TestRealm()
        let store = AsyncDogStore()
        try await store.open(t.configuration)
        let count = await store.addTwoAsynchronously()
        #expect(count == 2)
        await store.close()
    }
}

/// A realm isolated to an actor, written with the completion-handler API.
actor AsyncDogStore {
    private var realm: Realm?

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func addTwoAsynchronously() async -> Int {
        guard let realm else { return -1 }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            realm.writeAsync { realm.add(Dog(value: ["name": "one"])) }
            realm.writeAsync({ realm.add(Dog(value: ["name": "two"])) }, onComplete: { _ in done.resume() })
            // Nothing ran yet: the writes wait for this job of the actor to end.
            precondition(realm.objects(Dog.self).isEmpty)
        }
        return realm.objects(Dog.self).count
    }

    func close() { realm = nil }
}
