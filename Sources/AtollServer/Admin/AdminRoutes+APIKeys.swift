import AtollAdminAPI
import Foundation
import Hummingbird

extension AdminRoutes {
    /// Server API keys (docs/protocol.md §3): `POST apps/{app}/api_keys {"name"}` answers the key
    /// once; `GET apps/{app}/api_keys`; `DELETE apps/{app}/api_keys/{id}` deletes the key and the
    /// user it logs in as.
    func addServerAPIKeys(to admin: RouterGroup<AtollRequestContext>) {
        admin.post("apps/:app/api_keys") { request, context in
            let app = try await requireApp(context, creating: true)
            let body = try await JSONBody.decode(AdminAPI.NewServerAPIKey.self, from: request)
            let key = try await auth.createServerAPIKey(appID: app.id, name: body.name)
            return try JSONBody.response(AdminAPI.ServerAPIKey(id: key.id, name: key.name, key: key.key, disabled: false, userID: nil), status: .created)
        }
        admin.get("apps/:app/api_keys") { _, context in
            let app = try await requireApp(context)
            let keys = try await auth.serverAPIKeys(appID: app.id)
            return try JSONBody.response(keys.map { AdminAPI.ServerAPIKey(id: $0.key.id, name: $0.key.name, key: nil, disabled: $0.key.disabled, userID: $0.userID) })
        }
        admin.delete("apps/:app/api_keys/:id") { _, context in
            let app = try await requireApp(context)
            try await auth.deleteServerAPIKey(appID: app.id, id: try context.parameters.require("id"))
            return JSONBody.empty()
        }
    }
}
