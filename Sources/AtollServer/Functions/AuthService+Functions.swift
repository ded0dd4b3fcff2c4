import AtollCore
import Foundation

/// Functions, as App Services served them to clients (`user.functions.sum(1, 2)`), each run by
/// the app's webhook (``ServerConfiguration/Functions``): only a live login calls, a private
/// function or one whose `canEvaluate` does not hold for the user is refused, and what a caller
/// controls is bounded (arguments' size and nesting, calls in flight per user and app, the
/// webhook's time and answer size).
extension AuthService {
    /// What a client's call carries.
    struct FunctionCall: Decodable {
        var name: String
        var arguments: [JSONValue]?
    }

    /// Calls the function a client asked for and returns the result's extended JSON.
    ///
    /// - Parameter body: the request's JSON (`{"name", "arguments"}`), already within the app's
    ///   ``ServerConfiguration/Functions/maxArgumentBytes``.
    /// - Throws: `ServerError`: `.invalidToken`, `.userDisabled`, `.badRequest` for a malformed
    ///   body, `.functionNotFound`, `.notCallable`, `.functionInvalid` (no webhook yet),
    ///   `.tooManyRequests`, `.executionTimeLimitExceeded`, `.functionExecutionError`.
    package func callFunction(appID: String, accessToken: String, body: Data) async throws -> Data {
        let app = try await app(appID)
        let (user, _, _) = try await liveUser(forAccessToken: accessToken)
        guard user.appID == appID else { throw ServerError(.invalidToken, "the access token belongs to another app") }
        guard JSONNesting.isWithin(body) else {
            throw ServerError(.badRequest, "the function's arguments nest deeper than \(JSONNesting.maxDepth) levels")
        }
        let call: FunctionCall
        do { call = try JSONDecoder().decode(FunctionCall.self, from: body) } catch {
            throw ServerError(.badRequest, "a function call is {\"name\": …, \"arguments\": […]}")
        }
        let settings = app.functions
        guard ServerConfiguration.Functions.isValidName(call.name) else { throw ServerError(.functionNotFound, "function not found") }
        guard let function = settings.definitions[call.name] else {
            throw ServerError(.functionNotFound, "function not found: '\(call.name)'")
        }
        guard !function.isPrivate else { throw ServerError(.notCallable, "function '\(call.name)' is private") }
        let customData = await customUserData(for: user)
        if let condition = function.canEvaluate, !FlexibleSync.Rules.holds(condition, for: RuleUser(user, customData: customData)) {
            throw ServerError(.notCallable, "rule not matched for function '\(call.name)'")
        }
        guard let url = function.url else {
            throw ServerError(.functionInvalid, "function '\(call.name)' has no webhook yet (imported from App Services, not ported)")
        }
        guard functionCalls.admit(appID: appID, userID: user.id, perUser: settings.callsInFlightPerUser, perApp: settings.callsInFlightPerApp) else {
            metrics.countRefusal(limit: "functionCallsInFlight")
            throw ServerError(.tooManyRequests, "too many function calls in flight; try again in 1 s", retryAfter: 1)
        }
        defer { functionCalls.finish(appID: appID, userID: user.id) }
        let request = FunctionWebhookBody(
            purpose: "call", appId: appID, name: call.name, arguments: call.arguments ?? [],
            user: .init(user, customData: customData), runAsSystem: function.runAsSystem)
        let answer = try await postToFunction(app: app, url: url, json: try JSONBody.encoder.encode(request), what: "function '\(call.name)'")
        struct Outcome: Decodable {
            var result: JSONValue?
            var error: String?
        }
        guard let outcome = try? JSONDecoder().decode(Outcome.self, from: answer) else {
            metrics.countFunctionCall(outcome: "failed")
            logger.warning("function answered badly", metadata: ["app": "\(appID)", "function": "\(call.name)"])
            throw ServerError(.functionExecutionError, "the function '\(call.name)' did not answer {\"result\": …} or {\"error\": …}")
        }
        if let error = outcome.error {
            metrics.countFunctionCall(outcome: "error")
            throw ServerError(.functionExecutionError, String(error.prefix(1024)))
        }
        metrics.countFunctionCall(outcome: "result")
        return try JSONBody.encoder.encode(outcome.result ?? .null)
    }

