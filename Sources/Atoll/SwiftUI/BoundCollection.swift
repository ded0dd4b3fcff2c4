import Foundation

/// A wrapper of a Realm collection that edits it in write transactions: `$results` of
/// `@ObservedResults`, a `Binding` of a list, set or results (`$person.dogs`). Each edit thaws the
/// collection and writes in a transaction unless one is open.
///
/// ```swift
/// ForEach(dogs) { … }.onDelete(perform: $dogs.remove)
/// Button("Add") { $person.dogs.append(Dog()) }
/// ```
@preconcurrency @MainActor
public protocol BoundCollection {
    associatedtype Value
    associatedtype Element: RealmCollectionValue
    var wrappedValue: Value { get }
}

extension BoundCollection {
    fileprivate func write(_ block: (Value) -> Void) where Value: ThreadConfined {
        realmWrite(wrappedValue, block)
    }
}

extension BoundCollection where Value: RealmCollection {
    public typealias Index = Value.Index
    public typealias Indices = Value.Indices
}

extension BoundCollection where Value == List<Element> {
    public func remove(at index: Int) { write { _ = $0.remove(at: index) } }
    public func remove(atOffsets offsets: IndexSet) { write { $0.remove(atOffsets: offsets) } }
    public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
        write { $0.move(fromOffsets: offsets, toOffset: destination) }
    }
    public func append(_ value: Value.Element) { write { $0.append(value) } }
}

extension BoundCollection where Value == List<Element>, Element: ObjectBase & ThreadConfined {
    public func append(_ value: Value.Element) { write { list in thaw(value, in: list.realm).map { list.append($0) } } }
}

extension BoundCollection where Value == Results<Element>, Element: ObjectBase & ThreadConfined {
    /// Deletes `object` from the realm, if it is one of the results.
    public func remove(_ object: Value.Element) {
        write { results in
            guard let thawed = thaw(object, in: results.realm), results.index(of: thawed) != nil else { return }
            results.realm?.delete(thawed)
        }
    }

    /// Deletes the objects at `offsets` from the realm.
    public func remove(atOffsets offsets: IndexSet) {
        write { results in results.realm?.delete(Array(offsets.map { results[$0] })) }
    }
}

extension BoundCollection where Value == MutableSet<Element> {
    public func remove(_ element: Value.Element) { write { $0.remove(element) } }
    public func insert(_ value: Value.Element) { write { $0.insert(value) } }
}

extension BoundCollection where Value == MutableSet<Element>, Element: ObjectBase & ThreadConfined {
    public func remove(_ object: Value.Element) { write { set in thaw(object, in: set.realm).map { set.remove($0) } } }
    public func insert(_ value: Value.Element) { write { set in thaw(value, in: set.realm).map { set.insert($0) } } }
}

extension BoundCollection where Value == Results<Element>, Element: Object {
    /// Adds `value` to the results' realm.
    public func append(_ value: Value.Element) { write { results in thaw(value, in: results.realm).map { results.realm?.add($0) } } }
}

extension BoundCollection where Value == Results<Element>, Element: ProjectionObservable & ThreadConfined, Element.Root: Object {
    /// Adds the projected object of `value` to the results' realm.
    public func append(_ value: Value.Element) {
        write { results in thaw(value.rootObject, in: results.realm).map { results.realm?.add($0) } }
    }
}

/// A wrapper of a map that edits it in write transactions (a `Binding` of a map).
public protocol BoundMap {
    associatedtype Value: RealmKeyedCollection
    var wrappedValue: Value { get }
}

extension BoundMap {
    public subscript(key: Value.Key) -> Value.Value? { wrappedValue[key] }

    public func set(object: Value.Value?, for key: Value.Key) where Value: ThreadConfined {
        realmWrite(wrappedValue) { map in
            var map = map
            map[key] = object
        }
    }
}

extension BoundMap where Value.Value: ObjectBase & ThreadConfined {
    public func set(object: Value.Value?, for key: Value.Key) where Value: ThreadConfined {
        realmWrite(wrappedValue) { map in
            var map = map
            if let object { map[key] = thaw(object, in: map.realm) } else { map.removeObject(for: key) }
        }
    }
}
