import AtollCore
import Foundation

/// What every collection of objects has: `Results`, `List`, `MutableSet` and `LinkingObjects`, so
/// code can be written once over any of them (or over ``AnyRealmCollection``).
///
/// ```swift
/// func overdue<C: RealmCollection>(_ tasks: C) -> Results<C.Element> where C.Element == Task {
///     tasks.filter("due < %@", Date()).sorted(byKeyPath: "due")
/// }
/// ```
/// Collections of values (`List<Int>`, `Results<String>`) are `RealmCollection`s too; their
/// queries are on `self` (`filter("self > 1")`), and key-path sorts and aggregates of properties
/// stop the program with Realm's message, as realm-swift's throw.
public protocol RealmCollection<Element>: RandomAccessCollection, CustomStringConvertible, ThreadConfined where Index == Int, Element: RealmCollectionValue {
    associatedtype Element

    /// The realm of the collection, `nil` when unmanaged.
    var realm: Realm? { get }
    /// Whether the realm (or the collection's owner) is gone.
    var isInvalidated: Bool { get }
    /// Whether the collection is an immutable snapshot (``freeze()``).
    var isFrozen: Bool { get }

    func index(of object: Element) -> Int?
    /// The index of the first object matching a query, or `nil`.
    func index(matching predicateFormat: String, _ args: Any...) -> Int?

    func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element>
    func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element>
    func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Element>
    func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor
    func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String

    func min<T: _PersistableScalar>(ofProperty property: String) -> T?
    func max<T: _PersistableScalar>(ofProperty property: String) -> T?
    func sum<T: _PersistableScalar & AdditiveArithmetic>(ofProperty property: String) -> T
    func average<T: _PersistableScalar & BinaryFloatingPoint>(ofProperty property: String) -> T?

    /// Calls `block` with the collection at once and after every change of it (see `Results.observe`).
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken

    func freeze() -> Self
    func thaw() -> Self?
}

extension RealmCollection {
    /// The objects at `indexes`, in order.
    public func objects(at indexes: IndexSet) -> [Element] { indexes.map { self[$0] } }

    public func sorted(byKeyPath keyPath: String) -> Results<Element> { sorted(byKeyPath: keyPath, ascending: true) }

    public func observe(keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths, on: nil, block)
    }
}

extension RealmCollectionChange {
    /// The same change with the collection made into another (a list's change from its results').
    func map<Other>(_ transform: (CollectionType) -> Other) -> RealmCollectionChange<Other> {
        switch self {
        case .initial(let collection): .initial(transform(collection))
        case .update(let collection, let deletions, let insertions, let modifications):
            .update(transform(collection), deletions: deletions, insertions: insertions, modifications: modifications)
        case .error(let error): .error(error)
        }
    }
}

extension RealmCollection {
    /// The position of the first element matching a typed query.
    ///
    /// ```swift
    /// let first = dogs.index(matching: { $0.age > 3 })
    /// ```
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        self.where(isIncluded).first.flatMap { index(of: $0) }
    }
}

extension Results: RealmCollection {
    /// The position of the first element matching a query (of a value: the first equal value).
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        do {
            guard let match = try filter(query: predicateFormat, arguments: args).first else { return nil }
            return index(of: match)
        } catch {
            preconditionFailure("\(error)")
        }
    }
}

extension LinkingObjects: RealmCollection {}

/// A `List` or `MutableSet` of objects as a `RealmCollection`: queries run on its live results.
extension CollectionBacking {
    /// The same collection in a frozen snapshot of its realm (itself when unmanaged or frozen).
    func frozen() -> CollectionBacking {
        guard case .managed(let state, let index) = self, !state.realm.isFrozen else { return self }
        let object = state.realm.freeze().materialize(state.table, row: state.row)
        return .managed(object._managedState!, index)
    }

    /// The same collection in a live realm on this thread; nil when its owner was deleted since.
    func thawed() -> CollectionBacking? {
        guard case .managed(let state, let index) = self, state.realm.isFrozen else { return self }
        let live = state.realm.thaw()
        guard (try? live.store.exists(state.table, state.row)) == true else { return nil }
        return .managed(live.materialize(state.table, row: state.row)._managedState!, index)
    }
}

/// What maps of objects have: their queries and aggregates run on the live results of their
/// objects (`List` and `MutableSet` have ``_ManagedCollectionQueries``).
public protocol _ObjectCollectionQueries {
    associatedtype _QueriedObject: ObjectBase
    /// The collection's objects as live results.
    var _queryResults: Results<_QueriedObject> { get }
}

