import Atoll
import AtollTesting
import Foundation
import Testing

// Seed 000 (handle sync errors, client reset modes). Each sample's code is as on the page; only
// `App(id: …)` passes the test server's configuration, and top-level statements sit in functions.

// MARK: Sample 1 — set an error handler on the sync manager

func setSyncErrorHandler() {
    let app = App(id: YOUR_APP_SERVICES_APP_ID, configuration: seedAppConfiguration)
    app.syncManager.errorHandler = { error, session in
        // handle error
    }
}

// MARK: Sample 3 — before and after reset blocks

func configureBeforeAndAfterResetBlocks() async {
    // A block called after a client reset error is detected, but before the
    // client recovery process is executed.
    // This block could be used for any custom logic, reporting, debugging etc.
    // This is one example, but your usage may vary.
    let beforeClientResetBlock: (Realm) -> Void = { before in
        var recoveryConfig = Realm.Configuration()
        recoveryConfig.fileURL = myRecoveryPath
        do {
            try before.writeCopy(configuration: recoveryConfig)
            // The copied realm could be used later for recovery, debugging, reporting, etc.
        } catch {
            // handle error
        }
    }
    // A block called after the client recovery process has executed.
    // This block could be used for custom recovery, reporting, debugging etc.
    // This is one example, but your usage may vary.
    let afterClientResetBlock: (Realm, Realm) -> Void = { before, after in
        // let res = after.objects(myClass.self)
        // if (res.filter("primaryKey == %@", object.primaryKey).first != nil) {
        // // ...custom recovery logic...
        // } else {
        // // ...custom recovery logic...
        // }
        // }
    }
    do {
        let app = App(id: YOUR_APP_SERVICES_APP_ID, configuration: seedAppConfiguration)
        let user = try await app.login(credentials: Credentials.anonymous)
        var configuration = user.flexibleSyncConfiguration(clientResetMode:
            .recoverOrDiscardUnsyncedChanges(
                beforeReset: beforeClientResetBlock,
                afterReset: afterClientResetBlock))
    } catch {
        print("Error logging in user: \(error.localizedDescription)")
    }
}

// MARK: Sample 5 — discard unsynced changes

func configureDiscardUnsyncedChanges() async {
    do {
        let app = App(id: APP_ID, configuration: seedAppConfiguration)
        let user = try await app.login(credentials: Credentials.anonymous)
        var config = user.flexibleSyncConfiguration(clientResetMode: .discardUnsyncedChanges())
    } catch {
        print("Error logging in user: \(error.localizedDescription)")
    }
}

// MARK: Sample 6 — manual mode

func configureManualMode() async {
    do {
        let app = App(id: APP_ID, configuration: seedAppConfiguration)
        let user = try await app.login(credentials: Credentials.anonymous)
        var config = user.flexibleSyncConfiguration(clientResetMode: .manual())
    } catch {
        print("Error logging in user: \(error.localizedDescription)")
    }
}

// MARK: Sample 7 — manual fallback on the sync manager

func handleClientReset() {
    // Report the client reset error to the user, or do some custom logic.
}

func setManualFallbackHandler() async {
    do {
        let app = App(id: APP_ID, configuration: seedAppConfiguration)
        let user = try await app.login(credentials: Credentials.anonymous)
        var config = user.flexibleSyncConfiguration(clientResetMode: .recoverOrDiscardUnsyncedChanges())
        // If client recovery fails,
        app.syncManager.errorHandler = { error, session in
            guard let syncError = error as? SyncError else {
                fatalError("Unexpected error type passed to sync error handler! \(error)")
            }
            switch syncError.code {
            case .clientResetError:
                if let (path, clientResetToken) = syncError.clientResetInfo() {
                    handleClientReset()
                    SyncSession.immediatelyHandleError(clientResetToken, syncManager: app.syncManager)
                }
            default:
                // Handle other errors...
                ()
            }
        }
    } catch {
        print("Error: \(error.localizedDescription)")
    }
}

@MainActor @Suite(.serialized) struct Seed000HandleSyncErrorsTests {
    @Test func setAnErrorHandler() async throws {
        try await withSeedServer { _ in
            #expect(app.syncManager.errorHandler == nil)
            setSyncErrorHandler()
            // `App(id:)` with the same id and configuration shares the sync manager.
            #expect(app.syncManager.errorHandler != nil)
        }
    }

    @Test func theDefaultModeIsRecoverUnsyncedChanges() async throws {
        try await withSeedServer { _ in
            let user = try await app.login(credentials: .anonymous)
            // Specify the clientResetMode when you create the SyncConfiguration.
            // If you do not specify, this defaults to `.recoverUnsyncedChanges` mode.
            var configuration = user.flexibleSyncConfiguration(clientResetMode: .recoverUnsyncedChanges())
            configuration.objectTypes = [Task.self]
            guard case .recoverUnsyncedChanges = user.flexibleSyncConfiguration().syncConfiguration!.clientResetMode else {
                Issue.record("the default client reset mode is not .recoverUnsyncedChanges")
                return
            }
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            #expect(realm.syncSession != nil)
        }
    }

    @Test func theModesWithBlocksConfigureAndOpen() async throws {
        try await withSeedServer { _ in
            await configureBeforeAndAfterResetBlocks()
            await configureDiscardUnsyncedChanges()
            await configureManualMode()
            let user = try #require(app.currentUser)
            // Each mode's configuration opens a realm that syncs.
            for mode in [ClientResetMode.recoverOrDiscardUnsyncedChanges(beforeReset: { _ in }, afterReset: { _, _ in }),
                         .discardUnsyncedChanges(), .manual()] {
                var configuration = user.flexibleSyncConfiguration(clientResetMode: mode)
                configuration.objectTypes = [Task.self]
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                let subscriptions = realm.subscriptions
                try await subscriptions.update { subscriptions.append(QuerySubscription<Task>(name: "all")) }
                #expect(realm.subscriptions.state == .complete)
            }
        }
    }

    /// The page's last section: write and sync, terminate and enable sync, run the app again.
    /// The sample's handler gets every client reset that reaches the manual path (a failed
    /// automatic reset, or `.manual()` as here, which always does) and backs the realm up and
    /// deletes it at once.
    @Test func theManualFallbackHandlerBacksUpAndDeletesTheRealm() async throws {
        try await withSeedServer { server in
            await setManualFallbackHandler()
            let user = try #require(app.currentUser)
            var configuration = user.flexibleSyncConfiguration(clientResetMode: .manual())
            configuration.objectTypes = [Task.self]
            let path = configuration.fileURL!.path
            let session: SyncSession = try await {
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                let subscriptions = realm.subscriptions
                try await subscriptions.update { subscriptions.append(QuerySubscription<Task>(name: "all")) }
                try realm.write { realm.add(Task(value: ["taskName": "Leave the Shire"])) }
                try await realm.syncSession!.wait(for: .upload)
                return realm.syncSession!
            }()
            // The app closed its realm; the session still holds the file until the reset stops it.
            try await terminateAndEnableSync(server, session: session) { !FileManager.default.fileExists(atPath: path) }
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(recoveredRealms().count == 1)

            let fresh = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            let subscriptions = fresh.subscriptions
            try await subscriptions.update { subscriptions.append(QuerySubscription<Task>(name: "all")) }
            #expect(fresh.objects(Task.self).map(\.taskName) == ["Leave the Shire"])
        }
    }
}
