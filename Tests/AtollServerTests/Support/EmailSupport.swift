import AtollServer
import AtollTesting
import Crypto
import Foundation

/// E-mail/password tests: an app "tasks" whose webhooks point at a ``WebhookReceiver``.
extension SyncTestServer {
    static func emailConfiguration(
        _ receiver: WebhookReceiver, confirmation: ServerConfiguration.EmailPassword.Confirmation = .token,
        _ configure: (inout ServerConfiguration.EmailPassword) -> Void = { _ in }
    ) -> ServerConfiguration {
        configuration { configuration in
            var settings = ServerConfiguration.EmailPassword(
                confirmation: confirmation, deliveryURL: receiver.url("/deliver"), confirmationFunctionURL: receiver.url("/confirm"),
                resetFunctionURL: receiver.url("/reset"), webhookTimeout: 60)
            configure(&settings)
            var app = ServerConfiguration.App(id: "tasks")
            app.emailPassword = settings
            configuration.apps = [app]
        }
    }
}

/// Runs `body` with a webhook receiver and a server whose app "tasks" uses it.
func withEmailServer(
    confirmation: ServerConfiguration.EmailPassword.Confirmation = .token,
    receiving behavior: WebhookReceiver.Behavior = .ok,
    settings configure: (inout ServerConfiguration.EmailPassword) -> Void = { _ in },
    _ body: (TestServer, WebhookReceiver) async throws -> Void
) async throws {
    let receiver = try await WebhookReceiver.start(behavior)
    do {
        try await withServer(TestServer.emailConfiguration(receiver, confirmation: confirmation, configure)) { server in
            try await body(server, receiver)
        }
    } catch {
        try? await receiver.stop()
        throw error
    }
    try await receiver.stop()
}

extension HTTP {
    static func providerPath(_ app: String = "tasks") -> String { "/api/client/v1/app/\(app)/auth/providers/local-userpass" }

    func confirm(token: String, tokenId: String) async throws -> Answer {
        try await post(Self.providerPath() + "/confirm", json: ["token": token, "tokenId": tokenId])
    }

    func resendConfirmation(_ email: String) async throws -> Answer {
        try await post(Self.providerPath() + "/confirm/send", json: ["email": email])
    }

    func retryCustomConfirmation(_ email: String) async throws -> Answer {
        try await post(Self.providerPath() + "/confirm/call", json: ["email": email])
    }

    func sendReset(_ email: String) async throws -> Answer {
        try await post(Self.providerPath() + "/reset/send", json: ["email": email])
    }

    func reset(password: String, token: String, tokenId: String) async throws -> Answer {
        try await post(Self.providerPath() + "/reset", json: ["password": password, "token": token, "tokenId": tokenId])
    }

    func callReset(_ email: String, password: String, argumentsJSON: String = "[]") async throws -> Answer {
        let body = #"{"email":\#(Self.encodeString(email)),"password":\#(Self.encodeString(password)),"arguments":\#(argumentsJSON)}"#
        return try await send("POST", Self.providerPath() + "/reset/call", body: body)
    }

    static func encodeString(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }
}

/// The hex HMAC-SHA256 a webhook receiver checks `X-Atoll-Signature` against.
enum HMACSHA256 {
    static func hex(key: String, _ data: Data) -> String {
        HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: Data(key.utf8))).map { String(format: "%02x", $0) }.joined()
    }
}
