import Atoll
import AtollTesting
import Foundation
import Testing

// Seed 002 (client resets, Realm 10.25). The sample's code is as on the page; only `App(id: …)`
// passes the test server's configuration, and the top-level statements sit in a function.

// MARK: Sample 2 — discard local changes with before and after blocks

func configureDiscardLocal() async {
    let beforeClientResetBlock: (Realm) -> Void = { before in
        // This block could be used to back-up a realm file, send reporting, etc.
    }
    let afterClientResetBlock: (Realm, Realm) -> Void = { before, after in
        // This block could be used to add custom recovery logic, send reporting, etc.
    }
    do {
        let app = App(id: YOUR_APP_SERVICES_APP_ID, configuration: seedAppConfiguration)
        let user = try await app.login(credentials: Credentials.anonymous)
        // Specify the clientResetMode when you create the SyncConfiguration.
        // If you do not specify, this defaults to `.manual` mode.
        var configuration = user.configuration(partitionValue: "myPartition", clientResetMode: .discardLocal(beforeClientResetBlock, afterClientResetBlock))
    } catch {
        print("Error logging in user: \(error.localizedDescription)")
    }
}

@MainActor @Suite(.serialized) struct Seed002ClientResetModeTests {
    @Test func discardLocalConfiguresARealmThatOpens() async throws {
        try await withSeedServer { _ in
            await configureDiscardLocal()
            let user = try #require(app.currentUser)
            var configuration = user.configuration(partitionValue: "myPartition", clientResetMode: .discardLocal({ _ in }, { _, _ in }))
            configuration.objectTypes = [QsTask.self]
            guard case .discardUnsyncedChanges = configuration.syncConfiguration!.clientResetMode else {
                Issue.record("discardLocal is not discardUnsyncedChanges")
                return
            }
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            #expect(realm.isEmpty)
        }
    }

    /// "In .manual mode, the SDK copies the local realm file into a recovery directory, and
    /// deletes the original. The next time your app opens the realm for that partition, the SDK
    /// downloads a new copy … you can access this backup copy through the path stored in the
    /// SyncError to manually transfer data from the backup copy to the newly created realm."
    @Test func manualModeKeepsABackupToRecoverFrom() async throws {
        try await withSeedServer { server in
            let errors = SeedErrors()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let user = try await app.login(credentials: .anonymous)
            var configuration = user.configuration(partitionValue: "myPartition", clientResetMode: .manual())
            configuration.objectTypes = [QsTask.self]
            let (backupPath, token): (String, SyncError.ActionToken) = try await {
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                try realm.write { realm.add(QsTask(value: ["name": "Synced", "owner": "Frodo"])) }
                try await realm.syncSession!.wait(for: .upload)
                try await terminateAndEnableSync(server, session: realm.syncSession!, whileTerminated: {
                    try realm.write { realm.add(QsTask(value: ["name": "Not synced", "owner": "Frodo"])) }
                }) { errors.firstReset != nil }
                return try #require(errors.firstReset?.clientResetInfo())
            }()
            var handled = false
            for _ in 0..<40 where !handled {
                handled = SyncSession.immediatelyHandleError(token, syncManager: app.syncManager)
                if !handled { try await _Concurrency.Task.sleep(nanoseconds: 50_000_000) }
            }
            #expect(handled)

            // The new realm has the server's data; the backup has the change that never synced.
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            #expect(realm.objects(QsTask.self).map(\.name) == ["Synced"])
            let backup = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: backupPath), objectTypes: [QsTask.self]))
            let lost = backup.objects(QsTask.self).where { $0.name == "Not synced" }
            #expect(lost.count == 1)
            // Transfer it by hand, and it syncs.
            try realm.write { for task in lost { realm.add(QsTask(value: ["name": task.name, "owner": task.owner ?? ""])) } }
            try await realm.syncSession!.wait(for: .upload)
            #expect(realm.objects(QsTask.self).count == 2)
        }
    }
}
