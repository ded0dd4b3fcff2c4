@_spi(Testing) @testable import Atoll
import AtollAdminClient
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Logging
import Testing

// MARK: Helpers

/// ``forceClientReset(_:session:whileTerminated:until:)`` (AtollTesting), returning the reset
/// `reported()` gives.
@MainActor
func forceClientReset(_ server: SyncTestServer, session: SyncSession,
                      whileTerminated: () throws -> Void = {}, reported: () -> SyncError?) async throws -> SyncError {
    guard try await forceClientReset(server, session: session, whileTerminated: whileTerminated, until: { reported() != nil }),
          let reset = reported()
    else { throw SyncError(.clientInternalError, "no client reset was reported") }
    return reset
}

/// The first client reset error among `errors`.
func firstReset(_ errors: Recorder<any Error>) -> SyncError? {
    errors.all.compactMap { $0 as? SyncError }.first { $0.code == .clientResetError }
}

/// Runs the action of `token` until no `Realm` of its file is left open (bounded, ~2 s).
func handleWhenClosed(_ token: SyncError.ActionToken, _ app: App) async throws -> Bool {
    for _ in 0..<40 {
        if SyncSession.immediatelyHandleError(token, syncManager: app.syncManager) { return true }
        try await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
    }
    return false
}

func fileExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

/// Lines logged to `Logger.shared` while a test swaps it.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [(LogLevel, String)] = []
    func append(_ level: LogLevel, _ message: String) { lock.withLock { lines.append((level, message)) } }
    func lines(containing text: String) -> [(level: LogLevel, message: String)] {
        lock.withLock { lines.filter { $0.1.contains(text) }.map { (level: $0.0, message: $0.1) } }
    }
    func levels(containing text: String) -> [LogLevel] { lines(containing: text).map { $0.level } }
}

// MARK: Values

@Suite struct SyncErrorValueTests {
    @Test func anErrorReadsAsItsMessageAndMatchesOnItsCode() {
        let error: any Error = SyncError(.clientSessionError, "the session broke a rule")
        #expect(error.localizedDescription == "the session broke a rule")
        #expect((error as? SyncError)?.code == .clientSessionError)
        #expect("\(error)".contains("(4)"))
    }

