import AtollCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// The sync server: the HTTP API and the WebSocket sync endpoint of docs/protocol.md over the store in
/// its data folder.
///
/// Run it until SIGINT or SIGTERM:
/// ```swift
/// try await AtollServer(configuration: ServerConfiguration(), logger: Logger(label: "atoll-server")).run()
/// ```
/// or, in a test, on a free port and stop it yourself:
/// ```swift
/// let server = try await AtollServer(configuration: ServerConfiguration(port: 0, dataDirectory: folder)).start()
/// // … requests to server.baseURL …
/// try await server.shutdown()
/// ```
public struct AtollServer: Sendable {
    /// The sync protocol version this server speaks.
    public static let protocolVersion = Int(ProtocolVersion.current)

    public let configuration: ServerConfiguration
    public let logger: Logger
    /// The wall clock of tokens, sessions and history (tests pass one they move).
    let clock: WallClock
    /// Where a test holds the sync coordinator; none in production.
    let interleaving: any SyncInterleaving

    public init(configuration: ServerConfiguration = ServerConfiguration(), logger: Logger = Logger(label: "atoll-server")) {
        self.init(configuration: configuration, logger: logger, clock: .system)
    }

    /// A server reading `clock` (tests pass one they move) whose coordinator `interleaving` can
    /// hold at its test points (AtollTesting's `InterleavingGate`).
    package init(configuration: ServerConfiguration, logger: Logger, clock: WallClock, interleaving: any SyncInterleaving = NoInterleaving()) {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.interleaving = interleaving
    }

    /// Serves until SIGINT or SIGTERM, then finishes the requests under way and closes the store.
    public func run() async throws {
        let parts = try await makeParts(onServerRunning: { [logger, configuration] channel in
            // At notice, so it shows at every log level an operator would run with; `port` is
            // the bound one (with `--port 0`, the port the kernel chose: `ServerProcess` reads it).
            logger.notice(
                "atoll-server listening",
                metadata: [
                    "address": "\(channel.localAddress?.description ?? "?")",
                    "port": "\(channel.localAddress?.port ?? 0)",
                    "data": "\(configuration.dataDirectory)",
                    "developmentMode": "\(configuration.developmentMode)",
                ])
        })
        try await parts.run(parts.serviceGroup(stoppingOnSignals: true, logger: logger))
        logger.info("atoll-server stopped")
    }

    /// Starts serving in the background and returns once the server listens; ``RunningAtollServer/port``
    /// is the bound port (useful with port 0).
    public func start() async throws -> RunningAtollServer {
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let parts = try await makeParts(onServerRunning: { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
            portContinuation.finish()
        })
        let group = parts.serviceGroup(stoppingOnSignals: false, logger: logger)
        let task = Task {
            defer { portContinuation.finish() }
            try await parts.run(group)
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw ConfigurationError(field: "port", "the server stopped before it listened")
        }
        return RunningAtollServer(
            host: configuration.host, port: port, usesTLS: configuration.tls != nil, auth: parts.auth, metrics: parts.metrics, coordinator: parts.coordinator,
            adminKey: parts.adminKey, requestHeads: parts.requestHeads, group: group, task: task)
    }

    struct Parts {
        var application: Application<RouterResponder<AtollRequestContext>>
        var compaction: CompactionService
        /// Changes other nodes make to a shared store (PostgreSQL).
        var follower: StoreChangeFollower
        var store: any ServerStore
        var auth: AuthService
        var metrics: ServerMetrics
        var coordinator: SyncCoordinator
        var adminKey: String
        var requestHeads: RequestHeadRecorder

        /// The server's services; with `stoppingOnSignals`, SIGTERM and SIGINT stop them gracefully.
        func serviceGroup(stoppingOnSignals: Bool, logger: Logger) -> ServiceGroup {
            ServiceGroup(configuration: .init(
                services: [application, compaction, follower],
                gracefulShutdownSignals: stoppingOnSignals ? [.sigterm, .sigint] : [], logger: logger))
        }

        /// Serves until the group ends, then closes the store (whether the group ended well or not).
        func run(_ group: ServiceGroup) async throws {
            do {
                try await group.run()
            } catch {
                await store.shutdown()
                throw error
            }
            await store.shutdown()
        }
    }

