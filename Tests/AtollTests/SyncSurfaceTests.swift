@_spi(Testing) @testable import Atoll
import AtollCore
@_spi(Testing) import AtollServer
import AtollTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Testing

/// Issue 13's sync surface against a real in-process server: session observation and state,
/// `app.syncManager`'s settings (custom headers, user agent, timeouts), the connection's linger
/// time and fast reconnects, and the app error codes.
extension SerialAppServicesTests {
@MainActor @Suite(.serialized) struct SyncSurfaceTests {
    static let syncTimeout: Duration = .seconds(30)

    private func configuration(_ user: User, _ partition: String = "shire") -> Realm.Configuration {
        var configuration = user.configuration(partitionValue: partition)
        configuration.objectTypes = [SyncedTask.self]
        return configuration
    }

    private func open(_ user: User, _ partition: String = "shire") async throws -> Realm {
        try await Realm(configuration: configuration(user, partition), downloadBeforeOpen: .never)
    }

    private func upload(_ realm: Realm) async throws {
        let session = try #require(realm.syncSession)
        try await withTimeout(Self.syncTimeout) { try await session.wait(for: .upload) }
    }

    // MARK: Session observation

    /// suspend() shows .inactive at once while the engine applies it in order, after commands
    /// queued before it: whatever the engine publishes meanwhile (a download, a connection
    /// change) must not show the session active again. Deterministic: a queued command holds
    /// the engine's queue while it publishes.
    @Test func aSuspendedSessionStaysInactiveWhileTheEngineCatchesUp() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(frodo)
            let session = try #require(realm.syncSession)
            #expect(await waitUntil(timeout: Self.syncTimeout) { session.connectionState == .connected })
            let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
            session.enqueue { _ in for await _ in release { return } }
            let states = Locked<[SyncSession.State]>([])
            let observation = session.observe(\.state, options: [.new]) { _, change in
                if let state = change.newValue { states.withLock { $0.append(state) } }
            }
            session.suspend()
            #expect(session.state == .inactive)
            // The engine publishes before it reached the suspension (its queue is held).
            await session.engine.publish()
            #expect(session.state == .inactive, "a publish before the engine applied the suspension showed it active")
            releaseContinuation.yield()
            releaseContinuation.finish()
            session.resume()
            #expect(await waitUntil(timeout: Self.syncTimeout) { session.state == .active })
            #expect(states.withLock { $0 } == [.inactive, .active])
            observation.invalidate()
        }
    }

    @Test func aSessionsPublisherForItsStateStartsWithTheValueNowAndFollowsIt() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(frodo)
            let session = try #require(realm.syncSession)
            #expect(await waitUntil(timeout: Self.syncTimeout) { session.connectionState == .connected })
            let states = Locked<[SyncSession.State]>([])
            let cancellable = session.publisher(for: \.state).sink { @Sendable state in states.withLock { $0.append(state) } }
            #expect(states.withLock { $0 } == [.active], "the value now, at once")
            session.suspend()
            #expect(await waitUntil(timeout: Self.syncTimeout) { states.withLock { $0 } == [.active, .inactive] })
            let later = Locked<[SyncSession.State]>([])
            let withoutInitial = session.publisher(for: \.state, options: [.new]).sink { @Sendable state in later.withLock { $0.append(state) } }
            #expect(later.withLock { $0 }.isEmpty, "no initial value without .initial")
            session.resume()
            #expect(await waitUntil(timeout: Self.syncTimeout) { states.withLock { $0 } == [.active, .inactive, .active] })
            #expect(later.withLock { $0 } == [.active])
            cancellable.cancel()
            withoutInitial.cancel()
        }
    }

    @Test func observingTheConnectionStateAndTheStateAsRealmAppsDo() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(frodo)
            let session = try #require(realm.syncSession)

            let connectionStates = Locked<[SyncSession.ConnectionState]>([])
            let observation = session.observe(\.connectionState, options: [.initial]) { session, _ in
                connectionStates.withLock { $0.append(session.connectionState) }
            }
            // The initial call comes at once (the connection may already have moved on since:
            // a second call can follow it before this line, as it did once under load).
            #expect(connectionStates.withLock { $0.count } >= 1, "the initial call comes at once")
            let changes = Locked<[(old: SyncSession.State?, new: SyncSession.State?)]>([])
            let stateObservation = session.observe(\.state, options: [.old, .new]) { _, change in
                changes.withLock { $0.append((change.oldValue, change.newValue)) }
            }
            #expect(await waitUntil(timeout: Self.syncTimeout) { connectionStates.withLock { $0.last } == .connected })

            // The callback form of wait(for:), on the queue given.
            let waited = Locked<(done: Bool, error: String?)>((false, nil))
            try realm.write { realm.add(SyncedTask(value: ["name": "Ring"])) }
            session.wait(for: .upload, queue: .main) { error in
                waited.withLock { $0 = (true, error.map { "\($0)" }) }
            }
            #expect(await waitUntil(timeout: Self.syncTimeout) { waited.withLock { $0.done } })
            #expect(waited.withLock { $0.error } == nil)

            #expect(session.configuration()?.user == frodo)
            #expect(frodo.session(forPartitionValue: "shire") === session)
            #expect(frodo.session(forPartitionValue: "mordor") == nil)
            #expect(frodo.allSessions.contains { $0 === session })

            // Logging out ends the session for good: invalid, disconnected, no configuration.
            try await frodo.logOut()
            #expect(session.state == .invalid)
            #expect(session.connectionState == .disconnected)
            #expect(session.configuration() == nil)
            #expect(changes.withLock { $0.last?.new } == .invalid)
            #expect(changes.withLock { $0.last?.old } == .active)
            #expect(connectionStates.withLock { $0.last } == .disconnected)
            // An invalid session stays so when resumed; its waits fail at once.
            session.resume()
            await #expect(throws: SyncError.self) { try await session.wait(for: .upload) }
            #expect(session.state == .invalid)

            observation.invalidate()
            stateObservation.invalidate()
        }
    }

    @Test func anObservationEndsWhenItsTokenIsReleased() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(frodo)
            let session = try #require(realm.syncSession)
            // Suspending an active session is a change of state (a session not started yet is inactive already).
            try await upload(realm)
            #expect(session.state == .active)
            let calls = Locked(0)
            // What each call saw, checked in the test's body: an #expect in the callback would be
            // recorded against no test if a call came after the test returned (a suite-level
            // issue seen once in a CI-like run).
            let wellFormed = Locked(true)
            var observation: NSKeyValueObservation? = session.observe(\.state, options: [.initial, .new]) { _, change in
                if change.newValue == nil || change.kind != .setting { wellFormed.withLock { $0 = false } }
                calls.withLock { $0 += 1 }
            }
            #expect(calls.withLock { $0 } == 1)
            // While kept, it hears the pause; released, it hears nothing more.
            session.suspend()
            #expect(calls.withLock { $0 } == 2)
            session.resume()
            try await upload(realm)
            #expect(observation != nil)
            observation = nil
            let heard = calls.withLock { $0 }
            session.suspend()
            #expect(session.state == .inactive)
            session.resume()
            try await upload(realm)
            #expect(calls.withLock { $0 } == heard)
            #expect(wellFormed.withLock { $0 })
        }
    }

    // MARK: Custom headers and user agent

    @Test func customHeadersGoWithEveryRequestAndTheUpgrade() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            server.server.requestHeads.start()
            app.syncManager.customRequestHeaders = ["X-Shire-Device": "green-door", "Authorization": "not sent"]
            app.syncManager.userAgent = "ShireApp/1.0"
            #expect(app.syncManager.customRequestHeaders?["X-Shire-Device"] == "green-door")
            let frodo = try await app.login(credentials: .anonymous)
            let realm = try await open(frodo)
            try realm.write { realm.add(SyncedTask(value: ["name": "Ring"])) }
            try await upload(realm)

            let heads = server.server.requestHeads.recorded
            let login = try #require(heads.first { $0.path.hasSuffix("/login") })
            #expect(login.headers["x-shire-device"] == "green-door")
            #expect(login.headers["user-agent"]?.hasSuffix("ShireApp/1.0") == true)
            #expect(login.headers["authorization"] == nil, "a custom header never replaces the protocol's own")
            let upgrade = try #require(heads.first { $0.path.hasSuffix("/sync") })
            #expect(upgrade.headers["x-shire-device"] == "green-door")
            #expect(upgrade.headers["user-agent"]?.hasPrefix("Atoll/") == true)
            #expect(upgrade.headers["authorization"] == nil)

            // New headers while syncing: the connection reconnects and sends them.
            let before = heads.filter { $0.path.hasSuffix("/sync") }.count
            app.syncManager.customRequestHeaders = ["X-Shire-Device": "round-window"]
            #expect(await waitUntil(timeout: Self.syncTimeout) {
                server.server.requestHeads.recorded.filter { $0.path.hasSuffix("/sync") }.count > before
            })
            let again = try #require(server.server.requestHeads.recorded.last { $0.path.hasSuffix("/sync") })
            #expect(again.headers["x-shire-device"] == "round-window")
            try realm.write { realm.add(SyncedTask(value: ["name": "Sting"])) }
            try await upload(realm)
            server.server.requestHeads.stop()
        }
    }

    /// A request head far over any sane size is refused by the server's HTTP parser, which then
    /// serves the next request as usual; the SDK never sends such a header.
    @Test func theServerRefusesAnOversizedRequestHeadAndCarriesOn() async throws {
        try await withSyncTestServer { server in
            let url = try #require(URL(string: server.baseURL + "/health"))
            var huge = URLRequest(url: url)
            huge.setValue(String(repeating: "h", count: 200_000), forHTTPHeaderField: "X-Huge")
            let refused: Int? = await {
                do {
                    let (_, response) = try await URLSession.shared.data(for: huge)
                    return (response as? HTTPURLResponse)?.statusCode
                } catch {
                    return nil  // the connection was closed: refused as well
                }
            }()
            #expect(refused == nil || (refused ?? 0) >= 400)
            let (_, response) = try await URLSession.shared.data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)

            // The SDK drops invalid or oversized custom headers instead of sending them.
            let sendable = RequestSettings.sendable([
                "X-Ok": "fine", "Bad Name": "x", "X-Newline": "a\r\nInjected: yes", "X-Huge": String(repeating: "h", count: 9_000),
                "Content-Type": "text/plain",
            ])
            #expect(sendable.map(\.0) == ["X-Ok"])
        }
    }

    // MARK: Timeouts

    @Test func theConnectionLingersAfterTheLastSessionAndIsReusedWithinTheLingerTime() async throws {
        try await withSyncTestServer { server in
            var configuration = server.appConfiguration(device: "linger")
            configuration.syncTimeouts = SyncTimeoutOptions(connectionLingerTime: 60_000)
            let app = App(id: server.appId, configuration: configuration, clock: server.clock.wall)
            #expect(app.syncManager.timeoutOptions?.connectionLingerTime == 60_000)
            let frodo = try await app.login(credentials: .anonymous)
            let realm = try await open(frodo)
            try realm.write { realm.add(SyncedTask(value: ["name": "Ring"])) }
            try await upload(realm)
            let opened = await app.syncConnectionForTesting()
            #expect(opened.isOpen)

            // The last session leaves: the connection stays open (the linger is a minute away).
            try await frodo.logOut()
            #expect(await app.syncConnectionForTesting().isOpen)
            // A new session within the linger time reuses it: no new connection attempt.
            let sam = try await app.login(credentials: .anonymous)
            let samRealm = try await open(sam)
            try samRealm.write { samRealm.add(SyncedTask(value: ["name": "Pans"])) }
            try await upload(samRealm)
            let reused = await app.syncConnectionForTesting()
            #expect(reused.isOpen)
            #expect(reused.attempts == opened.attempts)

            // Left again, and the linger time passes: the connection closes. (The session leaves
            // the connection asynchronously: the clock moves past the linger at every poll.)
            try await sam.logOut()
            var closed = false
            for _ in 0..<200 where !closed {
                server.clock.advance(by: 61)
                closed = await !app.syncConnectionForTesting().isOpen
                if !closed { try await _Concurrency.Task.sleep(for: .milliseconds(50)) }
            }
            #expect(closed)
        }
    }

    @Test func aLostConnectionReconnectsAtOnceAtMostOncePerFastReconnectLimit() {
        /// Whether a drop of the open connection `seconds` in reconnects at once.
        func drops(at seconds: [Double], limitMilliseconds: Int64) -> [Bool] {
            var connection = ClientConnection(settings: .init(fastReconnectLimitMilliseconds: limitMilliseconds))
            return seconds.map { second in
                let now = 1_000_000_000 + Int64(second * 1000)
                _ = connection.open(now: now)
                _ = connection.opened(attempt: connection.attempt, now: now)
                return connection.ended(attempt: connection.attempt, now: now).contains(.notifyClosed(reconnectAtOnce: true))
            }
        }
        #expect(drops(at: [0, 10, 59.9, 61, 62], limitMilliseconds: 60_000) == [true, false, false, true, false])
        // A limit of 0: every drop reconnects at once.
        #expect(drops(at: [0, 0, 0.1], limitMilliseconds: 0) == [true, true, true])

        // The session's state machine schedules the reconnect without a delay, and without
        // growing the backoff.
        var session = ClientSession(id: 1, target: .partition(.string("shire")), accessToken: "t", saved: ClientSyncState(), unqueued: [])
        _ = session.start(connectionIsOpen: true)
        let atOnce = session.connectionClosed(error: "reset by peer", reconnectAtOnce: true)
        #expect(atOnce.contains { if case .scheduleTimer(.reconnect, _, 0) = $0 { true } else { false } })
        #expect(session.backoff.attempts == 0)
        let later = session.connectionClosed(error: "reset by peer")
        #expect(later.contains { if case .scheduleTimer(.reconnect, _, let delay) = $0 { delay > 0 } else { false } })
    }

    @Test func aDroppedConnectionComesBackWithoutMovingTheClock() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(frodo)
            let session = try #require(realm.syncSession)
            try realm.write { realm.add(SyncedTask(value: ["name": "Ring"])) }
            try await upload(realm)
            // The server ends the connection (a restart): the session reconnects by itself.
            try await server.stop()
            try await server.restart()
            try realm.write { realm.add(SyncedTask(value: ["name": "after the drop"])) }
            try await upload(realm)
            #expect(session.connectionState == .connected)
        }
    }

    // MARK: App errors

    @Test func appErrorCodesAreRealmsAndEveryServerCodeMapsToOne() {
        let expected: [AppError.Code: Int] = [
            .unknown: -1, .httpRequestFailed: 1, .invalidSession: 2, .badRequest: 3, .userNotFound: 4, .userAppDomainMismatch: 5,
            .domainNotAllowed: 6, .readSizeLimitExceeded: 7, .invalidParameter: 8, .missingParameter: 9, .functionExecutionError: 10,
            .internalServerError: 11, .authProviderNotFound: 12, .valueNotFound: 13, .valueAlreadyExists: 14, .valueDuplicateName: 15,
            .functionNotFound: 16, .functionSyntaxError: 17, .functionInvalid: 18, .apiKeyAlreadyExists: 19,
            .executionTimeLimitExceeded: 20, .notCallable: 21, .userAlreadyConfirmed: 22, .userDisabled: 23, .authError: 24,
            .accountNameInUse: 25, .invalidPassword: 26, .maintenanceInProgress: 27, .mongoDBError: 28,
        ]
        #expect(expected.count == AppError.Code.allCases.count)
        for (code, value) in expected { #expect(code.rawValue == value, "\(code)") }
        // Every server code maps to a code of its own; "Unknown" is App Services' failure with no
        // specific code (a reset function that failed), realm-swift's `.unknown`.
        for serverCode in ServerError.Code.allCases where serverCode != .unknown {
            #expect(AppError.code(forServerCode: serverCode.rawValue) != .unknown, "\(serverCode)")
        }
        #expect(AppError.code(forServerCode: "Unknown") == .unknown)
        #expect(AppError.code(forServerCode: "InvalidCredentials") == .invalidPassword)
        #expect(AppError.code(forServerCode: "InvalidToken") == .invalidSession)
        #expect(AppError.code(forServerCode: "InternalError") == .internalServerError)
        #expect(AppError.code(forServerCode: "AuthProviderDisabled") == .authProviderNotFound)
    }

    @Test func everyAtollErrorSaysItsMessageAndTheServersErrorsArriveWithRealmsCodes() async throws {
        let errors: [(any Error, String)] = [
            (AppError(.invalidPassword, "invalid username/password"), "invalid username/password"),
            (Realm.Error(.fileNotFound, "no file at /x"), "no file at /x"),
            (SyncError(.clientSessionError, "the server went away"), "the server went away"),
            (QueryError(.unknownProperty, "no property 'nmae' in Dog"), "no property 'nmae' in Dog"),
        ]
        for (error, message) in errors {
            #expect(error.localizedDescription.contains(message), "\(type(of: error))")
            #expect(!error.localizedDescription.contains("operation could not be completed"))
        }
        try await withSyncTestServer { server in
            let app = server.app(device: "bilbo")
            try await app.emailPasswordAuth.registerUser(email: "bilbo@bagend.me", password: "precious")
            do {
                _ = try await app.login(credentials: .emailPassword(email: "bilbo@bagend.me", password: "wrong-one"))
                Issue.record("a wrong password logged in")
            } catch let error as AppError {
                #expect(error.code == .invalidPassword)
                #expect((error as NSError).code == 26)
                #expect(error.localizedDescription == error.message)
            }
            await #expect { try await app.emailPasswordAuth.registerUser(email: "bilbo@bagend.me", password: "precious") } throws: {
                ($0 as? AppError)?.code == .accountNameInUse
            }
            // A user logged out on this device: an invalid session, said locally.
            let bilbo = try await app.login(credentials: .emailPassword(email: "bilbo@bagend.me", password: "precious"))
            try await bilbo.logOut()
            await #expect { try await bilbo.delete() } throws: { ($0 as? AppError)?.code == .invalidSession }
        }
    }
}
}

