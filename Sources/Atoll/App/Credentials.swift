import Foundation

/// How a user proves who they are when logging in.
///
/// ```swift
/// let user = try await app.login(credentials: .emailPassword(email: "frodo@shire.me", password: "ring-bearer"))
/// let appleUser = try await app.login(credentials: .apple(idToken: identityToken))
/// ```
public enum Credentials: Sendable, Equatable {
    /// A Facebook user access token, which the server checks with Facebook's Graph API (the app's
    /// `facebook` settings on the server).
    case facebook(accessToken: String)
    /// A Google server auth code, which the server exchanges at Google for an ID token (the app's
    /// `google.authCode` settings on the server).
    case google(serverAuthCode: String)
    /// A Google ID token, checked by the server against the app's configured Google keys.
    case googleId(token: String)
    /// A Sign in with Apple identity token, checked by the server against the app's configured Apple keys.
    case apple(idToken: String)
    /// Credentials from an email and password.
    case emailPassword(email: String, password: String)
    /// A JSON Web Token signed with the key configured for the app on the server.
    case jwt(token: String)
    /// A user API key created with `user.apiKeysAuth.createAPIKey(named:)`.
    case userAPIKey(String)
    /// A server API key made with the admin API (`atoll api-keys create`).
    case serverAPIKey(String)
    /// A new anonymous user (the app reuses its logged-in anonymous user if it has one).
    case anonymous
    /// A document handed to the app's authentication function (a webhook on the server), which
    /// answers with the user's external id (see User+Functions.swift).
    case function(payload: Document)

    /// The provider's name in the HTTP API.
    var provider: String {
        switch self {
        case .facebook: "oauth2-facebook"
        case .google, .googleId: "oauth2-google"
        case .apple: "oauth2-apple"
        case .emailPassword: "local-userpass"
        case .jwt: "custom-token"
        case .userAPIKey, .serverAPIKey: "api-key"
        case .anonymous: "anon-user"
        case .function: "custom-function"
        }
    }

    var body: [String: String] {
        switch self {
        case .facebook(let token): ["accessToken": token]
        case .google(let code): ["authCode": code]
        case .googleId(let token), .apple(let token): ["id_token": token]
        case .emailPassword(let email, let password): ["username": email, "password": password]
        case .jwt(let token): ["token": token]
        case .userAPIKey(let key), .serverAPIKey(let key): ["key": key]
        case .anonymous, .function: [:]
        }
    }

    /// The login request's JSON body: the payload itself (in extended JSON) for `.function`.
    func requestBody() throws -> Data {
        if case .function(let payload) = self { return try ExtendedJSON.canonicalData(.document(payload)) }
        return try JSONEncoder().encode(body)
    }
}
