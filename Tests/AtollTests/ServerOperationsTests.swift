@_spi(Testing) import Atoll
import AtollAdminClient
import AtollServer
import AtollTesting
import Foundation
import Testing

/// The server operations that cause client resets (R-SERVER-3), through the admin API, and what
/// each reset mode makes of them on a device.
@MainActor @Suite(.serialized) struct ServerOperationsTests {
    /// An app standing in for a device whose sync errors (client resets included) are recorded.
    private func device(_ name: String, of server: SyncTestServer) async throws -> (User, Recorder<any Error>) {
        let app = server.app(device: name)
        let errors = Recorder<any Error>()
        app.syncManager.errorHandler = { error, _ in errors.append(error) }
        return (try await app.login(credentials: .anonymous), errors)
    }

    @Test func restoringABackupResetsClientsAndRecoveryKeepsWhatWasNeverUploaded() async throws {
        try await withSyncTestServer { server in
            let (frodo, _) = try await device("frodo", of: server)
            let recovered = Recorder<[String]>()
            let realm = try await frodo.openShire(.recoverUnsyncedChanges(afterReset: { _, after in
                recovered.append(after.objects(SyncedTask.self).map(\.name).sorted())
            }))
            try realm.write { realm.add(SyncedTask(value: ["name": "before the backup"])) }
            try await realm.syncSession!.wait(for: .upload)
            let backup = try await server.admin.backup(app: server.appId, realm: "s:shire")
            #expect(backup.realms == ["s:shire"])
            #expect(try await server.admin.backups(app: server.appId).map(\.id) == [backup.id])
            // Acknowledged after the backup: the restore rolls it back, and the device must learn so.
            try realm.write { realm.add(SyncedTask(value: ["name": "after the backup"])) }
            try await realm.syncSession!.wait(for: .upload)

            let (sam, samErrors) = try await device("sam", of: server)
            let samRealm = try await sam.openShire(.manual())
            #expect(names(samRealm) == ["after the backup", "before the backup"])

            realm.syncSession!.suspend()
            try realm.write { realm.add(SyncedTask(value: ["name": "offline"])) }
            #expect(try await server.admin.restore(app: server.appId, backup: backup.id) == ["s:shire"])
            // Sam is connected: its session is told at once, with the reason.
            #expect(await waitUntil { resetErrors(samErrors).count == 1 })
            #expect(resetErrors(samErrors).first?.localizedDescription.contains("historyRestored") == true)

            realm.syncSession!.resume()
            // Reconnect, reset and recovery: seconds on a machine running the whole suite.
            #expect(await waitUntil(timeout: .seconds(60)) { recovered.all.count == 1 })
            #expect(recovered.all.first == ["before the backup", "offline"])
            #expect(names(realm) == ["before the backup", "offline"])
            try await realm.syncSession!.wait(for: .upload)
            let (merry, _) = try await device("merry", of: server)
            #expect(names(try await merry.openShire(.manual())) == ["before the backup", "offline"])
        }
    }

    @Test func restoringAWholeAppBackupRollsBackRealmsMadeAfterIt() async throws {
        try await withSyncTestServer { server in
            let (frodo, errors) = try await device("frodo", of: server)
            let realm = try await frodo.openShire(.manual())
            try realm.write { realm.add(SyncedTask(value: ["name": "kept"])) }
            try await realm.syncSession!.wait(for: .upload)
            let backup = try await server.admin.backup(app: server.appId)
            #expect(backup.realm == nil)

            var later = frodo.configuration(partitionValue: "later", clientResetMode: .manual())
            later.objectTypes = [SyncedTask.self]
            let laterRealm = try await Realm(configuration: later, downloadBeforeOpen: .always)
            try laterRealm.write { laterRealm.add(SyncedTask(value: ["name": "made after the backup"])) }
            try await laterRealm.syncSession!.wait(for: .upload)

            let restored = try await server.admin.restore(app: server.appId, backup: backup.id)
            #expect(Set(restored) == ["s:shire", "s:later"])
            #expect(await waitUntil { resetErrors(errors).count == 2 })

            let (sam, _) = try await device("sam", of: server)
            var samLater = sam.configuration(partitionValue: "later")
            samLater.objectTypes = [SyncedTask.self]
            #expect(names(try await Realm(configuration: samLater, downloadBeforeOpen: .always)).isEmpty)
            #expect(names(try await sam.openShire(.manual())) == ["kept"])
        }
    }

