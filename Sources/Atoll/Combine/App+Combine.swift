#if canImport(Combine)
import Combine
#else
import OpenCombine
import OpenCombineDispatch
#endif
import Foundation

// The app API's Combine forms, as realm-swift has them: each call starts at once (a `Future` is
// eager) and replays its one result to every subscriber.

/// A `Future` of an async call, started now.
func future<T>(_ body: @escaping @Sendable () async throws -> T) -> Future<T, Error> {
    Future { promise in
        let promise = UncheckedPromise(promise: promise)
        _Concurrency.Task {
            do { promise.promise(.success(try await body())) } catch { promise.promise(.failure(error)) }
        }
    }
}

private struct UncheckedPromise<T>: @unchecked Sendable { let promise: (Result<T, Error>) -> Void }

/// A result that crosses into the future's task unchecked (custom data is `[AnyHashable: Any]`).
private struct UncheckedResult<T>: @unchecked Sendable { let value: T }

extension App: ObservableObject {
    /// Logs a user in.
    public func login(credentials: Credentials) -> Future<User, Error> {
        future { [core] in try await core.login(credentials) }
    }

    /// The app after each change of its users: a login, a logout, a removal, another current
    /// user. Delivered on the main queue unless `receive(on:)` says otherwise.
    public var objectWillChange: AppPublisher { AppPublisher(self, scheduler: DispatchQueue.main) }
}

/// The subscription of an ``AppPublisher`` or ``UserPublisher``: cancelling it stops it.
public struct AppSubscription: Subscription {
    let token: NotificationToken

    public var combineIdentifier: CombineIdentifier { CombineIdentifier(token) }
    public func request(_ demand: Subscribers.Demand) {}
    public func cancel() { token.invalidate() }
}

/// `app.objectWillChange`: the app after each change of its users.
public struct AppPublisher: Publisher, @unchecked Sendable {
    public typealias Output = App
    public typealias Failure = Never
    private let app: App
    private let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void

    init<S: Scheduler>(_ app: App, scheduler: S) {
        self.app = app
        let scheduler = UncheckedSubscriber(scheduler)
        schedule = { work in scheduler.subscriber.schedule(work) }
    }

    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
        let (app, schedule) = (app, schedule)
        let box = UncheckedSubscriber(subscriber)
        let token = app.core.changes.subscribe { schedule { _ = box.subscriber.receive(app) } }
        subscriber.receive(subscription: AppSubscription(token: token))
    }

    /// Delivers on `scheduler` instead of the main queue.
    public func receive<S: Scheduler>(on scheduler: S) -> Self { AppPublisher(app, scheduler: scheduler) }
}

extension EmailPasswordAuth {
    public func registerUser(email: String, password: String) -> Future<Void, Error> {
        future { try await registerUser(email: email, password: password) }
    }

    public func confirmUser(_ token: String, tokenId: String) -> Future<Void, Error> {
        future { try await confirmUser(token, tokenId: tokenId) }
    }

    public func resendConfirmationEmail(email: String) -> Future<Void, Error> {
        future { try await resendConfirmationEmail(email) }
    }

    public func retryCustomConfirmation(email: String) -> Future<Void, Error> {
        future { try await retryCustomConfirmation(email) }
    }

    public func sendResetPasswordEmail(email: String) -> Future<Void, Error> {
        future { try await sendResetPasswordEmail(email) }
    }

    public func resetPassword(to: String, token: String, tokenId: String) -> Future<Void, Error> {
        future { try await resetPassword(to: to, token: token, tokenId: tokenId) }
    }

    public func callResetPasswordFunction(email: String, password: String, args: [AnyBSON]) -> Future<Void, Error> {
        future { try await callResetPasswordFunction(email: email, password: password, args: args) }
    }
}

extension APIKeyAuth {
    public func createAPIKey(named: String) -> Future<UserAPIKey, Error> {
        future { try await createAPIKey(named: named) }
    }

    public func fetchAPIKey(_ objectId: ObjectId) -> Future<UserAPIKey, Error> {
        future { try await fetchAPIKey(objectId) }
    }

    public func fetchAPIKeys() -> Future<[UserAPIKey], Error> {
        future { try await fetchAPIKeys() }
    }

    public func deleteAPIKey(_ objectId: ObjectId) -> Future<Void, Error> {
        future { try await deleteAPIKey(objectId) }
    }

    public func enableAPIKey(_ objectId: ObjectId) -> Future<Void, Error> {
        future { try await enableAPIKey(objectId) }
    }

    public func disableAPIKey(_ objectId: ObjectId) -> Future<Void, Error> {
        future { try await disableAPIKey(objectId) }
    }
}

extension User: ObservableObject {
    /// Links another identity to the user.
    public func linkUser(credentials: Credentials) -> Future<User, Error> {
        future { try await self.linkUser(credentials: credentials) }
    }

    /// Fetches the user's custom data again.
    public func refreshCustomData() -> Future<[AnyHashable: Any], Error> {
        let inner: Future<UncheckedResult<[AnyHashable: Any]>, Error> = future {
            let data: Document = try await self.refreshCustomData()
            return UncheckedResult(value: data.foundationDictionary)
        }
        let result = Future<[AnyHashable: Any], Error> { promise in
            let promise = UncheckedPromise(promise: promise)
            _ = inner.sink(receiveCompletion: { if case .failure(let error) = $0 { promise.promise(.failure(error)) } },
                           receiveValue: { promise.promise(.success($0.value)) })
        }
        return result
    }

    /// Logs the user out and forgets them on this device.
    public func remove() -> Future<Void, Error> {
        future { try await self.remove() }
    }

    /// Logs the user out.
    public func logOut() -> Future<Void, Error> {
        future { try await self.logOut() }
    }

    /// Deletes the user on the server and on this device.
    public func delete() -> Future<Void, Error> {
        future { try await self.delete() }
    }

    /// The user after each change of its state, tokens or profile, on the main queue.
    public var objectWillChange: AnyPublisher<UserPublisher.Output, UserPublisher.Failure> {
        UserPublisher(self).receive(on: DispatchQueue.main).eraseToAnyPublisher()
    }
}

/// The user after each change of its state, tokens or profile.
public class UserPublisher: Publisher {
    public typealias Output = User
    public typealias Failure = Never
    private let user: User

    init(_ user: User) { self.user = user }

    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
        let user = user
        let box = UncheckedSubscriber(subscriber)
        let token = user.changes.subscribe { _ = box.subscriber.receive(user) }
        subscriber.receive(subscription: AppSubscription(token: token))
    }
}

extension SyncSubscriptionSet {
    /// Changes the subscriptions; the future succeeds once the server has sent their data.
    public func updateSubscriptions(_ block: @escaping (() -> Void)) -> Future<Void, Error> {
        Future { promise in
            let promise = UncheckedPromise(promise: promise)
            self.update(block) { error in promise.promise(error.map { .failure($0) } ?? .success(())) }
        }
    }
}

/// The subscription of a ``UserPublisher``.
public typealias UserSubscription = AppSubscription
