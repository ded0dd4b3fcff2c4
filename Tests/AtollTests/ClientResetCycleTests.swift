@_spi(Testing) import Atoll
import AtollServer
import AtollTesting
import Foundation
import GRDB
import Testing

/// The seeds' procedure (R-RESET-7) for every mode, what a reset tells its after block, the
/// archive of discarded changes, and cycle detection.
extension ClientResetTests {
    /// The configuration of device `device` for partition "shire" in `mode`.
    func configuration(_ server: SyncTestServer, device: String, mode: ClientResetMode,
                       errors: Recorder<SyncError>? = nil) async throws -> Realm.Configuration {
        let app = server.app(device: device)
        if let errors { app.syncManager.errorHandler = { error, _ in if let error = error as? SyncError { errors.append(error) } } }
        let user = try await app.login(credentials: .anonymous)
        var configuration = user.configuration(partitionValue: "shire", clientResetMode: mode)
        configuration.objectTypes = [SyncedTask.self]
        return configuration
    }

    /// Writes "synced" and syncs it, then, with the session stopped (the app not running), writes
    /// "offline" and has the operator terminate and enable sync; then the session runs again.
    func resetAfterAnOfflineWrite(_ server: SyncTestServer, _ realm: Realm, beforeRestart: () throws -> Void = {}) async throws {
        try realm.write { realm.add(SyncedTask(value: ["name": "synced"])) }
        try await realm.syncSession!.wait(for: .upload)
        realm.syncSession!.suspend()
        try realm.write { realm.add(SyncedTask(value: ["name": "offline"])) }
        try await server.admin.terminateSync(app: server.appId)
        try await server.admin.enableSync(app: server.appId)
        try beforeRestart()
        realm.syncSession!.resume()
    }

    nonisolated static let modes = ["recoverUnsyncedChanges", "recoverOrDiscardUnsyncedChanges", "discardUnsyncedChanges", "manual"]

    /// R-RESET-7, as the seed pages say to test it: write and sync, terminate sync on the server and
    /// enable it again, run the client again: it gets a client reset, handled as its mode says.
    @Test(arguments: modes) func theSeedsProcedureResetsInEveryMode(_ name: String) async throws {
        try await withSyncTestServer { server in
            let afters = Recorder<ClientResetOutcome?>()
            let after: (Realm, Realm) -> Void = { _, after in afters.append(after.clientResetOutcome) }
            let mode: ClientResetMode = switch name {
            case "recoverUnsyncedChanges": .recoverUnsyncedChanges(afterReset: after)
            case "recoverOrDiscardUnsyncedChanges": .recoverOrDiscardUnsyncedChanges(afterReset: after)
            case "discardUnsyncedChanges": .discardUnsyncedChanges(afterReset: after)
            default: .manual()
            }
            let errors = Recorder<SyncError>()
            let config = try await configuration(server, device: "frodo", mode: mode, errors: errors)
            let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
            try await resetAfterAnOfflineWrite(server, realm)

            if name == "manual" {
                #expect(await waitUntil { errors.all.contains { $0.code == .clientResetError } })
                let error = try #require(errors.all.first { $0.code == .clientResetError })
                #expect(error.clientResetInfo() != nil)
                return
            }
            #expect(await waitUntil { afters.all.count == 1 })
            let outcome = try #require(afters.all.first ?? nil)
            #expect(outcome.mode == name)
            let recovers = name != "discardUnsyncedChanges"
            #expect(outcome.didRecover == recovers)
            #expect(names(realm) == (recovers ? ["offline", "synced"] : ["synced"]))
            #expect(errors.all.filter { $0.code == .clientResetError }.isEmpty)
        }
    }

