import AtollCore
import Foundation

/// An unordered collection of distinct values or objects: `@Persisted var tags: MutableSet<String>`.
public final class MutableSet<Element: RealmCollectionValue>: Sequence, CustomStringConvertible {
    enum Backing {
        case unmanaged([Element])
        case managed(ManagedObjectState, Int)
    }

    var backing: Backing

    public init() { backing = .unmanaged([]) }

    init(state: ManagedObjectState, index: Int) { backing = .managed(state, index) }

    public var realm: Realm? {
        if case .managed(let state, _) = backing { return state.realm }
        return nil
    }

    public var count: Int {
        switch backing {
        case .unmanaged(let elements): elements.count
        case .managed(let state, let index): state.realm.collectionCount(state, index)
        }
    }

    public var isEmpty: Bool { count == 0 }

    var elements: [Element] {
        switch backing {
        case .unmanaged(let elements): return elements
        case .managed(let state, let index):
            return state.realm.collectionElements(state, index).map { List<Element>.decode($0.element) }
        }
    }

    public func makeIterator() -> IndexingIterator<[Element]> { elements.makeIterator() }

    public func contains(_ element: Element) -> Bool {
        switch backing {
        case .unmanaged(let elements): elements.contains(element)
        case .managed(let state, let index): state.realm.setContains(state, index, element._atollStored())
        }
    }

    public func insert(_ element: Element) {
        switch backing {
        case .unmanaged(var elements):
            if !elements.contains(element) { elements.append(element) }
            backing = .unmanaged(elements)
        case .managed(let state, let index):
            state.realm.setInsert(state, index, element._atollStored())
        }
    }

    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        for element in elements { insert(element) }
    }

    public func remove(_ element: Element) {
        switch backing {
        case .unmanaged(var elements):
            elements.removeAll { $0 == element }
            backing = .unmanaged(elements)
        case .managed(let state, let index):
            state.realm.setRemove(state, index, element._atollStored())
        }
    }

    public func removeAll() {
        switch backing {
        case .unmanaged: backing = .unmanaged([])
        case .managed(let state, let index): state.realm.collectionClear(state, index)
        }
    }

    public func isSubset(of other: MutableSet<Element>) -> Bool { elements.allSatisfy(other.contains) }
    public func intersects(_ other: MutableSet<Element>) -> Bool { elements.contains(where: other.contains) }
    public func formUnion(_ other: MutableSet<Element>) { insert(objectsIn: other.elements) }
    public func formIntersection(_ other: MutableSet<Element>) {
        for element in elements where !other.contains(element) { remove(element) }
    }
    public func subtract(_ other: MutableSet<Element>) {
        for element in other.elements { remove(element) }
    }

    public var description: String { "MutableSet<\(Element.self)> " + elements.description }
}

extension MutableSet: _PersistedElementCollection {
    public static var _collectionKind: CollectionKind { .set }
    public convenience init(_managed state: ManagedObjectState, index: Int) { self.init(state: state, index: index) }
    public var _elements: [Element] { elements }
    public func _appendUnmanaged(_ element: Element) { insert(element) }
}
