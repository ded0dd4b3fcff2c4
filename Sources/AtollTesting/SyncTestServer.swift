@_spi(Testing) import Atoll
import AtollAdminClient
import AtollCore
import AtollServer
import Foundation
import Logging

/// A real Atoll server on 127.0.0.1 with a free port and its own temporary data folder, plus
/// apps that stand in for devices: each device keeps its users and realms in its own folder.
///
/// ```swift
/// let server = try await SyncTestServer.start()
/// let phone = server.app(device: "phone")
/// let user = try await phone.login(credentials: .anonymous)
/// try await server.stop()
/// ```
package final class SyncTestServer: Sendable {
    package let appId: String
    package let configuration: ServerConfiguration
    package let folder: TemporaryFolder
    private let running: Locked<RunningAtollServer?>
    private let apps = Locked<[App]>([])

    /// The running server (its port, its admin operations such as `auth.setUserDisabled`).
    package var server: RunningAtollServer {
        guard let server = running.withLock({ $0 }) else { preconditionFailure("the test server is stopped") }
        return server
    }

    /// The server's clock: real time until a test moves it (``ManualClock/advance(by:)``); it
    /// stays the same across `restart()`.
    package let clock: ManualClock

    /// The server's address; it stays the same across `restart()` (same port).
    package let baseURL: String

    /// A client of the running server's admin API (terminate sync, backups, settings, schema changes).
    ///
    /// ```swift
    /// try await server.admin.terminateSync(app: server.appId)
    /// ```
    package var admin: AdminClient {
        AdminClient(server: server.baseURL, key: server.adminKey)
    }

    static let logger: Logging.Logger = {
        var logger = Logging.Logger(label: "atoll-test-server")
        logger.logLevel = .error
        return logger
    }()

    /// What the server and the devices read: ``clock``, or the system's for `realTime`.
    private let wall: WallClock
    /// Where the test holds the server's coordinator (``InterleavingGate``), across restarts.
    private let interleaving: any SyncInterleaving

    private init(appId: String, configuration: ServerConfiguration, folder: TemporaryFolder, clock: ManualClock, wall: WallClock? = nil,
                 interleaving: any SyncInterleaving = NoInterleaving(), running: RunningAtollServer) {
        self.appId = appId
        self.interleaving = interleaving
        self.clock = clock
        self.wall = wall ?? clock.wall
        self.configuration = configuration
        self.folder = folder
        self.running = Locked(running)
        baseURL = running.baseURL.absoluteString
    }

    /// Starts a server; `configure` adjusts its configuration (apps, providers, lifetimes). With
    /// `realTime` the server and its devices read the system's clock, as in production (a
    /// benchmark's figures), and ``clock`` moves nothing.
    package static func start(appId: String = "test-app", realTime: Bool = false,
                             _ configure: @Sendable (inout ServerConfiguration) -> Void = { _ in }) async throws -> SyncTestServer {
        let folder = try TemporaryFolder("atoll-sync-test")
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: folder.url.appendingPathComponent("server").path,
            passwordHashRounds: PasswordHasher.minimumRounds)
        // Tests kill no machines: a commit that survives the process is enough, and faster.
        configuration.durability = .normal
        configure(&configuration)
        let clock = ManualClock()
        let wall = realTime ? WallClock.system : clock.wall
        let running = try await AtollServer(configuration: configuration, logger: logger, clock: wall).start()
        return SyncTestServer(appId: appId, configuration: configuration, folder: folder, clock: clock, wall: wall, running: running)
    }

    /// Starts a server with a whole configuration (its data directory included, removed by
    /// ``tearDown()``), reading `clock`.
    /// With `interleaving` (an ``InterleavingGate``) the test can hold the coordinator at its test points.
    package static func start(configuration: ServerConfiguration, appId: String = "test-app",
                             clock: ManualClock = ManualClock(), interleaving: InterleavingGate? = nil) async throws -> SyncTestServer {
        let folder = try TemporaryFolder(existing: URL(fileURLWithPath: configuration.dataDirectory, isDirectory: true))
        let gate: any SyncInterleaving = interleaving ?? NoInterleaving()
        let running = try await AtollServer(configuration: configuration, logger: logger, clock: clock.wall, interleaving: gate).start()
        return SyncTestServer(appId: appId, configuration: configuration, folder: folder, clock: clock, interleaving: gate, running: running)
    }

    /// An app as seen from one device: its own folder for users and realms.
    package func app(device: String = "device", id: String? = nil) -> App {
        // The devices read the server's clock: a test that moves it moves theirs (token expiry,
        // reconnect delays, timeouts) too.
        let app = App(id: id ?? appId, configuration: appConfiguration(device: device), clock: wall)
        apps.withLock { $0.append(app) }
        return app
    }

    /// The configuration `app(device:)` uses; the server address stays valid across `restart()`.
    package func appConfiguration(device: String = "device") -> AppConfiguration {
        var configuration = AppConfiguration(baseURL: baseURL, rootDirectory: folder.url.appendingPathComponent("devices/\(device)", isDirectory: true))
        // `downloadBeforeOpen: .always` gives up after this; a loaded CI machine (PostgreSQL nodes,
        // parallel suites) has taken longer than the default 30 s. Tests of the timeout set their own.
        configuration.syncConnectTimeout = 90
        return configuration
    }

    /// The server's port; it stays the same across `restart()`.
    package var port: Int {
        guard let port = URL(string: baseURL)?.port else { preconditionFailure("no port in \(baseURL)") }
        return port
    }

    /// `https://localhost:<port>`: the server after `restart(tls: true)`. A host name, not
    /// 127.0.0.1: the sync client's TLS sends the host as server name, which may not be an IP address.
    package var httpsBaseURL: String { "https://localhost:\(port)" }

    /// An app on `device` for the server restarted with `restart(tls: true)`, sharing the device's
    /// folder (its logged-in users) with `app(device:)`. With `trustingTestCertificate` its HTTPS
    /// requests (logins) and its sync connection trust ``TestCertificate``; without, neither does.
    package func tlsApp(device: String = "device", trustingTestCertificate: Bool) -> App {
        var configuration = appConfiguration(device: device)
        configuration.baseURL = httpsBaseURL
        if trustingTestCertificate { configuration.trustedRootCertificates = [TestCertificate.certificatePEM] }
        let app = App(id: appId, configuration: configuration)
        apps.withLock { $0.append(app) }
        return app
    }

    /// Waits (bounded) until the server has no sync session of the app left; a session that left
    /// has its client's last-seen time written, so a test can move ``clock`` past it.
    package func waitUntilNoSessions(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while await !server.coordinator.sessions(appID: appId).isEmpty {
            if ContinuousClock.now >= deadline { return false }
            try? await _Concurrency.Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Stops the server; its data stays for `restart()`.
    package func stop() async throws {
        guard let server = running.withLock({ value -> RunningAtollServer? in defer { value = nil }; return value }) else { return }
        try await server.shutdown()
    }

    /// Starts the server again on the same data folder and the same port (also after `stop()`).
    /// With `tls` it serves HTTPS and `wss://` with ``TestCertificate``: reach it at ``httpsBaseURL``
    /// with ``tlsApp(device:trustingTestCertificate:)``.
    package func restart(tls: Bool = false) async throws {
        try await stop()
        var configuration = configuration
        configuration.port = port
        if tls {
            let files = try TestCertificate.write(to: folder.url.appendingPathComponent("tls", isDirectory: true))
            configuration.tls = .init(certificateChainPath: files.certificatePath, privateKeyPath: files.privateKeyPath)
        }
        let restarted = try await AtollServer(configuration: configuration, logger: Self.logger, clock: wall, interleaving: interleaving).start()
        running.withLock { $0 = restarted }
    }

    /// Stops the server and starts it again on the same data folder on another (free) port: the
    /// same deployment at another address. Returns the new address; ``baseURL`` and
    /// ``app(device:)`` keep the old one.
    package func restartOnAnotherPort() async throws -> String {
        try await stop()
        var configuration = configuration
        configuration.port = 0
        let restarted = try await AtollServer(configuration: configuration, logger: Self.logger, clock: wall, interleaving: interleaving).start()
        running.withLock { $0 = restarted }
        return restarted.baseURL.absoluteString
    }

    /// Logs out every user of the apps it made (which stops their sync sessions), stops the
    /// server and removes every file of the test.
    package func tearDown() async throws {
        for app in apps.withLock({ $0 }) {
            for user in app.allUsers.values { try? await user.logOut() }
        }
        try await stop()
        folder.remove()
    }
}


/// Runs `body` against a fresh test server, then tears it down (logging out its apps' users,
/// stopping it, removing its files), whether `body` threw or not.
///
/// ```swift
/// try await withSyncTestServer { server in
///     let user = try await server.app().login(credentials: .anonymous)
/// }
/// ```
package func withSyncTestServer(
    appId: String = "test-app",
    _ configure: @Sendable (inout ServerConfiguration) -> Void = { _ in },
    isolation: isolated (any Actor)? = #isolation,
    _ body: (SyncTestServer) async throws -> Void
) async throws {
    let server = try await SyncTestServer.start(appId: appId, configure)
    do {
        try await body(server)
    } catch {
        try? await server.tearDown()
        throw error
    }
    try await server.tearDown()
}

// MARK: Client resets

/// What Realm's "test client reset handling" steps do: terminates sync on `server` (`whileTerminated`
/// runs once `session` noticed: the realm is offline), enables it again, and reconnects the
/// session until `done()` says the reset arrived. Bounded: about 10 s for each wait. Returns
/// whether `done()` held.
@MainActor
package func forceClientReset(_ server: SyncTestServer, session: SyncSession, whileTerminated: () throws -> Void = {},
                             until done: () -> Bool) async throws -> Bool {
    let admin = AdminClient(server: server.server.baseURL, key: server.server.adminKey)
    try await admin.terminateSync(app: server.appId)
    _ = await waitUntil { session.connectionState != .connected }
    try whileTerminated()
    try await admin.enableSync(app: server.appId)
    for attempt in 0..<200 where !done() {
        // The session waits out the server's retry delay; cut it short.
        if attempt % 4 == 0 { session.reconnect() }
        try await Task.sleep(for: .milliseconds(50))
    }
    return done()
}

extension SyncTestServer {
    /// The next failed connection attempt of `session`, moving ``clock`` past the longest reconnect
    /// delay at every poll so the attempt starts at once; nil when none failed within `timeout`.
    @MainActor
    package func nextConnectionFailure(of session: SyncSession, timeout: Duration = .seconds(30)) async -> SyncError? {
        let failure = Locked<SyncError?>(nil)
        let waiting = Task {
            let error = await session.nextConnectionFailureForTesting()
            failure.withLock { $0 = error }
        }
        defer { waiting.cancel() }
        _ = await waitUntil(timeout: timeout) {
            clock.advance(by: 61)
            return failure.withLock { $0 != nil }
        }
        return failure.withLock { $0 }
    }
}
