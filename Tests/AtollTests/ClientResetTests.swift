@_spi(Testing) import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import GRDB
import Testing

/// Client resets caused for real: sync terminated and enabled again through the admin API.
@MainActor @Suite(.serialized) struct ClientResetTests {
    @Test func discardUnsyncedChangesTakesTheServersDataAndKeepsTheRealmOpen() async throws {
        try await withSyncTestServer { server in
            let writer = try await server.app(device: "writer").login(credentials: .anonymous)
            var writerConfig = writer.configuration(partitionValue: "shire")
            writerConfig.objectTypes = [SyncedTask.self]
            let writerRealm = try await Realm(configuration: writerConfig, downloadBeforeOpen: .always)
            try writerRealm.write { writerRealm.add(SyncedTask(value: ["name": "on the server"])) }
            try await writerRealm.syncSession!.wait(for: .upload)

            let calls = Recorder<String>()
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            var configuration = frodo.configuration(partitionValue: "shire", clientResetMode: .discardUnsyncedChanges(
                beforeReset: { before in calls.append("before \(before.objects(SyncedTask.self).count) frozen \(before.isFrozen)") },
                afterReset: { before, after in
                    calls.append("after \(before.objects(SyncedTask.self).count) -> \(after.objects(SyncedTask.self).count)")
                }))
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            #expect(names(realm) == ["on the server"])
            let kept = try #require(realm.objects(SyncedTask.self).first)
            let changes = Recorder<String>()
            let token = realm.objects(SyncedTask.self).observe { change in
                if case .update(_, let deletions, let insertions, _) = change { changes.append("-\(deletions.count) +\(insertions.count)") }
            }
            defer { token.invalidate() }

            realm.syncSession!.suspend()
            try realm.write { realm.add(SyncedTask(value: ["name": "never synced"])) }
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.resume()

            #expect(await waitUntil { names(realm) == ["on the server"] })
            // The after block runs once the reset's transaction is committed.
            #expect(await waitUntil { calls.all.count == 2 })
            #expect(calls.all == ["before 2 frozen true", "after 2 -> 1"])
            // The object both copies hold is the same object: it stays valid.
            #expect(!kept.isInvalidated)
            #expect(await waitUntil { changes.all.contains("-1 +0") })

            // The realm syncs on from the fresh copy.
            try realm.write { realm.add(SyncedTask(value: ["name": "after the reset"])) }
            try await realm.syncSession!.wait(for: .upload)
            let other = try await server.app(device: "other").login(credentials: .anonymous)
            var otherConfig = other.configuration(partitionValue: "shire")
            otherConfig.objectTypes = [SyncedTask.self]
            let otherRealm = try await Realm(configuration: otherConfig, downloadBeforeOpen: .always)
            #expect(names(otherRealm) == ["after the reset", "on the server"])
        }
    }
}

extension ClientResetTests {
    @Test func recoverUnsyncedChangesKeepsWhatWasWrittenOffline() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let recovered = Recorder<String>()
            var configuration = frodo.configuration(partitionValue: "shire", clientResetMode: .recoverUnsyncedChanges(
                afterReset: { _, after in recovered.append(after.objects(SyncedTask.self).map(\.name).sorted().joined(separator: ",")) }))
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try realm.write {
                realm.add(SyncedTask(value: ["name": "synced", "owner": "server"]))
                realm.add(SyncedTask(value: ["name": "deleted offline"]))
            }
            try await realm.syncSession!.wait(for: .upload)

            realm.syncSession!.suspend()
            try realm.write {
                realm.add(SyncedTask(value: ["name": "created offline"]))
                realm.objects(SyncedTask.self).where { $0.name == "synced" }.first!.owner = "offline"
                realm.delete(realm.objects(SyncedTask.self).where { $0.name == "deleted offline" })
            }
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.resume()

            #expect(await waitUntil { recovered.all.count == 1 })
            #expect(recovered.all == ["created offline,synced"])
            #expect(names(realm) == ["created offline", "synced"])
            #expect(realm.objects(SyncedTask.self).where { $0.name == "synced" }.first?.owner == "offline")
            // The recovered changes reach the server.
            try await realm.syncSession!.wait(for: .upload)
            let other = try await server.app(device: "other").login(credentials: .anonymous)
            var otherConfig = other.configuration(partitionValue: "shire")
            otherConfig.objectTypes = [SyncedTask.self]
            let otherRealm = try await Realm(configuration: otherConfig, downloadBeforeOpen: .always)
            #expect(names(otherRealm) == ["created offline", "synced"])
            #expect(otherRealm.objects(SyncedTask.self).where { $0.name == "synced" }.first?.owner == "offline")
        }
    }
}

extension ClientResetTests {
    @Test func aManualResetLeavesTheSessionStoppedUntilItsActionRan() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try await app.login(credentials: .anonymous)
            var configuration = frodo.configuration(partitionValue: "shire", clientResetMode: .manual())
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.reconnect()
            let resets = { errors.all.compactMap { $0 as? SyncError }.filter { $0.code == .clientResetError } }
            #expect(await waitUntil { resets().count == 1 })
            // Asking for the session again (opening the realm again) must not sync the old copy,
            // which would only get the reset again.
            let again = try Realm(configuration: configuration)
            #expect(again.syncSession?.state == .inactive)
            // The session stays stopped: a download wait fails at once instead of a round trip
            // to the server, which would have answered with the reset again.
            await #expect(throws: (any Error).self) { try await again.syncSession!.wait(for: .download) }
            #expect(again.syncSession?.state == .inactive)
            #expect(resets().count == 1)
        }
    }
}

