import Foundation

/// An app known to the server.
package struct StoredApp: Sendable, Hashable {
    package var id: String
    package var createdAt: Date
    /// Off between an operator's "terminate sync" and "enable sync".
    package var syncEnabled: Bool
    /// An operator's override of the configuration's `clientRecovery`; nil follows the configuration.
    package var clientRecovery: Bool?
    /// An operator's override of the configuration's `maxOfflineTime`, in seconds; 0 keeps all
    /// history, nil follows the configuration.
    package var maxOfflineTime: TimeInterval?

    package init(id: String, createdAt: Date, syncEnabled: Bool = true, clientRecovery: Bool? = nil,
                maxOfflineTime: TimeInterval? = nil) {
        self.id = id
        self.createdAt = createdAt
        self.syncEnabled = syncEnabled
        self.clientRecovery = clientRecovery
        self.maxOfflineTime = maxOfflineTime
    }
}

/// One way a user logs in: a provider and the user's id within it (an email, a JWT `sub`, a random id).
///
/// An e-mail identity keeps its own password: a user with two e-mail identities (one linked to the
/// other) logs in with each address's own password, and linking never changes another identity's.
package struct StoredIdentity: Sendable, Hashable {
    /// The id within the provider: the email for `local-userpass`, `sub` for `custom-token`.
    package var id: String
    /// The provider's name as in the HTTP API: `anon-user`, `local-userpass`, `api-key`, `custom-token`.
    package var providerType: String
    /// The PBKDF2 hash of this identity's password (see ``PasswordHasher``), for `local-userpass`.
    package var passwordHash: String?

    package init(id: String, providerType: String, passwordHash: String? = nil) {
        self.id = id
        self.providerType = providerType
        self.passwordHash = passwordHash
    }

    /// Whether `other` names the same identity (provider and id), whatever its password.
    package func isSame(as other: StoredIdentity) -> Bool {
        id == other.id && providerType == other.providerType
    }
}

/// A user of one app.
package struct StoredUser: Sendable, Hashable {
    package var id: String
    package var appID: String
    package var identities: [StoredIdentity]
    package var email: String?
    package var name: String?
    package var disabled: Bool
    package var createdAt: Date
    /// The metadata fields of the user's last custom JWT (`customJWT.metadataFields`), by field
    /// name: the profile's `data` and `%user.data.<field>` in rules.
    package var metadata: [String: JSONValue]

    package init(
        id: String, appID: String, identities: [StoredIdentity], email: String? = nil, name: String? = nil,
        disabled: Bool = false, createdAt: Date, metadata: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.appID = appID
        self.identities = identities
        self.email = email
        self.name = name
        self.disabled = disabled
        self.createdAt = createdAt
        self.metadata = metadata
    }

    /// ``metadata`` as the stores keep it (a JSON object), nil when empty.
    var metadataText: String? {
        guard !metadata.isEmpty, let data = try? Self.metadataEncoder.encode(metadata) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// ``metadata`` read back from what the stores keep (unreadable text: none).
    static func metadata(_ text: String?) -> [String: JSONValue] {
        guard let text else { return [:] }
        return (try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))) ?? [:]
    }

    private static var metadataEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// The identity of `providerType` named `id`, or nil.
    package func identity(_ providerType: String, id: String) -> StoredIdentity? {
        identities.first { $0.providerType == providerType && $0.id == id }
    }
}

/// A refresh token, kept as the SHA-256 digest of the token the client holds.
package struct StoredRefreshToken: Sendable, Hashable {
    /// Hex SHA-256 of the token.
    package var digest: String
    package var userID: String
    package var appID: String
    package var deviceID: String
    package var createdAt: Date
    package var expiresAt: Date
    package var revoked: Bool
    /// The API key whose login issued the token (nil for every other login): deleting or disabling
    /// the key revokes it.
    package var apiKeyID: String?

    package init(
        digest: String, userID: String, appID: String, deviceID: String, createdAt: Date, expiresAt: Date,
        revoked: Bool = false, apiKeyID: String? = nil
    ) {
        self.digest = digest
        self.userID = userID
        self.appID = appID
        self.deviceID = deviceID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revoked = revoked
        self.apiKeyID = apiKeyID
    }
}

/// A user API key, kept as the SHA-256 digest of the key the client holds.
package struct StoredAPIKey: Sendable, Hashable {
    package var id: String
    package var userID: String
    package var appID: String
    package var name: String
    /// Hex SHA-256 of the key.
    package var digest: String
    package var disabled: Bool
    package var createdAt: Date

    package init(
        id: String, userID: String, appID: String, name: String, digest: String, disabled: Bool = false,
        createdAt: Date
    ) {
        self.id = id
        self.userID = userID
        self.appID = appID
        self.name = name
        self.digest = digest
        self.disabled = disabled
        self.createdAt = createdAt
    }
}