    @Test func theCodesHaveRealmsValues() {
        let codes: [SyncError.Code: Int] = [
            .clientSessionError: 4, .clientUserError: 5, .clientInternalError: 6, .clientResetError: 7,
            .permissionDeniedError: 9, .invalidFlexibleSyncSubscriptions: 10, .writeRejected: 11,
            .connectionFailed: 12, .tlsHandshakeFailed: 13, .serverWarning: 14,
        ]
        for (code, value) in codes { #expect(code.rawValue == value) }
    }

    @Test func aWriteRejectedErrorListsTheRevertedObjects() throws {
        let id = ObjectId.generate()
        let session = SessionError(ErrorMessage(code: .compensatingWrite, message: "write outside the view", session: 1, compensatingWrites: [
            CompensatingWrite(objectType: "Task", primaryKey: .objectId(id), reason: "no permission"),
            CompensatingWrite(objectType: "Team", primaryKey: .string("shire"), reason: "outside the subscriptions"),
        ]))
        let error = SyncError(session)
        #expect(error.code == .writeRejected)
        let info = try #require(error.compensatingWriteInfo)
        #expect(info.map(\.objectType) == ["Task", "Team"])
        #expect(info.first?.primaryKey == .objectId(id))
        #expect(info.last?.reason == "outside the subscriptions")
    }

    @Test func otherErrorsHaveNoCompensatingWritesAndNoActions() {
        let error = SyncError(SessionError(code: .serverWarning, message: "careful", action: .warning, isFatal: false))
        #expect(error.compensatingWriteInfo == nil)
        #expect(error.clientResetInfo() == nil)
        #expect(error.deleteRealmUserInfo() == nil)
        // A reset error made by hand carries no token either.
        #expect(SyncError(.clientResetError, "reset").clientResetInfo() == nil)
    }

    @Test func theBackupGoesToTheAppsRecoveredRealmsFolderWithATimestamp() {
        let folder = URL(fileURLWithPath: "/data/atoll/tasks", isDirectory: true)
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let path = FileAction.backupPath(for: "/data/atoll/tasks/u1/shire.realm", appFolder: folder, date: date)
        #expect(path == "/data/atoll/tasks/recovered-realms/shire-20231114T221320.250Z.realm")
    }
}

// MARK: File actions

@Suite struct FileActionTests {
    @Test func theMetadataStoreKeepsOnePendingActionPerFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try MetadataStore(folder: folder.url)
        let reset = FileAction(kind: .backUpThenDelete, realmPath: "/a/shire.realm", backupPath: "/a/recovered-realms/shire-1.realm")
        try store.record(reset)
        try store.record(FileAction(kind: .delete, realmPath: "/a/mordor.realm"))
        #expect(store.fileAction(forPath: "/a/shire.realm") == reset)
        #expect(store.fileActions().map(\.realmPath) == ["/a/mordor.realm", "/a/shire.realm"])
        // A later action on the same file replaces the earlier one.
        try store.record(FileAction(kind: .delete, realmPath: "/a/shire.realm"))
        #expect(store.fileAction(forPath: "/a/shire.realm")?.kind == .delete)
        store.removeFileAction(forPath: "/a/shire.realm")
        // Kept on disk: a store opened again (the next app start) sees what is left.
        #expect(try MetadataStore(folder: folder.url).fileActions().map(\.realmPath) == ["/a/mordor.realm"])
    }

    @Test func backUpThenDeleteWaitsForTheFileToBeClosed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration("shire.realm", objectTypes: [Dog.self])
        let path = configuration.fileURL!.path
        let backup = folder.url.appendingPathComponent("recovered-realms/shire-1.realm").path
        let action = FileAction(kind: .backUpThenDelete, realmPath: path, backupPath: backup)
        try {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(Dog(value: ["name": "Fang"])) }
            #expect(try action.run() == false)
            #expect(fileExists(path) && !fileExists(backup))
        }()
        #expect(try action.run())
        #expect(!fileExists(path) && !fileExists(path + "-wal") && !fileExists(path + "-shm"))
        // The backup is a realm of its own with what the file held.
        let copy = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: backup), objectTypes: [Dog.self]))
        #expect(copy.objects(Dog.self).map(\.name) == ["Fang"])
    }

    @Test func deleteRemovesTheFileAndAMissingFileCountsAsDone() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration("mordor.realm", objectTypes: [Dog.self])
        try { _ = try Realm(configuration: configuration) }()
        let action = FileAction(kind: .delete, realmPath: configuration.fileURL!.path)
        #expect(try action.run())
        #expect(!fileExists(configuration.fileURL!.path))
        #expect(try action.run())
    }
}

// MARK: Manual client reset, end to end

@MainActor @Suite(.serialized) struct ManualClientResetTests {
    private func configuration(_ user: User, _ mode: ClientResetMode) -> Realm.Configuration {
        var configuration = user.configuration(partitionValue: "shire", clientResetMode: mode)
        configuration.objectTypes = [SyncedTask.self]
        return configuration
    }

