@_spi(Testing) import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// A class sync cannot name objects of (no primary key).
final class UnkeyedNote: Object {
    @Persisted var text = ""
}

final class SyncedTask: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var owner = ""
    @Persisted var done = false
}

/// Synced realms end to end: a real server on 127.0.0.1, apps standing in for devices.
@MainActor @Suite(.serialized) struct SyncTests {
    private func open(_ user: User, _ partition: String = "shire", _ behavior: Realm.OpenBehavior = .never) async throws -> Realm {
        var configuration = user.configuration(partitionValue: partition)
        configuration.objectTypes = [SyncedTask.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: behavior)
    }

    @Test func aWriteOnOneDeviceReachesAnother() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let realmA = try await open(frodo)
            try realmA.write { realmA.add(SyncedTask(value: ["name": "Carry the ring", "owner": "Frodo"])) }
            try await realmA.syncSession!.wait(for: .upload)
            let realmB = try await open(sam, "shire", .always)
            #expect(realmB.objects(SyncedTask.self).where { $0.owner == "Frodo" }.map(\.name) == ["Carry the ring"])
        }
    }

    /// `Realm.Configuration(syncConfiguration:…)`, as realm-swift declares it: the realm is the
    /// user's synced realm, in the user's folder.
    @Test func aConfigurationMadeWithASyncConfigurationIsTheUsersSyncedRealm() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let made = frodo.configuration(partitionValue: "shire")
            let configuration = Realm.Configuration(syncConfiguration: made.syncConfiguration, objectTypes: [SyncedTask.self])
            #expect(configuration.fileURL == made.fileURL)
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            try realm.write { realm.add(SyncedTask(value: ["name": "from the initialiser", "owner": "Frodo"])) }
            try await realm.syncSession!.wait(for: .upload)
        }
    }

    /// realm-swift's "convert a local realm to a synced realm": `writeCopy(configuration:)` with a
    /// synced configuration; the copy's objects are the device's first uploads.
    @Test func aLocalRealmCopiedToASyncedConfigurationUploadsItsObjects() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let local = try Realm(configuration: folder.configuration("local.realm", objectTypes: [SyncedTask.self]))
            try local.write {
                for i in 0..<2_500 { local.add(SyncedTask(value: ["name": "task \(i)", "owner": "Frodo", "done": i % 2 == 0])) }
            }
            var synced = frodo.configuration(partitionValue: "shire")
            synced.objectTypes = [SyncedTask.self]
            try local.writeCopy(configuration: synced)

            let copy = try await Realm(configuration: synced, downloadBeforeOpen: .never)
            #expect(copy.objects(SyncedTask.self).count == 2_500)
            try await copy.syncSession!.wait(for: .upload)
            let other = try await open(sam, "shire", .always)
            #expect(other.objects(SyncedTask.self).count == 2_500)
            #expect(other.objects(SyncedTask.self).where { $0.done }.count == 1_250)
            let first = try #require(local.objects(SyncedTask.self).first)
            #expect(other.object(ofType: SyncedTask.self, forPrimaryKey: first._id)?.name == first.name)
        }
    }

    /// A file Realm wrote (Tools/realm-fixtures: 50 `SyncedTask`s, realm-core 14) as the seed of
    /// a synced configuration: converted on open, its objects upload as the device's writes.
    @Test func aRealmWrittenSeedFileOfASyncedRealmUploadsItsObjects() async throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AtollRealmFileTests/Fixtures/synced_tasks_v0.realm")
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            // The server already has one of them, changed: the device's write wins (it is newer).
            let realmB = try await open(sam)
            let firstID = try ObjectId(string: "660000000000000000000000")
            try realmB.write { realmB.add(SyncedTask(value: ["_id": firstID, "name": "server's", "owner": "Sam"] as [String: Any])) }
            try await realmB.syncSession!.wait(for: .upload)

            var synced = frodo.configuration(partitionValue: "shire")
            synced.objectTypes = [SyncedTask.self]
            synced.seedFilePath = seed
            let realm = try await Realm(configuration: synced, downloadBeforeOpen: .never)
            #expect(realm.objects(SyncedTask.self).count == 50)
            try await realm.syncSession!.wait(for: .upload)
            try await realmB.syncSession!.wait(for: .download)
            realmB.refresh()
            #expect(realmB.objects(SyncedTask.self).count == 50)
            #expect(realmB.objects(SyncedTask.self).where { $0.owner == "Frodo" }.count == 25)
            #expect(realmB.object(ofType: SyncedTask.self, forPrimaryKey: firstID)?.name == "realm task 0")
            #expect(realmB.objects(SyncedTask.self).where { $0.done }.count == 17)
        }
    }

    /// A partition-synced device's file as realm-swift left it (realm-core 14, its sync client
    /// history inside, six commits never uploaded: Tools/realm-fixtures): the objects as the file
    /// holds them reach the server.
    @Test func aRealmSyncedFileWithUnsyncedChangesUploadsThem() async throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AtollRealmFileTests/Fixtures/synced_partition_v24.realm")
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            var synced = frodo.configuration(partitionValue: "shire")
            synced.objectTypes = [SyncedTask.self]
            synced.seedFilePath = seed
            let realm = try await Realm(configuration: synced, downloadBeforeOpen: .never)
            #expect(realm.objects(SyncedTask.self).count == 20)
            try await realm.syncSession!.wait(for: .upload)
            let other = try await open(sam, "shire", .always)
            func task(_ n: UInt8) -> SyncedTask? {
                other.object(ofType: SyncedTask.self, forPrimaryKey: ObjectId(bytes: [0x67, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n]))
            }
            #expect(other.objects(SyncedTask.self).count == 20)
            #expect(task(7)?.name == "synced task 7")   // the last commit's correction
            #expect(task(12)?.done == true)
            #expect(task(20) == nil)                     // created, then deleted, never uploaded
            #expect(other.objects(SyncedTask.self).where { $0.owner == "Frodo" }.count == 10)
        }
    }

    @Test func aLocalRealmWithAClassWithoutPrimaryKeyCannotBecomeSynced() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let local = try Realm(configuration: folder.configuration("local.realm", objectTypes: [SyncedTask.self, UnkeyedNote.self]))
            var synced = frodo.configuration(partitionValue: "shire")
            synced.objectTypes = [SyncedTask.self, UnkeyedNote.self]
            #expect { try local.writeCopy(configuration: synced) } throws: { error in
                (error as? Realm.Error)?.code == .invalidConfiguration && "\(error)".contains("primary key")
            }
        }
    }

    @Test func twoDevicesConvergeAfterWritingConcurrently() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let realmA = try await open(frodo)
            let realmB = try await open(sam)
            let shared = SyncedTask(value: ["name": "Shared", "owner": "both"])
            try realmA.write { realmA.add(shared) }
            try await realmA.syncSession!.wait(for: .upload)
            try await realmB.syncSession!.wait(for: .download)
            realmB.refresh()
            let sharedOnB = try #require(realmB.object(ofType: SyncedTask.self, forPrimaryKey: shared._id))
            // Both write while the other has not seen it.
            try realmA.write {
                shared.done = true
                realmA.add(SyncedTask(value: ["name": "A's", "owner": "Frodo"]))
            }
            try realmB.write {
                sharedOnB.name = "Shared, renamed"
                realmB.add(SyncedTask(value: ["name": "B's", "owner": "Sam"]))
            }
            try await realmA.syncSession!.wait(for: .upload)
            try await realmB.syncSession!.wait(for: .upload)
            try await realmA.syncSession!.wait(for: .download)
            try await realmB.syncSession!.wait(for: .download)
            realmA.refresh()
            realmB.refresh()
            let names = { (realm: Realm) in realm.objects(SyncedTask.self).sorted(byKeyPath: "name").map { "\($0.name)/\($0.done)" } }
            #expect(names(realmA) == ["A's/false", "B's/false", "Shared, renamed/true"])
            #expect(names(realmA) == names(realmB))
        }
    }

    @Test func alwaysFailsOfflineWithinTheConnectTimeout() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try await SyncTestServer.start()
        var appConfiguration = server.appConfiguration(device: "offline")
        appConfiguration.syncConnectTimeout = 1
        let user = try await App(id: server.appId, configuration: appConfiguration).login(credentials: .anonymous)
        try await server.stop()
        let started = Date()
        await #expect { _ = try await open(user, "shire", .always) } throws: { error in
            (error as? POSIXError)?.code == .ETIMEDOUT
        }
        #expect(Date().timeIntervalSince(started) < 10)
        // `.never` opens offline with the cached user.
        let realm = try await open(user, "shire", .never)
        #expect(realm.objects(SyncedTask.self).isEmpty)
        try await server.tearDown()
    }

    @Test func asyncOpenDownloadsFirstAndReportsProgress() async throws {
        try await withSyncTestServer { server in
            let writer = try await server.app(device: "writer").login(credentials: .anonymous)
            let realmA = try await open(writer)
            try realmA.write { for i in 0..<200 { realmA.add(SyncedTask(value: ["name": "task \(i)", "owner": "Frodo"])) } }
            try await realmA.syncSession!.wait(for: .upload)

            let reader = try await server.app(device: "reader").login(credentials: .anonymous)
            var configuration = reader.configuration(partitionValue: "shire")
            configuration.objectTypes = [SyncedTask.self]
            let progress = Recorder<SyncSession.Progress>()
            let count: Int = try await withCheckedThrowingContinuation { continuation in
                let task = Realm.asyncOpen(configuration: configuration) { result in
                    continuation.resume(with: result.map { $0.objects(SyncedTask.self).count })
                }
                task.addProgressNotification { progress.append($0) }
            }
            #expect(count == 200)
            // The download reported progress, ending complete.
            for _ in 0..<100 where progress.all.last?.isTransferComplete != true { try await _Concurrency.Task.sleep(nanoseconds: 20_000_000) }
            #expect(progress.all.last?.isTransferComplete == true)
        }
    }

    @Test func cancelAsyncOpenOnNonFatalErrorsFailsTheOpenWithTheConnectionFailure() async throws {
        let server = try await SyncTestServer.start()
        let user = try await server.app(device: "offline").login(credentials: .anonymous)
        try await server.stop()
        var configuration = user.configuration(partitionValue: "shire", cancelAsyncOpenOnNonFatalErrors: true)
        configuration.objectTypes = [SyncedTask.self]
        let started = Date()
        await #expect { _ = try await Realm(configuration: configuration, downloadBeforeOpen: .always) } throws: { error in
            (error as? SyncError)?.code == .connectionFailed
        }
        // Well before the 30 s connect timeout: the first failed attempt ends the open.
        #expect(Date().timeIntervalSince(started) < 10)
        try await server.tearDown()
    }

    @Test func aCancelledAsyncOpenNeverCallsBack() async throws {
        let server = try await SyncTestServer.start()
        let user = try await server.app(device: "offline").login(credentials: .anonymous)
        try await server.stop()
        var configuration = user.configuration(partitionValue: "shire")
        configuration.objectTypes = [SyncedTask.self]
        let callbacks = DispatchQueue(label: "asyncOpen callbacks")
        let called = Recorder<String>()
        let task = Realm.asyncOpen(configuration: configuration, callbackQueue: callbacks) { called.append("\($0)") }
        task.cancel()
        // The server is down: an open that was not cancelled fails once the connect timeout passes
        // on the app's clock, and calls back. Move the clock past it until the open's work ended.
        let finished = Locked(false)
        let waiting = _Concurrency.Task {
            await task.waitUntilFinished()
            finished.withLock { $0 = true }
        }
        for _ in 0..<500 where !finished.withLock({ $0 }) {
            server.clock.advance(by: 60)
            try await _Concurrency.Task.sleep(for: .milliseconds(10))
        }
        await waiting.value
        await withCheckedContinuation { done in callbacks.async { done.resume() } }  // what it queued has run
        #expect(called.all.isEmpty)
        try await server.tearDown()
    }
}

