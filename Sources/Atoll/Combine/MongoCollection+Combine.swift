#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

// realm-swift's Combine forms of remote data access: each call starts at once (a `Future`).
extension MongoCollection {
    public func insertOne(_ document: Document) -> Future<AnyBSON, Error> {
        let document = Unchecked(document)
        return future { try await self.insertOne(document.value) }
    }

    public func insertMany(_ documents: [Document]) -> Future<[AnyBSON], Error> {
        let documents = Unchecked(documents)
        return future { try await self.insertMany(documents.value) }
    }

    public func find(filter: Document, options: FindOptions) -> Future<[Document], Error> {
        let (filter, options) = (Unchecked(filter), Unchecked(options))
        return future { try await self.find(filter: filter.value, options: options.value) }
    }

    public func find(filter: Document) -> Future<[Document], Error> {
        find(filter: filter, options: FindOptions())
    }

    public func findOneDocument(filter: Document, options: FindOptions) -> Future<Document?, Error> {
        let (filter, options) = (Unchecked(filter), Unchecked(options))
        return future { try await self.findOneDocument(filter: filter.value, options: options.value) }
    }

    public func findOneDocument(filter: Document) -> Future<Document?, Error> {
        findOneDocument(filter: filter, options: FindOptions())
    }

    public func aggregate(pipeline: [Document]) -> Future<[Document], Error> {
        let pipeline = Unchecked(pipeline)
        return future { try await self.aggregate(pipeline: pipeline.value) }
    }

    public func count(filter: Document, limit: Int) -> Future<Int, Error> {
        let filter = Unchecked(filter)
        return future { try await self.count(filter: filter.value, limit: limit) }
    }

    public func count(filter: Document) -> Future<Int, Error> {
        let filter = Unchecked(filter)
        return future { try await self.count(filter: filter.value) }
    }

    public func deleteOneDocument(filter: Document) -> Future<Int, Error> {
        let filter = Unchecked(filter)
        return future { try await self.deleteOneDocument(filter: filter.value) }
    }

    public func deleteManyDocuments(filter: Document) -> Future<Int, Error> {
        let filter = Unchecked(filter)
        return future { try await self.deleteManyDocuments(filter: filter.value) }
    }

    public func updateOneDocument(filter: Document, update: Document, upsert: Bool) -> Future<UpdateResult, Error> {
        let (filter, update) = (Unchecked(filter), Unchecked(update))
        return future { try await self.updateOneDocument(filter: filter.value, update: update.value, upsert: upsert) }
    }

    public func updateOneDocument(filter: Document, update: Document) -> Future<UpdateResult, Error> {
        updateOneDocument(filter: filter, update: update, upsert: false)
    }

    public func updateManyDocuments(filter: Document, update: Document, upsert: Bool) -> Future<UpdateResult, Error> {
        let (filter, update) = (Unchecked(filter), Unchecked(update))
        return future { try await self.updateManyDocuments(filter: filter.value, update: update.value, upsert: upsert) }
    }

    public func updateManyDocuments(filter: Document, update: Document) -> Future<UpdateResult, Error> {
        updateManyDocuments(filter: filter, update: update, upsert: false)
    }

    public func findOneAndUpdate(filter: Document, update: Document, options: FindOneAndModifyOptions) -> Future<Document?, Error> {
        let (filter, update, options) = (Unchecked(filter), Unchecked(update), Unchecked(options))
        return future { try await self.findOneAndUpdate(filter: filter.value, update: update.value, options: options.value) }
    }

    public func findOneAndUpdate(filter: Document, update: Document) -> Future<Document?, Error> {
        findOneAndUpdate(filter: filter, update: update, options: FindOneAndModifyOptions())
    }

    public func findOneAndReplace(filter: Document, replacement: Document, options: FindOneAndModifyOptions) -> Future<Document?, Error> {
        let (filter, replacement, options) = (Unchecked(filter), Unchecked(replacement), Unchecked(options))
        return future { try await self.findOneAndReplace(filter: filter.value, replacement: replacement.value, options: options.value) }
    }

