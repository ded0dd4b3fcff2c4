import AtollCore
import Foundation

/// A user API key: log in with `Credentials.userAPIKey(key)`.
public struct UserAPIKey: Sendable, Hashable {
    public let objectId: ObjectId
    public let name: String
    /// The key itself: only known in the answer to `createAPIKey(named:)`.
    public let key: String?
    public let isEnabled: Bool
    /// Whether the key is disabled (realm-swift's name).
    public var disabled: Bool { !isEnabled }
}

/// Creates and manages a user's API keys.
///
/// ```swift
/// let key = try await user.apiKeysAuth.createAPIKey(named: "build server")
/// let same = try await app.login(credentials: .userAPIKey(key.key!))
/// ```
public struct APIKeyAuth: Sendable {
    let user: User

    struct KeyAnswer: Decodable {
        let _id: String
        let name: String
        let key: String?
        let disabled: Bool
    }

    private func convert(_ answer: KeyAnswer) throws -> UserAPIKey {
        guard let id = try? ObjectId(string: answer._id) else {
            throw AppError(.httpRequestFailed, "the server gave an API key id '\(answer._id)' that is not an ObjectId")
        }
        return UserAPIKey(objectId: id, name: answer.name, key: answer.key, isEnabled: !answer.disabled)
    }

    public func createAPIKey(named name: String) async throws -> UserAPIKey {
        let data = try await user.withRefreshToken("POST", "/api/client/v1/auth/api_keys", json: ["name": name])
        return try convert(user.core.http.decode(KeyAnswer.self, from: data, "API key creation"))
    }

    public func fetchAPIKey(_ objectId: ObjectId) async throws -> UserAPIKey {
        let data = try await user.withRefreshToken("GET", "/api/client/v1/auth/api_keys/\(objectId.stringValue)")
        return try convert(user.core.http.decode(KeyAnswer.self, from: data, "API key"))
    }

    public func fetchAPIKeys() async throws -> [UserAPIKey] {
        let data = try await user.withRefreshToken("GET", "/api/client/v1/auth/api_keys")
        return try user.core.http.decode([KeyAnswer].self, from: data, "API keys").map(convert)
    }

    public func deleteAPIKey(_ objectId: ObjectId) async throws {
        _ = try await user.withRefreshToken("DELETE", "/api/client/v1/auth/api_keys/\(objectId.stringValue)")
    }

    public func enableAPIKey(_ objectId: ObjectId) async throws {
        _ = try await user.withRefreshToken("PUT", "/api/client/v1/auth/api_keys/\(objectId.stringValue)/enable")
    }

    public func disableAPIKey(_ objectId: ObjectId) async throws {
        _ = try await user.withRefreshToken("PUT", "/api/client/v1/auth/api_keys/\(objectId.stringValue)/disable")
    }
}
