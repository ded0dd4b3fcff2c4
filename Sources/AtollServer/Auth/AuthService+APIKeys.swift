import AtollCore
import Foundation

extension AuthService {
    /// A new API key: `key` is the secret, shown once.
    package struct CreatedAPIKey: Sendable, Equatable {
        package var id: String
        package var key: String
        package var name: String
        package var disabled: Bool
    }

    /// Creates an API key for the holder of `refreshToken`. A login made with an API key cannot:
    /// revoking a key must revoke everything it let in, and a key made through it would outlive it.
    /// - Throws: `ServerError(.badRequest)` for an empty or taken name or a login made with an API
    ///   key, the refresh token's errors.
    package func createAPIKey(refreshToken: String, name: String) async throws -> CreatedAPIKey {
        let (user, login) = try await login(forRefreshToken: refreshToken)
        guard login.apiKeyID == nil else {
            throw ServerError(.badRequest, "a login made with an API key cannot create API keys; log in with the user's own credentials")
        }
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 256 else {
            throw ServerError(.badRequest, "an API key needs a name of 1 to 256 characters")
        }
        guard try await !store.apiKeys(userID: user.id).contains(where: { $0.name == name }) else {
            throw ServerError(.badRequest, "this user already has an API key named \"\(name)\"")
        }
        let key = Secrets.token(byteCount: 48)
        let stored = StoredAPIKey(
            id: ObjectId.generate().stringValue, userID: user.id, appID: user.appID, name: name,
            digest: Secrets.digest(key), createdAt: now())
        try await store.insertAPIKey(stored)
        return CreatedAPIKey(id: stored.id, key: key, name: name, disabled: false)
    }

    /// The API keys of the holder of `refreshToken`.
    package func apiKeys(refreshToken: String) async throws -> [StoredAPIKey] {
        let user = try await user(forRefreshToken: refreshToken)
        return try await store.apiKeys(userID: user.id)
    }

    /// One API key of the holder of `refreshToken`.
    /// - Throws: `ServerError(.apiKeyNotFound)`.
    package func apiKey(id: String, refreshToken: String) async throws -> StoredAPIKey {
        let user = try await user(forRefreshToken: refreshToken)
        guard let key = try await store.apiKey(id: id, userID: user.id) else { throw Self.noSuchKey(id) }
        return key
    }

    /// Deletes one API key of the holder of `refreshToken`, revoking what its logins opened.
    package func deleteAPIKey(id: String, refreshToken: String) async throws {
        let user = try await user(forRefreshToken: refreshToken)
        guard try await store.deleteAPIKey(id: id, userID: user.id) else { throw Self.noSuchKey(id) }
        try await revokeLogins(ofAPIKey: id, userID: user.id, reason: "API key \(id) was deleted")
    }

    /// Enables or disables one API key of the holder of `refreshToken`. Disabling revokes what
    /// its logins opened; enabling again does not bring them back.
    package func setAPIKeyDisabled(id: String, disabled: Bool, refreshToken: String) async throws {
        let user = try await user(forRefreshToken: refreshToken)
        guard try await store.setAPIKeyDisabled(id: id, userID: user.id, disabled: disabled) else {
            throw Self.noSuchKey(id)
        }
        if disabled { try await revokeLogins(ofAPIKey: id, userID: user.id, reason: "API key \(id) was disabled") }
    }

    /// Revokes the refresh tokens that logins with the API key `id` issued and ends their sync
    /// sessions, on every node. (Should this fail, those logins are not live anyway: a login of
    /// a deleted or disabled key is not, ``ServerStore/liveDevices(_:)``.)
    private func revokeLogins(ofAPIKey id: String, userID: String, reason: String) async throws {
        for deviceID in try await store.revokeRefreshTokens(apiKeyID: id) {
            await revoked(userID: userID, deviceID: deviceID, reason: reason)
        }
    }

    static func noSuchKey(_ id: String) -> ServerError {
        ServerError(.apiKeyNotFound, "there is no API key \(id) for this user")
    }
}
