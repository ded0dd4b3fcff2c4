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
            WillChangeWithToken(self.object, object, keyPath)
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
        var tokenParent: T
        let tokenKeyPath: WritableKeyPath<T, NotificationToken?>

        init(_ object: Collection, _ tokenParent: T, _ tokenKeyPath: WritableKeyPath<T, NotificationToken?>) {
            self.object = object
            self.tokenParent = tokenParent
            self.tokenKeyPath = tokenKeyPath
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let object = object
            let token = subscriber.observing { _ in object._observe(nil, subscriber) }
            tokenParent[keyPath: tokenKeyPath] = token
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
            RealmWillChangeWithToken(realm, object, keyPath)
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
        var tokenParent: T
        let tokenKeyPath: WritableKeyPath<T, NotificationToken?>

        init(_ realm: Realm, _ tokenParent: T, _ tokenKeyPath: WritableKeyPath<T, NotificationToken?>) {
            self.realm = realm
            self.tokenParent = tokenParent
            self.tokenKeyPath = tokenKeyPath
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let realm = realm
            tokenParent[keyPath: tokenKeyPath] = subscriber.observing { _ in realm.observe { _, _ in _ = subscriber.receive() } }
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
            ValueWithToken(self.object, queue, object, keyPath)
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
        var tokenParent: T
        let tokenKeyPath: WritableKeyPath<T, NotificationToken?>

        init(_ object: Subscribable, _ queue: DispatchQueue?, _ tokenParent: T, _ tokenKeyPath: WritableKeyPath<T, NotificationToken?>) {
            self.object = object
            self.queue = queue
            self.tokenParent = tokenParent
            self.tokenKeyPath = tokenKeyPath
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            let (object, queue) = (object, queue)
            tokenParent[keyPath: tokenKeyPath] = subscriber.observing { _ in object._observe(nil, on: queue, subscriber) }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> ValueWithToken<Subscribable, T> {
            ValueWithToken(object, requireQueue(scheduler), tokenParent, tokenKeyPath)
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

    // MARK: Object changes

    /// Each change of an object, as `ObjectChange`; the object's deletion finishes it.
    public struct ObjectChangeset<O: ThreadConfined>: Publisher {
        public typealias Output = ObjectChange<O>
        public typealias Failure = Never
        let observe: (DispatchQueue?, @escaping (ObjectChange<O>) -> Void) -> NotificationToken
        let queue: DispatchQueue?

        init(_ observe: @escaping (DispatchQueue?, @escaping (ObjectChange<O>) -> Void) -> NotificationToken, queue: DispatchQueue? = nil) {
            self.observe = observe
            self.queue = queue
        }

        public func saveToken<T>(on tokenParent: T, at keyPath: WritableKeyPath<T, NotificationToken?>) -> ObjectChangesetWithToken<O, T> {
            ObjectChangesetWithToken(observe, queue, tokenParent, keyPath)
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (observe, queue) = (observe, queue)
            subscriber.observing { _ in observe(queue) { change in subscriber.forward(change) } }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> ObjectChangeset<O> {
            ObjectChangeset(observe, queue: requireQueue(scheduler))
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverObjectChangeset<Self, O, S> {
            DeferredHandoverObjectChangeset(upstream: self, scheduler: scheduler)
        }
    }

    /// ``ObjectChangeset`` that stores its token.
    public class ObjectChangesetWithToken<O: ThreadConfined, T>: Publisher {
        public typealias Output = ObjectChange<O>
        public typealias Failure = Never
        let observe: (DispatchQueue?, @escaping (ObjectChange<O>) -> Void) -> NotificationToken
        let queue: DispatchQueue?
        var tokenParent: T
        let tokenKeyPath: WritableKeyPath<T, NotificationToken?>

        init(_ observe: @escaping (DispatchQueue?, @escaping (ObjectChange<O>) -> Void) -> NotificationToken, _ queue: DispatchQueue?,
             _ tokenParent: T, _ tokenKeyPath: WritableKeyPath<T, NotificationToken?>) {
            self.observe = observe
            self.queue = queue
            self.tokenParent = tokenParent
            self.tokenKeyPath = tokenKeyPath
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (observe, queue) = (observe, queue)
            tokenParent[keyPath: tokenKeyPath] = subscriber.observing { _ in observe(queue) { change in subscriber.forward(change) } }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> ObjectChangesetWithToken<O, T> {
            ObjectChangesetWithToken(observe, requireQueue(scheduler), tokenParent, tokenKeyPath)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverObjectChangeset<ObjectChangesetWithToken, O, S> {
            DeferredHandoverObjectChangeset(upstream: self, scheduler: scheduler)
        }
    }

    /// Marks object changes for handover by the next `receive(on:)`.
    public struct MakeThreadSafeObjectChangeset<Upstream: Publisher, T: ThreadConfined>: Publisher where Upstream.Output == ObjectChange<T> {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            upstream.receive(subscriber: subscriber)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverObjectChangeset<Upstream, T, S> {
            DeferredHandoverObjectChangeset(upstream: upstream, scheduler: scheduler)
        }
    }

    /// Object changes handed over to a scheduler's thread (the object resolved there, the
    /// property changes as they were).
    public struct DeferredHandoverObjectChangeset<Upstream: Publisher, T: ThreadConfined, S: Scheduler>: Publisher
    where Upstream.Output == ObjectChange<T> {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let scheduler: S

        public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
            let scheduler = scheduler
            upstream.map { change -> HandedOverChange<ObjectChange<T>> in
                guard case .change(let object, let properties) = change else { return HandedOverChange(change) }
                return HandedOverChange(object) { .change($0, properties) }
            }
            .receive(on: scheduler).compactMap { $0.resolve(on: scheduler) }
            .receive(subscriber: subscriber)
        }
    }

    // MARK: Collection changes

    /// `.initial` and each `.update` of a collection.
    public struct CollectionChangeset<Collection: RealmCollection>: Publisher {
        public typealias Output = RealmCollectionChange<Collection>
        public typealias Failure = Never
        let collection: Collection
        let keyPaths: [String]?
        let queue: DispatchQueue?

        init(_ collection: Collection, keyPaths: [String]? = nil, queue: DispatchQueue? = nil) {
            precondition(collection.realm != nil, "Only managed collections can be published")
            self.collection = collection
            self.keyPaths = keyPaths
            self.queue = queue
        }

        public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>) -> CollectionChangesetWithToken<Collection, T> {
            CollectionChangesetWithToken(collection, queue, object, keyPath)
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (collection, keyPaths, queue) = (collection, keyPaths, queue)
            subscriber.observing { _ in collection.observe(keyPaths: keyPaths, on: queue) { _ = subscriber.receive($0) } }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> CollectionChangeset<Collection> {
            CollectionChangeset(collection, keyPaths: keyPaths, queue: requireQueue(scheduler))
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverCollectionChangeset<Self, Collection, S> {
            DeferredHandoverCollectionChangeset(upstream: self, scheduler: scheduler)
        }
    }

    /// ``CollectionChangeset`` that stores its token.
    public class CollectionChangesetWithToken<Collection: RealmCollection, T>: Publisher {
        public typealias Output = RealmCollectionChange<Collection>
        public typealias Failure = Never
        let collection: Collection
        let queue: DispatchQueue?
        var tokenParent: T
        let tokenKeyPath: WritableKeyPath<T, NotificationToken?>

        init(_ collection: Collection, _ queue: DispatchQueue?, _ tokenParent: T, _ tokenKeyPath: WritableKeyPath<T, NotificationToken?>) {
            self.collection = collection
            self.queue = queue
            self.tokenParent = tokenParent
            self.tokenKeyPath = tokenKeyPath
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (collection, queue) = (collection, queue)
            tokenParent[keyPath: tokenKeyPath] = subscriber.observing { _ in
                collection.observe(keyPaths: nil, on: queue) { _ = subscriber.receive($0) }
            }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> CollectionChangesetWithToken<Collection, T> {
            CollectionChangesetWithToken(collection, requireQueue(scheduler), tokenParent, tokenKeyPath)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverCollectionChangeset<CollectionChangesetWithToken, Collection, S> {
            DeferredHandoverCollectionChangeset(upstream: self, scheduler: scheduler)
        }
    }

    /// Marks collection changes for handover by the next `receive(on:)`.
    public struct MakeThreadSafeCollectionChangeset<Upstream: Publisher, T: RealmCollection>: Publisher
    where Upstream.Output == RealmCollectionChange<T> {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            upstream.receive(subscriber: subscriber)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverCollectionChangeset<Upstream, T, S> {
            DeferredHandoverCollectionChangeset(upstream: upstream, scheduler: scheduler)
        }
    }

    /// Collection changes handed over to a scheduler's thread, with the same indices.
    public struct DeferredHandoverCollectionChangeset<Upstream: Publisher, T: RealmCollection, S: Scheduler>: Publisher
    where Upstream.Output == RealmCollectionChange<T> {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let scheduler: S

        public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
            let scheduler = scheduler
            upstream.map { change -> HandedOverChange<RealmCollectionChange<T>> in
                switch change {
                case .initial(let collection): HandedOverChange(collection) { .initial($0) }
                case .update(let collection, let d, let i, let m):
                    HandedOverChange(collection) { .update($0, deletions: d, insertions: i, modifications: m) }
                case .error: HandedOverChange(change)
                }
            }
            .receive(on: scheduler).compactMap { $0.resolve(on: scheduler) }
            .receive(subscriber: subscriber)
        }
    }

    /// `.initial` and each `.update` of a map.
    public struct MapChangeset<Collection: RealmKeyedCollection>: Publisher where Collection: ThreadConfined {
        public typealias Output = RealmMapChange<Collection>
        public typealias Failure = Never
        let observe: (DispatchQueue?, @escaping (RealmMapChange<Collection>) -> Void) -> NotificationToken
        let queue: DispatchQueue?

        init(_ observe: @escaping (DispatchQueue?, @escaping (RealmMapChange<Collection>) -> Void) -> NotificationToken,
             queue: DispatchQueue? = nil) {
            self.observe = observe
            self.queue = queue
        }

        public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>) -> MapChangesetWithToken<Collection, T> {
            MapChangesetWithToken(observe, queue, object, keyPath)
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (observe, queue) = (observe, queue)
            subscriber.observing { _ in observe(queue) { _ = subscriber.receive($0) } }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> MapChangeset<Collection> {
            MapChangeset(observe, queue: requireQueue(scheduler))
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverKeyedCollectionChangeset<Self, Collection, S> {
            DeferredHandoverKeyedCollectionChangeset(upstream: self, scheduler: scheduler)
        }
    }

    /// ``MapChangeset`` that stores its token.
    public class MapChangesetWithToken<Collection: RealmKeyedCollection, T>: Publisher where Collection: ThreadConfined {
        public typealias Output = RealmMapChange<Collection>
        public typealias Failure = Never
        let observe: (DispatchQueue?, @escaping (RealmMapChange<Collection>) -> Void) -> NotificationToken
        let queue: DispatchQueue?
        var tokenParent: T
        let tokenKeyPath: WritableKeyPath<T, NotificationToken?>

        init(_ observe: @escaping (DispatchQueue?, @escaping (RealmMapChange<Collection>) -> Void) -> NotificationToken, _ queue: DispatchQueue?,
             _ tokenParent: T, _ tokenKeyPath: WritableKeyPath<T, NotificationToken?>) {
            self.observe = observe
            self.queue = queue
            self.tokenParent = tokenParent
            self.tokenKeyPath = tokenKeyPath
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (observe, queue) = (observe, queue)
            tokenParent[keyPath: tokenKeyPath] = subscriber.observing { _ in observe(queue) { _ = subscriber.receive($0) } }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> MapChangesetWithToken<Collection, T> {
            MapChangesetWithToken(observe, requireQueue(scheduler), tokenParent, tokenKeyPath)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverKeyedCollectionChangeset<MapChangesetWithToken, Collection, S> {
            DeferredHandoverKeyedCollectionChangeset(upstream: self, scheduler: scheduler)
        }
    }

    /// Marks map changes for handover by the next `receive(on:)`.
    public struct MakeThreadSafeKeyedCollectionChangeset<Upstream: Publisher, T: RealmKeyedCollection>: Publisher
    where Upstream.Output == RealmMapChange<T>, T: ThreadConfined {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            upstream.receive(subscriber: subscriber)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverKeyedCollectionChangeset<Upstream, T, S> {
            DeferredHandoverKeyedCollectionChangeset(upstream: upstream, scheduler: scheduler)
        }
    }

    /// Map changes handed over to a scheduler's thread, with the same keys.
    public struct DeferredHandoverKeyedCollectionChangeset<Upstream: Publisher, T: RealmKeyedCollection, S: Scheduler>: Publisher
    where Upstream.Output == RealmMapChange<T>, T: ThreadConfined {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let scheduler: S

        public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
            let scheduler = scheduler
            upstream.map { change -> HandedOverChange<RealmMapChange<T>> in
                switch change {
                case .initial(let map): HandedOverChange(map) { .initial($0) }
                case .update(let map, let d, let i, let m): HandedOverChange(map) { .update($0, deletions: d, insertions: i, modifications: m) }
                case .error: HandedOverChange(change)
                }
            }
            .receive(on: scheduler).compactMap { $0.resolve(on: scheduler) }
            .receive(subscriber: subscriber)
        }
    }

    // MARK: Sectioned results

    /// `.initial` and each `.update` of sectioned results.
    public struct SectionedResultsChangeset<Collection: RealmSectionedResult>: Publisher where Collection: ThreadConfined {
        public typealias Output = SectionedResultsChange<Collection>
        public typealias Failure = Never
        let collection: Collection
        let keyPaths: [String]?
        let queue: DispatchQueue?

        init(_ collection: Collection, keyPaths: [String]? = nil, queue: DispatchQueue? = nil) {
            precondition(collection.realm != nil, "Only managed collections can be published")
            self.collection = collection
            self.keyPaths = keyPaths
            self.queue = queue
        }

        public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
            -> SectionedResultsChangesetWithToken<Collection, T> {
            SectionedResultsChangesetWithToken(collection, queue, object, keyPath)
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (collection, keyPaths, queue) = (collection, keyPaths, queue)
            subscriber.observing { _ in collection.observe(keyPaths: keyPaths, on: queue) { _ = subscriber.receive($0) } }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> SectionedResultsChangeset<Collection> {
            SectionedResultsChangeset(collection, keyPaths: keyPaths, queue: requireQueue(scheduler))
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverSectionedResultsChangeset<Self, Collection, S> {
            DeferredHandoverSectionedResultsChangeset(upstream: self, scheduler: scheduler)
        }
    }

    /// ``SectionedResultsChangeset`` that stores its token.
    public class SectionedResultsChangesetWithToken<Collection: RealmSectionedResult, T>: Publisher where Collection: ThreadConfined {
        public typealias Output = SectionedResultsChange<Collection>
        public typealias Failure = Never
        let collection: Collection
        let queue: DispatchQueue?
        var tokenParent: T
        let tokenKeyPath: WritableKeyPath<T, NotificationToken?>

        init(_ collection: Collection, _ queue: DispatchQueue?, _ tokenParent: T, _ tokenKeyPath: WritableKeyPath<T, NotificationToken?>) {
            self.collection = collection
            self.queue = queue
            self.tokenParent = tokenParent
            self.tokenKeyPath = tokenKeyPath
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (collection, queue) = (collection, queue)
            tokenParent[keyPath: tokenKeyPath] = subscriber.observing { _ in
                collection.observe(keyPaths: nil, on: queue) { _ = subscriber.receive($0) }
            }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> SectionedResultsChangesetWithToken<Collection, T> {
            SectionedResultsChangesetWithToken(collection, requireQueue(scheduler), tokenParent, tokenKeyPath)
        }

        public func receive<S: Scheduler>(on scheduler: S)
            -> DeferredHandoverSectionedResultsChangeset<SectionedResultsChangesetWithToken, Collection, S> {
            DeferredHandoverSectionedResultsChangeset(upstream: self, scheduler: scheduler)
        }
    }

    /// Marks sectioned changes for handover by the next `receive(on:)`.
    public struct MakeThreadSafeSectionedResultsChangeset<Upstream: Publisher, T: RealmSectionedResult>: Publisher
    where Upstream.Output == SectionedResultsChange<T>, T: ThreadConfined {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            upstream.receive(subscriber: subscriber)
        }

        public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverSectionedResultsChangeset<Upstream, T, S> {
            DeferredHandoverSectionedResultsChangeset(upstream: upstream, scheduler: scheduler)
        }
    }

    /// Sectioned changes handed over to a scheduler's thread, with the same index paths.
    public struct DeferredHandoverSectionedResultsChangeset<Upstream: Publisher, T: RealmSectionedResult, S: Scheduler>: Publisher
    where Upstream.Output == SectionedResultsChange<T>, T: ThreadConfined {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let scheduler: S

        public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
            let scheduler = scheduler
            upstream.map { change -> HandedOverChange<SectionedResultsChange<T>> in
                switch change {
                case .initial(let sections): HandedOverChange(sections) { .initial($0) }
                case .update(let sections, let d, let i, let m, let si, let sd):
                    HandedOverChange(sections) {
                        .update($0, deletions: d, insertions: i, modifications: m, sectionsToInsert: si, sectionsToDelete: sd)
                    }
                }
            }
            .receive(on: scheduler).compactMap { $0.resolve(on: scheduler) }
            .receive(subscriber: subscriber)
        }
    }

    // MARK: Opening

    /// `Realm.asyncOpen(configuration:)` as a publisher: one realm, then finished; or the error.
    public struct AsyncOpenPublisher: Publisher {
        public typealias Output = Realm
        public typealias Failure = Error
        let configuration: Realm.Configuration
        let callbackQueue: DispatchQueue
        let onProgress: (@Sendable (SyncSession.Progress) -> Void)?

        init(configuration: Realm.Configuration, callbackQueue: DispatchQueue = .main,
             onProgress: (@Sendable (SyncSession.Progress) -> Void)? = nil) {
            self.configuration = configuration
            self.callbackQueue = callbackQueue
            self.onProgress = onProgress
        }

        /// Calls `callback` with the progress of the download that precedes the open.
        public func onProgressNotification(_ onProgressNotificationCallback: @escaping ((SyncSession.Progress) -> Void)) -> Self {
            let callback = UncheckedBlock(block: onProgressNotificationCallback)
            return AsyncOpenPublisher(configuration: configuration, callbackQueue: callbackQueue) { callback.block($0) }
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
            let box = UncheckedSubscriber(subscriber)
            let task = Realm.asyncOpen(configuration: configuration, callbackQueue: callbackQueue) { result in
                switch result {
                case .success(let realm):
                    _ = box.subscriber.receive(realm)
                    box.subscriber.receive(completion: .finished)
                case .failure(let error):
                    box.subscriber.receive(completion: .failure(error))
                }
            }
            if let onProgress { task.addProgressNotification(queue: callbackQueue, block: onProgress) }
            subscriber.receive(subscription: AsyncOpenSubscription(task: task))
        }

        /// Opens the realm confined to `scheduler`, which must be a dispatch queue.
        public func receive<S: Scheduler>(on scheduler: S) -> Self {
            AsyncOpenPublisher(configuration: configuration, callbackQueue: requireQueue(scheduler), onProgress: onProgress)
        }
    }
}

/// The subscription of `Realm.asyncOpen`'s publisher: cancelling it cancels the open.
public struct AsyncOpenSubscription: Subscription {
    private let task: Realm.AsyncOpenTask

    init(task: Realm.AsyncOpenTask) { self.task = task }

    public var combineIdentifier: CombineIdentifier { CombineIdentifier(task) }
    public func request(_ demand: Subscribers.Demand) {}
    public func cancel() { task.cancel() }
}

extension Realm {
    /// Opens a realm (downloading a synced one first) when subscribed to, and publishes it on the
    /// main queue, or on the queue given to `receive(on:)`.
    ///
    /// ```swift
    /// Realm.asyncOpen(configuration: config).receive(on: queue).sink(…)
    /// ```
    public static func asyncOpen(configuration: Realm.Configuration = .defaultConfiguration) -> RealmPublishers.AsyncOpenPublisher {
        RealmPublishers.AsyncOpenPublisher(configuration: configuration)
    }
}

// MARK: Operators

extension Publisher {
    /// Freezes each value, so it can cross to any thread.
    public func freeze<T>() -> Publishers.Map<Self, T> where Output: ThreadConfined, T == Output {
        map { $0.freeze() }
    }

    /// Freezes the object of each change.
    public func freeze<T: Object>() -> Publishers.Map<Self, ObjectChange<T>> where Output == ObjectChange<T> {
        map { change in
            guard case .change(let object, let properties) = change else { return change }
            return .change(object.freeze(), properties)
        }
    }

    /// Freezes the projection of each change.
    public func freeze<T: ProjectionObservable>() -> Publishers.Map<Self, ObjectChange<T>> where Output == ObjectChange<T>, T: ThreadConfined {
        map { change in
            guard case .change(let projection, let properties) = change else { return change }
            return .change(projection.freeze(), properties)
        }
    }

    /// Freezes the collection of each change.
    public func freeze<T: RealmCollection>() -> Publishers.Map<Self, RealmCollectionChange<T>> where Output == RealmCollectionChange<T> {
        map { change in
            switch change {
            case .initial(let collection): .initial(collection.freeze())
            case .update(let collection, let d, let i, let m): .update(collection.freeze(), deletions: d, insertions: i, modifications: m)
            case .error: change
            }
        }
    }

    /// Freezes the sections of each change.
    public func freeze<T: RealmSectionedResult>() -> Publishers.Map<Self, SectionedResultsChange<T>> where Output == SectionedResultsChange<T> {
        map { change in
            switch change {
            case .initial(let sections): .initial(sections.freeze())
            case .update(let sections, let d, let i, let m, let si, let sd):
                .update(sections.freeze(), deletions: d, insertions: i, modifications: m, sectionsToInsert: si, sectionsToDelete: sd)
            }
        }
    }

    /// Freezes the map of each change.
    public func freeze<T: RealmKeyedCollection>() -> Publishers.Map<Self, RealmMapChange<T>> where Output == RealmMapChange<T>, T: ThreadConfined {
        map { change in
            switch change {
            case .initial(let map): .initial(map.freeze())
            case .update(let map, let d, let i, let m): .update(map.freeze(), deletions: d, insertions: i, modifications: m)
            case .error: change
            }
        }
    }
}

extension Publisher where Output: ThreadConfined {
    /// Lets the next `receive(on:)` hand live values over to its scheduler's thread.
    public func threadSafeReference() -> RealmPublishers.MakeThreadSafe<Self> {
        RealmPublishers.MakeThreadSafe(upstream: self)
    }
}

extension Publisher {
    public func threadSafeReference<T: Object>() -> RealmPublishers.MakeThreadSafeObjectChangeset<Self, T> where Output == ObjectChange<T> {
        RealmPublishers.MakeThreadSafeObjectChangeset(upstream: self)
    }

    public func threadSafeReference<T: ProjectionObservable>() -> RealmPublishers.MakeThreadSafeObjectChangeset<Self, T>
    where Output == ObjectChange<T>, T: ThreadConfined {
        RealmPublishers.MakeThreadSafeObjectChangeset(upstream: self)
    }

    public func threadSafeReference<T: RealmCollection>() -> RealmPublishers.MakeThreadSafeCollectionChangeset<Self, T>
    where Output == RealmCollectionChange<T> {
        RealmPublishers.MakeThreadSafeCollectionChangeset(upstream: self)
    }

    public func threadSafeReference<T: RealmKeyedCollection>() -> RealmPublishers.MakeThreadSafeKeyedCollectionChangeset<Self, T>
    where Output == RealmMapChange<T>, T: ThreadConfined {
        RealmPublishers.MakeThreadSafeKeyedCollectionChangeset(upstream: self)
    }

    public func threadSafeReference<T: RealmSectionedResult>() -> RealmPublishers.MakeThreadSafeSectionedResultsChangeset<Self, T>
    where Output == SectionedResultsChange<T>, T: ThreadConfined {
        RealmPublishers.MakeThreadSafeSectionedResultsChangeset(upstream: self)
    }
}

// MARK: Free functions

/// The object after each change of it; its deletion finishes the publisher.
public func valuePublisher<T: Object>(_ object: T, keyPaths: [String]? = nil) -> RealmPublishers.Value<T> {
    RealmPublishers.Value(object, keyPaths: keyPaths)
}

/// The collection now and after each change of it.
public func valuePublisher<T: RealmCollection>(_ collection: T, keyPaths: [String]? = nil) -> RealmPublishers.Value<T> {
    RealmPublishers.Value(collection, keyPaths: keyPaths)
}

/// The projection after each change of a projected property.
public func valuePublisher<T: ProjectionObservable>(_ projection: T, keyPaths: [String]? = nil) -> RealmPublishers.Value<T>
where T: ThreadConfined & RealmSubscribable {
    RealmPublishers.Value(projection, keyPaths: keyPaths)
}

/// Each change of the object, with the properties that changed; its deletion finishes it.
public func changesetPublisher<T: Object>(_ object: T, keyPaths: [String]? = nil) -> RealmPublishers.ObjectChangeset<T> {
    precondition(object.realm != nil, "Only managed objects can be published")
    precondition(!object.isInvalidated, "Invalidated object cannot be used")
    return RealmPublishers.ObjectChangeset { queue, block in object.observe(keyPaths: keyPaths, on: queue, block) }
}

/// Each change of the projection.
public func changesetPublisher<T: ProjectionObservable>(_ projection: T, keyPaths: [String]? = nil) -> RealmPublishers.ObjectChangeset<T>
where T: ThreadConfined {
    precondition(projection.realm != nil, "Only managed objects can be published")
    return RealmPublishers.ObjectChangeset { queue, block in projection.observe(keyPaths: keyPaths ?? [], on: queue, block) }
}

/// `.initial` and each `.update` of the collection.
public func changesetPublisher<T: RealmCollection>(_ collection: T, keyPaths: [String]? = nil) -> RealmPublishers.CollectionChangeset<T> {
    RealmPublishers.CollectionChangeset(collection, keyPaths: keyPaths)
}

// MARK: Plumbing

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