/// Code 6: a client-side failure the session cannot get past.
@MainActor @Suite(.serialized) struct ClientInternalErrorTests {
    @Test func aDamagedLocalHistoryIsReportedAsAClientInternalError() async throws {
        try await withSyncTestServer { server in
            let (realm, errors) = try await server.shireDevice("frodo")
            let configuration = realm.configuration
            try realm.write { realm.add(SyncedTask(value: ["name": "first"])) }
            try await realm.syncSession!.wait(for: .upload)
            // A damaged history record, as a failing disk or a foreign writer would leave it...
            // The session may be writing its bookkeeping at this moment: wait for its lock.
            var grdb = GRDB.Configuration()
            grdb.busyMode = .timeout(30)
            let queue = try DatabaseQueue(path: configuration.fileURL!.path, configuration: grdb)
            try await queue.write { db in
                try db.execute(sql: """
                    INSERT INTO _atoll_history (version, timestamp, changeset)
                    VALUES ((SELECT MAX(version) FROM _atoll_history) + 1, 0, x'00FFFF')
                    """)
            }
            try queue.close()
            // ...read when the session takes in the next write.
            try realm.write { realm.add(SyncedTask(value: ["name": "second"])) }
            var found: SyncError?
            for _ in 0..<200 where found == nil {
                found = errors.all.compactMap { $0 as? SyncError }.first { $0.code == .clientInternalError }
                try await _Concurrency.Task.sleep(nanoseconds: 25_000_000)
            }
            let error = try #require(found)
            #expect(error.code.rawValue == 6)
            #expect(error.localizedDescription.contains("history"))
        }
    }
}


/// Writes committed while a reset downloads its fresh copy are recovered (or archived), never
/// reverted unrecorded (issue 10 §3).
extension ClientResetTests {
    /// Commits `name` on `configuration`'s file from another thread, as the app would during the reset.
    nonisolated static func commitElsewhere(_ configuration: Realm.Configuration, _ name: String) {
        DispatchQueue.global().sync {
            let realm = try! Realm(configuration: configuration)
            try! realm.write { realm.add(SyncedTask(value: ["name": name])) }
        }
    }

    @Test func aWriteRacingARecoveryIsRecovered() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            var configuration = frodo.configuration(partitionValue: "shire", clientResetMode: .recoverUnsyncedChanges())
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try realm.write { realm.add(SyncedTask(value: ["name": "synced"])) }
            try await realm.syncSession!.wait(for: .upload)
            let raced = Locked(false)
            SyncSession.whenFreshCopyDownloaded(for: configuration) { [configuration] in
                guard raced.withLock({ let first = !$0; $0 = true; return first }) else { return }
                Self.commitElsewhere(configuration, "written during the reset")
            }
            defer { SyncSession.whenFreshCopyDownloaded(for: configuration, nil) }

            realm.syncSession!.suspend()
            try realm.write { realm.add(SyncedTask(value: ["name": "offline"])) }
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.resume()

            #expect(await waitUntil { raced.withLock { $0 } && realm.syncSession?.state == .active })
            try await realm.syncSession!.wait(for: .upload)
            realm.refresh()
            #expect(names(realm) == ["offline", "synced", "written during the reset"])
            let other = try await server.app(device: "other").login(credentials: .anonymous)
            var otherConfig = other.configuration(partitionValue: "shire")
            otherConfig.objectTypes = [SyncedTask.self]
            let otherRealm = try await Realm(configuration: otherConfig, downloadBeforeOpen: .always)
            #expect(names(otherRealm) == ["offline", "synced", "written during the reset"])
        }
    }

    @Test func aWriteRacingADiscardIsArchived() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let outcomes = Recorder<Int>()
            var configuration = frodo.configuration(partitionValue: "shire", clientResetMode: .discardUnsyncedChanges(
                afterReset: { _, after in outcomes.append(after.objects(SyncedTask.self).count) }))
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try realm.write { realm.add(SyncedTask(value: ["name": "synced"])) }
            try await realm.syncSession!.wait(for: .upload)
            SyncSession.whenFreshCopyDownloaded(for: configuration) { [configuration] in
                Self.commitElsewhere(configuration, "written during the reset")
            }
            defer { SyncSession.whenFreshCopyDownloaded(for: configuration, nil) }

            realm.syncSession!.suspend()
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.resume()

            #expect(await waitUntil { outcomes.all.count == 1 })
            realm.refresh()
            #expect(names(realm) == ["synced"])
            let outcome = try #require(realm.syncSession?.lastClientReset)
            #expect(outcome.discardedChangeCount > 0, "the racing write was counted as discarded")
            let archive = try #require(outcome.discardedChangesArchive)
            let text = try String(contentsOf: archive, encoding: .utf8)
            #expect(text.contains("written during the reset"), "the racing write is in the archive")
        }
    }
}
