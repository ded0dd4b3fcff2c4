import AtollCore

/// Where a `List`, `MutableSet` or `Map` keeps its contents: in memory (an array, or a map's
/// dictionary) until its owner is added to a realm, then in the collection's own table, read and
/// written through the owner's realm.
///
/// ```swift
/// backing.modify(unmanaged: { $0.append(element) },
///                managed: { state, index in state.realm.listInsert(state, index, element._atollStored(), at: count) })
/// ```
enum CollectionBacking<Contents: UnmanagedCollectionContents> {
    case unmanaged(Contents)
    /// The owner and the collection property's index in its schema.
    case managed(_ManagedObjectState, Int)

    /// The realm of the owning object, if managed.
    var realm: Realm? {
        if case .managed(let state, _) = self { return state.realm }
        return nil
    }

    var isInvalidated: Bool {
        if case .managed(let state, _) = self { return state.isInvalidated }
        return false
    }

    var count: Int {
        switch self {
        case .unmanaged(let contents): contents.count
        case .managed(let state, let index): state.realm.collectionCount(state, index)
        }
    }

    /// Changes the in-memory contents in place, or the managed collection through `managed`.
    mutating func modify(unmanaged: (inout Contents) -> Void, managed: (_ManagedObjectState, Int) -> Void) {
        switch self {
        case .unmanaged(var contents):
            // Drops the enum's reference first, so that `contents` is changed without a copy.
            self = .unmanaged(Contents())
            unmanaged(&contents)
            self = .unmanaged(contents)
        case .managed(let state, let index):
            managed(state, index)
        }
    }

    mutating func removeAll() {
        modify(unmanaged: { $0 = Contents() }, managed: { state, index in state.realm.collectionClear(state, index) })
    }

    /// The managed collection's objects as live results, for querying and sorting. `noun` names
    /// the collection in the message of the trap an unmanaged one meets ("lists", "sets").
    func results<Element: ObjectBase>(of type: Element.Type, noun: String) -> Results<Element> {
        guard case .managed(let state, let index) = self else {
            preconditionFailure("Only \(noun) of managed objects can be queried; add the owner to a realm first")
        }
        return Results(realm: state.realm, objectType: state.table.property(index).objectType ?? ClassInfo.of(Element.self).schema.name,
                       base: .collection(owner: state, property: index))
    }
}

extension CollectionBacking {
    /// The elements of a list or a set, in order.
    func elements<Element: RealmCollectionValue>() -> [Element] where Contents == [Element] {
        switch self {
        case .unmanaged(let elements): elements
        case .managed(let state, let index): state.realm.collectionElements(state, index).map { Element.decoded($0.element) }
        }
    }

    /// The entries of a map, by key.
    func entries<Value: RealmCollectionValue>() -> [(key: String, value: Value)] where Contents == [String: Value] {
        switch self {
        case .unmanaged(let entries): entries.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        case .managed(let state, let index):
            state.realm.collectionElements(state, index).map { ($0.key ?? "", Value.decoded($0.element)) }
        }
    }
}

/// What an unmanaged collection holds: an array, or a map's dictionary.
protocol UnmanagedCollectionContents: Collection {
    init()
}

extension Array: UnmanagedCollectionContents {}
extension Dictionary: UnmanagedCollectionContents {}

extension RealmCollectionValue {
    /// The element a collection's table holds as `stored`.
    static func decoded(_ stored: _StoredElement) -> Self {
        guard let element = _atollFromStored(stored) else {
            preconditionFailure("A stored element is not a \(Self.self)")
        }
        return element
    }
}
