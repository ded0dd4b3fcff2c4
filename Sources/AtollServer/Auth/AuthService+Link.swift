import AtollCore
import Foundation

extension AuthService {
    /// What linking answers: a new access token for the same device, and the user as it is now.
    package struct LinkResult: Sendable, Equatable {
        package var accessToken: String
        package var user: StoredUser
    }

    /// Adds the identity of `request`'s credentials (provider `providerName`) to the user of
    /// `accessToken`: the user keeps its id and data (an anonymous user upgraded to an e-mail
    /// account). An e-mail identity registered but never used moves to the user with its own
    /// password; one already used by another user is refused, as App Services does. Linking
    /// never changes the password of an identity the user had.
    ///
    /// The access token's login must be live (``liveUser(forAccessToken:)``): a token kept after
    /// its device logged out cannot add a way in; nor can a login made with an API key (whoever
    /// holds a leaked key must not gain a password that outlives the key).
    /// - Throws: `ServerError`: `.badRequest` for anonymous or API key credentials, for an access
    ///   token of a login made with an API key and for an identity the user already has, `.accountNameInUse` for an identity of another user,
    ///   `.invalidCredentials`, `.userDisabled`, `.invalidToken` (also for a revoked login),
    ///   `.authProviderDisabled`, `.tooManyRequests` (failed e-mail links count as failed logins).
    package func link(accessToken: String, appID: String, providerName: String, request: LoginRequest,
                     clientAddress: String = "unknown") async throws -> LinkResult {
        let (user, deviceID, apiKeyID) = try await liveUser(forAccessToken: accessToken)
        guard user.appID == appID else { throw ServerError(.invalidToken, "the access token is for another app") }
        guard apiKeyID == nil else {
            throw ServerError(.badRequest, "a login made with an API key cannot link identities; log in with the user's own credentials")
        }
        let app = try await app(appID)
        guard let provider = AuthProvider(rawValue: providerName) else {
            throw ServerError(.authProviderDisabled, "there is no auth provider \"\(providerName)\"")
        }
        guard app.accepts(provider) else {
            throw ServerError(.authProviderDisabled, "the \(provider.rawValue) provider is off for this app")
        }
        let identity: StoredIdentity
        var absorbing: String?
        switch provider {
        case .anonymous:
            throw ServerError(.badRequest, "anonymous credentials cannot be linked to a user")
        case .apiKey:
            throw ServerError(.badRequest, "API key credentials cannot be linked: a key already belongs to its user")
        case .emailPassword:
            let owner = try await linkedEmailOwner(appID: appID, request: request, clientAddress: clientAddress)
            identity = StoredIdentity(id: Self.normalizedEmail(request.username ?? ""), providerType: provider.rawValue)
            absorbing = owner.id
        case .customToken:
            guard let token = request.token else { throw ServerError(.badRequest, "a custom-token link needs \"token\"") }
            let claims = try await customTokens.verify(token, appID: appID)
            // A token without a required metadata field links nothing, as it logs in no one.
            _ = try customTokens.metadata(of: token, appID: appID)
            identity = StoredIdentity(id: claims.sub.value, providerType: provider.rawValue)
        case .apple, .google:
            let claims = try await openIDClaims(provider: provider, appID: appID, request: request)
            identity = StoredIdentity(id: claims.sub.value, providerType: provider.rawValue)
        case .facebook:
            identity = StoredIdentity(id: try await facebookUser(appID: appID, request: request).id, providerType: provider.rawValue)
        case .customFunction:
            let answer = try await authenticationFunctionIdentity(appID: appID, payload: request.payload ?? [:])
            identity = StoredIdentity(id: answer.id, providerType: provider.rawValue)
        }
        if user.identities.contains(where: { $0.isSame(as: identity) }) {
            throw ServerError(.badRequest, "this identity is already linked to this user")
        }
        let linked: StoredUser
        do {
            linked = try await store.addIdentity(identity, toUser: user.id, absorbing: absorbing)
        } catch let error as ServerStoreError where error.code == .duplicateIdentity {
            throw ServerError(.accountNameInUse, "a user already exists with the specified provider")
        }
        logger.info("linked identity", metadata: ["app": "\(appID)", "user": "\(user.id)", "provider": "\(provider.rawValue)"])
        let token = try await issueAccessToken(for: linked, deviceID: deviceID, now: now())
        return LinkResult(accessToken: token, user: linked)
    }

