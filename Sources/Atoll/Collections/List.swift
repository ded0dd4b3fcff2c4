import AtollCore
import Foundation

/// An ordered list of values or objects, as a property: `@Persisted var dogs: List<Dog>`.
///
/// ```swift
/// try realm.write { person.dogs.append(rex) }
/// person.dogs.first?.name
/// ```
public final class List<Element: RealmCollectionValue>: RandomAccessCollection, MutableCollection, CustomStringConvertible {
    var backing: CollectionBacking<[Element]>
    /// For a list an `AnyRealmValue` property holds: writes the property's whole value again after
    /// a change (AnyRealmValue.swift).
    var nestedWriteBack: (() -> Void)?

    public init() { backing = .unmanaged([]) }

    init(state: _ManagedObjectState, index: Int) { backing = .managed(state, index) }

    /// The realm of the owning object, if managed.
    public var realm: Realm? { backing.realm }

    public var isInvalidated: Bool { backing.isInvalidated }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public var count: Int { backing.count }

    public subscript(position: Int) -> Element {
        get {
            switch backing {
            case .unmanaged(let elements): return elements[position]
            case .managed(let state, let index):
                return Element.decoded(state.realm.listElement(state, index, at: position))
            }
        }
        set {
            defer { nestedWriteBack?() }
            backing.modify(unmanaged: { $0[position] = newValue },
                           managed: { state, index in state.realm.listSet(state, index, newValue._atollStored(), at: position) })
        }
    }

    public func append(_ element: Element) { insert(element, at: count) }

    public func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    /// Appends the elements of a sequence (Realm's spelling).
    public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        append(contentsOf: elements)
    }

    public func insert(_ element: Element, at position: Int) {
        defer { nestedWriteBack?() }
        backing.modify(unmanaged: { $0.insert(element, at: position) },
                       managed: { state, index in state.realm.listInsert(state, index, element._atollStored(), at: position) })
    }

    @discardableResult
    public func remove(at position: Int) -> Element {
        let element = self[position]
        defer { nestedWriteBack?() }
        backing.modify(unmanaged: { $0.remove(at: position) }, managed: { state, index in state.realm.listRemove(state, index, at: position) })
        return element
    }

    public func removeAll() {
        backing.removeAll()
        nestedWriteBack?()
    }

    public func removeLast() { remove(at: count - 1) }
    public func removeFirst() { remove(at: 0) }

    /// Removes the last `k` elements.
    public func removeLast(_ k: Int) {
        precondition(k >= 0 && k <= count, "cannot remove \(k) elements from a list of \(count)")
        for _ in 0..<k { remove(at: count - 1) }
    }

    /// Removes the first `k` elements.
    public func removeFirst(_ k: Int) {
        precondition(k >= 0 && k <= count, "cannot remove \(k) elements from a list of \(count)")
        for _ in 0..<k { remove(at: 0) }
    }

    /// Removes the elements in `bounds`.
    public func removeSubrange(_ bounds: Range<Int>) {
        precondition(bounds.lowerBound >= 0 && bounds.upperBound <= count, "range \(bounds) outside a list of \(count)")
        for _ in bounds { remove(at: bounds.lowerBound) }
    }

    /// Inserts the elements of `newElements` at `position`, in order.
    public func insert<C: Collection>(contentsOf newElements: C, at position: Int) where C.Element == Element {
        for (offset, element) in newElements.enumerated() { insert(element, at: position + offset) }
    }

    /// Replaces the elements in `subrange` with those of `newElements`.
    public func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == Element {
        removeSubrange(subrange)
        insert(contentsOf: newElements, at: subrange.lowerBound)
    }

    public func move(from: Int, to: Int) {
        defer { nestedWriteBack?() }
        backing.modify(unmanaged: { elements in
            let element = elements.remove(at: from)
            elements.insert(element, at: to)
        }, managed: { state, index in state.realm.listMove(state, index, from: from, to: to) })
    }

    public func replace(index: Int, object: Element) { self[index] = object }

    public func swapAt(_ index1: Int, _ index2: Int) {
        guard index1 != index2 else { return }
        let first = self[index1]
        let second = self[index2]
        self[index1] = second
        self[index2] = first
    }

    public func index(of element: Element) -> Int? { firstIndex(of: element) }

    /// The elements as a Swift array.
    var elements: [Element] { backing.elements() }

    public var description: String { "List<\(Element.self)> " + elements.description }
}

extension List: _PersistedElementCollection {
    public static var _collectionKind: CollectionKind { .list }
    public convenience init(_managed state: _ManagedObjectState, index: Int) { self.init(state: state, index: index) }
    public var _elements: [Element] { elements }
    public func _appendUnmanaged(_ element: Element) { append(element) }
}

extension List: ExpressibleByArrayLiteral {
    public convenience init(arrayLiteral elements: Element...) {
        self.init()
        backing = .unmanaged(elements)
    }
}

extension List where Element: ObjectBase {
    /// The list's objects as live results, in list order, for querying and sorting.
    ///
    /// ```swift
    /// let puppies = person.dogs.where { $0.age < 2 }
    /// ```
    var results: Results<Element> { backing.results(of: Element.self, noun: "lists") }
}
