import AtollCore
import Foundation

extension AuthService {
    /// The fields of every provider's login body; each provider reads its own.
    package struct LoginRequest: Sendable, Decodable {
        package var username: String?
        package var password: String?
        package var key: String?
        package var token: String?
        /// An OpenID Connect ID token (`oauth2-apple`, `oauth2-google`).
        package var idToken: String?
        /// A Google server auth code (`oauth2-google`).
        package var authCode: String?
        /// A Facebook user access token (`oauth2-facebook`).
        package var accessToken: String?
        /// The whole body but the SDK's `options`: a `custom-function` login's payload.
        package var payload: [String: JSONValue]?

        package init(username: String? = nil, password: String? = nil, key: String? = nil, token: String? = nil,
                    idToken: String? = nil, authCode: String? = nil, accessToken: String? = nil, payload: [String: JSONValue]? = nil) {
            self.accessToken = accessToken
            self.payload = payload
            self.username = username
            self.password = password
            self.key = key
            self.token = token
            self.idToken = idToken
            self.authCode = authCode
        }

        enum CodingKeys: String, CodingKey {
            case username, password, key, token, authCode, accessToken
            case idToken = "id_token"
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func text(_ key: CodingKeys) -> String? { (try? container.decodeIfPresent(String.self, forKey: key)) ?? nil }
            // A function payload may use these names for anything: only strings count here (a
            // provider missing its field refuses the login).
            self.init(username: text(.username), password: text(.password), key: text(.key), token: text(.token), idToken: text(.idToken), authCode: text(.authCode),
                      accessToken: text(.accessToken))
            payload = try? decoder.singleValueContainer().decode([String: JSONValue].self)
            payload?["options"] = nil
        }
    }

    /// Logs in to `appID` through the provider named `providerName`, from the IP address
    /// `clientAddress`.
    ///
    /// Failed logins are throttled per account and per address (``ServerConfiguration/Limits``): past
    /// the limit the login is refused with `.tooManyRequests` (HTTP 429 and `Retry-After`) before any
    /// password is checked. An unknown account costs a password check like a known one, so timing
    /// does not tell which accounts exist.
    /// - Throws: `ServerError`: `.authProviderDisabled` for an unknown or disabled provider,
    ///   `.invalidCredentials`, `.userDisabled`, `.badRequest` for a missing field, `.appNotFound`,
    ///   `.tooManyRequests`.
    package func logIn(appID: String, providerName: String, request: LoginRequest, clientAddress: String = "unknown") async throws -> Session {
        let app = try await app(appID)
        guard let provider = AuthProvider(rawValue: providerName) else {
            throw ServerError(.authProviderDisabled, "there is no auth provider \"\(providerName)\"")
        }
        guard app.accepts(provider) else {
            throw ServerError(.authProviderDisabled, "the \(provider.rawValue) provider is off for this app")
        }
        let account = request.username.map { "\(appID)/\(Self.normalizedEmail($0))" }
        let time = now()
        for (limiter, key, limit) in [(failedLoginsByAddress, clientAddress, "failedLoginsPerAddress"),
                                      (failedLoginsByAccount, account, "failedLoginsPerAccount")] {
            guard let key, let wait = limiter.retryAfter(key, now: time) else { continue }
            metrics.countRefusal(limit: limit)
            metrics.countLogin(provider: provider, succeeded: false)
            logger.notice("login throttled", metadata: ["app": "\(appID)", "limit": "\(limit)", "address": "\(clientAddress)"])
            throw ServerError(.tooManyRequests, "too many failed logins; try again in \(wait) s", retryAfter: wait)
        }
        if provider == .anonymous { try countNewUser(appID: appID, clientAddress: clientAddress, at: time) }
        // Counted as failures up front, so concurrent attempts cannot all slip under the limit;
        // taken back unless the credentials were wrong.
        failedLoginsByAddress.record(clientAddress, now: time)
        if let account { failedLoginsByAccount.record(account, now: time) }
        do {
            let (user, apiKeyID) = try await authenticate(appID: appID, provider: provider, request: request)
            guard !user.disabled else { throw ServerError(.userDisabled, "this user is disabled") }
            let session = try await openSession(for: user, apiKeyID: apiKeyID)
            metrics.countLogin(provider: provider, succeeded: true)
            failedLoginsByAddress.forget(clientAddress, at: time)
            if let account { failedLoginsByAccount.reset(account) }
            return session
        } catch {
            metrics.countLogin(provider: provider, succeeded: false)
            if (error as? ServerError)?.code != .invalidCredentials {
                failedLoginsByAddress.forget(clientAddress, at: time)
                if let account { failedLoginsByAccount.forget(account, at: time) }
            }
            throw error
        }
    }

