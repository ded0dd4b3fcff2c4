#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

// Realm's "Call a Function" and "Custom Function Authentication" pages, as an app writes them:
// the completion, async and Combine forms of `user.functions`, and a login through the app's
// authentication function. The code is what the pages show, with `import Atoll`.

final class FunctionsController {
    let app: App
    var cancellables = Set<AnyCancellable>()

    init(app: App) {
        self.app = app
    }

    // "Log in with custom function credentials."
    func logIn(username: String, completion: @escaping (User?) -> Void) {
        let params: Document = ["username": AnyBSON(username)]
        app.login(credentials: Credentials.function(payload: params)) { (result) in
            switch result {
            case .failure(let error):
                print("Login failed: \(error.localizedDescription)")
                completion(nil)
            case .success(let user):
                print("Successfully logged in as user \(user)")
                completion(user)
            }
        }
    }

    // "Call a function by name" with a completion handler.
    func callSum(completion: @escaping (Double?) -> Void) {
        let user = app.currentUser!
        user.functions.sum([1, 2]) { sum, error in
            guard error == nil else {
                print("Function call failed: \(error!.localizedDescription)")
                completion(nil)
                return
            }
            guard case let .double(value) = sum else {
                print("Unexpected non-double result: \(sum ?? "nil")")
                completion(nil)
                return
            }
            print("Called function 'sum' and got result: \(value)")
            assert(value == 3)
            completion(value)
        }
    }

    // The async/await form.
    func callSumAsync() async throws -> Double? {
        let user = app.currentUser!
        let response = try await user.functions.sum([1, 2])
        guard case let .double(value) = response else {
            print("Unexpected non-double result: \(response)")
            return nil
        }
        return value
    }

    // The variadic async form.
    func callSumVariadic() async throws -> AnyBSON {
        try await app.currentUser!.functions.sum(1, 2)
    }

    // The Combine form.
    func callSumPublisher(receive: @escaping (AnyBSON) -> Void) {
        app.currentUser!.functions.sum(1, 2)
            .sink(receiveCompletion: { result in
                if case let .failure(error) = result {
                    print("Function call failed: \(error.localizedDescription)")
                }
            }, receiveValue: { value in
                receive(value)
            })
            .store(in: &cancellables)
    }

    // A Result-based handler.
    func callSumResult(completion: @escaping (Result<AnyBSON, Error>) -> Void) {
        let sum: Functions.ResultFunction = app.currentUser!.functions.sum
        sum([1, 2], completion)
    }
}

// The test harness: a server whose functions are a receiver that adds its arguments.
private func withFunctionsServer(_ body: (SyncTestServer) async throws -> Void) async throws {
    let functions = try await WebhookReceiver.start(.respond { call in
        if call.path == "/auth" {
            let name = (call.json["payload"] as? [String: Any])?["username"] as? String ?? ""
            return name.isEmpty ? #"{"error": "no username"}"# : #"{"id": "\#(name)"}"#
        }
        let total = (call.arguments ?? []).compactMap { ($0 as? [String: String])?.values.first.flatMap(Double.init) }.reduce(0, +)
        return #"{"result": {"$numberDouble": "\#(total)"}}"#
    })
    let urls = (functions.url("/sum"), functions.url("/auth"))
    try await withSyncTestServer({ configuration in
        var app = ServerConfiguration.App(id: "test-app")
        app.functions = .init(definitions: ["sum": .init(url: urls.0)], authenticationURL: urls.1, timeout: 30)
        configuration.apps = [app]
    }) { server in
        try await body(server)
    }
    try await functions.stop()
}

@MainActor @Suite struct FunctionsApp {
    @Test func callingFunctionsAsRealmsPagesShow() async throws {
        try await withFunctionsServer { server in
            let controller = FunctionsController(app: server.app())
            let user: User? = await withCheckedContinuation { continuation in
                controller.logIn(username: "bob") { continuation.resume(returning: $0) }
            }
            #expect(user?.identities.first?.identifier == "bob")
            let sum: Double? = await withCheckedContinuation { continuation in
                controller.callSum { continuation.resume(returning: $0) }
            }
            #expect(sum == 3)
            let asyncSum = try await controller.callSumAsync()
            #expect(asyncSum == 3)
            let variadicSum = try await controller.callSumVariadic()
            #expect(variadicSum == .double(3))
            let result: Result<AnyBSON, Error> = await withCheckedContinuation { continuation in
                controller.callSumResult { continuation.resume(returning: $0) }
            }
            #expect((try? result.get()) == .double(3))
            var published: AnyBSON?
            controller.callSumPublisher { published = $0 }
            #expect(await waitUntil(timeout: .seconds(30)) { published != nil })
            #expect(published == .double(3))
            let nobody: User? = await withCheckedContinuation { continuation in
                controller.logIn(username: "") { continuation.resume(returning: $0) }
            }
            #expect(nobody == nil)
        }
    }
}
