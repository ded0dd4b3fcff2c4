@_spi(Testing) import Atoll
import AtollTesting
import Foundation
import Testing

// Seed 001 (the reference of `RLMSyncError`): the codes, and what the page says happens with
// client reset and permission denied errors. The page has no sample beyond the declarations.

@MainActor @Suite(.serialized) struct Seed001SyncErrorCodesTests {
    @Test func theCodesAreRealms() {
        #expect(SyncError.Code.clientSessionError.rawValue == 4)
        #expect(SyncError.Code.clientUserError.rawValue == 5)
        #expect(SyncError.Code.clientInternalError.rawValue == 6)
        #expect(SyncError.Code.clientResetError.rawValue == 7)
        #expect(SyncError.Code.permissionDeniedError.rawValue == 9)
        #expect(SyncError.Code.invalidFlexibleSyncSubscriptions.rawValue == 10)
        #expect(SyncError.Code.writeRejected.rawValue == 11)
        #expect(SyncError.Code.connectionFailed.rawValue == 12)
        #expect(SyncError.Code.tlsHandshakeFailed.rawValue == 13)
        #expect(SyncError.Code.serverWarning.rawValue == 14)
    }

    /// "The local copy of the realm is copied into a recovery directory for safekeeping, and then
    /// deleted from the original location. The next time the realm for that partition value is
    /// opened, it is downloaded again." Without `immediatelyHandleError` that happens "the next
    /// time the app is launched and App is initialized"; the copy "is not actually created until
    /// the client reset process is initiated".
    @Test func aClientResetRunsAtTheNextAppStartWhenNotHandledAtOnce() async throws {
        try await withSeedServer { server in
            let errors = SeedErrors()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let user = try await app.login(credentials: .anonymous)
            var configuration = user.configuration(partitionValue: "Some Partition Value", clientResetMode: .manual())
            configuration.objectTypes = [QsTask.self]
            let path = configuration.fileURL!.path
            let backupPath: String = try await {
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                try realm.write { realm.add(QsTask(value: ["name": "Carry the ring", "owner": "Frodo"])) }
                try await realm.syncSession!.wait(for: .upload)
                try await terminateAndEnableSync(server, session: realm.syncSession!) { errors.firstReset != nil }
                return try #require(errors.firstReset?.clientResetInfo()).0
            }()
            #expect(!FileManager.default.fileExists(atPath: backupPath))
            #expect(FileManager.default.fileExists(atPath: path))

            // The app is launched again (the realm closed with the previous run).
            for _ in 0..<40 where FileManager.default.fileExists(atPath: path) && !FileManager.default.fileExists(atPath: backupPath) {
                _ = App.reopenedForTesting(id: APPID, configuration: seedAppConfiguration)
                try await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
            }
            #expect(FileManager.default.fileExists(atPath: backupPath))
            #expect(!FileManager.default.fileExists(atPath: path))
            let restarted = App(id: APPID, configuration: seedAppConfiguration)
            var again = try #require(restarted.currentUser).configuration(partitionValue: "Some Partition Value")
            again.objectTypes = [QsTask.self]
            let realm = try await Realm(configuration: again, downloadBeforeOpen: .always)
            #expect(realm.objects(QsTask.self).map(\.name) == ["Carry the ring"])
        }
    }

    /// "Realms that hit a permission denied error are flagged for deletion the next time the
    /// application starts; the token passed to `immediatelyHandleError` deletes the local copy now."
    @Test func aPermissionDeniedRealmIsDeletedWithItsToken() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [.init(id: "test-app", syncKind: .partition, permissions: [.init(read: "partition == %user.id")])]
        }) { server in
            let app = server.app(device: "frodo")
            let errors = SeedErrors()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let user = try await app.login(credentials: .anonymous)
            var configuration = user.configuration(partitionValue: "Sam's garden")
            configuration.objectTypes = [QsTask.self]
            let token: SyncError.ActionToken = try await {
                _ = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
                for _ in 0..<100 where errors.all.isEmpty { try await _Concurrency.Task.sleep(nanoseconds: 50_000_000) }
                let error = try #require(errors.all.first)
                #expect(error.code == .permissionDeniedError)
                return try #require(error.deleteRealmUserInfo())
            }()
            #expect(FileManager.default.fileExists(atPath: configuration.fileURL!.path))
            var deleted = false
            for _ in 0..<40 where !deleted {
                deleted = SyncSession.immediatelyHandleError(token, syncManager: app.syncManager)
                if !deleted { try await _Concurrency.Task.sleep(nanoseconds: 50_000_000) }
            }
            #expect(deleted)
            #expect(!FileManager.default.fileExists(atPath: configuration.fileURL!.path))
        }
    }

    /// "Connection errors are logged and not reported to the error handler."
    @Test func connectionFailuresAreNotReported() async throws {
        try await withSeedServer { server in
            let errors = SeedErrors()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let user = try await app.login(credentials: .anonymous)
            try await server.stop()
            var configuration = user.configuration(partitionValue: "Some Partition Value")
            configuration.objectTypes = [QsTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            // Two more attempts fail, each once the clock passed its backoff; each failure is
            // through the session's report (where a handler call would be) before the next.
            let session = try #require(realm.syncSession)
            for _ in 0..<2 {
                #expect(await server.nextConnectionFailure(of: session)?.code == .connectionFailed)
            }
            #expect(!errors.all.contains { $0.code == .connectionFailed })
            #expect(realm.syncSession?.connectionState != .connected)
        }
    }
}