    /// The user `request`'s credentials name, with the API key they are (nil for other providers).
    func authenticate(appID: String, provider: AuthProvider, request: LoginRequest) async throws -> (user: StoredUser, apiKeyID: String?) {
        switch provider {
        case .anonymous:
            let user = StoredUser(
                id: ObjectId.generate().stringValue, appID: appID,
                identities: [StoredIdentity(id: ObjectId.generate().stringValue, providerType: provider.rawValue)],
                createdAt: now())
            try await store.createUser(user)
            return (user, nil)

        case .emailPassword:
            guard let username = request.username, let password = request.password else {
                throw ServerError(.badRequest, "a local-userpass login needs \"username\" and \"password\"")
            }
            let email = Self.normalizedEmail(username)
            let user = try await store.user(appID: appID, providerType: provider.rawValue, identityID: email)
            // The password of this address's identity: a user's other e-mail identities have their own.
            let passwordHash = user?.identity(provider.rawValue, id: email)?.passwordHash
            // A registration waiting for confirmation cannot log in yet (AuthService+Email).
            var pending: StoredPendingUser?
            if user == nil { pending = try await unexpiredPendingUser(appID: appID, email: email) }
            // An unknown account is checked against a decoy: it costs the same time as a known one.
            let matches = try await hasher.verifyOffLoop(password, against: passwordHash ?? pending?.passwordHash ?? decoyHash)
            if pending != nil, matches { throw ServerError(.authError, "confirmation required") }
            guard let user, passwordHash != nil, matches else {
                // App Services' own answer; which of the two was wrong goes to the log only.
                logger.info("login refused: invalid username/password", metadata: ["app": "\(appID)"])
                throw ServerError(.invalidCredentials, "unauthorized")
            }
            return (user, nil)

        case .apiKey:
            guard let key = request.key else { throw ServerError(.badRequest, "an api-key login needs \"key\"") }
            guard let stored = try await store.apiKey(appID: appID, digest: Secrets.digest(key)), !stored.disabled,
                let user = try await store.user(id: stored.userID)
            else { throw ServerError(.invalidCredentials, "the API key is unknown or disabled") }
            return (user, stored.id)

        case .customToken:
            guard let token = request.token else {
                throw ServerError(.badRequest, "a custom-token login needs \"token\"")
            }
            let claims = try await customTokens.verify(token, appID: appID)
            let metadata = try customTokens.metadata(of: token, appID: appID)
            var user = try await user(appID: appID, externalID: claims.sub.value, name: claims.name, email: claims.email, metadata: metadata)
            // Each login brings the token's metadata, as App Services refreshes it.
            if user.metadata != metadata {
                try await store.setUserMetadata(id: user.id, metadata)
                user.metadata = metadata
            }
            return (user, nil)

        case .apple, .google:
            let claims = try await openIDClaims(provider: provider, appID: appID, request: request)
            return (try await user(appID: appID, externalID: claims.sub.value, name: claims.name, email: claims.email, provider: provider), nil)

        case .facebook:
            let facebook = try await facebookUser(appID: appID, request: request)
            let metadata = facebook.pictureURL.map { ["picture_url": JSONValue.string($0)] } ?? [:]
            var user = try await user(appID: appID, externalID: facebook.id, name: facebook.name, email: facebook.email,
                                      provider: provider, metadata: metadata)
            // Each login brings the current picture, as App Services refreshed the profile.
            if user.metadata != metadata {
                try await store.setUserMetadata(id: user.id, metadata)
                user.metadata = metadata
            }
            return (user, nil)

        case .customFunction:
            let identity = try await authenticationFunctionIdentity(appID: appID, payload: request.payload ?? [:])
            return (try await user(appID: appID, externalID: identity.id, name: identity.name, email: nil, provider: provider), nil)
        }
    }

