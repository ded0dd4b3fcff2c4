import AtollServer
import AtollTesting
import Foundation
import Testing

/// What a hostile client or a broken webhook sends to the e-mail/password endpoints: the server
/// answers with a typed error and keeps serving everyone else.
extension SerialAuthTests {
@Suite("E-mail/password endpoints under hostile input")
struct EmailPasswordHostileTests {
    @Test func aHangingWebhookHoldsUpNoOtherLogin() async throws {
        try await withEmailServer(confirmation: .function, receiving: .hang, settings: { $0.webhookTimeout = 60 }) { server, mail in
            let http = server.http
            let stuck = Task { try await http.register(email: "ann@example.com", password: "s3cret-pw").status }
            #expect(await waitUntil(timeout: .seconds(120)) { mail.hangingCalls == 1 })
            // While the confirmation function hangs, others log in and register.
            let anonymous = try await server.http.anonymousLogin()
            #expect(!anonymous.access_token.isEmpty)
            #expect(try await server.http.sendReset("nobody@example.com").errorCode == "UserNotFound")
            #expect(mail.hangingCalls == 1)
            mail.release()
            #expect(try await stuck.value == 201)  // the function answered success in the end
            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "s3cret-pw").status == 200)
        }
    }

    @Test func aWebhookThatNeverAnswersTimesOut() async throws {
        try await withEmailServer(confirmation: .function, receiving: .hang, settings: { $0.webhookTimeout = 0.5 }) { server, mail in
            let answer = try await server.http.register(email: "lou@example.com", password: "s3cret-pw")
            #expect(answer.status == 500)
            #expect(answer.errorCode == "InternalError")
            mail.release()
        }
    }

    @Test func aHugeAnswerIsCutOffAndRefused() async throws {
        try await withEmailServer(confirmation: .function, receiving: .hugeBody(8 << 20)) { server, mail in
            let answer = try await server.http.register(email: "max@example.com", password: "s3cret-pw")
            #expect(answer.status == 500)
            #expect(answer.errorCode == "InternalError")
            #expect(try await server.http.anonymousLogin().user_id.isEmpty == false)
            mail.setBehavior(.status("success"))
            #expect(try await server.http.retryCustomConfirmation("max@example.com").status == 200)
        }
    }

    @Test func aWebhookThatIsNotListeningFailsTheDeliveryOnly() async throws {
        let configuration = TestServer.configuration { configuration in
            var app = ServerConfiguration.App(id: "tasks")
            // Port 9 on the loopback: nothing listens there in a test machine.
            app.emailPassword = .init(confirmation: .token, deliveryURL: "http://127.0.0.1:9/deliver", webhookTimeout: 2)
            configuration.apps = [app]
        }
        try await withServer(configuration) { server in
            // Delivery runs after the answer: registration succeeds, the user waits for a token.
            let registered = try await server.http.register(email: "ned@example.com", password: "s3cret-pw")
            #expect(registered.status == 201)
            #expect(try await server.http.emailLogin(email: "ned@example.com", password: "s3cret-pw").errorCode == "AuthError")
        }
    }

    @Test func malformedBodiesAreBadRequests() async throws {
        try await withEmailServer { server, _ in
            let base = HTTP.providerPath()
            for path in ["/confirm", "/confirm/send", "/confirm/call", "/reset/send", "/reset", "/reset/call"] {
                for body in ["{", "[]", "\"text\"", "null", #"{"email": 12, "token": [], "tokenId": {}, "password": false}"#, "{}"] {
                    let answer = try await server.http.send("POST", base + path, body: body)
                    #expect(answer.status == 400, "\(path) \(body)")
                    #expect(answer.errorCode == "BadRequest", "\(path) \(body)")
                }
            }
            let missing = try await server.http.send("POST", base + "/reset", body: #"{"password": "s3cret-pw", "token": "x"}"#)
            #expect(missing.text.contains("tokenId"))
        }
    }

    @Test func oversizedBodiesAndFieldsAreRefused() async throws {
        try await withEmailServer { server, _ in
            let base = HTTP.providerPath()
            let huge = String(repeating: "a", count: 2 << 20)
            let oversized = try await server.http.send("POST", base + "/confirm", body: #"{"token": "\#(huge)", "tokenId": "x"}"#)
            #expect(oversized.status == 400)
            #expect(oversized.errorCode == "BadRequest")
            // Under the body limit, a long token or name is just wrong.
            let long = String(repeating: "b", count: 100_000)
            #expect(try await server.http.confirm(token: long, tokenId: long).errorCode == "BadRequest")
            #expect(try await server.http.sendReset(long).errorCode == "BadRequest")
            #expect(try await server.http.resendConfirmation("").errorCode == "BadRequest")
            // The reset function's arguments are bounded in count and size.
            _ = try await server.http.register(email: "oz@example.com", password: "s3cret-pw")
            let many = "[" + Array(repeating: "1", count: 33).joined(separator: ",") + "]"
            #expect(try await server.http.callReset("oz@example.com", password: "s3cret-pw", argumentsJSON: many).errorCode == "BadRequest")
            let big = #"[""# + String(repeating: "c", count: 20_000) + #""]"#
            #expect(try await server.http.callReset("oz@example.com", password: "s3cret-pw", argumentsJSON: big).errorCode == "BadRequest")
            let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            #expect(try await server.http.callReset("oz@example.com", password: "s3cret-pw", argumentsJSON: deep).status == 400)
            // Still serving.
            #expect(try await server.http.anonymousLogin().user_id.isEmpty == false)
        }
    }

    @Test func theEndpointsNeedTheProviderAndAKnownApp() async throws {
        let configuration = TestServer.configuration { configuration in
            configuration.developmentMode = false
            configuration.apps = [ServerConfiguration.App(id: "tasks", authProviders: .init(emailPassword: false))]
        }
        try await withServer(configuration) { server in
            #expect(try await server.http.sendReset("ann@example.com").errorCode == "AuthProviderDisabled")
            let unknown = try await server.http.post(HTTP.providerPath("nope") + "/reset/send", json: ["email": "ann@example.com"])
            #expect(unknown.errorCode == "AppNotFound")
        }
    }
}
}
