import AtollCore
import Foundation

extension AuthService {
    /// The fields of every provider's login body; each provider reads its own.
    public struct LoginRequest: Sendable, Decodable {
        public var username: String?
        public var password: String?
        public var key: String?
        public var token: String?

        public init(username: String? = nil, password: String? = nil, key: String? = nil, token: String? = nil) {
            self.username = username
            self.password = password
            self.key = key
            self.token = token
        }
    }

    /// Logs in to `appID` through the provider named `providerName`.
    /// - Throws: `ServerError`: `.authProviderDisabled` for an unknown or disabled provider,
    ///   `.invalidCredentials`, `.userDisabled`, `.badRequest` for a missing field, `.appNotFound`.
    public func logIn(appID: String, providerName: String, request: LoginRequest) async throws -> Session {
        let app = try await app(appID)
        guard let provider = AuthProvider(rawValue: providerName) else {
            throw ServerError(.authProviderDisabled, "there is no auth provider \"\(providerName)\"")
        }
        guard app.accepts(provider) else {
            throw ServerError(.authProviderDisabled, "the \(provider.rawValue) provider is off for this app")
        }
        do {
            let user = try await authenticate(appID: appID, provider: provider, request: request)
            guard !user.disabled else { throw ServerError(.userDisabled, "this user is disabled") }
            let session = try await openSession(for: user)
            metrics.countLogin(provider: provider, succeeded: true)
            return session
        } catch {
            metrics.countLogin(provider: provider, succeeded: false)
            throw error
        }
    }

    func authenticate(appID: String, provider: AuthProvider, request: LoginRequest) async throws -> StoredUser {
        switch provider {
        case .anonymous:
            let user = StoredUser(
                id: ObjectId.generate().stringValue, appID: appID,
                identities: [StoredIdentity(id: ObjectId.generate().stringValue, providerType: provider.rawValue)],
                createdAt: now())
            try await store.createUser(user)
            return user

        case .emailPassword:
            guard let username = request.username, let password = request.password else {
                throw ServerError(.badRequest, "a local-userpass login needs \"username\" and \"password\"")
            }
            guard
                let user = try await store.user(
                    appID: appID, providerType: provider.rawValue, identityID: Self.normalizedEmail(username)),
                let hash = user.passwordHash, await hasher.verifyOffLoop(password, against: hash)
            else { throw ServerError(.invalidCredentials, "wrong email or password") }
            return user

        case .apiKey:
            guard let key = request.key else { throw ServerError(.badRequest, "an api-key login needs \"key\"") }
            guard let stored = try await store.apiKey(appID: appID, digest: Secrets.digest(key)), !stored.disabled,
                let user = try await store.user(id: stored.userID)
            else { throw ServerError(.invalidCredentials, "the API key is unknown or disabled") }
            return user

        case .customToken:
            guard let token = request.token else {
                throw ServerError(.badRequest, "a custom-token login needs \"token\"")
            }
            let claims = try await customTokens.verify(token, appID: appID)
            return try await user(appID: appID, externalID: claims.sub.value, name: claims.name, email: claims.email)
        }
    }

    /// The user with the custom-JWT identity `externalID`, created on its first login.
    func user(appID: String, externalID: String, name: String?, email: String?) async throws -> StoredUser {
        let provider = AuthProvider.customToken.rawValue
        if let user = try await store.user(appID: appID, providerType: provider, identityID: externalID) {
            return user
        }
        let user = StoredUser(
            id: ObjectId.generate().stringValue, appID: appID,
            identities: [StoredIdentity(id: externalID, providerType: provider)], email: email, name: name,
            createdAt: now())
        do {
            try await store.createUser(user)
            return user
        } catch let error as ServerStoreError where error.code == .duplicateIdentity {
            // Two first logins at once: the other one created the user.
            guard let user = try await store.user(appID: appID, providerType: provider, identityID: externalID) else {
                throw error
            }
            return user
        }
    }

    // MARK: Registration

    /// Registers an email/password user of `appID`.
    /// - Throws: `ServerError`: `.accountNameInUse`, `.invalidPassword` (fewer than 6 or more than 128
    ///   characters), `.badRequest` for an email without `@`, `.authProviderDisabled`, `.appNotFound`.
    public func register(appID: String, email: String, password: String) async throws {
        let app = try await app(appID)
        guard app.accepts(.emailPassword) else {
            throw ServerError(.authProviderDisabled, "the local-userpass provider is off for this app")
        }
        let email = Self.normalizedEmail(email)
        guard email.count <= 254, let at = email.firstIndex(of: "@"), at != email.startIndex,
            email.index(after: at) != email.endIndex
        else { throw ServerError(.badRequest, "\"email\" is not an email address") }
        guard (6...128).contains(password.count) else {
            throw ServerError(.invalidPassword, "a password has 6 to 128 characters")
        }
        let passwordHash = try await hasher.hashOffLoop(password)
        let user = StoredUser(
            id: ObjectId.generate().stringValue, appID: appID,
            identities: [StoredIdentity(id: email, providerType: AuthProvider.emailPassword.rawValue)], email: email,
            passwordHash: passwordHash, createdAt: now())
        do {
            try await store.createUser(user)
        } catch let error as ServerStoreError where error.code == .duplicateIdentity {
            throw ServerError(.accountNameInUse, "an account with this email exists")
        }
    }

    /// Emails are compared without case and surrounding spaces.
    static func normalizedEmail(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}
