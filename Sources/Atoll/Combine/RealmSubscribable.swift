// Realm's Combine support (realm-swift's Combine.swift, the same names and shapes): what can be
// observed through a publisher, and the publishers' subscriptions. On Apple platforms these are
// Combine's protocols; elsewhere OpenCombine's, which declares the same names, so one source
// serves both and the Linux tests check it.
#if canImport(Combine)
import Combine
#else
import OpenCombine
import OpenCombineDispatch
#endif
import Foundation

/// Objects whose `id` is derived from their place in the realm, for SwiftUI's `ForEach` and
/// `List`: every managed accessor of one object has the same id; unmanaged objects each have
/// their own.
///
/// ```swift
/// final class Dog: Object, ObjectKeyIdentifiable { @Persisted var name = "" }
/// ForEach(dogs) { dog in Text(dog.name) }
/// ```
public protocol ObjectKeyIdentifiable: Identifiable {
    var id: UInt64 { get }
}

@available(*, deprecated, renamed: "ObjectKeyIdentifiable")
public typealias ObjectKeyIdentifable = ObjectKeyIdentifiable

extension ObjectKeyIdentifiable where Self: ObjectBase {
    /// The object's row for a managed object; the accessor's address for an unmanaged one.
    public var id: UInt64 { _combineId }
}

extension ObjectKeyIdentifiable where Self: ProjectionObservable {
    /// The projected object's id.
    public var id: UInt64 { rootObject._combineId }
}

extension ObjectBase {
    var _combineId: UInt64 {
        if let state = _managedState { return UInt64(bitPattern: state.row) }
        return UInt64(UInt(bitPattern: ObjectIdentifier(self).hashValue))
    }
}

/// What Realm's publishers observe: an object, a collection, a projection. Atoll's plumbing;
/// apps use the publishers (`valuePublisher(_:)`, `collectionPublisher`, `objectWillChange`).
public protocol RealmSubscribable {
    /// Registers `subscriber` for the value after each change.
    func _observe<S>(_ keyPaths: [String]?, on queue: DispatchQueue?, _ subscriber: S)
        -> NotificationToken where S: Subscriber, S.Input == Self
    /// Registers `subscriber` for a signal after each change.
    func _observe<S>(_ keyPaths: [String]?, _ subscriber: S) -> NotificationToken where S: Subscriber, S.Input == Void
}

/// The subscription of a Realm publisher: cancelling it ends the observation. Values are pushed
/// as they come, whatever the demand, as Realm's are.
public struct ObservationSubscription: Subscription {
    private let box: TokenBox

    init(_ box: TokenBox) { self.box = box }

    public var combineIdentifier: CombineIdentifier { CombineIdentifier(box) }
    public func request(_ demand: Subscribers.Demand) {}
    public func cancel() { box.cancel() }
}

/// A notification token that may be set after the subscription is handed out: a subscriber gets
/// its subscription before the first value, and the observation starts after that.
final class TokenBox: @unchecked Sendable {
    private let lock = NSLock()
    private var token: NotificationToken?
    private var cancelled = false

    func set(_ token: NotificationToken) {
        let keep = lock.withLock { () -> Bool in
            if !cancelled { self.token = token }
            return !cancelled
        }
        if !keep { token.invalidate() }
    }

    func cancel() {
        let token = lock.withLock { () -> NotificationToken? in
            cancelled = true
            defer { self.token = nil }
            return self.token
        }
        token?.invalidate()
    }

    var isCancelled: Bool { lock.withLock { cancelled } }
}

extension Subscriber {
    /// Hands the subscriber its subscription, then starts `observe`, whose values it receives
    /// until the subscription is cancelled. Returns the token (for `saveToken`).
    @discardableResult
    func observing(_ observe: (TokenBox) -> NotificationToken) -> NotificationToken? {
        let box = TokenBox()
        receive(subscription: ObservationSubscription(box))
        guard !box.isCancelled else { return nil }
        let token = observe(box)
        box.set(token)
        return token
    }
}

// MARK: Objects

extension ObjectBase: RealmSubscribable {
    public func _observe<S: Subscriber>(_ keyPaths: [String]?, on queue: DispatchQueue?, _ subscriber: S)
        -> NotificationToken where S.Input: ObjectBase {
        observe(keyPaths: keyPaths, on: queue) { (change: ObjectChange<S.Input>) in
            switch change {
            case .change(let object, _): _ = subscriber.receive(object)
            case .deleted: subscriber.receive(completion: .finished)
            case .error: break
            }
        }
    }

