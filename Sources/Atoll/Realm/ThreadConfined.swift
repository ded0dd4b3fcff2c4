import AtollCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Atomics

/// What lives in one realm and is used only on that realm's thread, queue or actor: objects,
/// results, lists, sets, maps and linking objects. Hand one to another thread with a
/// ``ThreadSafeReference`` or a ``ThreadSafe`` property, or freeze it.
///
/// ```swift
/// func names<T: ThreadConfined>(_ value: T) -> Bool { value.realm != nil && !value.isInvalidated }
/// ```
public protocol ThreadConfined {
    /// The realm the value belongs to; `nil` when it is unmanaged.
    var realm: Realm? { get }
    /// Whether the value can no longer be read (its object was deleted, its realm invalidated).
    var isInvalidated: Bool { get }
    /// Whether the value is an immutable snapshot that any thread may read.
    var isFrozen: Bool { get }
    /// An immutable snapshot of the value.
    func freeze() -> Self
    /// The live value of a frozen one, in a realm on the current thread; `nil` if it is gone.
    func thaw() -> Self?
    /// How another realm of the same file finds the value (Atoll's plumbing; not for apps).
    var _handover: _Handover { get }
}

/// How to find a managed value in another `Realm` of its file: what a ``ThreadSafeReference``
/// carries across threads.
public struct _Handover: @unchecked Sendable {
    /// The file's storage key, to refuse a resolve in a realm of another file.
    let path: String
    /// The version the value was read at: a realm behind it advances before resolving.
    let version: Int64
    /// The value in the given realm, or `nil` when it is gone there. Only ever called on that
    /// realm's thread, queue or actor; it captures values, never the source realm.
    let resolve: (Realm) -> Any?

    init(from realm: Realm, resolve: @escaping (Realm) -> Any?) {
        path = realm.coordinator.path
        version = realm.snapshotVersion
        self.resolve = resolve
    }

    private init(path: String, version: Int64, resolve: @escaping (Realm) -> Any?) {
        self.path = path
        self.version = version
        self.resolve = resolve
    }

    /// The same handover, with the resolved value transformed.
    func map(_ transform: @escaping (Any) -> Any?) -> _Handover {
        let resolve = self.resolve
        return _Handover(path: path, version: version) { realm in resolve(realm).flatMap(transform) }
    }

    static func unmanaged(_ what: String) -> Never {
        preconditionFailure("Cannot construct reference to unmanaged \(what), which can be passed across threads directly")
    }
}

// MARK: Conformances (collections are ThreadConfined as RealmCollections; maps and objects here)

extension ObjectBase: ThreadConfined {
    public var _handover: _Handover {
        guard let state = _managedState else { _Handover.unmanaged("object") }
        let name = state.table.name
        let row = state.row
        return _Handover(from: state.realm) { realm in
            guard let table = realm.coordinator.table(named: name), (try? realm.store.exists(table, row)) == true else { return nil }
            return realm.materialize(table, row: row)
        }
    }
}

extension CollectionBacking {
    /// The handover of a managed list, set or map: its owner and the property.
    func handover(_ noun: String, _ make: @escaping (_ManagedObjectState, Int) -> AnyObject) -> _Handover {
        guard case .managed(let state, let index) = self else { _Handover.unmanaged(noun) }
        let name = state.table.name
        let row = state.row
        return _Handover(from: state.realm) { realm in
            guard let table = realm.coordinator.table(named: name), (try? realm.store.exists(table, row)) == true,
                  let owner = realm.materialize(table, row: row)._managedState else { return nil }
            return make(owner, index)
        }
    }
}

extension List {
    public var _handover: _Handover { backing.handover("list") { List(state: $0, index: $1) } }
}

extension MutableSet {
    public var _handover: _Handover { backing.handover("set") { MutableSet(state: $0, index: $1) } }
}

extension Map: ThreadConfined {
    public var _handover: _Handover { backing.handover("map") { Map(state: $0, index: $1) } }
}

extension Results {
    public var _handover: _Handover {
        let descriptor = core.descriptor
        return _Handover(from: core.realm) { realm in
            if let owner = descriptor.owner {
                // A list's, a set's or an object's backlinks: gone with the object.
                guard let table = realm.coordinator.table(named: owner.table.name),
                      (try? realm.store.exists(table, owner.row)) == true else { return nil }
            }
            return Results(core: descriptor.core(in: realm))
        }
    }
}

