import AtollAppConfig
import AtollCore
import Foundation

/// The apps a server serves, by id: those of its configuration file (read-only) and those added
/// while it runs through the admin API (`PUT /api/admin/v1/apps/:app/configuration`, kept in
/// `<data>/apps/<id>.json`). Every lookup of an app's settings goes through here, so a replaced
/// app's new settings apply to every request from the moment they are installed.
///
/// ```swift
/// let registry = AppRegistry(configuration.apps)
/// let settings = registry.settings(forApp: "tasks")
/// ```
package final class AppRegistry: Sendable {
    /// Where an app's settings come from.
    package enum Origin: String, Sendable, Hashable {
        /// The server's configuration file: the admin API may not change it.
        case configurationFile
        /// The admin API (`atoll apps import`).
        case runtime
    }

    /// One app's settings and the generation they were installed in.
    package struct Entry: Sendable {
        package var app: ServerConfiguration.App
        package var origin: Origin
        /// Grows each time an app is installed or replaced: a session bound under an older
        /// generation of its app may no longer write.
        package var generation: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var nextGeneration: UInt64 = 1
    }

    private let state: Locked<State>

    /// A registry of the configuration file's apps.
    package init(_ apps: [ServerConfiguration.App] = []) {
        var state = State()
        for app in apps {
            state.entries[app.id] = Entry(app: app, origin: .configurationFile, generation: state.nextGeneration)
            state.nextGeneration += 1
        }
        self.state = Locked(state)
    }

    /// The app `id`'s entry, or nil when no one declared it.
    package func entry(id: String) -> Entry? { state.withLock { $0.entries[id] } }

    /// The declared app `id`, or nil.
    package func app(id: String) -> ServerConfiguration.App? { entry(id: id)?.app }

    /// The settings of an app: the declared ones, or the defaults for an app created in
    /// development mode; and the generation (0 for an undeclared app).
    package func current(_ id: String) -> (app: ServerConfiguration.App, generation: UInt64) {
        guard let entry = entry(id: id) else { return (ServerConfiguration.App(id: id), 0) }
        return (entry.app, entry.generation)
    }

    /// The settings of an app: the declared ones, or the defaults for an app created in development mode.
    package func settings(forApp id: String) -> ServerConfiguration.App { current(id).app }

    /// The generation of app `id`'s settings (0: not declared).
    package func generation(of id: String) -> UInt64 { entry(id: id)?.generation ?? 0 }

    /// Every declared app, by id.
    package var apps: [ServerConfiguration.App] {
        state.withLock { $0.entries.values.map(\.app) }.sorted { $0.id < $1.id }
    }

    /// Installs (or replaces) a runtime app and returns its generation. The caller checked that
    /// `app.id` is not one of the configuration file's.
    @discardableResult
    func install(_ app: ServerConfiguration.App) -> UInt64 {
        state.withLock { state in
            precondition(state.entries[app.id]?.origin != .configurationFile, "a configuration file's app is read-only")
            let generation = state.nextGeneration
            state.nextGeneration += 1
            state.entries[app.id] = Entry(app: app, origin: .runtime, generation: generation)
            return generation
        }
    }
}