    /// The user with the identity `externalID` of `provider` (a custom JWT's or an ID token's
    /// `sub`), created on its first login.
    func user(appID: String, externalID: String, name: String?, email: String?,
              provider authProvider: AuthProvider = .customToken, metadata: [String: JSONValue] = [:]) async throws -> StoredUser {
        let provider = authProvider.rawValue
        if let user = try await store.user(appID: appID, providerType: provider, identityID: externalID) {
            return user
        }
        let user = StoredUser(
            id: ObjectId.generate().stringValue, appID: appID,
            identities: [StoredIdentity(id: externalID, providerType: provider)], email: email, name: name,
            createdAt: now(), metadata: metadata)
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

    /// Registers an email/password user of `appID`. As in App Services, the "email" is the user's
    /// name: any non-empty text (at most 254 bytes), compared without case and surrounding spaces;
    /// it need not look like an address.
    /// - Throws: `ServerError`: `.accountNameInUse` ("name already in use"), `.invalidPassword`
    ///   (fewer than 6 or more than 128 characters), `.badRequest` for an empty or overlong name,
    ///   `.authProviderDisabled`, `.appNotFound`, `.tooManyRequests` past
    ///   ``ServerConfiguration/Limits/newUsersPerAddressPerHour`` from `clientAddress`.
    package func register(appID: String, email: String, password: String, clientAddress: String = "unknown") async throws {
        let app = try await app(appID)
        guard app.accepts(.emailPassword) else {
            throw ServerError(.authProviderDisabled, "the local-userpass provider is off for this app")
        }
        try countNewUser(appID: appID, clientAddress: clientAddress, at: now())
        let email = Self.normalizedEmail(email)
        guard !email.isEmpty, email.utf8.count <= 254 else {
            throw ServerError(.badRequest, "a user name has 1 to 254 bytes")
        }
        guard (6...128).contains(password.count) else {
            throw ServerError(.invalidPassword, "a password has 6 to 128 characters")
        }
        let passwordHash = try await hasher.hashOffLoop(password)
        if app.emailPassword.confirmation != .automatic {
            try await registerPending(app: app, email: email, passwordHash: passwordHash)
            return
        }
        if let pending = try await store.pendingUser(appID: appID, email: email) {
            // Left from when the app confirmed accounts: the name is taken until it expires.
            guard pending.createdAt < pendingRegistrationCutoff(appID: appID) else {
                throw ServerError(.accountNameInUse, "name already in use")
            }
            try await store.deletePendingUser(appID: appID, email: email)
        }
        let user = StoredUser(
            id: ObjectId.generate().stringValue, appID: appID,
            identities: [StoredIdentity(id: email, providerType: AuthProvider.emailPassword.rawValue, passwordHash: passwordHash)],
            email: email, createdAt: now())
        do {
            try await store.createUser(user)
        } catch let error as ServerStoreError where error.code == .duplicateIdentity {
            throw ServerError(.accountNameInUse, "name already in use")
        }
    }

    /// Counts a user made from `clientAddress` (before any work is done for it, so concurrent
    /// sign-ups cannot all slip under the limit), or refuses it past the limit.
    func countNewUser(appID: String, clientAddress: String, at time: Date) throws {
        if let wait = newUsersByAddress.retryAfter(clientAddress, now: time) {
            metrics.countRefusal(limit: "newUsersPerAddressPerHour")
            logger.notice("new users throttled", metadata: ["app": "\(appID)", "address": "\(clientAddress)"])
            throw ServerError(.tooManyRequests, "too many new users from this address; try again in \(wait) s", retryAfter: wait)
        }
        newUsersByAddress.record(clientAddress, now: time)
    }

    /// Emails are compared without case and surrounding spaces.
    static func normalizedEmail(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}
