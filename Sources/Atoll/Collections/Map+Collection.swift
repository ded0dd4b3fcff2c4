import AtollCore
import Foundation

/// A collection of values by key: `Map`.
public protocol RealmKeyedCollection: Sequence, CustomStringConvertible {
    associatedtype Key: _MapKey
    associatedtype Value: RealmCollectionValue
    /// The value for `key`; setting `nil` removes the key.
    subscript(key: Key) -> Value? { get set }
    func removeObject(for key: Key)
}

extension Map: RealmKeyedCollection {}

/// A change of a map: the keys removed, added and whose value changed (or whose object was
/// modified), by key.
public enum RealmMapChange<Collection: RealmKeyedCollection> {
    case initial(Collection)
    case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
    case error(Swift.Error)
}

extension RealmMapChange: @unchecked Sendable {}

extension Map {
    public var isInvalidated: Bool { backing.isInvalidated }
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// Whether `key` has a value.
    public func contains(key: Key) -> Bool { self[key] != nil }

    /// The keys, sorted.
    public var sortedKeys: [Key] { entries.map { Key(_atollMapKey: $0.key) } }

    /// Adds every pair of `sequence`; `combine` picks the value of a key already present.
    public func merge<S: Sequence>(_ sequence: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
        where S.Element == (key: Key, value: Value) {
        for (key, value) in sequence { self[key] = try self[key].map { try combine($0, value) } ?? value }
    }

    /// Adds every entry of `other`; `combine` picks the value of a key already present.
    public func merge(_ other: [Key: Value], uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.map { (key: $0.key, value: $0.value) }, uniquingKeysWith: combine)
    }

    /// An immutable snapshot of a managed map (itself when unmanaged or frozen).
    public func freeze() -> Map<Key, Value> {
        let map = Map()
        map.backing = backing.frozen()
        return map
    }

    /// The live map of a frozen one; nil when its owner was deleted since.
    public func thaw() -> Map<Key, Value>? {
        guard let thawed = backing.thawed() else { return nil }
        let map = Map()
        map.backing = thawed
        return map
    }

    /// Calls `block` with the map at once, then with the keys deleted, inserted and modified after
    /// every write that changed it: a value replaced, or (for objects) the object modified — only
    /// in the named `keyPaths` when they are given.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmMapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        guard case .managed(let state, let index) = backing else {
            preconditionFailure("Only maps of managed objects can be observed; add the owner to a realm first")
        }
        return state.realm.addNotifier(on: queue, block, frozen: { $0.frozen() }) {
            MapNotifier<Key, Value>(owner: state, property: index, keyPaths: keyPaths, block: $0)
        }
    }
}

extension RealmMapChange {
    func frozen<K, V>() -> RealmMapChange<Map<K, V>> where Collection == Map<K, V> {
        switch self {
        case .initial(let map): .initial(map.freeze())
        case .update(let map, let d, let i, let m): .update(map.freeze(), deletions: d, insertions: i, modifications: m)
        case .error(let error): .error(error)
        }
    }
}

/// An optional object, the values of a map of objects (`Map<String, Dog?>`).
public protocol _OptionalObject {
    associatedtype Wrapped: ObjectBase
}

extension Optional: _OptionalObject where Wrapped: ObjectBase {}

extension Map: _ObjectCollectionQueries where Value: _OptionalObject {
    public var _queryResults: Results<Value.Wrapped> { results }

    /// The map's objects as live results (no order), for querying and sorting.
    var results: Results<Value.Wrapped> {
        guard case .managed(let state, let index) = backing else {
            preconditionFailure("Only maps of managed objects can be queried; add the owner to a realm first")
        }
        return Results(realm: state.realm, objectType: state.table.property(index).objectType ?? ClassInfo.of(Value.Wrapped.self).schema.name, base: .collection(owner: state, property: index))
    }
}

/// Delivers a map's changes by key: the entries are compared with the previous delivery's.
final class MapNotifier<Key: _MapKey, Value: RealmCollectionValue>: Notifier {
    /// An entry as compared: a value, or an object's row.
    enum Entry: Equatable {
        case value(AtollCore.Value)
        case object(table: String, row: Int64)
        case null
    }

    private let ownerTable: TableInfo
    private let ownerRow: Int64
    private let property: Int
    private let keyPaths: [String]?
    private let block: (RealmMapChange<Map<Key, Value>>) -> Void
    private var entries: [String: Entry] = [:]

    init(owner: _ManagedObjectState, property: Int, keyPaths: [String]?, block: @escaping (RealmMapChange<Map<Key, Value>>) -> Void) {
        ownerTable = owner.table
        ownerRow = owner.row
        self.property = property
        self.keyPaths = keyPaths
        self.block = block
    }

    /// The map in `realm`, nil once its owner is gone.
    private func map(in realm: Realm) -> Map<Key, Value>? {
        guard (try? realm.store.exists(ownerTable, ownerRow)) == true else { return nil }
        return Map(state: realm.materialize(ownerTable, row: ownerRow)._managedState!, index: property)
    }

    private func snapshot(_ realm: Realm) -> [String: Entry] {
        guard (try? realm.store.exists(ownerTable, ownerRow)) == true else { return [:] }
        let state = realm.materialize(ownerTable, row: ownerRow)._managedState!
        var result: [String: Entry] = [:]
        for (key, element) in realm.collectionElements(state, property) {
            let entry: Entry = switch element {
            case .value(let value): .value(value)
            case .object(let object): object._managedState.map { .object(table: $0.table.name, row: $0.row) } ?? .null
            case .list, .map: realm.mixedKey(element).map(Entry.value) ?? .null
            }
            result[key ?? ""] = entry
        }
        return result
    }

    override func deliverInitial(in realm: Realm) {
        entries = snapshot(realm)
        if let map = map(in: realm) { block(.initial(map)) }
    }

    override func resync(in realm: Realm) { entries = snapshot(realm) }

    override func deliver(_ summary: ChangeSummary, in realm: Realm) {
        guard !summary.isEmpty, let map = map(in: realm) else { return }
        let new = snapshot(realm)
        let watched = keyPaths.map { Set($0.map { String($0.split(separator: ".").first ?? "") }) }
        func objectModified(_ entry: Entry) -> Bool {
            guard case .object(let table, let row) = entry, let changed = summary.changes(for: table)?.modified[row] else { return false }
            return watched.map { !changed.isDisjoint(with: $0) } ?? true
        }
        let deletions = entries.keys.filter { new[$0] == nil }.sorted()
        let insertions = new.keys.filter { entries[$0] == nil }.sorted()
        let modifications = new.keys.filter { key in
            guard let old = entries[key], let now = new[key] else { return false }
            return old != now || objectModified(now)
        }.sorted()
        entries = new
        guard !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return }
        block(.update(map, deletions: deletions.map(Key.init(_atollMapKey:)), insertions: insertions.map(Key.init(_atollMapKey:)),
                      modifications: modifications.map(Key.init(_atollMapKey:))))
    }
}
