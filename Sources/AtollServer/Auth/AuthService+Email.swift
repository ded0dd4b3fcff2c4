import AtollCore
import Foundation
import Logging

/// What e-mail/password confirmation and reset keep in memory: request counts per address and
/// the webhook client.
final class EmailAccountState: Sendable {
    let webhooks: WebhookClient
    /// Per app (its limit may differ), requests per e-mail address in the last hour.
    private let limiters = Locked<[String: RateLimiter]>([:])

    init(webhooks: WebhookClient = .shared) {
        self.webhooks = webhooks
    }

    func limiter(appID: String, limit: Int) -> RateLimiter {
        limiters.withLock { limiters in
            if let known = limiters[appID], known.limit == limit { return known }
            let limiter = RateLimiter(limit: limit, window: 3600)
            limiters[appID] = limiter
            return limiter
        }
    }
}

/// E-mail/password confirmation and password reset, as App Services had them (docs/server.md, "E-mail/password
/// accounts"): tokens random, stored hashed, single-use, expiring, at most ``tokensKept`` per address
/// and purpose; handed to the app's delivery webhook (and, in development mode, to the log).
///
/// Unknown addresses are answered as App Services answered them (`UserNotFound`); registration tells
/// whether a name is taken anyway, so these endpoints reveal nothing more. Every request counts
/// against its address's hourly limit, known or not.
extension AuthService {
    /// Unexpired tokens kept per address and purpose: a new one pushes out the oldest.
    static let tokensKept = 3

    /// The status a confirmation or reset function answers with.
    enum FunctionStatus: String, Decodable {
        case success, pending, fail
    }

    // MARK: Confirmation

    /// A registration waiting for confirmation: by a delivered token, or by the confirmation function.
    /// It expires after ``ServerConfiguration/EmailPassword/pendingLifetime``: then the name is free
    /// again, and the tokens sent for it are forgotten when it is registered anew.
    func registerPending(app: ServerConfiguration.App, email: String, passwordHash: String) async throws {
        do {
            try await store.insertPendingUser(StoredPendingUser(appID: app.id, email: email, passwordHash: passwordHash, createdAt: now()),
                                              expiredBefore: pendingRegistrationCutoff(appID: app.id))
        } catch let error as ServerStoreError where error.code == .duplicateIdentity {
            throw ServerError(.accountNameInUse, "name already in use")
        }
        logger.info("registered user pending confirmation", metadata: ["app": "\(app.id)"])
        switch app.emailPassword.confirmation {
        case .automatic: return
        case .token: try await sendToken(app: app, email: email, purpose: .confirm)
        case .function: try await runConfirmationFunction(app: app, email: email)
        }
    }

    /// Confirms the registration a confirmation token was made for.
    /// - Throws: `ServerError(.badRequest)` for an unknown, used, expired or forged token,
    ///   `.userAlreadyConfirmed`.
    package func confirmUser(appID: String, token: String, tokenID: String) async throws {
        _ = try await emailApp(appID)
        guard let taken = try await store.takeAccountToken(
            appID: appID, tokenID: tokenID, digest: Secrets.digest(token), purpose: .confirm, now: now())
        else { throw Self.badToken }
        try await confirm(appID: appID, email: taken.email, tokenMadeAt: taken.createdAt)
    }

    /// Registrations of `appID` made before this are expired.
    func pendingRegistrationCutoff(appID: String) -> Date {
        now().addingTimeInterval(-apps.settings(forApp: appID).emailPassword.pendingLifetime)
    }

    /// The registration of `email` waiting for confirmation, unless it expired.
    func unexpiredPendingUser(appID: String, email: String) async throws -> StoredPendingUser? {
        guard let pending = try await store.pendingUser(appID: appID, email: email),
              pending.createdAt >= pendingRegistrationCutoff(appID: appID)
        else { return nil }
        return pending
    }

    /// Sends a new confirmation token to a pending registration's delivery.
    /// - Throws: `ServerError`: `.userNotFound`, `.userAlreadyConfirmed`, `.badRequest` when the
    ///   app does not confirm by token, `.tooManyRequests`.
    package func resendConfirmation(appID: String, email: String, clientAddress: String = "unknown") async throws {
        let app = try await emailApp(appID)
        let email = Self.normalizedEmail(email)
        try countRequest(app: app, email: email, clientAddress: clientAddress)
        // As App Services: an unknown or confirmed user is said so whatever the confirmation mode.
        try await requirePending(appID: appID, email: email)
        guard app.emailPassword.confirmation == .token else {
            throw ServerError(.badRequest, "this app does not confirm users by token (confirmation is \(app.emailPassword.confirmation.rawValue))")
        }
        try await sendToken(app: app, email: email, purpose: .confirm)
    }

