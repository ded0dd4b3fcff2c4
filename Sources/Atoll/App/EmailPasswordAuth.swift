import Foundation

/// Confirming e-mail/password users and resetting their passwords, as with App Services: the
/// server hands tokens to the app's delivery (docs/server.md, "E-mail/password accounts"), the app passes
/// them back here.
///
/// ```swift
/// try await app.emailPasswordAuth.registerUser(email: "ann@example.com", password: "s3cret-pw")
/// // … the user follows the mailed link, which carries token and tokenId …
/// try await app.emailPasswordAuth.confirmUser(token, tokenId: tokenId)
/// ```
extension EmailPasswordAuth {
    private var providerPath: String { "/api/client/v1/app/\(core.id)/auth/providers/local-userpass" }

    /// Confirms a registration with the token and token id the confirmation delivery received.
    public func confirmUser(_ token: String, tokenId: String) async throws {
        _ = try await core.http.send("POST", providerPath + "/confirm", json: ["token": token, "tokenId": tokenId])
    }

    /// Sends a new confirmation token for a registration not yet confirmed.
    public func resendConfirmationEmail(_ email: String) async throws {
        _ = try await core.http.send("POST", providerPath + "/confirm/send", json: ["email": email])
    }

    /// Runs the app's confirmation function again for a registration not yet confirmed.
    public func retryCustomConfirmation(_ email: String) async throws {
        _ = try await core.http.send("POST", providerPath + "/confirm/call", json: ["email": email])
    }

    /// Sends a password reset token to the delivery for the user `email`.
    public func sendResetPasswordEmail(_ email: String) async throws {
        _ = try await core.http.send("POST", providerPath + "/reset/send", json: ["email": email])
    }

    /// Sets a new password with a reset token and its id. The user's sessions everywhere end.
    public func resetPassword(to: String, token: String, tokenId: String) async throws {
        _ = try await core.http.send("POST", providerPath + "/reset", json: ["password": to, "token": token, "tokenId": tokenId])
    }

    /// Asks the app's reset function to let `email` set `password`; `args` go to the function.
    public func callResetPasswordFunction(email: String, password: String, args: [AnyBSON]) async throws {
        struct Body: Encodable {
            var email: String
            var password: String
            var arguments: [ExtendedJSON]
        }
        let body = try JSONEncoder().encode(Body(email: email, password: password, arguments: args.map(ExtendedJSON.init)))
        _ = try await core.http.send("POST", providerPath + "/reset/call", body: body)
    }

    // MARK: Completion handlers

    public func confirmUser(_ token: String, tokenId: String, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run(completion) { try await $0.confirmUser(token, tokenId: tokenId) }
    }

    public func resendConfirmationEmail(_ email: String, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run(completion) { try await $0.resendConfirmationEmail(email) }
    }

    public func retryCustomConfirmation(_ email: String, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run(completion) { try await $0.retryCustomConfirmation(email) }
    }

    public func sendResetPasswordEmail(_ email: String, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run(completion) { try await $0.sendResetPasswordEmail(email) }
    }

    public func resetPassword(to: String, token: String, tokenId: String, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run(completion) { try await $0.resetPassword(to: to, token: token, tokenId: tokenId) }
    }

    public func callResetPasswordFunction(email: String, password: String, args: [AnyBSON],
                                          _ completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run(completion) { try await $0.callResetPasswordFunction(email: email, password: password, args: args) }
    }

    private func run(_ completion: @escaping @Sendable (Swift.Error?) -> Void,
                     _ call: @escaping @Sendable (EmailPasswordAuth) async throws -> Void) {
        let auth = self
        _Concurrency.Task {
            do { try await call(auth); completion(nil) } catch { completion(error) }
        }
    }
}
