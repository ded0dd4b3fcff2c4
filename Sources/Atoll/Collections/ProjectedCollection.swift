import Foundation

/// A list or set of objects seen as the values of one property of each: what
/// `@Projected(\Person.friends.projectTo.firstName)` gives a ``Projection``.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
/// }
/// projection.friendsFirstNames.first   // the first friend's first name
/// ```
/// It is live: it reads the collection on each access, and `observe` reports its changes.
public struct ProjectedCollection<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    public typealias Index = Int

    /// The collection's objects, type-erased, and how to read the element from each.
    let base: ProjectedBase<Element>

    public var startIndex: Int { 0 }
    public var endIndex: Int { base.count() }
    public var count: Int { base.count() }

    /// - Complexity: O(1), plus reading the object at `position`.
    public subscript(position: Int) -> Element { base.element(position) }

    /// The realm of the collection, `nil` when unmanaged.
    public var realm: Realm? { base.realm() }
    public var isInvalidated: Bool { base.isInvalidated() }
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// The index of the first object of the underlying collection matching a query of its
    /// objects' properties, or `nil`.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        base.indexMatching(predicateFormat, args)
    }

    /// Calls `block` with the collection at once and after every change of the underlying list or
    /// set, or of the projected property of one of its objects.
    ///
    /// ```swift
    /// let token = projection.friendsFirstNames.observe { change in
    ///     if case .update(let names, _, _, let modifications) = change { print(names, modifications) }
    /// }
    /// ```
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void) -> NotificationToken {
        base.observe(keyPaths, queue, block)
    }

    /// A frozen snapshot, readable from any thread.
    public func freeze() -> ProjectedCollection<Element> { base.freeze() }

    /// The live collection of a frozen one.
    public func thaw() -> ProjectedCollection<Element>? { base.thaw() }

    public var description: String {
        "ProjectedCollection<\(Element.self)> {\n" + enumerated().map { "\t[\($0.offset)] \($0.element)" }.joined(separator: "\n") + "\n}"
    }
}

extension ProjectedCollection: Equatable where Element: Equatable {
    public static func == (lhs: ProjectedCollection, rhs: ProjectedCollection) -> Bool { lhs.elementsEqual(rhs) }
}

/// The operations of a ``ProjectedCollection`` over its objects' collection.
struct ProjectedBase<Element: RealmCollectionValue> {
    let count: () -> Int
    let element: (Int) -> Element
    let realm: () -> Realm?
    let isInvalidated: () -> Bool
    let indexMatching: (String, [Any]) -> Int?
    let observe: ([String]?, DispatchQueue?, @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void) -> NotificationToken
    let freeze: () -> ProjectedCollection<Element>
    let thaw: () -> ProjectedCollection<Element>?

    /// `collection`'s objects, each read through `keyPath`.
    init<O: ObjectBase>(_ collection: AnyRealmCollection<O>, _ keyPath: KeyPath<O, Element>) {
        count = { collection.count }
        element = { collection[$0][keyPath: keyPath] }
        realm = { collection.realm }
        isInvalidated = { collection.isInvalidated }
        indexMatching = { format, args in collection.base.index(matching: format, args) }
        observe = { keyPaths, queue, block in
            // Without key paths, only the projected property of the objects counts.
            let names = keyPaths ?? KeyPathNames.nameIfPersisted(keyPath).map { [$0] }
            return collection.observe(keyPaths: names, on: queue) { change in
                block(change.map { ProjectedCollection(base: ProjectedBase($0, keyPath)) })
            }
        }
        freeze = { ProjectedCollection(base: ProjectedBase(collection.freeze(), keyPath)) }
        thaw = { collection.thaw().map { ProjectedCollection(base: ProjectedBase($0, keyPath)) } }
    }
}

/// Maps each object of a list or set to one of its properties: `\Person.friends.projectTo.firstName`.
@dynamicMemberLookup
public struct ElementMapper<Element: ObjectBase> {
    let collection: AnyRealmCollection<Element>

    public subscript<V: RealmCollectionValue>(dynamicMember member: KeyPath<Element, V>) -> ProjectedCollection<V> {
        ProjectedCollection(base: ProjectedBase(collection, member))
    }
}

extension List where Element: ObjectBase {
    /// The list's objects mapped to one of their properties, for `@Projected`.
    public var projectTo: ElementMapper<Element> { ElementMapper(collection: AnyRealmCollection(self)) }
}

extension MutableSet where Element: ObjectBase {
    /// The set's objects mapped to one of their properties, for `@Projected`.
    public var projectTo: ElementMapper<Element> { ElementMapper(collection: AnyRealmCollection(self)) }
}