    /// The registered user of an e-mail and password, checked like a login (a wrong password counts
    /// as a failed login of the account and the address).
    private func linkedEmailOwner(appID: String, request: LoginRequest, clientAddress: String) async throws -> StoredUser {
        guard let username = request.username, let password = request.password else {
            throw ServerError(.badRequest, "a local-userpass link needs \"username\" and \"password\"")
        }
        let account = "\(appID)/\(Self.normalizedEmail(username))"
        let time = now()
        for (limiter, key) in [(failedLoginsByAddress, clientAddress), (failedLoginsByAccount, account)] {
            if let wait = limiter.retryAfter(key, now: time) {
                throw ServerError(.tooManyRequests, "too many failed logins; try again in \(wait) s", retryAfter: wait)
            }
        }
        do {
            return try await authenticate(appID: appID, provider: .emailPassword, request: request).user
        } catch let error as ServerError where error.code == .invalidCredentials {
            failedLoginsByAddress.record(clientAddress, now: time)
            failedLoginsByAccount.record(account, now: time)
            throw error
        }
    }

    /// The checked claims of an `oauth2-apple` or `oauth2-google` request's ID token, or of the
    /// one Google gives for its server auth code.
    func openIDClaims(provider: AuthProvider, appID: String, request: LoginRequest) async throws -> OpenIDClaims {
        guard let idToken = request.idToken else {
            if provider == .google, let code = request.authCode {
                return try await googleAuthCodeClaims(appID: appID, code: code)
            }
            throw ServerError(.badRequest, "an \(provider.rawValue) login needs \"id_token\"")
        }
        return try await openIDTokens.verify(idToken, provider: provider, appID: appID, now: now())
    }

    // MARK: Server API keys

    /// A new server API key of `appID` (admin API): a user of its own, with an `api-key` identity
    /// named by the key's id, logs in with it (`Credentials.serverAPIKey`).
    /// - Throws: `ServerError(.badRequest)` for an empty or overlong name, `.appNotFound`.
    package func createServerAPIKey(appID: String, name: String) async throws -> CreatedAPIKey {
        _ = try await app(appID)
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 256 else {
            throw ServerError(.badRequest, "an API key needs a name of 1 to 256 characters")
        }
        let keyID = ObjectId.generate().stringValue
        let user = StoredUser(
            id: ObjectId.generate().stringValue, appID: appID,
            identities: [StoredIdentity(id: keyID, providerType: AuthProvider.apiKey.rawValue)], name: name, createdAt: now())
        try await store.createUser(user)
        let key = Secrets.token(byteCount: 48)
        try await store.insertAPIKey(StoredAPIKey(
            id: keyID, userID: user.id, appID: appID, name: name, digest: Secrets.digest(key), createdAt: now()))
        return CreatedAPIKey(id: keyID, key: key, name: name, disabled: false)
    }

    /// The server API keys of `appID`, with the id of the user each logs in as.
    package func serverAPIKeys(appID: String) async throws -> [(key: StoredAPIKey, userID: String)] {
        var keys: [(key: StoredAPIKey, userID: String)] = []
        for user in try await store.users(appID: appID) where user.identities.contains(where: { $0.providerType == AuthProvider.apiKey.rawValue }) {
            for key in try await store.apiKeys(userID: user.id) where user.identities.contains(where: { $0.id == key.id }) {
                keys.append((key: key, userID: user.id))
            }
        }
        return keys
    }

    /// Deletes a server API key with its user (and that user's sessions).
    /// - Throws: `ServerError(.apiKeyNotFound)`.
    package func deleteServerAPIKey(appID: String, id: String) async throws {
        guard let user = try await store.user(appID: appID, providerType: AuthProvider.apiKey.rawValue, identityID: id) else {
            throw Self.noSuchKey(id)
        }
        try await store.deleteUser(id: user.id)
        await revoked(userID: user.id, deviceID: nil, reason: "server API key \(id) was deleted")
    }
}