    func makeParts(onServerRunning: @escaping @Sendable (any Channel) async -> Void) async throws -> Parts {
        try configuration.validate()
        if configuration.usesDevelopmentMode {
            // First, so an operator cannot miss it.
            let what = configuration.developmentMode
                ? "unknown app ids are created on first use and their schemas follow what clients declare"
                : "the schemas of apps in development mode follow what clients declare"
            logger.notice(
                "development mode: \(what); not for a server others can reach",
                metadata: ["host": "\(configuration.host)", "allowDevelopmentModeOnNetwork": "\(configuration.allowDevelopmentModeOnNetwork)"])
        }
        // Read before anything is opened: a bad certificate or key stops the start, typed.
        let tlsConfiguration = try configuration.tls?.makeServerTLSConfiguration()
        let dataDirectory = URL(fileURLWithPath: configuration.dataDirectory, isDirectory: true)
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let store: any ServerStore
        if let url = configuration.store {
            store = try await PostgresServerStore.open(url: url, logger: logger)
            logger.info("store: PostgreSQL", metadata: ["url": "\(PostgresURL.redacted(url))"])
        } else {
            store = try SQLiteServerStore(
                path: dataDirectory.appendingPathComponent("atoll.sqlite").path, durability: configuration.durability)
        }
        do {
            let secret = try await TokenSecret.load(configuration: configuration, dataDirectory: dataDirectory, store: store)
            let metrics = ServerMetrics()
            if let shared = store as? PostgresServerStore {
                shared.authenticateAnnouncements(tokenSecret: secret)
                shared.observeNotificationLag { metrics.notificationLag.record($0) }
                shared.observeRejectedNotifications { metrics.countRejectedNotification(reason: $0) }
            }
            let liveLogins = LiveLoginCache()
            // The configuration file's apps, then those added through the admin API (the file wins).
            let apps = AppRegistry(configuration.apps)
            for app in try RuntimeApps.load(configuration: configuration, logger: logger) { apps.install(app) }
            if !configuration.developmentMode {
                // Served without settings they would have no rules: refused instead (AuthService.app).
                let undeclared = try await store.apps().map(\.id).filter { apps.app(id: $0) == nil }
                if !undeclared.isEmpty {
                    logger.warning("apps with data but no configuration are refused until declared (configuration file or atoll apps import)",
                                   metadata: ["apps": "\(undeclared.sorted().prefix(20).joined(separator: ", "))", "count": "\(undeclared.count)"])
                }
            }
            let coordinator = SyncCoordinator(store: store, metrics: metrics, logger: logger,
                                              cachedRealms: configuration.limits.cachedRealms,
                                              appSettings: { [apps] in apps.settings(forApp: $0) }, clock: clock,
                                              liveLogins: liveLogins, interleaving: interleaving)
            let auth = try await AuthService(
                store: store, configuration: configuration, secret: secret, metrics: metrics, logger: logger, now: clock.now,
                endSyncSessions: { userID, deviceID, reason in
                    await coordinator.endSessions(userID: userID, deviceID: deviceID, reason: reason)
                },
                readCustomUserData: { appID, settings, userID in
                    try await coordinator.customUserData(appID: appID, settings: settings, userID: userID)
                },
                liveLogins: liveLogins, apps: apps)
            let requestHeads = RequestHeadRecorder()
            let router = Self.makeRouter(auth: auth, metrics: metrics, requestHeads: requestHeads, store: store,
                                         metricsToken: configuration.metricsToken,
                                         authorizationHeader: configuration.authorizationHeaderName.flatMap { HTTPField.Name($0) },
                                         logger: logger)
            let adminKey = try await AdminKey.load(configuration: configuration, dataDirectory: dataDirectory, store: store)
            AdminRoutes(key: adminKey, coordinator: coordinator, auth: auth,
                        backups: (store as? PostgresServerStore).map { PostgresBackups(store: $0) as any BackupShelf }
                            ?? BackupDirectory(dataDirectory: configuration.dataDirectory),
                        runtimeApps: RuntimeApps(configuration: configuration, auth: auth, coordinator: coordinator, logger: logger)).add(to: router)
            RemoteRoutes(coordinator: coordinator, auth: auth,
                         customAuthorization: configuration.authorizationHeaderName.flatMap { HTTPField.Name($0) }).add(to: router)
            let sync = SyncRoutes(coordinator: coordinator, auth: auth, metrics: metrics, logger: logger,
                                  admission: SyncAdmission(limits: configuration.limits), requestHeads: requestHeads)
            let webSocketRouter = Router(context: SyncRequestContext.self)
            sync.add(to: webSocketRouter)
            var server: HTTPServerBuilder = .http1WebSocketUpgrade(
                webSocketRouter: webSocketRouter, configuration: .init(ws: sync.webSocketConfiguration))
            if let tlsConfiguration {
                // HTTPS and wss:// on the same port: TLS wraps the HTTP/1 + WebSocket upgrade server.
                server = try .tls(server, tlsConfiguration: tlsConfiguration)
            }
            let application = Application(
                router: router,
                server: server,
                configuration: .init(
                    address: .hostname(configuration.host, port: configuration.port), serverName: "atoll-server"),
                onServerRunning: onServerRunning,
                logger: logger)
            return Parts(application: application, compaction: CompactionService(coordinator: coordinator, clock: clock, logger: logger),
                         follower: StoreChangeFollower(coordinator: coordinator, interval: .seconds(5), metrics: metrics, logger: logger),
                         store: store, auth: auth, metrics: metrics, coordinator: coordinator, adminKey: adminKey,
                         requestHeads: requestHeads)
        } catch {
            await store.shutdown()
            throw error
        }
    }