    public func _observe<S>(_ keyPaths: [String]?, _ subscriber: S) -> NotificationToken where S: Subscriber, S.Input == Void {
        observe(keyPaths: keyPaths, on: nil) { (_: ObjectChange<ObjectBase>) in _ = subscriber.receive() }
    }
}

extension Object: ObservableObject {
    /// Signals each committed change of the object (after it, as Realm's does).
    public var objectWillChange: RealmPublishers.WillChange<Object> { RealmPublishers.WillChange(self) }
}

extension EmbeddedObject: ObservableObject {
    public var objectWillChange: RealmPublishers.WillChange<EmbeddedObject> { RealmPublishers.WillChange(self) }
}

// MARK: Collections

extension RealmCollection {
    public func _observe<S>(_ keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ subscriber: S)
        -> NotificationToken where S: Subscriber, S.Input == Self {
        observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let collection), .update(let collection, _, _, _): _ = subscriber.receive(collection)
            case .error: break
            }
        }
    }

    public func _observe<S: Subscriber>(_ keyPaths: [String]? = nil, _ subscriber: S) -> NotificationToken where S.Input == Void {
        // A signal of changes: the initial state is no change (SwiftUI must not hear one while it
        // subscribes).
        observe(keyPaths: keyPaths, on: nil) { change in
            if case .update = change { _ = subscriber.receive() }
        }
    }
}

extension Results: RealmSubscribable {}
extension LinkingObjects: RealmSubscribable {}
extension AnyRealmCollection: RealmSubscribable {}
extension List: RealmSubscribable, ObservableObject {
    /// Signals each committed change of the list.
    public var objectWillChange: RealmPublishers.WillChange<List> { RealmPublishers.WillChange(self) }
}

extension MutableSet: RealmSubscribable, ObservableObject {
    /// Signals each committed change of the set.
    public var objectWillChange: RealmPublishers.WillChange<MutableSet> { RealmPublishers.WillChange(self) }
}

extension RealmCollection where Self: RealmSubscribable {
    /// Signals each committed change of the collection.
    public var objectWillChange: RealmPublishers.WillChange<Self> { RealmPublishers.WillChange(self) }

    @available(*, deprecated, renamed: "collectionPublisher")
    public var publisher: RealmPublishers.Value<Self> { collectionPublisher }

    /// The collection now and after each change of it.
    public var collectionPublisher: RealmPublishers.Value<Self> { RealmPublishers.Value(self) }

    /// The collection now and after each change of the named key paths.
    public func collectionPublisher(keyPaths: [String]?) -> RealmPublishers.Value<Self> {
        RealmPublishers.Value(self, keyPaths: keyPaths)
    }

    /// `.initial` and then each `.update` of the collection.
    public var changesetPublisher: RealmPublishers.CollectionChangeset<Self> { RealmPublishers.CollectionChangeset(self) }

    public func changesetPublisher(keyPaths: [String]?) -> RealmPublishers.CollectionChangeset<Self> {
        RealmPublishers.CollectionChangeset(self, keyPaths: keyPaths)
    }
}

extension Map: RealmSubscribable, ObservableObject {
    public func _observe<S>(_ keyPaths: [String]?, on queue: DispatchQueue? = nil, _ subscriber: S)
        -> NotificationToken where S: Subscriber, S.Input == Map {
        observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let map), .update(let map, _, _, _): _ = subscriber.receive(map)
            case .error: break
            }
        }
    }

    public func _observe<S: Subscriber>(_ subscriber: S) -> NotificationToken where S.Input == Void {
        _observe(nil, subscriber)
    }

    public func _observe<S: Subscriber>(_ keyPaths: [String]? = nil, _ subscriber: S) -> NotificationToken where S.Input == Void {
        observe(keyPaths: keyPaths, on: nil) { change in
            if case .update = change { _ = subscriber.receive() }
        }
    }

    public var objectWillChange: RealmPublishers.WillChange<Map> { RealmPublishers.WillChange(self) }

    @available(*, deprecated, renamed: "collectionPublisher")
    public var publisher: RealmPublishers.Value<Map> { collectionPublisher }

    /// The map now and after each change of it.
    public var collectionPublisher: RealmPublishers.Value<Map> { RealmPublishers.Value(self) }

    public func collectionPublisher(keyPaths: [String]?) -> RealmPublishers.Value<Map> {
        RealmPublishers.Value(self, keyPaths: keyPaths)
    }

    /// `.initial` and then each `.update` of the map.
    public var changesetPublisher: RealmPublishers.MapChangeset<Map> { changesetPublisher(keyPaths: nil) }

    public func changesetPublisher(keyPaths: [String]?) -> RealmPublishers.MapChangeset<Map> {
        precondition(realm != nil, "Only managed collections can be published")
        return RealmPublishers.MapChangeset { queue, block in self.observe(keyPaths: keyPaths, on: queue, block) }
    }
}