    /// Runs the confirmation function again for a pending registration.
    /// - Throws: as ``resendConfirmation(appID:email:)``, and `.authError` when the function refuses.
    package func retryCustomConfirmation(appID: String, email: String, clientAddress: String = "unknown") async throws {
        let app = try await emailApp(appID)
        let email = Self.normalizedEmail(email)
        try countRequest(app: app, email: email, clientAddress: clientAddress)
        guard app.emailPassword.confirmation == .function else {
            // App Services' message (realm-swift's tests compare it), Atoll's wording of the mode.
            let mode = switch app.emailPassword.confirmation {
            case .automatic: "automatic confirmation is enabled"
            default: "confirmation is by \(app.emailPassword.confirmation.rawValue), not by a function"
            }
            throw ServerError(.unknown, "cannot run confirmation for \(email): \(mode)")
        }
        try await requirePending(appID: appID, email: email)
        try await runConfirmationFunction(app: app, email: email)
    }

    private func runConfirmationFunction(app: ServerConfiguration.App, email: String) async throws {
        let made = now()
        let (token, tokenID) = try await newToken(appID: app.id, email: email, purpose: .confirm)
        let status = try await callFunction(
            app: app, url: app.emailPassword.confirmationFunctionURL ?? "",
            WebhookBody(purpose: .confirm, appId: app.id, username: email, token: token, tokenId: tokenID), what: "confirmation")
        switch status {
        case .success:
            try await confirm(appID: app.id, email: email, tokenMadeAt: made)
        case .pending:
            logger.info("confirmation pending", metadata: ["app": "\(app.id)"])
        case .fail:
            try await store.deletePendingUser(appID: app.id, email: email)
            throw ServerError(.authError, "the confirmation function refused the user")
        }
    }

    /// Makes the user of the registration of `email` that a token made at `tokenMadeAt` was sent
    /// for: the registration must be unexpired and older than the token (a token outliving its
    /// registration never confirms a later one, whose password someone else chose).
    private func confirm(appID: String, email: String, tokenMadeAt: Date) async throws {
        let user = StoredUser(
            id: ObjectId.generate().stringValue, appID: appID,
            identities: [StoredIdentity(id: email, providerType: AuthProvider.emailPassword.rawValue)], email: email, createdAt: now())
        let cutoff = pendingRegistrationCutoff(appID: appID)
        // The token is older than the oldest registration still pending: the one it was sent for expired.
        guard cutoff <= tokenMadeAt else { throw Self.badToken }
        do {
            guard try await store.confirmPendingUser(appID: appID, email: email, as: user, registered: cutoff...tokenMadeAt) != nil else {
                throw try await store.user(appID: appID, providerType: AuthProvider.emailPassword.rawValue, identityID: email) != nil
                    ? ServerError(.userAlreadyConfirmed, "already confirmed") : Self.badToken
            }
        } catch let error as ServerStoreError where error.code == .duplicateIdentity {
            throw ServerError(.userAlreadyConfirmed, "already confirmed")
        }
        logger.info("confirmed user", metadata: ["app": "\(appID)", "user": "\(user.id)"])
    }

    private func requirePending(appID: String, email: String) async throws {
        guard try await unexpiredPendingUser(appID: appID, email: email) == nil else { return }
        if try await store.user(appID: appID, providerType: AuthProvider.emailPassword.rawValue, identityID: email) != nil {
            throw ServerError(.userAlreadyConfirmed, "already confirmed")
        }
        throw ServerError(.userNotFound, "user not found")
    }

    // MARK: Password reset

    /// Sends a reset token to the delivery for the user named `email`.
    /// - Throws: `ServerError`: `.userNotFound`, `.badRequest` when the app has no delivery,
    ///   `.tooManyRequests`.
    package func sendPasswordReset(appID: String, email: String, clientAddress: String = "unknown") async throws {
        let app = try await emailApp(appID)
        let email = Self.normalizedEmail(email)
        try countRequest(app: app, email: email, clientAddress: clientAddress)
        guard app.emailPassword.deliveryURL != nil || configuration.developmentMode else {
            throw ServerError(.badRequest, "this app has no delivery for reset tokens (emailPassword.deliveryURL)")
        }
        _ = try await emailUser(appID: appID, email: email)
        try await sendToken(app: app, email: email, purpose: .reset)
    }

    /// Sets a new password with a reset token, for that e-mail identity only. Every refresh token
    /// of the user is revoked and its sync sessions end, as after a password change anywhere: a
    /// stolen session dies with the old password, and so do the sessions opened with the user's
    /// API keys. The keys themselves stay, as in App Services (a revoked refresh token cannot make
    /// a new one; the user reviews them in `user.apiKeys`).
    /// - Throws: `ServerError`: `.invalidPassword`, `.badRequest` for a bad token, `.userNotFound`.
    package func resetPassword(appID: String, token: String, tokenID: String, password: String) async throws {
        _ = try await emailApp(appID)
        try Self.checkPassword(password)
        guard let taken = try await store.takeAccountToken(
            appID: appID, tokenID: tokenID, digest: Secrets.digest(token), purpose: .reset, now: now())
        else { throw Self.badToken }
        try await setPassword(appID: appID, email: taken.email, password: password)
    }

