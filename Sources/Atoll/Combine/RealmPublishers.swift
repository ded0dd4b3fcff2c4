#if canImport(Combine)
import Combine
#else
import OpenCombine
import OpenCombineDispatch
#endif
import Foundation

/// Realm's publishers: what `objectWillChange`, `collectionPublisher`, `changesetPublisher`,
/// `valuePublisher(_:)` and the `freeze()`/`threadSafeReference()` operators return.
///
/// ```swift
/// let cancellable = realm.objects(Dog.self).collectionPublisher
///     .subscribe(on: backgroundQueue)
///     .freeze()
///     .receive(on: DispatchQueue.main)
///     .assertNoFailure()
///     .sink { dogs in print(dogs.count) }
/// ```
/// Values are delivered on the thread of the observed realm (or the queue given to
/// `subscribe(on:)`); `receive(on:)` of `Value` and of the changeset publishers hands live values
/// over to the scheduler's thread through a `ThreadSafeReference` (frozen values pass as they are).
public enum RealmPublishers {
    // MARK: Will change

    /// A signal after each change of a realm's object or collection.
    public struct WillChange<Collection: RealmSubscribable>: Publisher where Collection: ThreadConfined {
        public typealias Output = Void
        public typealias Failure = Never
        let object: Collection

        init(_ object: Collection) { self.object = object }

        /// Stores the observation's token in `object[keyPath:]`, to pass to `write(withoutNotifying:)`.
        public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>) -> WillChangeWithToken<Collection, T> {
            WillChangeWithToken(self.object, TokenSlot(object, keyPath))
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let object = object
            subscriber.observing { _ in object._observe(nil, subscriber) }
        }
    }

    /// ``WillChange`` that stores its token.
    public class WillChangeWithToken<Collection: RealmSubscribable, T>: Publisher where Collection: ThreadConfined {
        public typealias Output = Void
        public typealias Failure = Never
        let object: Collection
        var slot: TokenSlot<T>

        init(_ object: Collection, _ slot: TokenSlot<T>) {
            self.object = object
            self.slot = slot
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let object = object
            let token = subscriber.observing { _ in object._observe(nil, subscriber) }
            slot.token = token
        }
    }

    /// A signal after each change of a realm.
    public struct RealmWillChange: Publisher {
        public typealias Output = Void
        public typealias Failure = Never
        let realm: Realm

        init(_ realm: Realm) { self.realm = realm }

        /// Stores the observation's token in `object[keyPath:]` (Realm names this label `for:`).
        public func saveToken<T>(on object: T, for keyPath: WritableKeyPath<T, NotificationToken?>) -> RealmWillChangeWithToken<T> {
            RealmWillChangeWithToken(realm, TokenSlot(object, keyPath))
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let realm = realm
            subscriber.observing { _ in realm.observe { _, _ in _ = subscriber.receive() } }
        }
    }

    /// ``RealmWillChange`` that stores its token.
    public class RealmWillChangeWithToken<T>: Publisher {
        public typealias Output = Void
        public typealias Failure = Never
        let realm: Realm
        var slot: TokenSlot<T>

        init(_ realm: Realm, _ slot: TokenSlot<T>) {
            self.realm = realm
            self.slot = slot
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let realm = realm
            slot.token = subscriber.observing { _ in realm.observe { _, _ in _ = subscriber.receive() } }
        }
    }

    // MARK: Values

    /// The observed object or collection after each change (a collection also at once).
    public struct Value<Subscribable: RealmSubscribable>: Publisher where Subscribable: ThreadConfined {
        public typealias Output = Subscribable
        public typealias Failure = Error
        let object: Subscribable
        let keyPaths: [String]?
        let queue: DispatchQueue?

        init(_ object: Subscribable, keyPaths: [String]? = nil, queue: DispatchQueue? = nil) {
            precondition(object.realm != nil, "Only managed objects can be published")
            self.object = object
            self.keyPaths = keyPaths
            self.queue = queue
        }

        public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>) -> ValueWithToken<Subscribable, T> {
            ValueWithToken(self.object, queue, TokenSlot(object, keyPath))
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            let (object, keyPaths, queue) = (object, keyPaths, queue)
            subscriber.observing { _ in object._observe(keyPaths, on: queue, subscriber) }
        }

        /// Observes on `scheduler` (a serial dispatch queue): values are delivered there, frozen.
        public func subscribe<S: Scheduler>(on scheduler: S) -> Value<Subscribable> {
            Value(object, keyPaths: keyPaths, queue: requireQueue(scheduler))
        }

        /// Delivers on `scheduler`, handing each live value over to that thread.
        public func receive<S: Scheduler>(on scheduler: S) -> Handover<Self, S> {
            Handover(self, scheduler)
        }
    }

    /// ``Value`` that stores its token.
    public class ValueWithToken<Subscribable: RealmSubscribable, T>: Publisher where Subscribable: ThreadConfined {
        public typealias Output = Subscribable
        public typealias Failure = Error
        let object: Subscribable
        let queue: DispatchQueue?
        var slot: TokenSlot<T>

        init(_ object: Subscribable, _ queue: DispatchQueue?, _ slot: TokenSlot<T>) {
            self.object = object
            self.queue = queue
            self.slot = slot
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            let (object, queue) = (object, queue)
            slot.token = subscriber.observing { _ in object._observe(nil, on: queue, subscriber) }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> ValueWithToken<Subscribable, T> {
            ValueWithToken(object, requireQueue(scheduler), slot)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> Handover<ValueWithToken, S> {
            Handover(self, scheduler)
        }
    }

    /// Values handed over to a scheduler's thread: live ones through a thread-safe reference
    /// resolved in a realm of that thread (dropped when gone there); frozen and unmanaged ones as
    /// they are.
    public struct Handover<Upstream: Publisher, S: Scheduler>: Publisher where Upstream.Output: ThreadConfined {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let scheduler: S

        init(_ upstream: Upstream, _ scheduler: S) {
            self.upstream = upstream
            self.scheduler = scheduler
        }

        public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
            let scheduler = scheduler
            upstream.map { HandedOver($0) }.receive(on: scheduler).compactMap { $0.resolve(on: scheduler) }
                .receive(subscriber: subscriber)
        }
    }

    /// Marks values for ``DeferredHandover``: does nothing until `receive(on:)` follows.
    public struct MakeThreadSafe<Upstream: Publisher>: Publisher where Upstream.Output: ThreadConfined {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            upstream.receive(subscriber: subscriber)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandover<Upstream, S> {
            DeferredHandover(upstream: upstream, scheduler: scheduler)
        }
    }

    /// `threadSafeReference().receive(on:)`: values handed over as ``Handover`` does.
    public struct DeferredHandover<Upstream: Publisher, S: Scheduler>: Publisher where Upstream.Output: ThreadConfined {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let scheduler: S

        public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
            Handover(upstream, scheduler).receive(subscriber: subscriber)
        }
    }
}