// MARK: Logging

/// Runs `body` with `Logger.shared` replaced by a capturing logger of `level` (in `LoggerTests`,
/// which swap the shared logger one at a time).
@MainActor private func capturingLog(level: LogLevel, _ body: (LogCapture) async throws -> Void) async throws {
    let capture = LogCapture()
    let previous = Logger.shared
    Logger.shared = Logger(function: { level, category, message in capture.append(level, "[\(category.rawValue)] \(message)") })
    Logger.setLogLevel(level)
    defer {
        Logger.setLogLevel(previous.level)
        Logger.shared = previous
    }
    try await body(capture)
}

extension LoggerTests {
    /// At `.trace` a login and a sync say what they do: the HTTP requests and their status, the
    /// connection and session life cycle, each upload and download with its size; never a token,
    /// a password or a value.
    /// As an app sets logging up with Realm: a detail logger as `Logger.shared` sees the App's
    /// requests, and a level interpolated in a line prints as realm-swift's does.
    @Test func aDetailLoggerSeesTheLoginsRequestsAndLevelsPrintAsRealms() async throws {
        let captured = Locked<[String]>([])
        let previous = Logger.shared
        Logger.shared = Logger(level: .detail) { level, message in captured.withLock { $0.append("\(level) \(message)") } }
        defer { Logger.shared = previous }
        try await withSyncTestServer(appId: "logging-app") { server in
            _ = try await server.app(device: "logging").login(credentials: .anonymous)
        }
        #expect(captured.withLock { $0 }.contains {
            $0.hasPrefix("RLMLogLevel(rawValue: 5) HTTP POST") && $0.contains("logging-app/auth/providers/anon-user/login")
        })
        #expect("\(LogLevel.debug)" == "RLMLogLevel(rawValue: 6)")
    }

    @Test func aLoginAndASyncAtTraceLogRequestsLifeCycleAndTransfers() async throws {
        try await capturingLog(level: .trace) { capture in
            try await withSyncTestServer { server in
                let port = ":\(server.port)"
                let app = server.app(device: "traced")
                try await app.emailPasswordAuth.registerUser(email: "merry@buckland.me", password: "second-breakfast")
                let merry = try await app.login(credentials: .emailPassword(email: "merry@buckland.me", password: "second-breakfast"))
                var configuration = merry.configuration(partitionValue: "buckland")
                configuration.objectTypes = [SyncedTask.self]
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                try realm.write { realm.add(SyncedTask(value: ["name": "mushrooms-from-farmer-maggot"])) }
                let session = try #require(realm.syncSession)
                try await withTimeout(.seconds(30)) { try await session.wait(for: .upload) }
                let mine = capture.lines(containing: port)
                #expect(mine.contains { $0.level == .detail && $0.message.contains("HTTP POST") && $0.message.contains("/login -> 200") })
                #expect(mine.contains { $0.level == .debug && $0.message.contains("[Realm.Sync.Client.Network]") && $0.message.contains(": open") })
                #expect(mine.contains { $0.level == .trace && $0.message.contains("sending upload of") && $0.message.contains("bytes)") })
                #expect(mine.contains { $0.level == .trace && $0.message.contains("received download") })
                let sessionLines = capture.lines(containing: "buckland.realm")
                #expect(sessionLines.contains { $0.level == .detail && $0.message.contains("connecting -> connected") })
                #expect(sessionLines.contains { $0.level == .debug && $0.message.contains("inactive -> active") })
                // Nothing secret, nothing of the data.
                let everything = capture.lines(containing: "")
                for secret in [merry.accessToken, merry.refreshToken, "second-breakfast", "mushrooms-from-farmer-maggot"].compactMap({ $0 }) {
                    #expect(!everything.contains { $0.message.contains(secret) })
                }
                #expect(!mine.contains { $0.level <= .info && $0.level != .off })
            }
        }
    }

    /// At `.info` a normal login and sync log nothing.
    @Test func aNormalSyncAtInfoLogsNothing() async throws {
        try await capturingLog(level: .info) { capture in
            try await withSyncTestServer { server in
                let app = server.app(device: "quiet")
                let pippin = try await app.login(credentials: .anonymous)
                var configuration = pippin.configuration(partitionValue: "tookland")
                configuration.objectTypes = [SyncedTask.self]
                let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
                try realm.write { realm.add(SyncedTask(value: ["name": "a fool of a took"])) }
                let session = try #require(realm.syncSession)
                try await withTimeout(.seconds(30)) { try await session.wait(for: .upload) }
                try await withTimeout(.seconds(30)) { try await session.wait(for: .download) }
                #expect(capture.lines(containing: ":\(server.port)").isEmpty)
                #expect(capture.lines(containing: "tookland").isEmpty)
            }
        }
    }

    @Test func categoryLevelsAndTheSyncManagersLoggerFollowRealm() async throws {
        let previous = Logger.shared
        let previousLevel = previous.level
        defer {
            Logger.shared = previous
            Logger.setLogLevel(previousLevel)
        }
        Logger.setLogLevel(.warn)
        Logger.setLogLevel(.trace, for: Category.Sync.Client.changeset)
        #expect(Logger.logLevel(for: Category.Sync.Client.changeset) == .trace)
        #expect(Logger.logLevel(for: Category.Sync.Client.session) == .warn)
        #expect(Logger.logLevel(for: Category.app) == .warn)
        Logger.setLogLevel(.error, for: Category.Sync.all)
        #expect(Logger.logLevel(for: Category.Sync.Client.changeset) == .error, "a parent's level applies to its children")
        Logger.setLogLevel(.info)
        #expect(Logger.logLevel(for: Category.Sync.Client.changeset) == .info)

        let app = App(id: "logger-app", configuration: AppConfiguration(baseURL: "http://127.0.0.1:9", rootDirectory: try TemporaryFolder("logger").url))
        let lines = Locked<[String]>([])
        app.syncManager.logLevel = .debug
        app.syncManager.logger = { _, message in lines.withLock { $0.append(message) } }
        #expect(app.syncManager.logLevel == .debug)
        Logger.log(.debug, Category.app, "through the sync manager's logger")
        // (Other suites' lines reach it too: the logger is the process's.)
        #expect(lines.withLock { $0.filter { $0 == "through the sync manager's logger" }.count } == 1)
        app.syncManager.logger = nil
        #expect(app.syncManager.logger == nil)
    }
}
