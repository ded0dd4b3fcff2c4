import AtollAppConfig
import AtollCore
import Foundation
import Logging

/// The apps added while the server runs (`atoll apps import`, the admin API's
/// `PUT apps/:app/configuration`): checked, kept in the store's `runtime_apps` table (it holds the
/// operator's secrets: see docs/server.md, "Runtime apps") so they survive a restart and every
/// node on a shared store serves them, and installed in the ``AppRegistry`` with their auth
/// providers' keys. An app of the configuration file is read-only here, and the configuration
/// file wins when both declare an id (the store's copy is then not loaded).
///
/// Several nodes: the node that keeps a configuration tells the others
/// (``StoreChange/runtimeAppChanged(appID:)``); each reads it from the store and installs it as
/// its own ``put(_:replace:)`` would, ending the app's sessions there. A node whose change feed was
/// interrupted reads them all again (``catchUp()``), so a lost notification is not lost for good.
///
/// One actor, so two requests for one app are decided one after the other.
actor RuntimeApps {
    /// What a `PUT` did.
    enum Outcome: String, Codable, Sendable {
        case created, unchanged, replaced
    }

    /// The most runtime apps one server keeps.
    static let maxApps = 1_000
    /// The largest app configuration body accepted, in bytes.
    static let maxBodyBytes = 256 << 10
    /// The folder under the data directory where servers before the `runtime_apps` table kept
    /// them; read once at start (``importFiles(configuration:store:now:logger:)``).
    static let folderName = "apps"
    /// The suffix a file of that folder gets once its app is in the store.
    static let importedSuffix = ".imported"

    let configuration: ServerConfiguration
    let auth: AuthService
    let coordinator: SyncCoordinator
    let logger: Logger

    init(configuration: ServerConfiguration, auth: AuthService, coordinator: SyncCoordinator, logger: Logger) {
        self.configuration = configuration
        self.auth = auth
        self.coordinator = coordinator
        self.logger = logger
    }

    static func folder(dataDirectory: String) -> URL {
        URL(fileURLWithPath: dataDirectory, isDirectory: true).appendingPathComponent(folderName, isDirectory: true)
    }

    /// The runtime apps the store keeps, checked as the admin API checks them, without those the
    /// configuration file declares (it wins; a warning says so). The files of `<data>/apps` an
    /// older server kept are imported first (``importFiles(configuration:store:now:logger:)``).
    /// - Throws: `ConfigurationError` naming the app (or file) that cannot be read or used: the
    ///   server does not start rather than serve that app with the default (open) settings.
    static func load(configuration: ServerConfiguration, store: any ServerStore, now: Date, logger: Logger) async throws
        -> [ServerConfiguration.App]
    {
        try await importFiles(configuration: configuration, store: store, now: now, logger: logger)
        var apps: [ServerConfiguration.App] = []
        for stored in try await store.runtimeApps() {
            let field = "runtime app \(stored.id) (the store's runtime_apps table)"
            let app = try decode(stored, field: field, wrapping: configuration.secretWrapping)
            if configuration.app(id: app.id) != nil {
                logger.warning("the configuration file declares this app too; the store's copy is not loaded", metadata: ["app": "\(app.id)"])
                continue
            }
            try check(app, field: field, configuration: configuration)
            apps.append(app)
        }
        return apps
    }

    /// The row that keeps `app`: its JSON, wrapped (``SecretWrapping``, the app's id
    /// authenticated with it) when the server has a `secretKey`, so a dump or a read of the store
    /// does not give its secrets away.
    static func row(for app: ServerConfiguration.App, wrapping: SecretWrapping?, at date: Date) throws -> StoredRuntimeApp {
        let json = String(decoding: try app.json(), as: UTF8.self)
        return StoredRuntimeApp(id: app.id, configuration: try wrapping?.wrap(json, name: wrappingName(app.id)) ?? json, updatedAt: date)
    }

    static func wrappingName(_ id: String) -> String { "runtime app \(id)" }

    /// The app a stored row holds, bounded as the admin API bounds a body (a role that may write
    /// the table is not trusted further than the admin API's callers).
    /// - Throws: `ConfigurationError` naming `field` when it is too large or deep, does not
    ///   decode, or names another app; at `secretKey` when it is wrapped under another key, or
    ///   this server has none.
    static func decode(_ stored: StoredRuntimeApp, field: String, wrapping: SecretWrapping?) throws -> ServerConfiguration.App {
        var text = stored.configuration
        if SecretWrapping.isWrapped(text) {
            guard text.utf8.count <= 2 * maxBodyBytes else { throw ConfigurationError(field: field, "is larger than \(maxBodyBytes) bytes") }
            guard let wrapping else {
                throw ConfigurationError(field: "secretKey", "\(field) is wrapped: set the secret key the other nodes use (secretKey or ATOLL_SECRET_KEY)")
            }
            text = try wrapping.unwrap(text, name: wrappingName(stored.id), what: field)
        }
        let data = Data(text.utf8)
        guard data.count <= maxBodyBytes else { throw ConfigurationError(field: field, "is larger than \(maxBodyBytes) bytes") }
        guard JSONNesting.isWithin(data) else { throw ConfigurationError(field: field, "nests deeper than \(JSONNesting.maxDepth) levels") }
        let app: ServerConfiguration.App
        do {
            app = try JSONDecoder().decode(ServerConfiguration.App.self, from: data)
        } catch let error as DecodingError {
            throw ConfigurationError(field: field, ServerConfiguration.describe(error))
        } catch {
            throw ConfigurationError(field: field, "is not JSON")
        }
        guard app.id == stored.id else { throw ConfigurationError(field: field, "holds app \(app.id), not \(stored.id)") }
        return app
    }

    /// Moves the apps an older server kept in `<data>/apps/<id>.json` into the store, once: each
    /// file is checked as before (one that cannot be used stops the start, naming it), written
    /// unless the store keeps that app already (another node imported it, or the admin API
    /// replaced it: the store's copy wins, and a warning says so), then renamed
    /// `<id>.json.imported` (kept, mode 0600, not read again).
    static func importFiles(configuration: ServerConfiguration, store: any ServerStore, now: Date, logger: Logger) async throws {
        let folder = folder(dataDirectory: configuration.dataDirectory)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let file = folder.appendingPathComponent(name)
            let app: ServerConfiguration.App
            do {
                app = try JSONDecoder().decode(ServerConfiguration.App.self, from: Data(contentsOf: file))
            } catch let error as DecodingError {
                throw ConfigurationError(field: file.path, ServerConfiguration.describe(error))
            }
            guard name == "\(app.id).json" else {
                throw ConfigurationError(field: file.path, "holds app \(app.id), not \(name.dropLast(5))")
            }
            if configuration.app(id: app.id) == nil { try check(app, field: file.path, configuration: configuration) }
            let wrapping = configuration.secretWrapping
            let written = try await store.putRuntimeApp(try row(for: app, wrapping: wrapping, at: now), ifAbsent: true)
            if !written, let kept = try await store.runtimeApp(id: app.id), (try? decode(kept, field: file.path, wrapping: wrapping)) != app {
                logger.warning("the store keeps another configuration of this app; the data folder's copy is not imported",
                               metadata: ["app": "\(app.id)", "file": "\(file.path)"])
            }
            let imported = folder.appendingPathComponent(name + importedSuffix)
            if rename(file.path, imported.path) != 0 {
                throw ConfigurationError(field: file.path, "imported into the store, but could not be renamed \(imported.lastPathComponent): rename it")
            }
            logger.notice("app configuration moved from the data folder into the store", metadata: ["app": "\(app.id)", "file": "\(imported.path)"])
        }
    }

    /// What the admin API checks beyond ``ServerConfiguration/App/validate(field:developmentMode:)``:
    /// no server file named by the body, no development mode where the configuration forbids it.
    static func check(_ app: ServerConfiguration.App, field: String, configuration: ServerConfiguration) throws {
        try app.validate(field: field, developmentMode: configuration.developmentMode)
        for (name, provider) in [("apple", app.apple), ("google", app.google)] where provider?.jwksPath != nil {
            throw ConfigurationError(field: "\(field).\(name).jwksPath", "give the keys inline (jwks): an app added through the admin API names no server file")
        }
        if app.developmentMode, !configuration.allowDevelopmentModeOnNetwork, !ServerConfiguration.isLoopback(configuration.host) {
            throw ConfigurationError(field: "\(field).developmentMode", "development mode on a server listening on \(configuration.host) needs allowDevelopmentModeOnNetwork")
        }
    }

    /// Adds app `app.id`, or replaces its configuration when `replace` says so.
    /// - Throws: `ServerError`: `.appReadOnly` for an app of the configuration file, `.appExists`
    ///   for another configuration of a runtime app without `replace`, `.invalidAppConfiguration`
    ///   when the configuration or its keys cannot be used, `.tooManyRequests` past ``maxApps``.
    func put(_ app: ServerConfiguration.App, replace: Bool) async throws -> (outcome: Outcome, generation: UInt64) {
        try await serially { try await self.putNow(app, replace: replace) }
    }

    /// Another node kept app `appID`'s configuration: read from the store and served here as on
    /// that node (its sessions here end), unless this node serves it already or its
    /// configuration file declares it. One that cannot be used here is logged and not served.
    func otherNodeChanged(appID: String) async {
        await inTurn { await self.installFromStore(appID: appID) }
    }

    /// Reads every runtime app from the store and serves those that changed: the change feed
    /// was interrupted, and may have lost a notification.
    func catchUp() async {
        await inTurn {
            let stored: [StoredRuntimeApp]
            do {
                stored = try await self.coordinator.store.runtimeApps()
            } catch {
                self.logger.warning("could not read the runtime apps from the store", metadata: ["error": "\(error)"])
                return
            }
            for app in stored { await self.install(app) }
        }
    }

    /// Runs `body` after what was queued before it: the actor alone would let a second request in
    /// while the first awaits its keys or the store, and both would create the app.
    private func serially<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let previous = queue
        let task = Task { [previous] in
            await previous?.value
            return try await body()
        }
        queue = Task { _ = await task.result }
        return try await task.value
    }

    private func inTurn(_ body: @escaping @Sendable () async -> Void) async {
        try? await serially { () async throws -> Bool in
            await body()
            return true
        }
    }

    /// The end of the requests queued so far.
    private var queue: Task<Void, Never>?

    private func installFromStore(appID: String) async {
        do {
            guard let stored = try await coordinator.store.runtimeApp(id: appID) else { return }
            await install(stored)
        } catch {
            logger.warning("could not read a runtime app another node kept", metadata: ["app": "\(appID)", "error": "\(error)"])
        }
    }

    /// Serves `stored` here when it differs from what is served.
    private func install(_ stored: StoredRuntimeApp) async {
        let existing = auth.apps.entry(id: stored.id)
        guard existing?.origin != .configurationFile else { return }
        do {
            let app = try Self.decode(stored, field: "runtime app \(stored.id)", wrapping: configuration.secretWrapping)
            guard existing?.app != app else { return }
            try Self.check(app, field: "app", configuration: configuration)
            let verifiers = try await Self.verifiers(for: app)
            await installHere(app, verifiers)
            logger.notice("app configuration \(existing == nil ? "created" : "replaced") on another node", metadata: ["app": "\(app.id)"])
        } catch {
            // The id only: the configuration and the error may hold secrets.
            logger.error("an app configuration another node kept cannot be used on this node; it is not served here",
                         metadata: ["app": "\(stored.id)", "error": "\((error as? ServerError)?.code.rawValue ?? "\(type(of: error))")"])
        }
    }

    /// The keys of `app`'s auth providers.
    /// - Throws: `ServerError.invalidAppConfiguration` when a key cannot be used.
    private static func verifiers(for app: ServerConfiguration.App) async throws
        -> (customToken: CustomTokens.Verifier?, openID: [AuthProvider: OpenIDTokens.Verifier])
    {
        do {
            return (try await CustomTokens.verifier(for: app), try await OpenIDTokens.verifiers(for: app, field: "app"))
        } catch let error as ConfigurationError {
            throw ServerError(.invalidAppConfiguration, error.description)
        } catch {
            throw ServerError(.invalidAppConfiguration, "app.customJWT.key cannot be used")
        }
    }

    /// Serves `app` with its keys here; its sessions on this node end. Returns its generation.
    @discardableResult
    private func installHere(_ app: ServerConfiguration.App,
                             _ verifiers: (customToken: CustomTokens.Verifier?, openID: [AuthProvider: OpenIDTokens.Verifier])) async -> UInt64 {
        let generation = Locked<UInt64>(0)
        await coordinator.replaceApp(app.id) { [auth] in
            auth.customTokens.install(verifiers.customToken, appID: app.id)
            auth.openIDTokens.install(verifiers.openID, appID: app.id)
            generation.withLock { $0 = auth.apps.install(app) }
        }
        return generation.withLock { $0 }
    }

    private func putNow(_ app: ServerConfiguration.App, replace: Bool) async throws -> (outcome: Outcome, generation: UInt64) {
        let registry = auth.apps
        let existing = registry.entry(id: app.id)
        if let existing {
            guard existing.origin == .runtime else {
                throw ServerError(.appReadOnly, "app \(app.id) is declared in the server's configuration file: change it there and restart")
            }
            if existing.app == app { return (.unchanged, existing.generation) }
            guard replace else {
                throw ServerError(.appExists, "app \(app.id) exists with another configuration: replacing it ends its sessions; ask with replace=true (atoll apps import --replace)")
            }
        } else {
            let count = registry.apps.count - configuration.apps.count
            guard count < Self.maxApps else {
                throw ServerError(.invalidAppConfiguration, "this server keeps at most \(Self.maxApps) apps added through the admin API")
            }
        }
        do {
            try Self.check(app, field: "app", configuration: configuration)
        } catch let error as ConfigurationError {
            throw ServerError(.invalidAppConfiguration, error.description)
        }
        // The keys first: a key that cannot be used refuses the app before anything changes.
        let verifiers = try await Self.verifiers(for: app)
        // Kept before it is served: an app answered as created is there after a restart (and on
        // the other nodes, told when it commits).
        try await keep(app)
        try await coordinator.store.createApp(StoredApp(id: app.id, createdAt: coordinator.now()))
        let generation = await installHere(app, verifiers)
        let outcome: Outcome = existing == nil ? .created : .replaced
        // The id and the outcome only: the configuration holds secrets.
        logger.notice("app configuration \(outcome.rawValue) through the admin API", metadata: ["app": "\(app.id)"])
        return (outcome, generation)
    }

    /// Writes the app's row in the store.
    private func keep(_ app: ServerConfiguration.App) async throws {
        do {
            let row = try Self.row(for: app, wrapping: configuration.secretWrapping, at: coordinator.now())
            _ = try await coordinator.store.putRuntimeApp(row, ifAbsent: false)
        } catch {
            logger.error("could not keep an app's configuration in the store", metadata: ["app": "\(app.id)", "error": "\(error)"])
            throw ServerError(.internalError, "the server could not keep app \(app.id)'s configuration")
        }
    }
}