    @Test func theConfigurationsManualHandlerGetsTheResetBeforeTheErrorHandler() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            let manual = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try await app.login(credentials: .anonymous)
            let sessions = Recorder<SyncSession>()
            let configuration = self.configuration(frodo, .manual(errorHandler: { error, session in
                manual.append(error)
                if let session { sessions.append(session) }
            }))
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            let session = try #require(realm.syncSession)
            let reset = try await forceClientReset(server, session: session) { firstReset(manual) }
            #expect(reset.code == .clientResetError)
            #expect(sessions.all.first === session)
            #expect(session.state == .inactive)
            // The sync manager's handler heard the warning of the termination, not the reset.
            #expect(errors.all.contains { ($0 as? SyncError)?.code == .serverWarning })
            #expect(firstReset(errors) == nil)
        }
    }

    @Test func withoutAManualHandlerTheResetGoesToTheErrorHandler() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            let sessions = Recorder<SyncSession?>()
            app.syncManager.errorHandler = { error, session in
                errors.append(error)
                if (error as? SyncError)?.code == .clientResetError { sessions.append(session) }
            }
            let frodo = try await app.login(credentials: .anonymous)
            let configuration = self.configuration(frodo, .manual())
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            let session = try #require(realm.syncSession)
            let reset = try await forceClientReset(server, session: session) { firstReset(errors) }
            let (backupPath, _) = try #require(reset.clientResetInfo())
            // <app folder>/recovered-realms/<file name>-<timestamp>.realm
            let fileName = configuration.fileURL!.deletingPathExtension().lastPathComponent
            #expect(backupPath.hasPrefix(app.core.folder.appendingPathComponent("recovered-realms").path + "/\(fileName)-"))
            #expect(backupPath.hasSuffix(".realm"))
            #expect(sessions.all.first.flatMap { $0 } === session)
        }
    }

    @Test func immediatelyHandleErrorBacksUpDeletesAndTheNextOpenDownloadsAFreshCopy() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try await app.login(credentials: .anonymous)
            let configuration = self.configuration(frodo, .manual())
            let path = configuration.fileURL!.path
            let (backupPath, token) = try await {
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                let session = try #require(realm.syncSession)
                try realm.write { realm.add(SyncedTask(value: ["name": "synced"])) }
                try await session.wait(for: .upload)
                let reset = try await forceClientReset(server, session: session, whileTerminated: {
                    try realm.write { realm.add(SyncedTask(value: ["name": "unsynced"])) }
                }) { firstReset(errors) }
                let info = try #require(reset.clientResetInfo())
                // The session stopped; the realm still works offline.
                #expect(session.state == .inactive)
                try realm.write { realm.add(SyncedTask(value: ["name": "after the reset"])) }
                // Nothing happens to a file that is open: no backup yet, the file stays.
                #expect(!fileExists(info.0))
                #expect(SyncSession.immediatelyHandleError(info.1, syncManager: app.syncManager) == false)
                #expect(fileExists(path) && !fileExists(info.0))
                return info
            }()
            #expect(try await handleWhenClosed(token, app))
            #expect(fileExists(backupPath))
            #expect(!fileExists(path) && !fileExists(path + "-wal") && !fileExists(path + "-shm"))
            // The token has done its work: a second call changes nothing.
            #expect(SyncSession.immediatelyHandleError(token, syncManager: app.syncManager))

            // The backup opens as a local realm with everything the file held.
            let backup = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: backupPath), objectTypes: [SyncedTask.self]))
            #expect(backup.objects(SyncedTask.self).map(\.name).sorted() == ["after the reset", "synced", "unsynced"])
            #expect(backup.syncSession == nil)

            // Opening the configuration again downloads a fresh copy of the server's data, which syncs.
            let fresh = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            #expect(fresh.objects(SyncedTask.self).map(\.name) == ["synced"])
            try fresh.write { fresh.add(SyncedTask(value: ["name": "after the fresh copy"])) }
            try await fresh.syncSession!.wait(for: .upload)
            let other = try await server.app(device: "sam").login(credentials: .anonymous)
            let samsRealm = try await Realm(configuration: self.configuration(other, .manual()), downloadBeforeOpen: .always)
            #expect(samsRealm.objects(SyncedTask.self).map(\.name).sorted() == ["after the fresh copy", "synced"])
        }
    }

    @Test func aResetNotHandledNowRunsAtTheNextAppStart() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try await app.login(credentials: .anonymous)
            let configuration = self.configuration(frodo, .manual())
            let path = configuration.fileURL!.path
            let backupPath = try await {
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                try realm.write { realm.add(SyncedTask(value: ["name": "kept in the backup"])) }
                try await realm.syncSession!.wait(for: .upload)
                let reset = try await forceClientReset(server, session: realm.syncSession!) { firstReset(errors) }
                return try #require(reset.clientResetInfo()).0
            }()
            #expect(fileExists(path) && !fileExists(backupPath))
            // Wait (bounded) until the realm is closed, then start the app as a new process would.
            for _ in 0..<40 where RealmCoordinator.isOpen(configuration) { try await _Concurrency.Task.sleep(nanoseconds: 50_000_000) }
            _ = App.reopenedForTesting(id: server.appId, configuration: server.appConfiguration(device: "frodo"))
            #expect(fileExists(backupPath))
            #expect(!fileExists(path))
            let backup = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: backupPath), objectTypes: [SyncedTask.self]))
            #expect(backup.objects(SyncedTask.self).map(\.name) == ["kept in the backup"])
        }
    }
}