    /// Asks the app's reset function whether `email` may set `password`; `arguments` go with the
    /// question. Success sets it; pending leaves a reset token with the function (the app then
    /// calls `resetPassword(to:token:tokenId:)`); fail refuses.
    /// - Throws: `ServerError`: `.userNotFound`, `.invalidPassword`, `.authError` when the function
    ///   refuses, `.badRequest` when the app has no reset function, `.tooManyRequests`,
    ///   `.internalError` when the function does not answer.
    package func callResetFunction(appID: String, email: String, password: String, arguments: [JSONValue],
                                  clientAddress: String = "unknown") async throws {
        let app = try await emailApp(appID)
        let email = Self.normalizedEmail(email)
        try countRequest(app: app, email: email, clientAddress: clientAddress)
        guard let url = app.emailPassword.resetFunctionURL else {
            throw ServerError(.badRequest, "this app has no reset function (emailPassword.resetFunctionURL)")
        }
        try Self.checkPassword(password)
        _ = try await emailUser(appID: appID, email: email)
        let (token, tokenID) = try await newToken(appID: appID, email: email, purpose: .reset)
        let status: FunctionStatus
        do {
            status = try await callFunction(
                app: app, url: url,
                WebhookBody(purpose: .reset, appId: appID, username: email, token: token, tokenId: tokenID, arguments: arguments), what: "reset")
        } catch {
            // A function that failed or answered badly is in the log; App Services answers the same for both.
            try await store.deleteAccountTokens(appID: appID, email: email, purpose: .reset)
            throw Self.resetFailed(email)
        }
        switch status {
        case .success:
            guard try await store.takeAccountToken(appID: appID, tokenID: tokenID, digest: Secrets.digest(token), purpose: .reset, now: now())
                != nil else { throw Self.badToken }
            try await setPassword(appID: appID, email: email, password: password)
        case .pending:
            logger.info("password reset pending", metadata: ["app": "\(appID)"])
        case .fail:
            try await store.deleteAccountTokens(appID: appID, email: email, purpose: .reset)
            logger.info("the reset function refused the password reset", metadata: ["app": "\(appID)"])
            throw Self.resetFailed(email)
        }
    }

    private func setPassword(appID: String, email: String, password: String) async throws {
        let user = try await emailUser(appID: appID, email: email)
        let hash = try await hasher.hashOffLoop(password)
        guard try await store.setPasswordHash(appID: appID, email: email, hash) else { throw ServerError(.userNotFound, "user not found") }
        try await store.deleteAccountTokens(appID: appID, email: email, purpose: .reset)
        try await store.revokeRefreshTokens(userID: user.id)
        failedLoginsByAccount.reset("\(appID)/\(email)")
        await revoked(userID: user.id, deviceID: nil, reason: "the password of user \(user.id) was reset")
        logger.info("password reset", metadata: ["app": "\(appID)", "user": "\(user.id)"])
    }

    // MARK: Shared

    /// App Services' answer to a confirmation or reset token it does not take (unknown, expired or
    /// already used: the log says so, the client only that the token is bad).
    static let badToken = ServerError(.badRequest, "invalid token data")

    /// App Services' answer when the reset function refuses or fails.
    static func resetFailed(_ email: String) -> ServerError { ServerError(.unknown, "failed to reset password for user \"\(email)\"") }

    static func checkPassword(_ password: String) throws {
        guard (6...128).contains(password.count) else {
            throw ServerError(.invalidPassword, "a password has 6 to 128 characters")
        }
    }

    /// The app, when its e-mail/password provider is on.
    func emailApp(_ appID: String) async throws -> ServerConfiguration.App {
        let app = try await app(appID)
        guard app.accepts(.emailPassword) else {
            throw ServerError(.authProviderDisabled, "the local-userpass provider is off for this app")
        }
        return app
    }

    private func emailUser(appID: String, email: String) async throws -> StoredUser {
        guard let user = try await store.user(appID: appID, providerType: AuthProvider.emailPassword.rawValue, identityID: email) else {
            throw ServerError(.userNotFound, "user not found")
        }
        return user
    }

