import AtollCore
import AtollServer
import Crypto
import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle

/// Facebook's Graph API and Google's token endpoint and keys, made up for a test on 127.0.0.1:
/// `debug_token` and `/me` answer for the access tokens the test registers, the token endpoint
/// exchanges the auth codes it registers (each once) for the ID tokens it gave, and the keys are
/// those of a ``TestIdentityProvider``. Each endpoint can misbehave on demand (hang, answer too
/// much, fail), and every request is recorded.
///
/// ```swift
/// let fake = try await FakeIdentityProviders.start()
/// fake.addFacebookToken("EAAB-sam", user: .init(id: "10001", name: "Sam"))
/// let server = try await SyncTestServer.start { $0.apps = [.init(id: "test-app")]; $0.apps[0].facebook = fake.facebook }
/// ```
package final class FakeIdentityProviders: Sendable {
    /// The endpoints, to make one misbehave.
    package enum Endpoint: String, Sendable, CaseIterable {
        case debugToken = "/graph/debug_token", me = "/graph/me", token = "/google/token", keys = "/google/certs"
    }

    /// How an endpoint answers.
    package enum Behavior: Sendable {
        /// As the real provider would.
        case normal
        /// Holds the request until the fake stops (at most a minute).
        case hang
        /// 200 with this many bytes of JSON whitespace.
        case hugeBody(Int)
        /// This status with `{"error": "server_error"}`.
        case httpStatus(Int)
        /// 200 with this text.
        case body(String)
    }

    /// A Facebook user, and the token's facts `debug_token` tells.
    package struct FacebookAccount: Sendable {
        package var id: String
        package var name: String?
        package var email: String?
        package var pictureURL: String?
        /// The Facebook app the token was made for.
        package var appID: String
        package var isValid: Bool
        package var expiresAt: Date
        /// The id `/me` answers (another than ``id`` to test a mismatch).
        package var profileID: String?

        package init(id: String, name: String? = nil, email: String? = nil, pictureURL: String? = nil,
                    appID: String = FakeIdentityProviders.facebookAppID, isValid: Bool = true,
                    expiresAt: Date = Date().addingTimeInterval(3600), profileID: String? = nil) {
            self.id = id
            self.name = name
            self.email = email
            self.pictureURL = pictureURL
            self.appID = appID
            self.isValid = isValid
            self.expiresAt = expiresAt
            self.profileID = profileID
        }
    }

    /// One request the server made.
    package struct Call: Sendable {
        package var path: String
        /// The query's or the form body's fields.
        package var fields: [String: String]
    }

    package static let facebookAppID = "1234567890"
    package static let facebookAppSecret = "facebook-app-secret-0123456789"
    package static let googleClientID = "42-server.apps.googleusercontent.com"
    package static let googleClientSecret = "google-client-secret-0123456789"

    private struct State {
        var facebookTokens: [String: FacebookAccount] = [:]
        var googleCodes: [String: String] = [:]
        var behaviors: [Endpoint: Behavior] = [:]
        var requests: [Call] = []
        var stopping = false
    }

    private let state: Locked<State>
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    package let port: Int
    /// Google's stand-in: signs the ID tokens the token endpoint hands out; its keys are served.
    package let google: TestIdentityProvider

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>, state: Locked<State>, google: TestIdentityProvider) {
        self.port = port
        self.group = group
        self.task = task
        self.state = state
        self.google = google
    }

    /// `http://127.0.0.1:<port><path>`.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// An app's Facebook settings pointing here.
    package var facebook: ServerConfiguration.Facebook {
        ServerConfiguration.Facebook(clientId: Self.facebookAppID, clientSecret: Self.facebookAppSecret, graphURL: url("/graph"), timeout: 2)
    }

    /// An app's Google settings pointing here: keys fetched from the fake, auth codes exchanged at it.
    package var googleSettings: ServerConfiguration.OpenIDProvider {
        ServerConfiguration.OpenIDProvider(
            jwksURL: url(Endpoint.keys.rawValue), audience: [],
            authCode: .init(clientId: Self.googleClientID, clientSecret: Self.googleClientSecret, tokenURL: url(Endpoint.token.rawValue)),
            timeout: 2)
    }

    /// Starts the fake on a free port of 127.0.0.1.
    package static func start() async throws -> FakeIdentityProviders {
        let google = try await TestIdentityProvider(issuer: "https://accounts.google.com", audience: googleClientID)
        let state = Locked(State())
        let router = Router()
        for endpoint in Endpoint.allCases {
            let handler: @Sendable (Call, Locked<State>) -> Response = { request, state in
                switch endpoint {
                case .debugToken: Self.debugToken(request, state)
                case .me: Self.me(request, state)
                case .token: Self.token(request, state)
                case .keys: Self.json(google.jwks)
                }
            }
            router.on(RouterPath(endpoint.rawValue), method: endpoint == .token ? .post : .get) { request, _ -> Response in
                var fields = Self.fields(request.uri.query ?? "")
                if endpoint == .token {
                    let body = try await request.body.collect(upTo: 1 << 16)
                    fields = Self.fields(String(buffer: body))
                }
                let call = Call(path: endpoint.rawValue, fields: fields)
                let behavior = state.withLock { state in
                    state.requests.append(call)
                    return state.behaviors[endpoint] ?? .normal
                }
                switch behavior {
                case .normal: return handler(call, state)
                case .hang:
                    let deadline = ContinuousClock.now + .seconds(60)
                    while !state.withLock({ $0.stopping }), ContinuousClock.now < deadline {
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                    return handler(call, state)
                case .hugeBody(let bytes):
                    return Response(status: .ok, headers: [.contentType: "application/json"],
                                    body: ResponseBody(byteBuffer: ByteBuffer(repeating: UInt8(ascii: " "), count: bytes)))
                case .httpStatus(let code): return Self.json(#"{"error":"server_error"}"#, status: code)
                case .body(let text): return Self.json(text)
                }
            }
        }
        let (port, group, task) = try await LoopbackHTTPServer.start(router, label: "fake-identity-providers")
        return FakeIdentityProviders(port: port, group: group, task: task, state: state, google: google)
    }

    /// Makes `endpoint` answer with `behavior` from now on.
    package func setBehavior(_ behavior: Behavior, for endpoint: Endpoint) {
        state.withLock { $0.behaviors[endpoint] = behavior }
    }

    /// Registers a Facebook access token.
    package func addFacebookToken(_ token: String, user: FacebookAccount) {
        state.withLock { $0.facebookTokens[token] = user }
    }

    /// Registers a Google server auth code, exchanged (once) for `idToken`.
    package func addGoogleCode(_ code: String, idToken: String) {
        state.withLock { $0.googleCodes[code] = idToken }
    }

    /// Every request so far, or those of one endpoint.
    package func requests(_ endpoint: Endpoint? = nil) -> [Call] {
        state.withLock { $0.requests }.filter { endpoint == nil || $0.path == endpoint?.rawValue }
    }

    /// Stops the fake (hanging requests answer first).
    package func stop() async throws {
        state.withLock { $0.stopping = true }
        await group.triggerGracefulShutdown()
        try await task.value
    }

    // MARK: The endpoints

    private static func debugToken(_ request: Call, _ state: Locked<State>) -> Response {
        guard request.fields["access_token"] == "\(facebookAppID)|\(facebookAppSecret)" else {
            return json(#"{"error":{"message":"Invalid OAuth access token signature.","type":"OAuthException","code":190}}"#, status: 400)
        }
        guard let account = state.withLock({ $0.facebookTokens[request.fields["input_token"] ?? ""] }) else {
            return json(#"{"data":{"is_valid":false,"error":{"code":190,"message":"Invalid OAuth access token."}}}"#)
        }
        let data: [String: Any] = [
            "app_id": account.appID, "type": "USER", "application": "Test", "is_valid": account.isValid,
            "expires_at": Int(account.expiresAt.timeIntervalSince1970), "user_id": account.id, "scopes": ["public_profile", "email"],
        ]
        return json(["data": data])
    }

    private static func me(_ request: Call, _ state: Locked<State>) -> Response {
        let token = request.fields["access_token"] ?? ""
        let proof = HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: SymmetricKey(data: Data(facebookAppSecret.utf8)))
        guard let account = state.withLock({ $0.facebookTokens[token] }),
              request.fields["appsecret_proof"] == proof.map({ String(format: "%02x", $0) }).joined()
        else {
            return json(#"{"error":{"message":"Invalid OAuth access token.","type":"OAuthException","code":190}}"#, status: 400)
        }
        var profile: [String: Any] = ["id": account.profileID ?? account.id]
        profile["name"] = account.name
        profile["email"] = account.email
        if let picture = account.pictureURL { profile["picture"] = ["data": ["url": picture, "is_silhouette": false]] }
        return json(profile)
    }

    private static func token(_ request: Call, _ state: Locked<State>) -> Response {
        guard request.fields["client_id"] == googleClientID, request.fields["client_secret"] == googleClientSecret else {
            return json(#"{"error":"invalid_client","error_description":"The OAuth client was not found."}"#, status: 401)
        }
        guard request.fields["grant_type"] == "authorization_code",
              let idToken = state.withLock({ $0.googleCodes.removeValue(forKey: request.fields["code"] ?? "") })
        else {
            return json(#"{"error":"invalid_grant","error_description":"Bad Request"}"#, status: 400)
        }
        return json(["access_token": "ya29.test", "expires_in": 3599, "token_type": "Bearer", "scope": "openid email", "id_token": idToken])
    }

    // MARK: Helpers

    private static func fields(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part) }
            out[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return out
    }

    private static func json(_ object: [String: Any], status: Int = 200) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return json(String(decoding: data, as: UTF8.self), status: status)
    }

    private static func json(_ text: String, status: Int = 200) -> Response {
        Response(status: .init(code: status), headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