// MARK: Permission denied

@MainActor @Suite(.serialized) struct PermissionDeniedActionTests {
    @Test func aRealmTheUserMayNotReadIsDeletedWithTheErrorsToken() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [.init(id: "test-app", syncKind: .partition, permissions: [.init(read: "partition == %user.id")])]
        }) { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try await app.login(credentials: .anonymous)
            var other = frodo.configuration(partitionValue: "someone else")
            other.objectTypes = [SyncedTask.self]
            let path = other.fileURL!.path
            let denied: SyncError = try await {
                let realm = try await Realm(configuration: other, downloadBeforeOpen: .never)
                try realm.write { realm.add(SyncedTask(value: ["name": "not allowed"])) }
                for _ in 0..<100 where errors.all.isEmpty { try await _Concurrency.Task.sleep(nanoseconds: 50_000_000) }
                return try #require(errors.all.first as? SyncError)
            }()
            #expect(denied.code == .permissionDeniedError)
            #expect(denied.clientResetInfo() == nil)
            let token = try #require(denied.deleteRealmUserInfo())
            #expect(token.realmPath == URL(fileURLWithPath: path).standardizedFileURL.path)
            #expect(fileExists(path))
            #expect(try await handleWhenClosed(token, app))
            #expect(!fileExists(path))
        }
    }

    @Test func aDeniedRealmIsDeletedAtTheNextAppStart() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [.init(id: "test-app", syncKind: .partition, permissions: [.init(read: "partition == %user.id")])]
        }) { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try await app.login(credentials: .anonymous)
            var other = frodo.configuration(partitionValue: "someone else")
            other.objectTypes = [SyncedTask.self]
            try await {
                _ = try await Realm(configuration: other, downloadBeforeOpen: .never)
                for _ in 0..<100 where errors.all.isEmpty { try await _Concurrency.Task.sleep(nanoseconds: 50_000_000) }
            }()
            #expect((errors.all.first as? SyncError)?.code == .permissionDeniedError)
            #expect(fileExists(other.fileURL!.path))
            for _ in 0..<40 where RealmCoordinator.isOpen(other) { try await _Concurrency.Task.sleep(nanoseconds: 50_000_000) }
            _ = App.reopenedForTesting(id: server.appId, configuration: server.appConfiguration(device: "frodo"))
            #expect(!fileExists(other.fileURL!.path))
        }
    }
}

// MARK: Logging

/// Every test that swaps `Logger.shared` is here, one at a time.
@MainActor @Suite(.serialized) struct LoggerTests {
    /// Runs `body` with `Logger.shared` replaced by a capturing logger of `level`.
    private func withCapturedLog(level: LogLevel, _ body: (LogCapture) async throws -> Void) async throws {
        let capture = LogCapture()
        let previous = Logger.shared
        Logger.shared = Logger(level: level) { level, message in capture.append(level, message) }
        defer { Logger.shared = previous }
        try await body(capture)
    }

