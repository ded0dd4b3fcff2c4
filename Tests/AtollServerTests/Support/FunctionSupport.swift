import AtollServer
import AtollTesting
import Foundation

/// Function tests: an app "tasks" whose functions and authentication function are webhooks of a
/// ``WebhookReceiver``: "sum" (public), "secret" (private), "adminOnly" (callable by admins),
/// "unported" (no webhook yet).
func withFunctionServer(
    receiving behavior: WebhookReceiver.Behavior = FunctionAnswers.standard,
    settings configure: (inout ServerConfiguration.Functions) -> Void = { _ in },
    _ body: (TestServer, WebhookReceiver) async throws -> Void
) async throws {
    let receiver = try await WebhookReceiver.start(behavior)
    var functions = ServerConfiguration.Functions(
        definitions: [
            "sum": .init(url: receiver.url("/sum")),
            "secret": .init(url: receiver.url("/secret"), isPrivate: true),
            "adminOnly": .init(url: receiver.url("/admin"), canEvaluate: "%user.custom_data.role == 'admin'"),
            "unported": .init(url: nil),
        ],
        authenticationURL: receiver.url("/auth"), webhookSecret: FunctionAnswers.secret, timeout: 30)
    configure(&functions)
    let configuration = TestServer.configuration { [functions] configuration in
        var app = ServerConfiguration.App(id: "tasks")
        app.functions = functions
        configuration.apps = [app]
    }
    do {
        try await withServer(configuration) { server in try await body(server, receiver) }
    } catch {
        try? await receiver.stop()
        throw error
    }
    try await receiver.stop()
}

/// What the test functions answer.
enum FunctionAnswers {
    static let secret = "a function webhook secret of 32+ bytes"

    /// "/sum" adds its arguments (canonical or relaxed numbers), "/auth" takes the payload's
    /// `username` as the external id (refusing "mallory"), the rest echo their arguments.
    static let standard = WebhookReceiver.Behavior.respond { call in
        switch call.path {
        case "/sum":
            let total = (call.arguments ?? []).compactMap(number).reduce(0, +)
            return #"{"result": {"$numberInt": "\#(Int(total))"}}"#
        case "/auth":
            let payload = call.json["payload"] as? [String: Any] ?? [:]
            guard let name = payload["username"] as? String, name != "mallory" else { return #"{"error": "unknown user"}"# }
            return #"{"id": "ext-\#(name)", "name": "\#(name)"}"#
        default:
            let arguments = try! JSONSerialization.data(withJSONObject: call.arguments ?? [])
            return #"{"result": \#(String(decoding: arguments, as: UTF8.self))}"#
        }
    }

    /// A number of relaxed or canonical extended JSON.
    static func number(_ value: Any) -> Double? {
        if let number = value as? NSNumber { return number.doubleValue }
        guard let object = value as? [String: Any], object.count == 1, let text = object.values.first as? String else { return nil }
        return Double(text)
    }
}

extension HTTP {
    static func functionPath(_ app: String = "tasks") -> String { "/api/client/v1/app/\(app)/functions/call" }

    func callFunction(_ name: String, argumentsJSON: String = "[]", bearer: String?) async throws -> Answer {
        try await send("POST", Self.functionPath(), bearer: bearer, body: #"{"name": \#(HTTP.encodeString(name)), "arguments": \#(argumentsJSON)}"#)
    }
}