// MARK: Plumbing

/// Where a `saveToken` publisher stores the token of its observation: `parent[keyPath:]`.
struct TokenSlot<T> {
    var parent: T
    let keyPath: WritableKeyPath<T, NotificationToken?>

    init(_ parent: T, _ keyPath: WritableKeyPath<T, NotificationToken?>) {
        self.parent = parent
        self.keyPath = keyPath
    }

    var token: NotificationToken? {
        get { parent[keyPath: keyPath] }
        set { parent[keyPath: keyPath] = newValue }
    }
}

/// The dispatch queue a `subscribe(on:)` or `receive(on:)` names: Realm observes only on serial
/// dispatch queues.
func requireQueue<S: Scheduler>(_ scheduler: S) -> DispatchQueue {
    guard let queue = scheduler as? DispatchQueue else {
        fatalError("Cannot subscribe on scheduler \(scheduler): only serial dispatch queues are currently implemented.")
    }
    return queue
}

/// A subscriber carried into a callback of another thread.
struct UncheckedSubscriber<S>: @unchecked Sendable { let subscriber: S; init(_ s: S) { subscriber = s } }

extension Subscriber {
    /// An object change as a value, the object's deletion as the end.
    func forward<O>(_ change: ObjectChange<O>) where Input == ObjectChange<O> {
        if case .deleted = change { receive(completion: .finished) } else { _ = receive(change) }
    }
}

/// A value on its way to another thread: frozen and unmanaged ones as they are, live ones as a
/// reference resolved on arrival.
struct HandedOver<Value: ThreadConfined>: @unchecked Sendable {
    private let value: Value?
    private let reference: ThreadSafeReference<Value>?
    private let configuration: Realm.Configuration?

    init(_ value: Value) {
        if let realm = value.realm, !value.isFrozen {
            self.value = nil
            reference = ThreadSafeReference(to: value)
            configuration = realm.configuration
        } else {
            self.value = value
            reference = nil
            configuration = nil
        }
    }

    func resolve<S: Scheduler>(on scheduler: S) -> Value? {
        if let value { return value }
        guard let reference, let configuration, let realm = try? Realm.opened(configuration, for: scheduler) else { return nil }
        return realm.resolve(reference)
    }
}

/// A change whose value goes to another thread, rebuilt around the resolved value there.
struct HandedOverChange<Change>: @unchecked Sendable {
    private let resolveOn: (any Scheduler) -> Change?

    init(_ change: Change) { resolveOn = { _ in change } }

    init<V: ThreadConfined>(_ value: V, _ rebuild: @escaping (V) -> Change) {
        let handed = HandedOver(value)
        resolveOn = { scheduler in
            func open<S: Scheduler>(_ scheduler: S) -> V? { handed.resolve(on: scheduler) }
            return open(scheduler).map(rebuild)
        }
    }

    func resolve<S: Scheduler>(on scheduler: S) -> Change? { resolveOn(scheduler) }
}

extension Realm {
    /// A realm of `configuration` for the thread a scheduler runs its work on: confined to the
    /// queue for a dispatch queue, to the current thread (or actor) otherwise.
    static func opened<S: Scheduler>(_ configuration: Configuration, for scheduler: S) throws -> Realm {
        if let queue = scheduler as? DispatchQueue, queue !== DispatchQueue.main {
            return try Realm(configuration: configuration, queue: queue)
        }
        return try Realm(configuration: configuration)
    }
}
