#if canImport(Combine)
import Combine
#else
import OpenCombine
import OpenCombineDispatch
#endif
import Foundation

extension RealmPublishers {
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
