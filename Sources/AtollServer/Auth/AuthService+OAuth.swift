import AtollCore
import Crypto
import Foundation

/// The logins that need the identity provider's servers: Facebook user access tokens (checked
/// with the Graph API) and Google server auth codes (exchanged for an ID token), as App Services
/// ran `oauth2-facebook` and `oauth2-google`. A token or code the provider refuses answers
/// `InvalidCredentials`, like a refused ID token; a provider that cannot be reached, is too slow
/// or answers too much answers `AuthError`, and the server carries on.
extension AuthService {
    /// What Facebook tells about the user of an access token.
    struct FacebookUser: Sendable, Equatable {
        var id: String
        var name: String?
        var email: String?
        var pictureURL: String?
    }

    /// The longest access token or auth code taken (Facebook's and Google's are a few hundred bytes).
    static let maxProviderCredentialBytes = 4096

    /// The Facebook user of `request`'s `accessToken`: `debug_token` (with the app's id and
    /// secret) must say the token is valid, a user's, and made for this Facebook app; `/me` then
    /// gives the id (the same user), name, e-mail and picture.
    /// - Throws: `ServerError`: `.authProviderDisabled` without the app's secret, `.badRequest`
    ///   without a token or for an oversized one, `.invalidCredentials` for a token Facebook
    ///   refuses or made for another app, `.authError` when the Graph API fails.
    func facebookUser(appID: String, request: LoginRequest) async throws -> FacebookUser {
        let app = try await app(appID)
        guard let settings = app.facebook, let secret = settings.clientSecret else {
            throw ServerError(.authProviderDisabled, "the oauth2-facebook provider is off for this app")
        }
        guard let token = request.accessToken, !token.isEmpty else {
            throw ServerError(.badRequest, "an oauth2-facebook login needs \"accessToken\"")
        }
        guard token.utf8.count <= Self.maxProviderCredentialBytes else {
            throw ServerError(.badRequest, "the access token is larger than \(Self.maxProviderCredentialBytes) bytes")
        }
        let base = settings.graphURL.hasSuffix("/") ? String(settings.graphURL.dropLast()) : settings.graphURL
        let what = "Facebook's Graph API"
        let debug = try await logged(appID: appID, provider: .facebook) {
            try await ProviderCalls.send(.GET, base + "/debug_token?" + ProviderCalls.formEncoded([
                ("input_token", token), ("access_token", "\(settings.clientId)|\(secret)"),
            ]), timeout: settings.timeout, what: what)
        }
        let data = try Self.graphAnswer(DebugToken.self, debug, what: what).data
        guard let data, data.is_valid == true else {
            throw ServerError(.invalidCredentials, "the Facebook access token is invalid or expired")
        }
        guard Self.graphID(data.app_id) == settings.clientId else {
            throw ServerError(.invalidCredentials, "the Facebook access token was made for another app")
        }
        if let type = data.type, type != "USER" {
            throw ServerError(.invalidCredentials, "the Facebook access token is not a user's")
        }
        if let expires = data.expires_at, expires > 0, Date(timeIntervalSince1970: expires) <= now() {
            throw ServerError(.invalidCredentials, "the Facebook access token has expired")
        }
        guard let userID = Self.graphID(data.user_id) else {
            throw ServerError(.invalidCredentials, "the Facebook access token names no user")
        }
        // appsecret_proof: Facebook takes the token from this server only.
        let proof = HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        let me = try await logged(appID: appID, provider: .facebook) {
            try await ProviderCalls.send(.GET, base + "/me?" + ProviderCalls.formEncoded([
                ("fields", "id,name,email,picture"), ("access_token", token),
                ("appsecret_proof", proof.map { String(format: "%02x", $0) }.joined()),
            ]), timeout: settings.timeout, what: what)
        }
        let profile = try Self.graphAnswer(GraphUser.self, me, what: what)
        guard Self.graphID(profile.id) == userID else {
            throw ServerError(.invalidCredentials, "the Facebook access token's user does not match its profile")
        }
        return FacebookUser(id: userID, name: Self.profileText(profile.name, max: 256), email: Self.profileText(profile.email, max: 254),
                            pictureURL: Self.profileText(profile.picture?.data?.url, max: 2048))
    }

