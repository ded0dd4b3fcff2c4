import Foundation

/// How a user proves who they are when logging in.
///
/// ```swift
/// let user = try await app.login(credentials: .emailPassword(email: "frodo@shire.me", password: "ring-bearer"))
/// ```
public enum Credentials: Sendable, Equatable {
    /// Credentials from an email and password.
    case emailPassword(email: String, password: String)
    /// A JSON Web Token signed with the key configured for the app on the server.
    case jwt(token: String)
    /// A user API key created with `user.apiKeysAuth.createAPIKey(named:)`.
    case userAPIKey(String)
    /// A new anonymous user (the app reuses its logged-in anonymous user if it has one).
    case anonymous

    /// The provider's name in the HTTP API.
    var provider: String {
        switch self {
        case .emailPassword: "local-userpass"
        case .jwt: "custom-token"
        case .userAPIKey: "api-key"
        case .anonymous: "anon-user"
        }
    }

    var body: [String: String] {
        switch self {
        case .emailPassword(let email, let password): ["username": email, "password": password]
        case .jwt(let token): ["token": token]
        case .userAPIKey(let key): ["key": key]
        case .anonymous: [:]
        }
    }
}
