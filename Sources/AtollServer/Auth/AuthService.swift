import AtollCore
import Foundation
import Logging

/// Apps, users, logins and tokens: what the HTTP API does, without HTTP.
///
/// Every method takes and returns values and throws ``ServerError`` for what the client did wrong, so the
/// routes only translate between JSON and these calls.
package struct AuthService: Sendable {
    package let store: any ServerStore
    package let configuration: ServerConfiguration
    /// The apps served: the configuration file's and those added at run time. Read an app's
    /// settings here, not from ``configuration``.
    package let apps: AppRegistry
    package let accessTokens: AccessTokens
    let customTokens: CustomTokens
    /// Sign in with Apple and Google ID tokens.
    let openIDTokens: OpenIDTokens
    let hasher: PasswordHasher
    /// A hash of a random password: the password of an unknown account is checked against it.
    let decoyHash: String
    let failedLoginsByAccount: RateLimiter
    let failedLoginsByAddress: RateLimiter
    /// Apps created in development mode.
    let newApps: RateLimiter
    /// Users created per address (registrations, anonymous logins), over an hour.
    let newUsersByAddress: RateLimiter
    /// Confirmation and reset requests per client address, over an hour.
    let accountEmailsByAddress: RateLimiter
    let metrics: ServerMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    /// Ends the sync sessions of a user (of one device, or all) whose tokens were revoked.
    let endSyncSessions: @Sendable (_ userID: String, _ deviceID: String?, _ reason: String) async -> Void
    /// Request counts and the webhook client of e-mail confirmation and password reset.
    let emailAccounts = EmailAccountState()
    /// Calls in flight and the webhook client of the app's functions (AuthService+Functions).
    let functionCalls = FunctionCalls()
    /// Reads a user's custom data object from the app's synced data (``CustomUserDataReader``).
    let readCustomUserData: CustomUserDataReader
    /// Logins (devices) recently found live: an access token's login is checked on each bind,
    /// link and user deletion (``liveUser(forAccessToken:)``).
    let liveLogins: LiveLoginCache
    /// Which address a request counts under for per-address limits (``ServerConfiguration/trustedProxies``).
    let clientAddresses: ClientAddressResolver

    init(
        store: any ServerStore, configuration: ServerConfiguration, secret: String, metrics: ServerMetrics,
        logger: Logger, now: @escaping @Sendable () -> Date = { Date() },
        endSyncSessions: @escaping @Sendable (_ userID: String, _ deviceID: String?, _ reason: String) async -> Void = { _, _, _ in },
        readCustomUserData: @escaping CustomUserDataReader = { _, _, _ in nil },
        liveLogins: LiveLoginCache = LiveLoginCache(),
        apps: AppRegistry? = nil
    ) async throws {
        let apps = apps ?? AppRegistry(configuration.apps)
        self.apps = apps
        self.endSyncSessions = endSyncSessions
        self.liveLogins = liveLogins
        self.clientAddresses = configuration.clientAddresses
        self.readCustomUserData = readCustomUserData
        self.store = store
        self.configuration = configuration
        self.accessTokens = await AccessTokens(secret: secret, lifetime: configuration.accessTokenLifetime)
        self.customTokens = try await CustomTokens(apps: apps.apps)
        self.openIDTokens = try await OpenIDTokens(apps: apps.apps)
        let hasher = PasswordHasher(rounds: configuration.passwordHashRounds, concurrency: configuration.limits.concurrentPasswordHashes)
        self.hasher = hasher
        // Unknown accounts are checked against this, so they cost what known ones cost.
        self.decoyHash = try await hasher.hashOffLoop(Secrets.token())
        self.failedLoginsByAccount = RateLimiter(limit: configuration.limits.failedLoginsPerAccount, window: 60)
        self.failedLoginsByAddress = RateLimiter(limit: configuration.limits.failedLoginsPerAddress, window: 60)
        self.newApps = RateLimiter(limit: configuration.limits.newAppsPerMinute, window: 60)
        self.newUsersByAddress = RateLimiter(limit: configuration.limits.newUsersPerAddressPerHour, window: 3600)
        self.accountEmailsByAddress = RateLimiter(limit: configuration.limits.accountEmailsPerAddressPerHour, window: 3600)
        self.metrics = metrics
        self.logger = logger
        self.now = now
        for app in apps.apps {
            try await store.createApp(StoredApp(id: app.id, createdAt: now()))
        }
    }

    // MARK: Apps

    /// The settings of app `id`, creating it in development mode.
    /// - Throws: `ServerError(.appNotFound)` for an unknown app outside development mode.
    package func app(_ id: String) async throws -> ServerConfiguration.App {
        if let declared = apps.app(id: id) { return declared }
        // Outside development mode only declared apps are served. An app with data here but no
        // settings (created in development mode, or its runtime configuration file removed) would
        // have no rules: everyone reading and writing everything. The start logs such apps.
        guard configuration.developmentMode else { throw ServerError(.appNotFound, "there is no app \"\(id)\"") }
        if try await store.app(id: id) == nil {
            guard !id.isEmpty, id.count <= 128 else { throw ServerError(.badRequest, "invalid app id") }
            if let wait = newApps.retryAfter("", now: now()) {
                metrics.countRefusal(limit: "newAppsPerMinute")
                logger.notice("new app refused: too many new apps this minute", metadata: ["app": "\(id)"])
                throw ServerError(.tooManyRequests, "too many new apps this minute (development mode)", retryAfter: wait)
            }
            newApps.record("", now: now())
            try await store.createApp(StoredApp(id: id, createdAt: now()))
            logger.info("created app in development mode", metadata: ["app": "\(id)"])
        }
        return apps.settings(forApp: id)
    }

    // MARK: Sessions

    /// What a login answers.
    package struct Session: Sendable, Equatable {
        package var accessToken: String
        package var refreshToken: String
        package var userID: String
        package var deviceID: String
    }

    /// Starts a session for `user`: a new refresh token (stored hashed) and an access token.
    /// `apiKeyID` names the API key the user logged in with: deleting or disabling it revokes the session.
    func openSession(for user: StoredUser, apiKeyID: String? = nil) async throws -> Session {
        let refreshToken = Secrets.token()
        let deviceID = ObjectId.generate().stringValue
        let issued = now()
        try await store.insertRefreshToken(
            StoredRefreshToken(
                digest: Secrets.digest(refreshToken), userID: user.id, appID: user.appID, deviceID: deviceID,
                createdAt: issued, expiresAt: issued.addingTimeInterval(configuration.refreshTokenLifetime), apiKeyID: apiKeyID))
        let accessToken = try await issueAccessToken(for: user, deviceID: deviceID, apiKeyID: apiKeyID, now: issued)
        return Session(accessToken: accessToken, refreshToken: refreshToken, userID: user.id, deviceID: deviceID)
    }

    /// The user a refresh token belongs to.
    /// - Throws: `ServerError(.invalidToken)` for an unknown, revoked or expired token, `.userDisabled`.
    package func user(forRefreshToken token: String) async throws -> StoredUser {
        try await login(forRefreshToken: token).user
    }

    /// The user and the stored login of a refresh token.
    func login(forRefreshToken token: String) async throws -> (user: StoredUser, token: StoredRefreshToken) {
        guard let stored = try await store.refreshToken(digest: Secrets.digest(token)), !stored.revoked,
            stored.expiresAt > now(), let user = try await store.user(id: stored.userID)
        else { throw ServerError(.invalidToken, "the refresh token is invalid, expired or revoked") }
        guard !user.disabled else { throw ServerError(.userDisabled, "this user is disabled") }
        if let keyID = stored.apiKeyID {
            // A login with an API key lasts as long as the key.
            guard let key = try await store.apiKey(id: keyID, userID: user.id), !key.disabled else {
                throw ServerError(.invalidToken, "the refresh token is invalid, expired or revoked")
            }
        }
        return (user, stored)
    }

    /// The user an access token belongs to.
    /// - Throws: `ServerError(.invalidToken)` for a forged or expired token or a removed user, `.userDisabled`.
    package func user(forAccessToken token: String) async throws -> StoredUser {
        try await user(for: try await accessTokens.verify(token, now: now()))
    }

    private func user(for claims: AccessTokenClaims) async throws -> StoredUser {
        guard let user = try await store.user(id: claims.sub.value), user.appID == claims.app else {
            throw ServerError(.invalidToken, "the access token's user no longer exists")
        }
        guard !user.disabled else { throw ServerError(.userDisabled, "this user is disabled") }
        return user
    }

    /// The user an access token belongs to, when the login (device) the token was issued to is
    /// still live: not logged out, not revoked. What may change an account or bind a sync session
    /// asks this, not ``user(forAccessToken:)``: an access token outlives its logout by up to its
    /// lifetime, and a stolen one must not outlive the session it was stolen from.
    /// - Throws: as ``user(forAccessToken:)``, and `ServerError(.invalidToken)` for a token whose
    ///   login was revoked or that names none.
    func liveUser(forAccessToken token: String) async throws -> (user: StoredUser, deviceID: String, apiKeyID: String?) {
        let claims = try await accessTokens.verify(token, now: now())
        let user = try await user(for: claims)
        guard let deviceID = claims.dev, try await isLive(deviceID: deviceID, userID: user.id) else {
            throw ServerError(.invalidToken, "the access token's login was revoked (logged out); log in again")
        }
        return (user, deviceID, claims.api_key)
    }

    /// Whether the login `deviceID` of `userID` is live (``LiveLoginCache``, then the store).
    func isLive(deviceID: String, userID: String) async throws -> Bool {
        let time = now()
        if let live = liveLogins.isLive(deviceID: deviceID, now: time) { return live }
        let generation = liveLogins.generation
        let live = try await store.liveDevices([deviceID]).contains(deviceID)
        liveLogins.record(deviceID: deviceID, userID: userID, live: live, now: time, readSince: generation)
        return live
    }

    /// After logins of `userID` were revoked (of `deviceID`, or all): forgets them here and ends
    /// their sync sessions on every node.
    func revoked(userID: String, deviceID: String?, reason: String) async {
        liveLogins.forget(userID: userID, deviceID: deviceID)
        await endSyncSessions(userID, deviceID, reason)
    }

    /// A new access token for the holder of a refresh token.
    package func refreshAccessToken(refreshToken: String) async throws -> String {
        let (user, stored) = try await login(forRefreshToken: refreshToken)
        return try await issueAccessToken(for: user, deviceID: stored.deviceID, apiKeyID: stored.apiKeyID, now: now())
    }

    /// Revokes a refresh token (log out) and ends the sync sessions of its device.
    package func logOut(refreshToken: String) async throws {
        let digest = Secrets.digest(refreshToken)
        guard let stored = try await store.refreshToken(digest: digest), try await store.revokeRefreshToken(digest: digest) else {
            throw ServerError(.invalidToken, "the refresh token is invalid or already revoked")
        }
        await revoked(userID: stored.userID, deviceID: stored.deviceID, reason: "user \(stored.userID) logged out on this device")
    }

    /// Deletes the user an access token belongs to, with its tokens and API keys. The token's
    /// login must be live (``liveUser(forAccessToken:)``).
    package func deleteUser(accessToken: String) async throws {
        let (user, _, _) = try await liveUser(forAccessToken: accessToken)
        try await store.deleteUser(id: user.id)
        await revoked(userID: user.id, deviceID: nil, reason: "user \(user.id) was deleted")
        logger.info("deleted user", metadata: ["app": "\(user.appID)", "user": "\(user.id)"])
    }

    /// Disables or enables a user; disabling revokes its refresh tokens.
    /// - Throws: `ServerError(.userNotFound)`.
    package func setUserDisabled(_ userID: String, disabled: Bool) async throws {
        guard try await store.setUserDisabled(id: userID, disabled: disabled) else {
            throw ServerError(.userNotFound, "there is no user \(userID)")
        }
        if disabled {
            try await store.revokeRefreshTokens(userID: userID)
            await revoked(userID: userID, deviceID: nil, reason: "user \(userID) was disabled by an operator")
        } else {
            liveLogins.forget(userID: userID, deviceID: nil)
        }
    }
}
