import Foundation
import HTTPTypes
import Hummingbird

/// The routes of docs/protocol.md §1: logins, registration, sessions, profile, API keys.
struct AuthRoutes: Sendable {
    let auth: AuthService
    /// The configuration's other header for bearer tokens (``ServerConfiguration/authorizationHeaderName``).
    var customAuthorization: HTTPField.Name? = nil

    func add(to router: Router<AtollRequestContext>) {
        let client = router.group("api/client/v1")
        client.post("app/:app/auth/providers/local-userpass/register") { request, context in
            try await register(request, context)
        }
        client.post("app/:app/auth/providers/:provider/login") { request, context in
            try await logIn(request, context)
        }
        client.post("auth/session") { request, _ in
            let accessToken = try await auth.refreshAccessToken(refreshToken: try bearer(request))
            return try JSONBody.response(["access_token": accessToken], status: .created)
        }
        client.delete("auth/session") { request, _ in
            try await auth.logOut(refreshToken: try bearer(request))
            return JSONBody.empty()
        }
        client.get("auth/profile") { request, _ in
            let user = try await auth.user(forAccessToken: try bearer(request))
            var profile = Profile(user)
            profile.customData = await auth.customUserData(for: user)
            return try JSONBody.response(profile)
        }
        client.delete("auth/delete") { request, _ in
            try await auth.deleteUser(accessToken: try bearer(request))
            return JSONBody.empty()
        }
        addAPIKeyRoutes(to: client)
        addLocationRoute(to: client)
        addEmailPasswordRoutes(to: client)
        addFunctionRoutes(to: client)
    }

    func addAPIKeyRoutes(to client: RouterGroup<AtollRequestContext>) {
        client.post("auth/api_keys") { request, _ in
            let token = try bearer(request)
            let body = try await JSONBody.decode(NewAPIKey.self, from: request)
            let key = try await auth.createAPIKey(refreshToken: token, name: body.name)
            return try JSONBody.response(
                CreatedAPIKeyBody(id: key.id, key: key.key, name: key.name, disabled: key.disabled), status: .created)
        }
        client.get("auth/api_keys") { request, _ in
            let keys = try await auth.apiKeys(refreshToken: try bearer(request))
            return try JSONBody.response(keys.map(APIKeyBody.init))
        }
        client.get("auth/api_keys/:id") { request, context in
            let key = try await auth.apiKey(
                id: try context.parameters.require("id"), refreshToken: try bearer(request))
            return try JSONBody.response(APIKeyBody(key))
        }
        client.delete("auth/api_keys/:id") { request, context in
            try await auth.deleteAPIKey(id: try context.parameters.require("id"), refreshToken: try bearer(request))
            return JSONBody.empty()
        }
        for (action, disabled) in [("enable", false), ("disable", true)] {
            client.put("auth/api_keys/:id/\(action)") { request, context in
                try await auth.setAPIKeyDisabled(
                    id: try context.parameters.require("id"), disabled: disabled, refreshToken: try bearer(request))
                return JSONBody.empty()
            }
        }
    }

    // MARK: Handlers

    func logIn(_ request: Request, _ context: AtollRequestContext) async throws -> Response {
        let appID = try context.parameters.require("app")
        let provider = try context.parameters.require("provider")
        let body = try await JSONBody.decode(AuthService.LoginRequest.self, from: request)
        if request.uri.queryParameters.get("link") == "true" {
            return try await link(request, context, appID: appID, provider: provider, body: body)
        }
        let session = try await auth.logIn(appID: appID, providerName: provider, request: body, clientAddress: clientAddress(request, context))
        return try JSONBody.response(
            LoginAnswer(
                accessToken: session.accessToken, refreshToken: session.refreshToken, userID: session.userID,
                deviceID: session.deviceID))
    }

    func register(_ request: Request, _ context: AtollRequestContext) async throws -> Response {
        let appID = try context.parameters.require("app")
        let body = try await JSONBody.decode(Registration.self, from: request)
        try await auth.register(appID: appID, email: body.email, password: body.password, clientAddress: clientAddress(request, context))
        return try JSONBody.response([String: String](), status: .created)
    }

    /// The address per-address limits count `request` under (``ServerConfiguration/trustedProxies``).
    func clientAddress(_ request: Request, _ context: AtollRequestContext) -> String {
        auth.clientAddresses.key(request, peer: context.remoteAddress)
    }

    /// The token of an `Authorization: Bearer <token>` header, or of the configured other header.
    func bearer(_ request: Request) throws -> String {
        guard let header = customAuthorization.flatMap({ request.headers[$0] }) ?? request.headers[.authorization] else {
            throw ServerError(.invalidToken, "missing Authorization: Bearer header")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw ServerError(.invalidToken, "the Authorization header is not a bearer token")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty else { throw ServerError(.invalidToken, "empty bearer token") }
        return token
    }
}

// MARK: Bodies

extension AuthRoutes {
    struct Registration: Decodable {
        var email: String
        var password: String
    }

    struct NewAPIKey: Decodable {
        var name: String
    }

    struct LoginAnswer: Encodable {
        var accessToken: String
        var refreshToken: String
        var userID: String
        var deviceID: String

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case refreshToken = "refresh_token"
            case userID = "user_id"
            case deviceID = "device_id"
        }
    }

    struct Profile: Encodable {
        struct Identity: Encodable {
            var id: String
            var providerType: String

            enum CodingKeys: String, CodingKey {
                case id
                case providerType = "provider_type"
            }
        }

        /// The profile's `data`: a custom JWT's metadata fields, then `email` and `name`.
        typealias Data = [String: JSONValue]

        var userID: String
        var identities: [Identity]
        var data: Data
        /// The user's custom data, as in the access token (absent when the app has none).
        var customData: [String: JSONValue]?

        init(_ user: StoredUser) {
            userID = user.id
            identities = user.identities.map { Identity(id: $0.id, providerType: $0.providerType) }
            var data = user.metadata
            if let email = user.email { data["email"] = .string(email) }
            if let name = user.name { data["name"] = .string(name) }
            self.data = data
        }

        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case identities, data
            case customData = "custom_data"
        }
    }

    struct APIKeyBody: Encodable {
        var id: String
        var name: String
        var disabled: Bool

        init(_ key: StoredAPIKey) {
            id = key.id
            name = key.name
            disabled = key.disabled
        }

        enum CodingKeys: String, CodingKey {
            case id = "_id"
            case name, disabled
        }
    }

    struct CreatedAPIKeyBody: Encodable {
        var id: String
        var key: String
        var name: String
        var disabled: Bool

        enum CodingKeys: String, CodingKey {
            case id = "_id"
            case key, name, disabled
        }
    }
}