    /// The claims of the ID token Google gives for `code` (a server auth code), checked as any
    /// Google ID token and meant for the auth code's client id.
    /// - Throws: `ServerError`: `.authProviderDisabled` when the app takes no auth codes,
    ///   `.badRequest` for an oversized code, `.invalidCredentials` for a code Google refuses or an
    ///   ID token that does not check, `.authError` when Google's token endpoint fails.
    func googleAuthCodeClaims(appID: String, code: String) async throws -> OpenIDClaims {
        let app = try await app(appID)
        guard let settings = app.google, let exchange = settings.authCode, let secret = exchange.clientSecret else {
            throw ServerError(.authProviderDisabled,
                              "this app takes no Google server auth codes (google.authCode); sign in with an ID token (Credentials.googleId(token:))")
        }
        guard !code.isEmpty, code.utf8.count <= Self.maxProviderCredentialBytes else {
            throw ServerError(.badRequest, "an auth code has 1 to \(Self.maxProviderCredentialBytes) bytes")
        }
        var form = [("grant_type", "authorization_code"), ("code", code), ("client_id", exchange.clientId), ("client_secret", secret)]
        if let redirect = exchange.redirectURI { form.append(("redirect_uri", redirect)) }
        let answer = try await logged(appID: appID, provider: .google) {
            try await ProviderCalls.send(.POST, exchange.tokenURL, form: form, timeout: settings.timeout, what: "Google's token endpoint")
        }
        let body = try? JSONDecoder().decode(TokenAnswer.self, from: Data(answer.body))
        guard answer.status == 200 else {
            // 400 and 401 are Google's word on the code (invalid_grant) or the client.
            if (400..<500).contains(answer.status) {
                let reason = ProviderCalls.errorCode(body?.error).map { " (\($0))" } ?? ""
                logger.info("Google refused an auth code", metadata: ["app": "\(appID)", "status": "\(answer.status)", "error": "\(reason)"])
                throw ServerError(.invalidCredentials, "Google refused the auth code\(reason)")
            }
            throw ServerError(.authError, "Google's token endpoint failed (HTTP \(answer.status))")
        }
        guard let idToken = body?.id_token else {
            throw ServerError(.authError, "Google's answer holds no ID token (the sign-in must ask for the openid scope)")
        }
        return try await logged(appID: appID, provider: .google) {
            try await openIDTokens.verify(idToken, provider: .google, appID: appID, now: now(), audience: exchange.clientId)
        }
    }

    /// `body`, with a provider failure (``ServerError/Code/authError``) written to the log.
    private func logged<T>(appID: String, provider: AuthProvider, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ServerError where error.code == .authError {
            logger.warning("identity provider call failed", metadata: ["app": "\(appID)", "provider": "\(provider.rawValue)", "error": "\(error.message)"])
            throw error
        }
    }

    /// `debug_token`'s answer.
    private struct DebugToken: Decodable {
        struct Facts: Decodable {
            var is_valid: Bool?
            var app_id: String?
            var type: String?
            var expires_at: Double?
            var user_id: String?
        }
        var data: Facts?
    }

    /// `/me`'s answer.
    private struct GraphUser: Decodable {
        struct Picture: Decodable {
            struct Image: Decodable { var url: String? }
            var data: Image?
        }
        var id: String?
        var name: String?
        var email: String?
        var picture: Picture?
    }

    /// The token endpoint's answer (RFC 6749 §5), with the OpenID Connect ID token.
    private struct TokenAnswer: Decodable {
        var id_token: String?
        var error: String?
    }

    /// A Graph API answer: a 4xx is Facebook refusing the token.
    private static func graphAnswer<T: Decodable>(_ type: T.Type, _ answer: WebhookClient.Answer, what: String) throws -> T {
        guard answer.status == 200 else {
            if (400..<500).contains(answer.status) {
                throw ServerError(.invalidCredentials, "Facebook refused the access token")
            }
            throw ServerError(.authError, "\(what) failed (HTTP \(answer.status))")
        }
        guard let object = try? JSONDecoder().decode(T.self, from: Data(answer.body)) else {
            throw ServerError(.authError, "\(what) answered something other than the JSON expected")
        }
        return object
    }

    /// A Graph API id: digits, at most 64 of them.
    private static func graphID(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= 64, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return text
    }

    /// A profile field of at most `max` bytes, else nothing.
    private static func profileText(_ text: String?, max: Int) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= max else { return nil }
        return text
    }
}
