import Hummingbird

extension AuthRoutes {
    /// `POST …/auth/providers/{provider}/login?link=true` with the user's access token: adds the
    /// credentials' identity to the user (docs/protocol.md §1, linking).
    func link(_ request: Request, _ context: AtollRequestContext, appID: String, provider: String,
              body: AuthService.LoginRequest) async throws -> Response {
        let result = try await auth.link(
            accessToken: try bearer(request), appID: appID, providerName: provider, request: body,
            clientAddress: clientAddress(request, context))
        return try JSONBody.response(LinkAnswer(accessToken: result.accessToken, userID: result.user.id))
    }

    struct LinkAnswer: Encodable {
        var accessToken: String
        var userID: String

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case userID = "user_id"
        }
    }
}

extension AuthRoutes {
    /// `GET app/{app}/location`: where the app is served (App Services' shape). Clients ask it
    /// before moving to this address (`App.updateBaseUrl(to:)`); an unknown app is `AppNotFound`.
    func addLocationRoute(to client: RouterGroup<AtollRequestContext>) {
        client.get("app/:app/location") { request, context in
            let app = try await auth.app(try context.parameters.require("app"))
            let scheme = request.head.scheme ?? "http"
            let host = request.head.authority ?? ""
            let hostname = "\(scheme)://\(host)"
            let wsScheme = scheme == "https" ? "wss" : "ws"
            return try JSONBody.response(Location(
                appID: app.id, deploymentModel: "LOCAL", location: "atoll", hostname: hostname, wsHostname: "\(wsScheme)://\(host)"))
        }
    }

    struct Location: Encodable {
        var appID: String
        var deploymentModel: String
        var location: String
        var hostname: String
        var wsHostname: String

        enum CodingKeys: String, CodingKey {
            case appID = "app_id"
            case deploymentModel = "deployment_model"
            case location, hostname
            case wsHostname = "ws_hostname"
        }
    }
}