    /// The external id (and name) the app's authentication function gives `payload`
    /// (`custom-function` logins and links).
    /// - Throws: `ServerError`: `.invalidCredentials` when the function refuses or answers no id,
    ///   `.badRequest` for a payload over the size limit, `.internalError` when it does not answer.
    func authenticationFunctionIdentity(appID: String, payload: [String: JSONValue]) async throws -> (id: String, name: String?) {
        let app = try await app(appID)
        guard let url = app.functions.authenticationURL else {
            throw ServerError(.authProviderDisabled, "the custom-function provider is off for this app")
        }
        let json = try JSONBody.encoder.encode(AuthenticationWebhookBody(purpose: "authenticate", appId: appID, payload: payload))
        guard json.count <= app.functions.maxArgumentBytes + 512 else {
            throw ServerError(.badRequest, "the payload is larger than \(app.functions.maxArgumentBytes) bytes")
        }
        let answer: Data
        do {
            answer = try await postToFunction(app: app, url: url, json: json, what: "the authentication function")
        } catch let error as ServerError where error.code == .functionExecutionError {
            throw ServerError(.invalidCredentials, "authentication via function failed: \(error.message)")
        } catch let error as ServerError where error.code == .executionTimeLimitExceeded {
            throw ServerError(.internalError, "the authentication function did not answer in time")
        }
        struct Identity: Decodable {
            var id: String?
            var name: String?
            var error: String?
        }
        let identity = (try? JSONDecoder().decode(String.self, from: answer)).map { Identity(id: $0) }
            ?? (try? JSONDecoder().decode(Identity.self, from: answer))
        if let error = identity?.error { throw ServerError(.invalidCredentials, "authentication via function failed: \(String(error.prefix(1024)))") }
        guard let id = identity?.id, !id.isEmpty, id.utf8.count <= 256 else {
            logger.info("authentication function answered no id", metadata: ["app": "\(appID)"])
            throw ServerError(.invalidCredentials, "authentication via function failed: the function returned no user id")
        }
        return (id, identity?.name.map { String($0.prefix(256)) })
    }

    /// POSTs to a function's webhook within the app's bounds; returns a 2xx answer's body.
    private func postToFunction(app: ServerConfiguration.App, url: String, json: Data, what: String) async throws -> Data {
        let settings = app.functions
        let answer: WebhookClient.Answer
        do {
            answer = try await functionCalls.webhooks.post(url, json: json, secret: settings.webhookSecret, timeout: settings.timeout,
                                                           maxAnswerBytes: settings.maxAnswerBytes)
        } catch let failure as WebhookClient.Failure {
            logger.warning("function webhook failed", metadata: ["app": "\(app.id)", "what": "\(what)", "error": "\(failure)"])
            metrics.countFunctionCall(outcome: failure.code == .timeout ? "timeout" : "failed")
            switch failure.code {
            case .timeout: throw ServerError(.executionTimeLimitExceeded, "execution time limit exceeded")
            case .busy: throw ServerError(.tooManyRequests, "too many function calls in flight; try again in 1 s", retryAfter: 1)
            default: throw ServerError(.functionExecutionError, "\(what) \(failure.publicReason)")
            }
        }
        guard (200..<300).contains(answer.status) else {
            logger.warning("function webhook refused", metadata: ["app": "\(app.id)", "what": "\(what)", "status": "\(answer.status)"])
            metrics.countFunctionCall(outcome: "failed")
            throw ServerError(.functionExecutionError, "\(what) failed (its webhook answered HTTP \(answer.status))")
        }
        guard JSONNesting.isWithin(answer.body) else {
            metrics.countFunctionCall(outcome: "failed")
            throw ServerError(.functionExecutionError, "\(what) answered JSON nested deeper than \(JSONNesting.maxDepth) levels")
        }
        return Data(answer.body)
    }
}

/// What a function's webhook receives.
struct FunctionWebhookBody: Encodable {
    /// The calling user, as App Services' `context.user` had it.
    /// Identities and profile data are encoded as the profile route encodes them.
    struct CallingUser: Encodable {
        var id: String
        var identities: [AuthRoutes.Profile.Identity]
        var customData: [String: JSONValue]
        var data: AuthRoutes.Profile.Data

        init(_ user: StoredUser, customData: [String: JSONValue]?) {
            let profile = AuthRoutes.Profile(user)
            id = user.id
            identities = profile.identities
            self.customData = customData ?? [:]
            data = profile.data
        }

        enum CodingKeys: String, CodingKey {
            case id, identities, data
            case customData = "custom_data"
        }
    }

    var purpose: String
    var appId: String
    var name: String
    var arguments: [JSONValue]
    var user: CallingUser
    var runAsSystem: Bool
}

/// What the authentication function's webhook receives.
struct AuthenticationWebhookBody: Encodable {
    var purpose: String
    var appId: String
    var payload: [String: JSONValue]
}
