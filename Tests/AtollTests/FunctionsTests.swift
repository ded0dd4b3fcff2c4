#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
@_spi(Testing) import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// `user.functions` and `Credentials.function(payload:)` end to end: the SDK's calls reach the
/// app's function webhooks through the server, and the answers come back as realm-swift's.
extension SerialAppServicesTests {
@Suite(.serialized) struct FunctionsTests {
    /// "/sum" adds its (canonical) arguments as an int32, "/echo" answers them, "/fail" throws,
    /// "/auth" takes the payload's `username` as the external id.
    static let answers = WebhookReceiver.Behavior.respond { call in
        let arguments = call.arguments ?? []
        switch call.path {
        case "/sum":
            let total = arguments.compactMap { ($0 as? [String: String])?.values.first.flatMap(Double.init) }.reduce(0, +)
            return #"{"result": {"$numberInt": "\#(Int(total))"}}"#
        case "/fail": return #"{"error": "the ledger is closed"}"#
        case "/auth":
            guard let name = (call.json["payload"] as? [String: Any])?["username"] as? String else { return #"{"error": "who?"}"# }
            return #"{"id": "ext-\#(name)"}"#
        default:
            return #"{"result": \#(String(decoding: try! JSONSerialization.data(withJSONObject: arguments), as: UTF8.self))}"#
        }
    }

    private func withFunctions(_ body: (SyncTestServer, WebhookReceiver) async throws -> Void) async throws {
        let hooks = try await WebhookReceiver.start(Self.answers)
        let functions = ServerConfiguration.Functions(
            definitions: [
                "sum": .init(url: hooks.url("/sum")),
                "echo": .init(url: hooks.url("/echo")),
                "fail": .init(url: hooks.url("/fail")),
                "hidden": .init(url: hooks.url("/echo"), isPrivate: true),
                "bossOnly": .init(url: hooks.url("/echo"), canEvaluate: "%user.data.email == 'boss@example.com'"),
            ],
            authenticationURL: hooks.url("/auth"), timeout: 30)
        do {
            try await withSyncTestServer({ configuration in
                var app = ServerConfiguration.App(id: "test-app")
                app.functions = functions
                configuration.apps = [app]
            }) { server in try await body(server, hooks) }
        } catch {
            try? await hooks.stop()
            throw error
        }
        try await hooks.stop()
    }

    @Test func theAsyncFormReturnsTheResult() async throws {
        try await withFunctions { server, hooks in
            let user = try await server.app().login(credentials: .anonymous)
            let sum = try await user.functions.sum(1, 2, 3)
            #expect(sum == .int32(6))
            // The webhook saw the arguments' BSON types.
            #expect((hooks.calls.last?.arguments?.first as? [String: String]) == ["$numberLong": "1"])
            let user2 = hooks.calls.last?.json["user"] as? [String: Any]
            #expect(user2?["id"] as? String == user.id)
        }
    }

    @Test func bsonValuesRoundTripThroughAFunction() async throws {
        try await withFunctions { server, _ in
            let user = try await server.app().login(credentials: .anonymous)
            let id = ObjectId.generate()
            let when = Date(timeIntervalSince1970: 1_700_000_000.5)
            let uuid = UUID()
            let arguments: [AnyBSON] = [
                .int32(7), .int64(1 << 40), .double(2.5), .string("héllo"), .bool(true), .null, .objectId(id),
                .datetime(when), .decimal128(try Decimal128(string: "12.345")), .uuid(uuid), .binary(Data([1, 2, 3])),
                ["nested": ["list": [1, "two", .document(["three": 3.0])]]],
            ]
            let echoed = try await user.functions.echo(arguments)
            #expect(echoed == .array(arguments))
        }
    }

    @Test func theCompletionResultAndCombineFormsReportResultsAndErrors() async throws {
        try await withFunctions { server, _ in
            let user = try await server.app().login(credentials: .anonymous)
            let (sum, error): (AnyBSON?, Error?) = await withCheckedContinuation { continuation in
                user.functions.sum([1, 2]) { sum, error in continuation.resume(returning: (sum, error)) }
            }
            #expect(sum == .int32(3))
            #expect(error == nil)
            let result: Result<AnyBSON, Error> = await withCheckedContinuation { continuation in
                let call: Functions.ResultFunction = user.functions.fail
                call([]) { continuation.resume(returning: $0) }
            }
            #expect(throws: AppError.self) { try result.get() }
            let received = Locked<AnyBSON?>(nil)
            let future: Future<AnyBSON, Error> = user.functions.sum(4, 5)
            let cancellable = future.sink(receiveCompletion: { _ in }, receiveValue: { value in received.withLock { $0 = value } })
            #expect(await waitUntil(timeout: .seconds(30)) { received.withLock { $0 } != nil })
            #expect(received.withLock { $0 } == .int32(9))
            cancellable.cancel()
        }
    }

    @Test func errorsAreAppErrorsWithAppServicesMessages() async throws {
        try await withFunctions { server, _ in
            let app = server.app()
            let user = try await app.login(credentials: .anonymous)
            await #expect { try await user.functions.nope() } throws: { error in
                (error as? AppError)?.code == .functionNotFound && error.localizedDescription == "function not found: 'nope'"
            }
            await #expect { try await user.functions.fail() } throws: { error in
                (error as? AppError)?.code == .functionExecutionError && error.localizedDescription == "the ledger is closed"
            }
            await #expect { try await user.functions.hidden() } throws: { ($0 as? AppError)?.code == .notCallable }
            await #expect { try await user.functions.bossOnly() } throws: { ($0 as? AppError)?.code == .notCallable }
            try await app.emailPasswordAuth.registerUser(email: "boss@example.com", password: "s3cret-pw")
            let boss = try await app.login(credentials: .emailPassword(email: "boss@example.com", password: "s3cret-pw"))
            #expect(try await boss.functions.bossOnly("ok") == ["ok"])
            try await boss.logOut()
            await #expect { try await boss.functions.sum(1) } throws: { ($0 as? AppError)?.code == .invalidSession }
        }
    }

    @Test func aFunctionCredentialLogsInTheSameUserEachTime() async throws {
        try await withFunctions { server, hooks in
            let app = server.app()
            let payload: Document = ["username": "bob", "pin": .int32(1234)]
            let user = try await app.login(credentials: .function(payload: payload))
            #expect(user.identities.map(\.providerType) == ["custom-function"])
            #expect(user.identities.first?.identifier == "ext-bob")
            let sent = try #require(hooks.calls.last?.json["payload"] as? [String: Any])
            #expect((sent["pin"] as? [String: String]) == ["$numberInt": "1234"])
            try await user.logOut()
            let again = try await app.login(credentials: Credentials.function(payload: ["username": "bob"]))
            #expect(again.id == user.id)
            await #expect { try await app.login(credentials: .function(payload: ["nobody": true])) } throws: {
                ($0 as? AppError)?.code == .invalidPassword
            }
            // An anonymous user keeps its id when it links a function identity.
            let anonymous = try await app.login(credentials: .anonymous)
            let linked = try await anonymous.linkUser(credentials: .function(payload: ["username": "cy"]))
            #expect(linked.id == anonymous.id)
            #expect(linked.identities.map(\.providerType).sorted() == ["anon-user", "custom-function"])
            let cy = try await app.login(credentials: .function(payload: ["username": "cy"]))
            #expect(cy.id == anonymous.id)
        }
    }
}
}
