import AtollCore
import Foundation

/// An unordered collection of distinct values or objects: `@Persisted var tags: MutableSet<String>`.
public final class MutableSet<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    var backing: CollectionBacking<[Element]>

    public init() { backing = .unmanaged([]) }

    init(state: _ManagedObjectState, index: Int) { backing = .managed(state, index) }

    public var realm: Realm? { backing.realm }

    public var isInvalidated: Bool { backing.isInvalidated }

    public var count: Int { backing.count }

    public var isEmpty: Bool { count == 0 }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The element at `position` in the set's (stable, unspecified) order.
    /// - Complexity: O(n); iterate rather than index in a loop.
    public subscript(position: Int) -> Element {
        let elements = elements
        precondition(position >= 0 && position < elements.count, "Index \(position) is out of bounds (must be less than \(elements.count)).")
        return elements[position]
    }

    public func index(of element: Element) -> Int? { elements.firstIndex(of: element) }

    var elements: [Element] { backing.elements() }

    public func makeIterator() -> IndexingIterator<[Element]> { elements.makeIterator() }

    public func contains(_ element: Element) -> Bool {
        switch backing {
        case .unmanaged(let elements): elements.contains(element)
        case .managed(let state, let index): state.realm.setContains(state, index, element._atollStored())
        }
    }

    public func insert(_ element: Element) {
        backing.modify(unmanaged: { if !$0.contains(element) { $0.append(element) } },
                       managed: { state, index in state.realm.setInsert(state, index, element._atollStored()) })
    }

    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        for element in elements { insert(element) }
    }

    public func remove(_ element: Element) {
        backing.modify(unmanaged: { $0.removeAll { $0 == element } },
                       managed: { state, index in state.realm.setRemove(state, index, element._atollStored()) })
    }

    public func removeAll() { backing.removeAll() }

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
    public convenience init(_managed state: _ManagedObjectState, index: Int) { self.init(state: state, index: index) }
    public var _elements: [Element] { elements }
    public func _appendUnmanaged(_ element: Element) { insert(element) }
}

extension MutableSet where Element: ObjectBase {
    /// The set's objects as live results, for querying and sorting.
    var results: Results<Element> { backing.results(of: Element.self, noun: "sets") }
}
