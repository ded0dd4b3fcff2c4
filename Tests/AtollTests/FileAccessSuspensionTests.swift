@_spi(Testing) @testable import Atoll
import AtollTesting
import Foundation
import Testing

/// `Realm.suspendFileAccess()` / `resumeFileAccess()` (iOS's 0xdead10cc: a suspended app must
/// not hold SQLite's write lock on a shared file) and the connections closed realms leave for the
/// next realm of the file. Suspension is process-wide; these tests suspend their own file only
/// (the same code path, scoped), so other suites run beside them.
@Suite struct FileAccessSuspensionTests {
    /// Whether a connection of its own can take the file's write lock now (`BEGIN IMMEDIATE`
    /// fails at once when another connection holds it).
    private func writeLockIsFree(_ path: String) -> Bool {
        (try? RawSQLite.execute("BEGIN IMMEDIATE; ROLLBACK", path: path)) != nil
    }

    @Test func aSuspendedFileTakesNoWriteLockAndRefusesWritesUntilResumed() throws {
        let t = try TestRealm()
        let realm = try t.open()
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        // The probe sees a write lock when there is one.
        realm.beginWrite()
        #expect(!writeLockIsFree(t.path))
        realm.cancelWrite()
        #expect(writeLockIsFree(t.path))

        #expect(Realm.suspendFileAccess(timeout: 1, files: [t.path]))
        defer { Realm.resumeFileAccess(files: [t.path]) }
        #expect(!Realm.isFileAccessSuspended, "only this file is suspended")
        let error = #expect(throws: Realm.Error.self) { try realm.write { realm.add(Dog(value: ["name": "Fido"])) } }
        #expect(error?.code == .fail)
        #expect(error?.localizedDescription.contains("suspended") == true)
        #expect(!realm.isInWriteTransaction)
        #expect(writeLockIsFree(t.path))
        // Reads go on.
        #expect(realm.objects(Dog.self).map(\.name) == ["Rex"])

        Realm.resumeFileAccess(files: [t.path])
        try realm.write { realm.add(Dog(value: ["name": "Fido"])) }
        #expect(realm.objects(Dog.self).count == 2)
    }

    @Test func suspendingWaitsForTheWriteUnderWayOrSaysItOutlastedTheTimeout() throws {
        let t = try TestRealm()
        let configuration = t.configuration
        let realm = try t.open()
        let started = DispatchSemaphore(value: 0)
        let mayCommit = DispatchSemaphore(value: 0)
        let committed = Recorder<Bool>()
        func writeOnAnotherThread() {
            Thread {
                do {
                    let other = try Realm(configuration: configuration)
                    other.beginWrite()
                    other.add(Dog(value: ["name": "Late"]))
                    started.signal()
                    mayCommit.wait()
                    try other.commitWrite()
                    committed.append(true)
                } catch {
                    committed.append(false)
                }
            }.start()
        }

        // A write that ends within the timeout: suspension returns after its commit.
        writeOnAnotherThread()
        started.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) { mayCommit.signal() }
        #expect(Realm.suspendFileAccess(timeout: 10, files: [t.path]))
        #expect(committed.all == [true], "suspension returned before the write under way committed")
        #expect(writeLockIsFree(t.path))
        Realm.resumeFileAccess(files: [t.path])

        // One that outlasts it: suspension says so; the write may still finish.
        writeOnAnotherThread()
        started.wait()
        #expect(!Realm.suspendFileAccess(timeout: 0.05, files: [t.path]))
        #expect(!writeLockIsFree(t.path))
        mayCommit.signal()
        for _ in 0..<500 where committed.count < 2 { usleep(10_000) }
        #expect(committed.all == [true, true])
        #expect(writeLockIsFree(t.path))
        Realm.resumeFileAccess(files: [t.path])
        realm.refresh()
        #expect(realm.objects(Dog.self).count == 2)
    }

    @Test func asynchronousWritesWaitForTheResumptionInsteadOfFailing() async throws {
        let t = try TestRealm()
        let queue = DispatchQueue(label: "atoll.suspension")
        let events = Recorder<String>()
        let box = Unchecked(t.configuration)
        #expect(Realm.suspendFileAccess(timeout: 1, files: [t.path]))
        let keep = try queue.sync { () -> Unchecked<Realm> in
            let realm = try Realm(configuration: box.value, queue: queue)
            realm.writeAsync({
                events.append("block")
                realm.add(Dog(value: ["name": "Rex"]))
            }, onComplete: { error in events.append(error == nil ? "committed" : "failed: \(error!)") })
            _ = realm.beginAsyncWrite {
                events.append("begin")
                realm.add(Dog(value: ["name": "Fido"]))
                realm.commitAsyncWrite()
            }
            return Unchecked(realm)
        }
        try await _Concurrency.Task.sleep(for: .milliseconds(300))
        #expect(events.all.isEmpty, "an asynchronous write ran while suspended: \(events.all)")
        Realm.resumeFileAccess(files: [t.path])
        #expect(await waitUntil { events.count == 3 })
        #expect(events.all == ["block", "committed", "begin"])
        #expect(try t.open().objects(Dog.self).count == 2)
        withExtendedLifetime(keep) {}
    }

    @Test func closedRealmsLeaveTheirConnectionForTheNextRealmOfTheFile() throws {
        let t = try TestRealm()
        let configuration = t.configuration
        let realm = try t.open()
        // The first realm uses the connection the schema installer opened.
        #expect(realm.coordinator.connectionsOpened.load(ordering: .relaxed) == 0)
        let coordinator = realm.coordinator

        // Realms opened and closed one after another on other threads share one connection, and
        // each sees the newest version (the connection comes back without a transaction).
        for round in 1...20 {
            try realm.write { realm.add(Dog(value: ["name": "d\(round)"])) }
            let seen = Recorder<Int>()
            let thread = Thread {
                seen.append((try? Realm(configuration: configuration).objects(Dog.self).count) ?? -1)
            }
            thread.start()
            for _ in 0..<500 where seen.count == 0 { usleep(2_000) }
            #expect(seen.all == [round])
        }
        #expect(coordinator.connectionsOpened.load(ordering: .relaxed) == 1)

        // At most two stay idle.
        let opened = DispatchSemaphore(value: 0)
        let close = DispatchSemaphore(value: 0)
        let closed = Recorder<Int>()
        for _ in 0..<4 {
            Thread {
                do {
                    let other = try? Realm(configuration: configuration)
                    _ = other?.objects(Dog.self).count
                    opened.signal()
                    close.wait()
                }
                closed.append(1)
            }.start()
        }
        for _ in 0..<4 { opened.wait() }
        for _ in 0..<4 { close.signal() }
        for _ in 0..<500 where closed.count < 4 { usleep(2_000) }
        #expect(coordinator.idleConnectionCount == RealmCoordinator.idleConnectionLimit)

        // Suspension closes them, and none is kept while it lasts.
        #expect(Realm.suspendFileAccess(timeout: 1, files: [t.path]))
        #expect(coordinator.idleConnectionCount == 0)
        let thread = Thread { _ = try? Realm(configuration: configuration).objects(Dog.self).count; closed.append(1) }
        thread.start()
        for _ in 0..<500 where closed.count < 5 { usleep(2_000) }
        #expect(coordinator.idleConnectionCount == 0)
        Realm.resumeFileAccess(files: [t.path])
        withExtendedLifetime(realm) {}
    }
}
