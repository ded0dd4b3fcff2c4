import AtollAppConfig
import AtollCore
import Foundation
import Logging

/// The apps added while the server runs (`atoll apps import`, the admin API's
/// `PUT apps/:app/configuration`): checked, kept in `<data>/apps/<id>.json` (mode 0600: they hold
/// the operator's secrets) so they survive a restart, and installed in the ``AppRegistry`` with
/// their auth providers' keys. An app of the configuration file is read-only here, and the
/// configuration file wins when both declare an id (the file's copy is then not loaded).
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
    /// The folder under the data directory.
    static let folderName = "apps"

    let folder: URL
    let configuration: ServerConfiguration
    let auth: AuthService
    let coordinator: SyncCoordinator
    let logger: Logger

    init(configuration: ServerConfiguration, auth: AuthService, coordinator: SyncCoordinator, logger: Logger) {
        folder = Self.folder(dataDirectory: configuration.dataDirectory)
        self.configuration = configuration
        self.auth = auth
        self.coordinator = coordinator
        self.logger = logger
    }

    static func folder(dataDirectory: String) -> URL {
        URL(fileURLWithPath: dataDirectory, isDirectory: true).appendingPathComponent(folderName, isDirectory: true)
    }

    /// The runtime apps kept in `<data>/apps`, checked as the admin API checks them, without those
    /// the configuration file declares (it wins; a warning says so).
    /// - Throws: `ConfigurationError` naming the file of an app that cannot be read or used: the
    ///   server does not start rather than serve that app with the default (open) settings.
    static func load(configuration: ServerConfiguration, logger: Logger) throws -> [ServerConfiguration.App] {
        let folder = folder(dataDirectory: configuration.dataDirectory)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        var apps: [ServerConfiguration.App] = []
        for name in names.sorted() where name.hasSuffix(".json") {
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
            if configuration.app(id: app.id) != nil {
                logger.warning("the configuration file declares this app too; its copy in the data folder is not loaded",
                               metadata: ["app": "\(app.id)", "file": "\(file.path)"])
                continue
            }
            try check(app, field: file.path, configuration: configuration)
            apps.append(app)
        }
        return apps
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
        // One after the other: the actor alone would let a second request in while the first
        // awaits its keys, the file or the store, and both would create the app.
        let previous = queue
        let task = Task { [previous] in
            await previous?.value
            return try await self.putNow(app, replace: replace)
        }
        queue = Task { _ = await task.result }
        return try await task.value
    }

    /// The end of the requests queued so far.
    private var queue: Task<Void, Never>?

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
        let customToken: CustomTokens.Verifier?
        let openID: [AuthProvider: OpenIDTokens.Verifier]
        do {
            customToken = try await CustomTokens.verifier(for: app)
            openID = try await OpenIDTokens.verifiers(for: app, field: "app")
        } catch let error as ConfigurationError {
            throw ServerError(.invalidAppConfiguration, error.description)
        } catch {
            throw ServerError(.invalidAppConfiguration, "app.customJWT.key cannot be used")
        }
        // Kept before it is served: an app answered as created is there after a restart.
        try write(app)
        try await coordinator.store.createApp(StoredApp(id: app.id, createdAt: coordinator.now()))
        let generation = Locked<UInt64>(0)
        await coordinator.replaceApp(app.id) { [auth] in
            auth.customTokens.install(customToken, appID: app.id)
            auth.openIDTokens.install(openID, appID: app.id)
            generation.withLock { $0 = auth.apps.install(app) }
        }
        let outcome: Outcome = existing == nil ? .created : .replaced
        // The id and the outcome only: the configuration holds secrets.
        logger.notice("app configuration \(outcome.rawValue) through the admin API", metadata: ["app": "\(app.id)"])
        return (outcome, generation.withLock { $0 })
    }

    /// Writes `<data>/apps/<id>.json` atomically, readable by the server's user only.
    private func write(_ app: ServerConfiguration.App) throws {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let file = folder.appendingPathComponent("\(app.id).json")
            let temporary = folder.appendingPathComponent(".\(app.id).json.\(UUID().uuidString)")
            guard FileManager.default.createFile(atPath: temporary.path, contents: try app.json(), attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
            if rename(temporary.path, file.path) != 0 {
                try? FileManager.default.removeItem(at: temporary)
                throw CocoaError(.fileWriteUnknown)
            }
        } catch {
            logger.error("could not keep an app's configuration in the data folder", metadata: ["app": "\(app.id)", "error": "\(error)"])
            throw ServerError(.internalError, "the server could not keep app \(app.id)'s configuration")
        }
    }
}