    public func findOneAndReplace(filter: Document, replacement: Document) -> Future<Document?, Error> {
        findOneAndReplace(filter: filter, replacement: replacement, options: FindOneAndModifyOptions())
    }

    public func findOneAndDelete(filter: Document, options: FindOneAndModifyOptions) -> Future<Document?, Error> {
        let (filter, options) = (Unchecked(filter), Unchecked(options))
        return future { try await self.findOneAndDelete(filter: filter.value, options: options.value) }
    }

    public func findOneAndDelete(filter: Document) -> Future<Document?, Error> {
        findOneAndDelete(filter: filter, options: FindOneAndModifyOptions())
    }
}

extension Publishers {
    /// A change stream as a publisher (`collection.watch()`): each change event, until cancelled.
    /// Events arrive on the main queue unless `subscribe(on:)` names a scheduler.
    public struct WatchPublisher: Publisher {
        public typealias Output = AnyBSON
        public typealias Failure = Error

        let collection: MongoCollection
        let scheduler: (@escaping @Sendable () -> Void) -> Void
        let filterIds: [ObjectId]?
        let matchFilter: Document?
        let openEvent: (@Sendable () -> Void)?

        init(collection: MongoCollection, scheduler: @escaping (@escaping @Sendable () -> Void) -> Void = { DispatchQueue.main.async(execute: $0) },
             filterIds: [ObjectId]? = nil, matchFilter: Document? = nil, onOpen: (@Sendable () -> Void)? = nil) {
            self.collection = collection
            self.scheduler = scheduler
            self.filterIds = filterIds
            self.matchFilter = matchFilter
            self.openEvent = onOpen
        }

        /// Calls `event` when the stream opened.
        public func onOpen(_ event: @escaping @Sendable () -> Void) -> Self {
            Self(collection: collection, scheduler: scheduler, filterIds: filterIds, matchFilter: matchFilter, onOpen: event)
        }

        /// Delivers the events on `scheduler`.
        public func subscribe<S: Scheduler>(on scheduler: S) -> WatchPublisher {
            let box = UncheckedScheduler(scheduler)
            return Self(collection: collection, scheduler: { action in box.value.schedule { action() } },
                        filterIds: filterIds, matchFilter: matchFilter, onOpen: openEvent)
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == AnyBSON, S.Failure == Error {
            let subscription = WatchSubscription(subscriber: subscriber)
            subscriber.receive(subscription: subscription)
            let box = UncheckedSubscription(subscription)
            let onOpen = openEvent
            subscription.stream = collection.openChangeStream(filterIds: filterIds, matchFilter: matchFilter, handlers: .init(
                open: { _ in onOpen?() },
                event: { box.value.deliver($0) },
                error: { box.value.complete(.failure($0)) },
                close: { error in box.value.complete(error.map { .failure($0) } ?? .finished) }
            ), schedule: scheduler)
        }
    }

    private final class WatchSubscription<S: Subscriber>: Subscription where S.Input == AnyBSON, S.Failure == Error {
        private var subscriber: S?
        var stream: ChangeStream?

        init(subscriber: S) { self.subscriber = subscriber }

        func request(_ demand: Subscribers.Demand) {}

        func cancel() {
            subscriber = nil
            stream?.close()
        }

        func deliver(_ event: AnyBSON) { _ = subscriber?.receive(event) }

        func complete(_ completion: Subscribers.Completion<Error>) {
            guard let subscriber else { return }
            self.subscriber = nil
            subscriber.receive(completion: completion)
        }
    }

    /// Crosses into the stream's handlers; used on the scheduler the publisher delivers on.
    private struct UncheckedSubscription<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }

    private struct UncheckedScheduler<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }
}

extension MongoCollection {
    /// The collection's change events as a publisher.
    public func watch() -> Publishers.WatchPublisher {
        Publishers.WatchPublisher(collection: self)
    }

    public func watch(filterIds: [ObjectId]) -> Publishers.WatchPublisher {
        Publishers.WatchPublisher(collection: self, filterIds: filterIds)
    }

    public func watch(matchFilter: Document) -> Publishers.WatchPublisher {
        Publishers.WatchPublisher(collection: self, matchFilter: matchFilter)
    }
}