extension LinkingObjects {
    public var _handover: _Handover {
        guard let results else { _Handover.unmanaged("linking objects") }
        let name = propertyName
        return results._handover.map { ($0 as? Results<Element>).map { LinkingObjects(propertyName: name, results: $0) } }
    }
}

extension AnyRealmCollection {
    public var _handover: _Handover { base.handover }
}

// MARK: ThreadSafeReference

/// Hands a managed object or collection to another thread, queue or actor: resolve it there
/// with `realm.resolve(_:)`, once.
///
/// ```swift
/// let reference = ThreadSafeReference(to: dog)
/// DispatchQueue.global().async {
///     let realm = try! Realm(configuration: config)
///     guard let dog = realm.resolve(reference) else { return }  // deleted meanwhile
///     try! realm.write { dog.age += 1 }
/// }
/// ```
public struct ThreadSafeReference<Confined: ThreadConfined>: Sendable {
    let handover: _Handover
    private let resolved: ResolvedFlag

    /// A reference to `threadConfined`, which must be managed (an unmanaged value can be passed
    /// as it is). The program stops for an unmanaged one, as in Realm.
    public init(to threadConfined: Confined) {
        handover = threadConfined._handover
        resolved = ResolvedFlag()
    }

    /// Whether the reference was resolved already: a reference resolves once.
    public var isInvalidated: Bool { resolved.value.load(ordering: .acquiring) }

    final class ResolvedFlag: Sendable {
        let value = ManagedAtomic<Bool>(false)
    }

    func claim() {
        guard !resolved.value.exchange(true, ordering: .acquiringAndReleasing) else {
            preconditionFailure("Can only resolve a thread safe reference once.")
        }
    }
}

extension Realm {
    /// The value a reference names, in this realm, or `nil` if it was deleted since. A realm
    /// older than the reference advances to the newest version first.
    ///
    /// ```swift
    /// let dogs = realm.resolve(reference)   // Results<Dog>?
    /// ```
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        verifyThread()
        precondition(reference.handover.path == coordinator.path,
                     "Cannot resolve a thread safe reference in a Realm of another file than the one it was made in")
        reference.claim()
        if snapshotVersion < reference.handover.version { refresh() }
        return reference.handover.resolve(self) as? Confined
    }

    /// An immutable snapshot of `object`, any thread may read it.
    public func freeze<T: ObjectBase>(_ object: T) -> T { object.freeze() }

    /// The live version of a frozen object in this realm's file, `nil` if it was deleted.
    public func thaw<T: ObjectBase>(_ object: T) -> T? { object.thaw() }

    /// An immutable snapshot of `collection`.
    public func freeze<Collection: RealmCollection>(_ collection: Collection) -> Collection { collection.freeze() }

    /// The live version of a frozen collection, `nil` if its owner was deleted.
    public func thaw<Collection: RealmCollection>(_ collection: Collection) -> Collection? { collection.thaw() }
}

// MARK: @ThreadSafe

/// A property that holds a managed object or collection usable from any thread: each read gives
/// it in a realm of the current thread (or `nil` once it was deleted).
///
/// ```swift
/// class Uploader {
///     @ThreadSafe var pending: Results<Photo>?
///     func run() { DispatchQueue.global().async { self.pending?.forEach { upload($0) } } }
/// }
/// ```
@propertyWrapper
public final class ThreadSafe<T: ThreadConfined>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (handover: _Handover, configuration: Realm.Configuration)?

    public init(wrappedValue: T?) {
        stored = wrappedValue.map { Self.capture($0) }
    }

    /// The value in a realm of the calling thread; assigning a managed value replaces it.
    public var wrappedValue: T? {
        get {
            guard let (handover, configuration) = lock.withLock({ stored }) else { return nil }
            let realm: Realm
            do {
                // The thread's open realm when there is one: its write transaction may change the value.
                realm = try Realm.ofCurrentThread(configuration)
            } catch {
                preconditionFailure("cannot open the realm of a @ThreadSafe value: \(error)")
            }
            if realm.snapshotVersion < handover.version { realm.refresh() }
            return handover.resolve(realm) as? T
        }
        set {
            let captured = newValue.map { Self.capture($0) }
            lock.withLock { stored = captured }
        }
    }

    private static func capture(_ value: T) -> (handover: _Handover, configuration: Realm.Configuration) {
        guard let realm = value.realm else { _Handover.unmanaged("\(T.self)") }
        return (value._handover, realm.configuration)
    }
}