    /// Counts a request against its e-mail address's hourly limit, known address or not, and
    /// against the hourly limit of the client address it came from.
    private func countRequest(app: ServerConfiguration.App, email: String, clientAddress: String) throws {
        guard !email.isEmpty, email.utf8.count <= 254 else { throw ServerError(.badRequest, "a user name has 1 to 254 bytes") }
        let limiter = emailAccounts.limiter(appID: app.id, limit: app.emailPassword.requestsPerAddressPerHour)
        let time = now()
        if let wait = accountEmailsByAddress.retryAfter(clientAddress, now: time) {
            metrics.countRefusal(limit: "accountEmailsPerAddressPerHour")
            logger.notice("confirmation and reset requests throttled", metadata: ["app": "\(app.id)", "address": "\(clientAddress)"])
            throw ServerError(.tooManyRequests, "too many confirmation or reset requests from this address; try again in \(wait) s",
                              retryAfter: wait)
        }
        if let wait = limiter.retryAfter(email, now: time) {
            metrics.countRefusal(limit: "requestsPerAddressPerHour")
            throw ServerError(.tooManyRequests, "too many confirmation or reset requests for this address; try again in \(wait) s",
                              retryAfter: wait)
        }
        accountEmailsByAddress.record(clientAddress, now: time)
        limiter.record(email, now: time)
    }

    /// A new token of `purpose` for `email`, stored hashed; returns it and its id.
    private func newToken(appID: String, email: String, purpose: AccountTokenPurpose) async throws -> (token: String, id: String) {
        let token = Secrets.token()
        let id = ObjectId.generate().stringValue
        let created = now()
        let lifetime = apps.settings(forApp: appID).emailPassword.tokenLifetime
        try await store.insertAccountToken(
            StoredAccountToken(id: id, appID: appID, email: email, purpose: purpose, digest: Secrets.digest(token),
                               createdAt: created, expiresAt: created.addingTimeInterval(lifetime)),
            keepingAtMost: Self.tokensKept, now: created)
        return (token, id)
    }

    /// Makes a token and hands it to the delivery in the background (the request does not wait
    /// for the webhook); in development mode it is logged too.
    private func sendToken(app: ServerConfiguration.App, email: String, purpose: AccountTokenPurpose) async throws {
        let (token, tokenID) = try await newToken(appID: app.id, email: email, purpose: purpose)
        let body = WebhookBody(purpose: purpose, appId: app.id, username: email, token: token, tokenId: tokenID)
        if configuration.logsAccountTokens {
            logger.debug("\(purpose.rawValue) token (development mode)", metadata: [
                "app": "\(app.id)", "username": "\(email)", "token": "\(token)", "tokenId": "\(tokenID)"])
        }
        guard let url = app.emailPassword.deliveryURL else { return }
        let settings = app.emailPassword
        let webhooks = emailAccounts.webhooks
        let logger = logger
        let json = try JSONBody.encoder.encode(body)
        _Concurrency.Task.detached {
            do {
                let answer = try await webhooks.post(url, json: json, secret: settings.webhookSecret, timeout: settings.webhookTimeout)
                if !(200..<300).contains(answer.status) {
                    logger.warning("token delivery refused", metadata: ["app": "\(app.id)", "purpose": "\(purpose.rawValue)", "status": "\(answer.status)"])
                }
            } catch {
                logger.warning("token delivery failed", metadata: ["app": "\(app.id)", "purpose": "\(purpose.rawValue)", "error": "\(error)"])
            }
        }
    }

    /// Calls a confirmation or reset function and reads its status.
    private func callFunction(app: ServerConfiguration.App, url: String, _ body: WebhookBody, what: String) async throws -> FunctionStatus {
        let settings = app.emailPassword
        let json = try JSONBody.encoder.encode(body)
        let answer: WebhookClient.Answer
        do {
            answer = try await emailAccounts.webhooks.post(url, json: json, secret: settings.webhookSecret, timeout: settings.webhookTimeout)
        } catch {
            logger.warning("\(what) function failed", metadata: ["app": "\(app.id)", "error": "\(error)"])
            // The log has the address; the client learns only what kind of failure it was.
            let reason = (error as? WebhookClient.Failure)?.publicReason ?? "failed"
            throw ServerError(.internalError, "the \(what) function did not answer (\(reason))")
        }
        struct Status: Decodable { var status: FunctionStatus }
        guard (200..<300).contains(answer.status), let status = try? JSONDecoder().decode(Status.self, from: Data(answer.body)) else {
            logger.warning("\(what) function answered badly", metadata: ["app": "\(app.id)", "status": "\(answer.status)"])
            throw ServerError(.internalError, "the \(what) function's answer is not {\"status\": \"success\" | \"pending\" | \"fail\"}")
        }
        return status.status
    }

    /// What a webhook receives.
    struct WebhookBody: Encodable {
        var purpose: AccountTokenPurpose
        var appId: String
        var username: String
        var token: String
        var tokenId: String
        var arguments: [JSONValue]?
    }
}

extension AccountTokenPurpose: Encodable {}
