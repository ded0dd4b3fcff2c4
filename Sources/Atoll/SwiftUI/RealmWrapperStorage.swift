// The logic of Realm's SwiftUI property wrappers, without SwiftUI: which value a wrapper holds,
// what it observes, what a binding's write does. The wrappers themselves (SwiftUI+Wrappers.swift,
// Apple platforms only) are thin shells over these types, so what they do is tested on Linux too
// (docs/from-realm.md, "SwiftUI").
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

/// Runs `block` on the live value of `value` (thawed if frozen), inside a write transaction of its
/// realm unless one is open already; on an unmanaged value, directly. What every binding write,
/// `$list.append`, `$object.delete()` does.
package func realmWrite<Value: ThreadConfined>(_ value: Value, _ block: (Value) -> Void) {
    let thawed = value.realm != nil && value.isFrozen ? value.thaw() ?? value : value
    guard let realm = thawed.realm, !realm.isInWriteTransaction else {
        block(thawed)
        return
    }
    do {
        try realm.write { block(thawed) }
    } catch {
        preconditionFailure("a write of a SwiftUI binding failed: \(error)")
    }
}

/// The signal of a wrapper's storage: subscribers hear each change of the observed value, and
/// follow it when the storage gets another one.
package final class RealmStoragePublisher<Value: RealmSubscribable & ThreadConfined>: Publisher, @unchecked Sendable {
    package typealias Output = Void
    package typealias Failure = Never

    private let lock = NSLock()
    private var value: Value
    private let keyPaths: [String]?
    private struct Entry {
        let subscriber: AnySubscriber<Void, Never>
        var token: NotificationToken?
    }
    private var subscribers: [Entry] = []

    init(_ value: Value, keyPaths: [String]?) {
        self.value = value
        self.keyPaths = keyPaths
    }

    package func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, S.Input == Void {
        let any = AnySubscriber(subscriber)
        let token = observe(lock.withLock { value }, any)
        lock.withLock { subscribers.append(Entry(subscriber: any, token: token)) }
        let box = TokenBox()
        box.set(NotificationToken(realm: nil) { [weak self] in self?.remove(any) })
        subscriber.receive(subscription: ObservationSubscription(box))
    }

    /// Tells every subscriber now (a change of an unmanaged value, or another value).
    package func send() {
        for entry in lock.withLock({ subscribers }) { _ = entry.subscriber.receive() }
    }

    /// Observes `value` instead of the previous one.
    func update(_ value: Value) {
        let old: [NotificationToken?] = lock.withLock {
            self.value = value
            return subscribers.map(\.token)
        }
        for token in old { token?.invalidate() }
        let listeners = lock.withLock { subscribers.map(\.subscriber) }
        let tokens = listeners.map { observe(value, $0) }
        lock.withLock { subscribers = Swift.zip(listeners, tokens).map { Entry(subscriber: $0, token: $1) } }
    }

    private func observe(_ value: Value, _ subscriber: AnySubscriber<Void, Never>) -> NotificationToken? {
        // Unmanaged values have no notifications: the storage signals the writes it makes.
        guard value.realm != nil, !value.isInvalidated else { return nil }
        let live = value.isFrozen ? value.thaw() : value
        return live?._observe(keyPaths, subscriber)
    }

    private func remove(_ subscriber: AnySubscriber<Void, Never>) {
        let token: NotificationToken?? = lock.withLock {
            guard let index = subscribers.firstIndex(where: { $0.subscriber.combineIdentifier == subscriber.combineIdentifier }) else {
                return nil
            }
            return subscribers.remove(at: index).token
        }
        token??.invalidate()
    }
}