    @Test func restoringAFlexibleSyncRealmResetsItsClientsAndServesTheRestoredData() async throws {
        try await withSyncTestServer { server in
            let (frodo, errors) = try await device("frodo", of: server)
            var configuration = frodo.flexibleSyncConfiguration(clientResetMode: .manual())
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            let subscriptions = realm.subscriptions
            try await subscriptions.update { subscriptions.append(QuerySubscription<SyncedTask>(name: "all")) }
            try realm.write { realm.add(SyncedTask(value: ["name": "before"])) }
            try await realm.syncSession!.wait(for: .upload)
            let backup = try await server.admin.backup(app: server.appId, realm: "flx")
            try realm.write { realm.add(SyncedTask(value: ["name": "after"])) }
            try await realm.syncSession!.wait(for: .upload)

            #expect(try await server.admin.restore(app: server.appId, backup: backup.id) == ["flx"])
            #expect(await waitUntil { resetErrors(errors).count == 1 })
            #expect(resetErrors(errors).first?.localizedDescription.contains("historyRestored") == true)
            // A new device gets the data as it was at the backup: the server's materialized state went.
            let (sam, _) = try await device("sam", of: server)
            var samConfiguration = sam.flexibleSyncConfiguration()
            samConfiguration.objectTypes = [SyncedTask.self]
            let samRealm = try await Realm(configuration: samConfiguration, downloadBeforeOpen: .always)
            let samSubscriptions = samRealm.subscriptions
            try await samSubscriptions.update { samSubscriptions.append(QuerySubscription<SyncedTask>(name: "all")) }
            #expect(names(samRealm) == ["before"])
        }
    }

    @Test func badAdminRequestsGetTypedErrorsAndTheServerStaysUp() async throws {
        try await withSyncTestServer { server in
            _ = try await device("frodo", of: server)
            await #expect { try await server.admin.restore(app: server.appId, backup: "../../atoll") } throws: {
                ($0 as? AdminClientError)?.status == 404
            }
            await #expect { try await server.admin.backup(app: server.appId, realm: "s:nowhere") } throws: {
                ($0 as? AdminClientError)?.status == 404
            }
            await #expect { try await server.admin.removeProperty(app: server.appId, type: "Nope", property: "x") } throws: {
                ($0 as? AdminClientError)?.status == 404
            }
            await #expect { try await server.admin.changePropertyType(app: server.appId, type: "SyncedTask", property: "name", to: "ring") } throws: {
                ($0 as? AdminClientError).map { $0.status == 400 && $0.message.contains("ring") } == true
            }
            await #expect { try await server.admin.setClientRecovery(app: "no-such-app", false) } throws: {
                ($0 as? AdminClientError)?.status == 404
            }
            #expect(try await server.admin.apps().map(\.id) == [server.appId])
        }
    }
}

extension ServerOperationsTests {
    @Test func clientRecoveryTurnedOffAtRuntimeSendsRecoverToManualAndRecoverOrDiscardToDiscarding() async throws {
        try await withSyncTestServer { server in
            let (frodo, frodoErrors) = try await device("frodo", of: server)
            #expect(try await server.admin.setClientRecovery(app: server.appId, false).clientRecovery == false)
            // An operator's setting outlives the server process and beats the configuration (recovery on).
            try await server.restart()
            #expect(try await server.admin.settings(app: server.appId).overrides.clientRecovery == false)

            let frodoRealm = try await frodo.openShire(.recoverUnsyncedChanges())
            let (sam, samErrors) = try await device("sam", of: server)
            let discarded = Recorder<[String]>()
            let samRealm = try await sam.openShire(.recoverOrDiscardUnsyncedChanges(afterReset: { _, after in
                discarded.append(after.objects(SyncedTask.self).map(\.name).sorted())
            }))
            try frodoRealm.write { frodoRealm.add(SyncedTask(value: ["name": "synced"])) }
            try await frodoRealm.syncSession!.wait(for: .upload)
            try await samRealm.syncSession!.wait(for: .download)

            for realm in [frodoRealm, samRealm] { realm.syncSession!.suspend() }
            try frodoRealm.write { frodoRealm.add(SyncedTask(value: ["name": "frodo offline"])) }
            try samRealm.write { samRealm.add(SyncedTask(value: ["name": "sam offline"])) }
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            for realm in [frodoRealm, samRealm] { realm.syncSession!.resume() }

            #expect(await waitUntil { resetErrors(frodoErrors).count == 1 })
            #expect(resetErrors(frodoErrors).first?.localizedDescription.contains("client recovery turned off") == true)
            #expect(await waitUntil { discarded.all.count == 1 })
            #expect(discarded.all.first == ["synced"])
            #expect(resetErrors(samErrors).isEmpty)
        }
    }

