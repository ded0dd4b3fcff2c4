import AtollAdminAPI
import AtollCore
import Foundation
import HTTPTypes
import Hummingbird

/// The operators' HTTP API, `/api/admin/v1` (docs/protocol.md §3), behind the admin key
/// (`Authorization: Bearer <key>`). The `atoll` command-line tool talks to it.
struct AdminRoutes: Sendable {
    let key: String
    let coordinator: SyncCoordinator
    let auth: AuthService
    let backups: any BackupShelf
    /// Apps added while the server runs (``addAppConfiguration(to:)``); nil: the route answers NotFound.
    var runtimeApps: RuntimeApps? = nil

    var store: any ServerStore { coordinator.store }

    func add(to router: Router<AtollRequestContext>) {
        let admin = router.group("api/admin/v1").add(middleware: AdminKeyMiddleware(key: key))
        admin.get("apps") { _, _ in
            let apps = try await store.apps()
            return try JSONBody.response(apps.map(AdminAPI.App.init))
        }
        admin.post("apps/:app") { _, context in
            let app = try await requireApp(context, creating: true)
            return try JSONBody.response(AdminAPI.App(app), status: .created)
        }
        admin.get("apps/:app/users") { _, context in
            let app = try await requireApp(context)
            return try JSONBody.response(try await store.users(appID: app.id).map(AdminAPI.User.init))
        }
        for (action, disabled) in [("enable", false), ("disable", true)] {
            admin.post("apps/:app/users/:user/\(action)") { _, context in
                let user = try await requireUser(context)
                // Disabling ends the user's sync sessions too.
                try await auth.setUserDisabled(user.id, disabled: disabled)
                return JSONBody.empty()
            }
        }
        admin.delete("apps/:app/users/:user") { _, context in
            let user = try await requireUser(context)
            _ = try await store.deleteUser(id: user.id)
            await coordinator.endSessions(userID: user.id, reason: "user \(user.id) was deleted by an operator")
            return JSONBody.empty()
        }
        admin.get("apps/:app/sessions") { _, context in
            let app = try await requireApp(context)
            return try JSONBody.response(await coordinator.sessions(appID: app.id).map(AdminAPI.Session.init))
        }
        admin.post("apps/:app/sync/terminate") { _, context in
            let app = try await requireApp(context)
            try await coordinator.terminateSync(appID: app.id)
            return JSONBody.empty()
        }
        admin.post("apps/:app/sync/enable") { _, context in
            let app = try await requireApp(context)
            try await coordinator.enableSync(appID: app.id)
            return JSONBody.empty()
        }
        addOperations(to: admin)
        addServerAPIKeys(to: admin)
        addData(to: admin)
        addAppConfiguration(to: admin)
    }

    /// The app the path names; `creating` records one the store does not know (an app declared in
    /// the configuration, or a new one in development mode).
    func requireApp(_ context: AtollRequestContext, creating: Bool = false) async throws -> StoredApp {
        let id = try context.parameters.require("app")
        if let app = try await store.app(id: id) { return app }
        guard creating else { throw ServerError(.appNotFound, "there is no app \(id)") }
        _ = try await auth.app(id)  // refuses an undeclared app outside development mode
        try await store.createApp(StoredApp(id: id, createdAt: coordinator.now()))
        guard let app = try await store.app(id: id) else { throw ServerError(.internalError, "app \(id) was not recorded") }
        return app
    }

    private func requireUser(_ context: AtollRequestContext) async throws -> StoredUser {
        let app = try await requireApp(context)
        let id = try context.parameters.require("user")
        guard let user = try await store.user(id: id), user.appID == app.id else {
            throw ServerError(.userNotFound, "app \(app.id) has no user \(id)")
        }
        return user
    }
}

// The admin API's bodies made from the server's records.
extension AdminAPI.App {
    init(_ app: StoredApp) {
        self.init(id: app.id, syncEnabled: app.syncEnabled, createdAt: app.createdAt)
    }
}

extension AdminAPI.User {
    init(_ user: StoredUser) {
        self.init(id: user.id, email: user.email, disabled: user.disabled,
                  providers: user.identities.map(\.providerType), createdAt: user.createdAt)
    }
}

extension AdminAPI.Session {
    init(_ info: SessionInfo) {
        self.init(user: info.userID, realm: info.path, fileIdent: info.fileIdent,
                  connection: info.connection, session: info.session.rawValue)
    }
}

extension AdminAPI.Backup {
    init(_ backup: ServerBackup) {
        self.init(id: backup.id, app: backup.appID, realm: backup.path, createdAt: backup.createdAt,
                  realms: backup.realms.map(\.path))
    }
}

/// Lets a request through only with the admin key as its bearer token.
struct AdminKeyMiddleware: RouterMiddleware {
    let key: String

    func handle(_ request: Request, context: AtollRequestContext, next: (Request, AtollRequestContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
              Secrets.constantTimeEqual(Array(header.dropFirst("Bearer ".count).utf8), Array(key.utf8)) else {
            throw ServerError(.invalidToken, "the admin API needs the admin key as a bearer token (see <data>/admin-key)")
        }
        return try await next(request, context)
    }
}
