import AtollCore
import Foundation

/// String keys to values or objects: `@Persisted var scores: Map<String, Int>`.
public final class Map<Key: _MapKey, Value: RealmCollectionValue>: Sequence, CustomStringConvertible {
    var backing: CollectionBacking<[String: Value]>
    /// For a dictionary an `AnyRealmValue` property holds: writes the property's whole value
    /// again after a change (AnyRealmValue.swift).
    var nestedWriteBack: (() -> Void)?

    public init() { backing = .unmanaged([:]) }

    init(state: _ManagedObjectState, index: Int) { backing = .managed(state, index) }

    public var realm: Realm? { backing.realm }

    public var count: Int { backing.count }

    public var isEmpty: Bool { count == 0 }

    var entries: [(key: String, value: Value)] { backing.entries() }

    public var keys: [String] { entries.map(\.key) }
    public var values: [Value] { entries.map(\.value) }

    /// The entries, as realm-swift iterates a map: `for entry in map { entry.key; entry.value }`.
    public func makeIterator() -> IndexingIterator<[SingleMapEntry<Key, Value>]> {
        entries.map { SingleMapEntry(key: Key(_atollMapKey: $0.key), value: $0.value) }.makeIterator()
    }

    /// The entries as `(key, value)` tuples, for `for (key, value) in map.asKeyValueSequence()` and
    /// Swift's dictionary initialisers.
    public func asKeyValueSequence() -> [(key: Key, value: Value)] {
        entries.map { (key: Key(_atollMapKey: $0.key), value: $0.value) }
    }

    public subscript(key: Key) -> Value? {
        get { self[string: key._atollMapKey] }
        set { self[string: key._atollMapKey] = newValue }
    }

    subscript(string key: String) -> Value? {
        get {
            switch backing {
            case .unmanaged(let entries): return entries[key]
            case .managed(let state, let index):
                return state.realm.mapValue(state, index, key: key).map(Value.decoded)
            }
        }
        set {
            defer { nestedWriteBack?() }
            backing.modify(unmanaged: { $0[key] = newValue }, managed: { state, index in
                if let newValue { state.realm.mapSet(state, index, key: key, newValue._atollStored()) }
                else { state.realm.mapRemove(state, index, key: key) }
            })
        }
    }

    public func updateValue(_ value: Value, forKey key: Key) { self[key] = value }

    public func removeObject(for key: Key) { self[key] = nil }

    public func removeAll() {
        backing.removeAll()
        nestedWriteBack?()
    }

    public var description: String { "Map<String, \(Value.self)> " + entries.map { "\($0.key): \($0.value)" }.description }
}

extension Map: _Persistable {
    public static var _atollProperty: _PropertyShape {
        var shape = Value._atollElementShape
        shape.collection = .map
        return shape
    }

    public static func _atollDefault() -> Map<Key, Value> { Map() }

    public static func _atollGet(_ object: _ManagedObjectState, _ index: Int) -> Map<Key, Value> {
        object.collection(index) { Map(state: object, index: index) }
    }

    public static func _atollSet(_ value: Map<Key, Value>, _ object: _ManagedObjectState, _ index: Int) {
        let entries = value.entries.map { ($0.key, $0.value._atollStored()) }
        guard let transaction = object.realm.requireWrite("assign a map") else { return }
        object.realm.perform(transaction) { try object.realm.replaceCollection(object, index, .entries(entries), transaction) }
    }

    public func _atollContent() -> _FieldContent { .entries(entries.map { ($0.key, $0.value._atollStored()) }) }

    public static func _atollFromAny(_ any: Any) throws -> Map<Key, Value> {
        if let map = any as? Map<Key, Value> { return map }
        guard let dictionary = any as? [String: Any] else {
            throw Realm.Error(.invalidValue, "a \(type(of: any)) cannot be stored in a Map<String, \(Value.self)>")
        }
        let map = Map()
        for (key, element) in dictionary { map[string: key] = try Value._atollFromAny(element) }
        return map
    }
}

/// The key type of a `Map`: strings.
public protocol _MapKey: Hashable {
    var _atollMapKey: String { get }
    init(_atollMapKey: String)
}

extension String: _MapKey {
    public var _atollMapKey: String { self }
    public init(_atollMapKey: String) { self = _atollMapKey }
}

/// One entry of a `Map`, as iterating one gives it.
public struct SingleMapEntry<Key: _MapKey, Value: RealmCollectionValue> {
    public let key: Key
    public let value: Value

    public init(key: Key, value: Value) {
        self.key = key
        self.value = value
    }
}