    @Test func aBreakingSchemaChangeSendsEveryAutomaticModeToTheManualHandler() async throws {
        try await withSyncTestServer { server in
            let modes: [(String, ClientResetMode)] = [
                ("recover", .recoverUnsyncedChanges()), ("recoverOrDiscard", .recoverOrDiscardUnsyncedChanges()),
                ("discard", .discardUnsyncedChanges()),
            ]
            var devices: [(mode: String, realm: Realm, errors: Recorder<any Error>)] = []
            for (name, mode) in modes {
                let (user, errors) = try await device(name, of: server)
                devices.append((name, try await user.openShire(mode), errors))
            }
            let writer = devices[0].realm
            try writer.write { writer.add(SyncedTask(value: ["name": "ring", "owner": "frodo"])) }
            try await writer.syncSession!.wait(for: .upload)
            for device in devices { try await device.realm.syncSession!.wait(for: .download) }

            #expect(try await server.admin.removeProperty(app: server.appId, type: "SyncedTask", property: "owner") == ["s:shire"])
            for (mode, _, errors) in devices {
                #expect(await waitUntil { resetErrors(errors).count == 1 }, "\(mode)")
                let message = resetErrors(errors).first?.localizedDescription ?? ""
                #expect(message.contains("breakingSchemaChange"))
                #expect(message.contains("falls back to the manual handler"))
            }
            // A new device gets the rewritten data: the property's values are gone.
            let (merry, _) = try await device("merry", of: server)
            let fresh = try await merry.openShire(.manual())
            #expect(names(fresh) == ["ring"])
            #expect(fresh.objects(SyncedTask.self).first?.owner == "")
        }
    }

    @Test func aClientAwayLongerThanTheMaxOfflineTimeResetsAndCompactionShrinksTheHistory() async throws {
        try await withSyncTestServer { server in
            let (frodo, errors) = try await device("frodo", of: server)
            let realm = try await frodo.openShire(.manual())
            for name in ["one", "two", "three"] {
                try realm.write { realm.add(SyncedTask(value: ["name": name])) }
                try await realm.syncSession!.wait(for: .upload)
            }
            #expect(try await server.admin.setMaxOfflineTime(app: server.appId, seconds: 1).maxOfflineTime == 1)
            realm.syncSession!.suspend()
            #expect(await server.waitUntilNoSessions())
            server.clock.advance(by: 2)

            // Nobody seen within the last second: the whole history but its newest entry folds into a snapshot.
            let compacted = try await server.admin.compact(app: server.appId)
            #expect(compacted.first?.removedEntries ?? 0 >= 2)
            realm.syncSession!.resume()
            #expect(await waitUntil { resetErrors(errors).count == 1 })
            #expect(resetErrors(errors).first?.localizedDescription.contains("historyCompacted") == true)

            // A new device starts from the snapshot and gets everything.
            let (sam, _) = try await device("sam", of: server)
            let samRealm = try await sam.openShire(.manual())
            #expect(names(samRealm) == ["one", "three", "two"])
            try samRealm.write { samRealm.add(SyncedTask(value: ["name": "four"])) }
            try await samRealm.syncSession!.wait(for: .upload)
        }
    }

    /// A server started on a compacted history reads its schema from the snapshot the history now
    /// starts with (versions jump there), so uploads fit it.
    @Test func afterCompactionARestartedServerStillKnowsTheSchema() async throws {
        try await withSyncTestServer { server in
            let (frodo, errors) = try await device("frodo", of: server)
            let realm = try await frodo.openShire(.manual())
            for name in ["one", "two", "three"] {
                try realm.write { realm.add(SyncedTask(value: ["name": name])) }
                try await realm.syncSession!.wait(for: .upload)
            }
            _ = try await server.admin.setMaxOfflineTime(app: server.appId, seconds: 1)
            realm.syncSession!.suspend()
            #expect(await server.waitUntilNoSessions())
            server.clock.advance(by: 2)
            #expect(try await server.admin.compact(app: server.appId).first?.removedEntries ?? 0 >= 2)
            try await server.restart()

            let (sam, samErrors) = try await device("sam", of: server)
            let samRealm = try await sam.openShire(.manual())
            try samRealm.write { samRealm.add(SyncedTask(value: ["name": "four"])) }
            try await samRealm.syncSession!.wait(for: .upload)
            #expect(samErrors.all.isEmpty)
            #expect(resetErrors(errors).count <= 1)
        }
    }
}