    /// Discarding writes every dropped change to a readable archive next to where backups go.
    @Test func discardedChangesAreArchivedReadably() async throws {
        try await withSyncTestServer { server in
            let config = try await configuration(server, device: "frodo", mode: .discardUnsyncedChanges())
            let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
            try await resetAfterAnOfflineWrite(server, realm)
            #expect(await waitUntil { realm.syncSession?.lastClientReset != nil })
            let outcome = try #require(realm.clientResetOutcome)
            #expect(!outcome.didRecover)
            #expect(outcome.discardedChangeCount >= 2)  // create + set name
            let archive = try #require(outcome.discardedChangesArchive)
            #expect(archive.deletingLastPathComponent().lastPathComponent == "recovered-realms")
            let text = try String(contentsOf: archive, encoding: .utf8)
            #expect(text.contains("discardUnsyncedChanges"))
            #expect(text.contains("create SyncedTask("))
            #expect(text.contains(".name = \\\"offline\\\""))
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: archive)) as? [String: Any]
            #expect((json?["changes"] as? [Any])?.count == 1)
        }
    }

    /// Recovering keeps what still applies and archives what the rules dropped: here an update of
    /// an object another device deleted while this one was offline.
    @Test func recoveryArchivesTheChangesItDrops() async throws {
        try await withSyncTestServer { server in
            let config = try await configuration(server, device: "frodo", mode: .recoverUnsyncedChanges())
            let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
            try realm.write { realm.add(SyncedTask(value: ["name": "doomed"])) }
            try await realm.syncSession!.wait(for: .upload)
            realm.syncSession!.suspend()
            try realm.write { realm.objects(SyncedTask.self).first!.owner = "frodo" }

            let sam = try await Realm(configuration: try await configuration(server, device: "sam", mode: .recoverUnsyncedChanges()),
                                      downloadBeforeOpen: .always)
            try sam.write { sam.delete(sam.objects(SyncedTask.self)) }
            try await sam.syncSession!.wait(for: .upload)
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.resume()

            #expect(await waitUntil { realm.clientResetOutcome != nil })
            let outcome = try #require(realm.clientResetOutcome)
            #expect(outcome.didRecover)
            #expect(outcome.discardedChangeCount == 1)
            #expect(names(realm).isEmpty)
            let text = try String(contentsOf: try #require(outcome.discardedChangesArchive), encoding: .utf8)
            #expect(text.contains(".owner = \\\"frodo\\\""))
        }
    }

    /// Two resets in a row both recover: the first is settled once the server acknowledged it.
    @Test func aSettledResetIsNotACycle() async throws {
        try await withSyncTestServer { server in
            let errors = Recorder<SyncError>()
            let config = try await configuration(server, device: "frodo", mode: .recoverUnsyncedChanges(), errors: errors)
            let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
            try await resetAfterAnOfflineWrite(server, realm)
            #expect(await waitUntil { realm.clientResetOutcome != nil })
            try await realm.syncSession!.wait(for: .upload)
            let first = try #require(realm.clientResetOutcome)
            #expect(await waitUntil { (try? pendingResetRows(config)) == 0 })

            realm.syncSession!.suspend()
            try realm.write { realm.add(SyncedTask(value: ["name": "offline again"])) }
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.resume()
            #expect(await waitUntil { realm.clientResetOutcome != first })
            #expect(realm.clientResetOutcome?.didRecover == true)
            #expect(names(realm) == ["offline", "offline again", "synced"])
            #expect(errors.all.filter { $0.code == .clientResetError }.isEmpty)
        }
    }

    /// A reset recorded in the file and never acknowledged (the app was killed right after it,
    /// say), then another reset asking for the same action: recovering again could loop forever,
    /// so `.recoverUnsyncedChanges` falls back to the manual handler and says why.
    @Test func aSecondRecoveryBeforeTheFirstWasAcknowledgedFallsBackToManual() async throws {
        try await withSyncTestServer { server in
            let errors = Recorder<SyncError>()
            let config = try await configuration(server, device: "frodo", mode: .recoverUnsyncedChanges(), errors: errors)
            let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
            try await resetAfterAnOfflineWrite(server, realm) { try recordUnacknowledgedReset(config, action: "recover") }
            #expect(await waitUntil { errors.all.contains { $0.code == .clientResetError } })
            let error = try #require(errors.all.first { $0.code == .clientResetError })
            #expect(error.localizedDescription.contains("never acknowledged"))
            #expect(error.clientResetInfo() != nil)
            #expect(realm.clientResetOutcome == nil)
        }
    }

    /// The same with `.recoverOrDiscardUnsyncedChanges`: it discards this time instead.
    @Test func recoverOrDiscardDiscardsWhenTheLastRecoveryWasNeverAcknowledged() async throws {
        try await withSyncTestServer { server in
            let config = try await configuration(server, device: "frodo", mode: .recoverOrDiscardUnsyncedChanges())
            let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
            try await resetAfterAnOfflineWrite(server, realm) { try recordUnacknowledgedReset(config, action: "recover") }
            #expect(await waitUntil { realm.clientResetOutcome != nil })
            let outcome = try #require(realm.clientResetOutcome)
            #expect(!outcome.didRecover)
            #expect(outcome.reason.contains("never acknowledged"))
            // The outcome is recorded with the reset; the realm shows the reset file once it advanced.
            #expect(await waitUntil { names(realm) == ["synced"] }, "still \(names(realm))")
        }
    }

    private func recordUnacknowledgedReset(_ config: Realm.Configuration, action: String) throws {
        let queue = try DatabaseQueue(path: config.fileURL!.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS _atoll_pending_reset
                (id INTEGER PRIMARY KEY CHECK (id = 1), action TEXT NOT NULL, date REAL NOT NULL, recovered_version INTEGER)
                """)
            try db.execute(sql: "INSERT OR REPLACE INTO _atoll_pending_reset VALUES (1, ?, ?, 1000000)",
                           arguments: [action, Date().timeIntervalSince1970])
        }
        try queue.close()
    }

    private func pendingResetRows(_ config: Realm.Configuration) throws -> Int {
        let queue = try DatabaseQueue(path: config.fileURL!.path)
        defer { try? queue.close() }
        return try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM _atoll_pending_reset") ?? 0 }
    }
}

/// Building a mode from Realm's numbered modes: blocks go with the modes that call them.
@Suite struct ClientResetModeConfigurationTests {
    @Test func blocksInManualModeAreAConfigurationError() {
        #expect {
            _ = try ClientResetMode(.manual, beforeReset: { _ in })
        } throws: { error in
            guard let error = error as? Realm.Error else { return false }
            return error.code == .invalidConfiguration && error.localizedDescription.contains("manual")
        }
    }

    @Test func aManualHandlerInAnAutomaticModeIsAConfigurationError() {
        for mode in [RLMClientResetMode.discardUnsyncedChanges, .recoverUnsyncedChanges, .recoverOrDiscardUnsyncedChanges] {
            #expect(throws: Realm.Error.self) { _ = try ClientResetMode(mode, manualClientResetHandler: { _, _ in }) }
        }
    }

    @Test func eachNumberedModeBuildsItsMode() throws {
        #expect(RLMClientResetMode.discardUnsyncedChanges.rawValue == 1)
        guard case .manual(let handler) = try ClientResetMode(.manual, manualClientResetHandler: { _, _ in }), handler != nil else {
            Issue.record("manual keeps its handler")
            return
        }
        guard case .discardUnsyncedChanges = try ClientResetMode(.discardLocal, afterReset: { _, _ in }) else {
            Issue.record("discardLocal is discardUnsyncedChanges")
            return
        }
        guard case .recoverOrDiscardUnsyncedChanges = try ClientResetMode(.recoverOrDiscardUnsyncedChanges) else {
            Issue.record("recoverOrDiscardUnsyncedChanges")
            return
        }
    }
}