/// What `@StateRealmObject` and `@ObservedRealmObject` keep: the observed object or collection,
/// live (thawed), and a signal of its changes for SwiftUI.
package final class RealmObjectStorage<Value: RealmSubscribable & ThreadConfined & Equatable>: ObservableObject {
    package let objectWillChange: RealmStoragePublisher<Value>
    /// The live value (or the unmanaged one).
    package var value: Value {
        willSet { if newValue != value { objectWillChange.send() } }
        didSet { objectWillChange.update(value) }
    }
    /// What reads give once the value is invalidated (its object deleted).
    private let defaultValue: () -> Value

    package init(_ value: Value, keyPaths: [String]? = nil, default defaultValue: @escaping () -> Value) {
        let live = value.realm != nil && !value.isInvalidated && value.isFrozen ? value.thaw() ?? value : value
        self.value = live
        self.defaultValue = defaultValue
        objectWillChange = RealmStoragePublisher(live, keyPaths: keyPaths)
        if live.realm == nil { UnmanagedChanges.register(live as AnyObject, objectWillChange) }
    }

    /// What the view reads: an unmanaged value as it is, a managed one frozen (a stable snapshot
    /// for SwiftUI's diffing), the default once the object is gone.
    package var wrappedValue: Value {
        if value.realm == nil { return value }
        if value.isInvalidated { return defaultValue() }
        return value.freeze()
    }

    /// What bindings and `$object` work on: the live value, or the default once it is gone.
    package var liveValue: Value { value.isInvalidated ? defaultValue() : value }
}

/// A property binding's logic: reads the live value (the last one seen once the object is gone),
/// writes in a write transaction; with `equatable`, a write of the value already there does not
/// write.
package struct RealmPropertyBinding<Root: ThreadConfined, Value> {
    package let get: () -> Value
    package let set: (Value) -> Void

    package init(_ root: Root, _ keyPath: ReferenceWritableKeyPath<Root, Value>, isSame: ((Value, Value) -> Bool)? = nil,
                 freezeCollections: Bool = false) {
        let live: Root
        if root.isFrozen {
            guard let thawed = root.thaw() else { preconditionFailure("Could not bind value: its object was deleted") }
            live = thawed
        } else {
            live = root
        }
        let last = LastValue(live[keyPath: keyPath])
        get = {
            guard !live.isInvalidated else { return last.value }
            var value = live[keyPath: keyPath]
            if freezeCollections, let confined = value as? any ThreadConfined, confined.realm != nil {
                value = confined.freeze() as! Value
            }
            last.value = value
            return value
        }
        set = { newValue in
            guard !live.isInvalidated else { return }
            if let isSame, isSame(live[keyPath: keyPath], newValue) { return }
            realmWrite(live) { $0[keyPath: keyPath] = newValue }
            if live.realm == nil { UnmanagedChanges.changed(live as AnyObject) }
        }
    }

    private final class LastValue {
        var value: Value
        init(_ value: Value) { self.value = value }
    }
}

/// `object` as an accessor of `realm` (a frozen one, or one of another realm of the file, found
/// there by its row); an unmanaged object as it is. Bound collections add and remove objects a
/// view holds frozen to collections they thawed in a realm of their own.
package func thaw<Value: ObjectBase>(_ object: Value, in realm: Realm?) -> Value? {
    guard let state = object._managedState, let realm, state.realm !== realm else { return object }
    if realm.snapshotVersion < state.realm.snapshotVersion { realm.refresh() }
    guard (try? realm.store.exists(state.table, state.row)) == true else { return nil }
    return realm.materialize(state.table, row: state.row, as: Value.self)
}

/// Who shows an unmanaged object: a binding's write to it tells the storages that hold it (Realm
/// does this with key-value observing). Weak both ways; entries of gone objects are dropped.
enum UnmanagedChanges {
    private struct Entry {
        weak var object: AnyObject?
        weak var publisher: (any RealmChangeSignal)?
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var entries: [ObjectIdentifier: [Entry]] = [:]

    static func register(_ object: AnyObject, _ publisher: any RealmChangeSignal) {
        lock.withLock {
            entries = entries.filter { $0.value.contains { $0.object != nil } }
            entries[ObjectIdentifier(object), default: []].append(Entry(object: object, publisher: publisher))
        }
    }

    static func changed(_ object: AnyObject) {
        let publishers = lock.withLock {
            (entries[ObjectIdentifier(object)] ?? []).filter { $0.object === object }.compactMap(\.publisher)
        }
        for publisher in publishers { publisher.send() }
    }
}

/// A storage's signal, as `UnmanagedChanges` holds it.
protocol RealmChangeSignal: AnyObject {
    func send()
}

extension RealmStoragePublisher: RealmChangeSignal {}