// MARK: Sectioned results

extension RealmSectionedResult {
    public func _observe<S>(_ keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ subscriber: S)
        -> NotificationToken where S: Subscriber, S.Input == Self {
        observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let sections), .update(let sections, _, _, _, _, _): _ = subscriber.receive(sections)
            }
        }
    }

    public func _observe<S: Subscriber>(_ keyPaths: [String]? = nil, _ subscriber: S) -> NotificationToken where S.Input == Void {
        observe(keyPaths: keyPaths, on: nil) { change in
            if case .update = change { _ = subscriber.receive() }
        }
    }
}

extension RealmSectionedResult where Self: RealmSubscribable & ThreadConfined {
    /// Signals each committed change of the sections.
    public var objectWillChange: RealmPublishers.WillChange<Self> { RealmPublishers.WillChange(self) }

    /// The sections now and after each change of them.
    public var collectionPublisher: RealmPublishers.Value<Self> { RealmPublishers.Value(self) }

    public func collectionPublisher(keyPaths: [String]?) -> RealmPublishers.Value<Self> {
        RealmPublishers.Value(self, keyPaths: keyPaths)
    }

    /// `.initial` and then each `.update` of the sections.
    public var changesetPublisher: RealmPublishers.SectionedResultsChangeset<Self> {
        RealmPublishers.SectionedResultsChangeset(self)
    }

    public func changesetPublisher(keyPaths: [String]?) -> RealmPublishers.SectionedResultsChangeset<Self> {
        RealmPublishers.SectionedResultsChangeset(self, keyPaths: keyPaths)
    }
}

extension SectionedResults: RealmSubscribable, ThreadConfined {
    public var _handover: _Handover {
        results._handover.map { [keyOf] in ($0 as? Results<SectionElement>).map { SectionedResults(results: $0, key: keyOf) } }
    }
}

extension ResultsSection: RealmSubscribable, ThreadConfined {
    public var _handover: _Handover {
        parent._handover.map { [key] in ($0 as? SectionedResults<Key, Element>).map { ResultsSection(parent: $0, key: key) } }
    }
}

// MARK: Projections

extension Projection: ThreadConfined {
    public var _handover: _Handover { rootObject._handover.map { ($0 as? Root).map { Self(projecting: $0) } } }
}

extension ProjectionObservable {
    public func _observe<S>(_ keyPaths: [String]?, on queue: DispatchQueue?, _ subscriber: S)
        -> NotificationToken where S: Subscriber, S.Input == Self {
        observe(keyPaths: keyPaths ?? [], on: queue) { change in
            switch change {
            case .change(let projection, _): _ = subscriber.receive(projection)
            case .deleted: subscriber.receive(completion: .finished)
            case .error: break
            }
        }
    }

    public func _observe<S>(_ keyPaths: [String]?, _ subscriber: S) -> NotificationToken where S: Subscriber, S.Input == Void {
        observe(keyPaths: [], on: nil) { _ in _ = subscriber.receive() }
    }
}

extension Projection: RealmSubscribable, ObservableObject {
    /// Signals each committed change of a projected property.
    public var objectWillChange: RealmPublishers.WillChange<Projection> { RealmPublishers.WillChange(self) }
}

// MARK: Realm

extension Realm {
    /// Signals each change of the realm: this realm's writes and other realms' commits.
    public var objectWillChange: RealmPublishers.RealmWillChange { RealmPublishers.RealmWillChange(self) }
}
