import Foundation

/// The canonical in-memory model of a synced realm: the schema and every object's fields, by
/// type and primary key. Every replica (each client and the server) that applied the same
/// history holds an equal `ReplicaState`, and ``canonicalDump()`` proves it byte for byte.
///
/// ```swift
/// var state = ReplicaState()
/// state.apply(changeset)          // never traps, whatever the instructions
/// state.canonicalDump()           // deterministic bytes
/// ```
///
/// Fields hold ``Value``s: scalars, `.link` (by primary key; a link to a missing object stays,
/// so list positions agree everywhere), `.object` for an embedded object, `.list`, `.set`, `.map`.
/// A field absent from an object's dictionary holds its property's default.
package struct ReplicaState: Hashable, Sendable {
    /// Object types by name, as merged from `addTable` and `addColumn` instructions.
    package internal(set) var schema: [String: ObjectSchema] = [:]
    /// Top-level objects' fields by type, then primary key.
    package internal(set) var objects: [String: [Value: [String: Value]]] = [:]

    package init() {}

    /// The fields of one object, or `nil` when it does not exist.
    package func object(_ id: ObjectID) -> [String: Value]? {
        objects[id.type]?[id.primaryKey]
    }

    /// Primary keys of the objects of `type`, in canonical order.
    package func primaryKeys(of type: String) -> [Value] {
        // Each key encoded once, not at every comparison.
        (objects[type] ?? [:]).keys.map { ($0, $0.canonicalBytes) }
            .sorted { $0.1.lexicographicallyPrecedes($1.1) }.map(\.0)
    }

    /// The value at `path` in object `id` (defaults filled in), or `nil` when the path leads nowhere.
    package func value(_ id: ObjectID, _ path: [PathElement]) -> Value? {
        guard let fields = object(id) else { return nil }
        var current = Value.object(fields)
        var kind = SlotKind.embedded(id.type)
        for element in path {
            guard let (next, nextKind) = child(of: current, kind, element) else { return nil }
            current = next
            kind = nextKind
        }
        return current
    }

    /// How a value in the tree is typed, for navigation and normalisation.
    enum SlotKind {
        /// A top-level or embedded object of this type (a `.object` value).
        case embedded(String)
        /// The value of a property of an object.
        case field(Property)
        /// One element of a collection property.
        case element(Property)
    }

    /// The property of a type, if both are known.
    func property(_ type: String, _ name: String) -> Property? {
        schema[type]?[property: name]
    }

    /// The embedded type a slot of `kind` holds, if it holds embedded objects.
    func embeddedType(_ kind: SlotKind) -> String? {
        switch kind {
        case .embedded(let t): return t
        case .field(let p) where p.collection == .single, .element(let p):
            guard p.type == .object, let target = p.objectType, schema[target]?.isEmbedded == true else { return nil }
            return target
        case .field: return nil
        }
    }

    /// The child of `value` at `element` and its kind, with schema defaults for absent fields.
    func child(of value: Value, _ kind: SlotKind, _ element: PathElement) -> (Value, SlotKind)? {
        switch (kind, element, value) {
        case (.field(let p), .index(let i), .list(let items)) where p.collection == .list:
            return items.indices.contains(i) ? (items[i], .element(p)) : nil
        case (.field(let p), .key(let k), .map(let entries)) where p.collection == .map:
            return entries[k].map { ($0, .element(p)) }
        case (_, .property(let name), .object(let fields)):
            guard let type = embeddedType(kind), let p = property(type, name) else { return nil }
            return (fields[name] ?? defaultValue(p), .field(p))
        default:
            return nil
        }
    }

    /// The value a property holds before anything is written to it.
    package func defaultValue(_ p: Property) -> Value {
        switch p.collection {
        case .list: return .list([])
        case .set: return .set([])
        case .map: return .map([:])
        case .single: return p.initialValue
        }
    }
}

extension Value {
    /// The value's binary encoding, the order canonical dumps sort by.
    var canonicalBytes: [UInt8] {
        var w = BinaryWriter()
        encode(into: &w)
        return w.bytes
    }
}