    /// A permission denial reaches the log as an error (Realm logs errors at error); a server
    /// warning stays a warning.
    @Test func aSyncErrorReachesACustomLogFunctionAsAnError() async throws {
        try await withCapturedLog(level: .warn) { capture in
            try await withSyncTestServer({ configuration in
                configuration.apps = [.init(id: "test-app", syncKind: .partition, permissions: [.init(read: "partition == %user.id")])]
            }) { server in
                let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
                var other = frodo.configuration(partitionValue: "logged-denial")
                other.objectTypes = [SyncedTask.self]
                let realm = try await Realm(configuration: other, downloadBeforeOpen: .never)
                for _ in 0..<100 where capture.lines(containing: "logged-denial").isEmpty {
                    try await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
                }
                let lines = capture.lines(containing: "logged-denial")
                #expect(lines.first?.level == .error)
                #expect(lines.first?.message.contains("(9)") == true)
                _ = realm
            }
        }
    }

    @Test func theLevelDecidesWhatReachesTheLogFunction() async throws {
        try await withCapturedLog(level: .warn) { capture in
            var logger = Logging.Logger(label: "atoll.test", factory: SharedLoggerHandler.init)
            logger.logLevel = .trace  // the SDK's loggers follow Logger.shared.level, whatever they set
            logger.info("level-check info")
            logger.warning("level-check warning")
            logger.error("level-check error")
            #expect(capture.levels(containing: "level-check ") == [.warn, .error])

            Logger.shared.level = .error
            logger.warning("level-check-2 warning")
            logger.critical("level-check-2 critical")
            #expect(capture.levels(containing: "level-check-2") == [.fatal])

            Logger.shared.level = .off
            logger.critical("level-check-3")
            #expect(capture.lines(containing: "level-check-3").isEmpty)

            Logger.shared.level = .all
            logger.trace("level-check-4 trace")
            logger.debug("level-check-4 debug")
            #expect(capture.levels(containing: "level-check-4") == [.trace, .debug])
        }
    }

    @Test func theSyncManagersLogLevelIsTheSharedLoggersLevel() async throws {
        try await withCapturedLog(level: .info) { _ in
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let app = App(id: "log-level-app", configuration: AppConfiguration(baseURL: "http://127.0.0.1:1", rootDirectory: folder.url))
            app.syncManager.logLevel = .debug
            #expect(Logger.shared.level == .debug)
            Logger.shared.level = .error
            #expect(app.syncManager.logLevel == .error)
        }
    }

    @Test func aResetWithNoHandlerIsLoggedAsAnError() async throws {
        try await withCapturedLog(level: .warn) { capture in
            try await withSyncTestServer { server in
                let app = server.app(device: "frodo")
                let errors = Recorder<any Error>()
                let frodo = try await app.login(credentials: .anonymous)
                var configuration = frodo.configuration(partitionValue: "unhandled-reset", clientResetMode: .manual())
                configuration.objectTypes = [SyncedTask.self]
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                let session = try #require(realm.syncSession)
                // Only the termination warning is collected; the reset has no handler.
                app.syncManager.errorHandler = { error, _ in errors.append(error) }
                _ = try await forceClientReset(server, session: session, whileTerminated: {
                    app.syncManager.errorHandler = nil
                }) {
                    let line = capture.lines(containing: "unhandled-reset").first { $0.message.contains("not handled") }
                    return line.map { _ in SyncError(.clientResetError, "logged") }
                }
                let line = try #require(capture.lines(containing: "unhandled-reset").first { $0.message.contains("not handled") })
                #expect(line.level == .error)
                #expect(firstReset(errors) == nil)
                #expect(session.state == .inactive)
                _ = realm
            }
        }
    }
}