extension _ObjectCollectionQueries {
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<_QueriedObject> { _filtered(predicateFormat, args) }

    func _filtered(_ predicateFormat: String, _ args: [Any]) -> Results<_QueriedObject> {
        do {
            return try _queryResults.filter(query: predicateFormat, arguments: args)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    public func `where`(_ isIncluded: (Query<_QueriedObject>) -> Query<Bool>) -> Results<_QueriedObject> { _queryResults.where(isIncluded) }

    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<_QueriedObject> {
        _queryResults.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    public func sorted<V>(by keyPath: KeyPath<_QueriedObject, V>, ascending: Bool = true) -> Results<_QueriedObject> {
        _queryResults.sorted(by: keyPath, ascending: ascending)
    }

    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<_QueriedObject> where S.Element == SortDescriptor {
        _queryResults.sorted(by: sortDescriptors)
    }

    public func distinct<S: Sequence>(by keyPaths: S) -> Results<_QueriedObject> where S.Element == String {
        _queryResults.distinct(by: keyPaths)
    }

    public func min<T: _PersistableScalar>(ofProperty property: String) -> T? { _queryResults.min(ofProperty: property) }
    public func max<T: _PersistableScalar>(ofProperty property: String) -> T? { _queryResults.max(ofProperty: property) }
    public func sum<T: _PersistableScalar & AdditiveArithmetic>(ofProperty property: String) -> T { _queryResults.sum(ofProperty: property) }
    public func average<T: _PersistableScalar & BinaryFloatingPoint>(ofProperty property: String) -> T? {
        _queryResults.average(ofProperty: property)
    }
}


/// `List` and `MutableSet` as `RealmCollection`s, of objects and of values alike: each query runs
/// on the collection's live results (`CollectionBacking.anyResults`).
public protocol _ManagedCollectionQueries: RealmCollection {
    /// The collection as live results of its objects or values.
    var _anyResults: Results<Element> { get }
}

extension _ManagedCollectionQueries {
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    func queried(_ predicateFormat: String, _ args: [Any]) -> Results<Element> {
        do {
            return try _anyResults.filter(query: predicateFormat, arguments: args)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        queried(predicateFormat, args).first.flatMap { index(of: $0) }
    }
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { queried(predicateFormat, args) }
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { _anyResults.where(isIncluded) }
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        _anyResults.sorted(byKeyPath: keyPath, ascending: ascending)
    }
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        _anyResults.sorted(by: sortDescriptors)
    }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String { _anyResults.distinct(by: keyPaths) }
    public func min<T: _PersistableScalar>(ofProperty property: String) -> T? { _anyResults.min(ofProperty: property) }
    public func max<T: _PersistableScalar>(ofProperty property: String) -> T? { _anyResults.max(ofProperty: property) }
    public func sum<T: _PersistableScalar & AdditiveArithmetic>(ofProperty property: String) -> T { _anyResults.sum(ofProperty: property) }
    public func average<T: _PersistableScalar & BinaryFloatingPoint>(ofProperty property: String) -> T? {
        _anyResults.average(ofProperty: property)
    }

    /// Calls `block` with the collection at once and after every change of it (see `Results.observe`).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken {
        _anyResults.observe(keyPaths: keyPaths, on: queue) { change in block(change.map { $0.isFrozen ? self.freeze() : self }) }
    }
}

extension _ManagedCollectionQueries where Element: ObjectBase {
    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        _anyResults.sorted(by: keyPath, ascending: ascending)
    }
}

extension List: _ManagedCollectionQueries {
    public var _anyResults: Results<Element> { backing.anyResults(of: Element.self, noun: "lists") }

    public func freeze() -> List<Element> {
        let list = List()
        list.backing = backing.frozen()
        return list
    }

    public func thaw() -> List<Element>? {
        guard let thawed = backing.thawed() else { return nil }
        let list = List()
        list.backing = thawed
        return list
    }
}

extension MutableSet: _ManagedCollectionQueries {
    public var _anyResults: Results<Element> { backing.anyResults(of: Element.self, noun: "sets") }

    public func freeze() -> MutableSet<Element> {
        let set = MutableSet()
        set.backing = backing.frozen()
        return set
    }

    public func thaw() -> MutableSet<Element>? {
        guard let thawed = backing.thawed() else { return nil }
        let set = MutableSet()
        set.backing = thawed
        return set
    }
}