    static func makeRouter(auth: AuthService, metrics: ServerMetrics,
                           requestHeads: RequestHeadRecorder = RequestHeadRecorder(), store: (any ServerStore)? = nil,
                           metricsToken: String? = nil, authorizationHeader: HTTPField.Name? = nil,
                           logger: Logger = Logger(label: "atoll-server")) -> Router<AtollRequestContext> {
        let router = Router(context: AtollRequestContext.self)
        router.add(middleware: RequestHeadMiddleware(recorder: requestHeads))
        router.add(middleware: APIMiddleware(metrics: metrics))
        // Liveness: the process serves requests (restart it when this fails).
        router.get("health") { _, _ in
            try JSONBody.response(["status": "ok"])
        }
        router.get("health/live") { _, _ in
            try JSONBody.response(["status": "ok"])
        }
        // Readiness: the store answers too (send it no clients while this fails): 503 otherwise.
        router.get("health/ready") { _, _ in
            guard let store else { return try JSONBody.response(["status": "ready"]) }
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await store.checkReachable() }
                    group.addTask {
                        try await Task.sleep(for: .seconds(2))
                        throw ServerError(.internalError, "the store did not answer within 2 s")
                    }
                    try await group.next()
                    group.cancelAll()
                }
                return try JSONBody.response(["status": "ready", "store": "reachable"])
            } catch {
                // The reason goes to the log: anyone may ask, and a store's error can name hosts,
                // users and paths.
                logger.warning("not ready: the store does not answer", metadata: ["error": "\(error)"])
                return try JSONBody.response(["status": "not ready", "store": "unreachable"], status: .serviceUnavailable)
            }
        }
        router.get("metrics") { request, _ in
            if let metricsToken {
                let presented = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? $0.dropFirst(7) : nil }
                guard let presented, Secrets.constantTimeEqual(Array(presented.utf8), Array(metricsToken.utf8)) else {
                    return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer"])
                }
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        AuthRoutes(auth: auth, customAuthorization: authorizationHeader).add(to: router)
        return router
    }
}

/// A server started with ``AtollServer/start()``.
public final class RunningAtollServer: Sendable {
    public let host: String
    /// The port the server listens on.
    public let port: Int
    /// Whether the server serves HTTPS and `wss://` (the configuration has `tls`).
    public let usesTLS: Bool
    /// The server's auth service, for operations the HTTP API does not offer yet (disabling users).
    package let auth: AuthService
    package let metrics: ServerMetrics
    /// The sync coordinator: sessions, terminate and enable sync.
    package let coordinator: SyncCoordinator
    /// The bearer key of the admin API.
    public let adminKey: String
    /// Tests only: the heads of the requests received while recording is on.
    package let requestHeads: RequestHeadRecorder
    let group: ServiceGroup
    let task: Task<Void, any Error>

    init(host: String, port: Int, usesTLS: Bool, auth: AuthService, metrics: ServerMetrics, coordinator: SyncCoordinator, adminKey: String,
         requestHeads: RequestHeadRecorder, group: ServiceGroup, task: Task<Void, any Error>) {
        self.requestHeads = requestHeads
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
        self.auth = auth
        self.metrics = metrics
        self.coordinator = coordinator
        self.adminKey = adminKey
        self.group = group
        self.task = task
    }

    /// `http://<host>:<port>`, or `https://<host>:<port>` with TLS.
    public var baseURL: URL {
        URL(string: "\(usesTLS ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)")!
    }

    /// Stops accepting connections, finishes the requests under way and closes the store.
    public func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
