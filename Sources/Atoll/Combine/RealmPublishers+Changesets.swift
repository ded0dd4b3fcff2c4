#if canImport(Combine)
import Combine
#else
import OpenCombine
import OpenCombineDispatch
#endif
import Foundation

extension RealmPublishers {
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
            ObjectChangesetWithToken(observe, queue, TokenSlot(tokenParent, keyPath))
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
        var slot: TokenSlot<T>

        init(_ observe: @escaping (DispatchQueue?, @escaping (ObjectChange<O>) -> Void) -> NotificationToken, _ queue: DispatchQueue?,
             _ slot: TokenSlot<T>) {
            self.observe = observe
            self.queue = queue
            self.slot = slot
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (observe, queue) = (observe, queue)
            slot.token = subscriber.observing { _ in observe(queue) { change in subscriber.forward(change) } }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> ObjectChangesetWithToken<O, T> {
            ObjectChangesetWithToken(observe, requireQueue(scheduler), slot)
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
            CollectionChangesetWithToken(collection, queue, TokenSlot(object, keyPath))
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
        var slot: TokenSlot<T>

        init(_ collection: Collection, _ queue: DispatchQueue?, _ slot: TokenSlot<T>) {
            self.collection = collection
            self.queue = queue
            self.slot = slot
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (collection, queue) = (collection, queue)
            slot.token = subscriber.observing { _ in
                collection.observe(keyPaths: nil, on: queue) { _ = subscriber.receive($0) }
            }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> CollectionChangesetWithToken<Collection, T> {
            CollectionChangesetWithToken(collection, requireQueue(scheduler), slot)
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
            MapChangesetWithToken(observe, queue, TokenSlot(object, keyPath))
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
        var slot: TokenSlot<T>

        init(_ observe: @escaping (DispatchQueue?, @escaping (RealmMapChange<Collection>) -> Void) -> NotificationToken, _ queue: DispatchQueue?,
             _ slot: TokenSlot<T>) {
            self.observe = observe
            self.queue = queue
            self.slot = slot
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (observe, queue) = (observe, queue)
            slot.token = subscriber.observing { _ in observe(queue) { _ = subscriber.receive($0) } }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> MapChangesetWithToken<Collection, T> {
            MapChangesetWithToken(observe, requireQueue(scheduler), slot)
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
            SectionedResultsChangesetWithToken(collection, queue, TokenSlot(object, keyPath))
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
        var slot: TokenSlot<T>

        init(_ collection: Collection, _ queue: DispatchQueue?, _ slot: TokenSlot<T>) {
            self.collection = collection
            self.queue = queue
            self.slot = slot
        }

        public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
            let (collection, queue) = (collection, queue)
            slot.token = subscriber.observing { _ in
                collection.observe(keyPaths: nil, on: queue) { _ = subscriber.receive($0) }
            }
        }

        public func subscribe<S: Scheduler>(on scheduler: S) -> SectionedResultsChangesetWithToken<Collection, T> {
            SectionedResultsChangesetWithToken(collection, requireQueue(scheduler), slot)
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
}
