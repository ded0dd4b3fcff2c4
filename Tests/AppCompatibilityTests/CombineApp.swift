#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif
import Atoll
import AtollTesting
import Foundation
import Testing

// A UIKit + Combine app in Realm's style: a login view model on the App's Futures and
// `app.objectWillChange`, and a list view model on `collectionPublisher`, frozen and delivered on
// a queue, with the subscription set changed through its Future.
class CombineTodo: Object, ObjectKeyIdentifiable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title = ""
    @Persisted var done = false
}

final class LoginViewModel {
    let app: App
    private(set) var status = "signed out"
    private(set) var appChanges = 0
    private var cancellables = Set<AnyCancellable>()

    init(app: App, queue: DispatchQueue) {
        self.app = app
        app.objectWillChange.receive(on: queue).sink { [weak self] _ in self?.appChanges += 1 }.store(in: &cancellables)
    }

    func logIn(completion: @escaping (User?) -> Void) {
        app.login(credentials: .anonymous)
            .sink(receiveCompletion: { [weak self] result in
                if case let .failure(error) = result {
                    self?.status = "failed: \(error.localizedDescription)"
                    completion(nil)
                }
            }, receiveValue: { [weak self] user in
                self?.status = "signed in"
                completion(user)
            })
            .store(in: &cancellables)
    }
}

final class TodoListViewModel {
    private(set) var titles: [String] = []
    private var cancellable: AnyCancellable?

    func bind(to realm: Realm, on queue: DispatchQueue, updated: @escaping ([String]) -> Void) {
        cancellable = realm.objects(CombineTodo.self).sorted(byKeyPath: "title")
            .collectionPublisher
            .freeze()
            .receive(on: queue)
            .assertNoFailure()
            .sink { [weak self] todos in
                let titles = todos.map(\.title)
                self?.titles = titles
                updated(titles)
            }
    }
}

@MainActor @Suite struct CombineApp {
    @Test func loginFutureAppPublisherAndAFrozenCollectionPublisher() async throws {
        try await withSyncTestServer { server in
            let queue = DispatchQueue(label: "combine-app")
            let model = LoginViewModel(app: server.app(device: "combine"), queue: queue)
            let user: User? = await withCheckedContinuation { continuation in
                model.logIn { continuation.resume(returning: $0) }
            }
            let signedIn = try #require(user)
            #expect(model.status == "signed in")
            #expect(await waitUntil(timeout: .seconds(30)) { queue.sync { model.appChanges } >= 1 }, "a login changes the app")

            var configuration = signedIn.flexibleSyncConfiguration()
            configuration.objectTypes = [CombineTodo.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            let subscriptions = realm.subscriptions
            let updated: Error?? = await withCheckedContinuation { continuation in
                var cancellable: AnyCancellable?
                cancellable = subscriptions.updateSubscriptions {
                    subscriptions.append(QuerySubscription<CombineTodo>(name: "all"))
                }.sink(receiveCompletion: { completion in
                    if case let .failure(error) = completion { continuation.resume(returning: .some(error)) } else {
                        continuation.resume(returning: .some(nil))
                    }
                    _ = cancellable
                }, receiveValue: { _ in })
            }
            #expect(updated.flatMap { $0 } == nil)
            #expect(subscriptions.count == 1)

            let list = TodoListViewModel()
            let seen = Recorded<[String]>()
            list.bind(to: realm, on: queue) { seen.append($0) }
            try realm.write { realm.add(CombineTodo(value: ["title": "b"])) }
            try realm.write { realm.add(CombineTodo(value: ["title": "a"])) }
            #expect(await waitUntil(timeout: .seconds(30)) { seen.last == ["a", "b"] })
            #expect(seen.first == [])

            let before = queue.sync { model.appChanges }
            _ = try await signedIn.logOut() as Void
            #expect(await waitUntil(timeout: .seconds(30)) { queue.sync { model.appChanges } > before }, "a logout changes the app")
        }
    }
}

/// Values a callback on another queue hands to the test.
final class Recorded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []
    func append(_ value: Value) { lock.lock(); values.append(value); lock.unlock() }
    var first: Value? { lock.lock(); defer { lock.unlock() }; return values.first }
    var last: Value? { lock.lock(); defer { lock.unlock() }; return values.last }
}
