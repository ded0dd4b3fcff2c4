import AtollCore
import Foundation

/// Options of string comparisons in typed queries.
public struct StringOptions: OptionSet, Sendable {
    public let rawValue: Int8
    public init(rawValue: Int8) { self.rawValue = rawValue }
    /// Compare ignoring case (`[c]`).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// Compare ignoring diacritics (`[d]`).
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    var queryOptions: QueryStringOptions {
        var options: QueryStringOptions = []
        if contains(.caseInsensitive) { options.insert(.caseInsensitive) }
        if contains(.diacriticInsensitive) { options.insert(.diacriticInsensitive) }
        return options
    }
}

/// A typed query over objects of `T`, built with key paths and operators; it produces the same
/// query as the equivalent text.
///
/// ```swift
/// realm.objects(Task.self).where { $0.owner == "Frodo" && !$0.done }
/// realm.objects(Person.self).where { $0.dogs.name.starts(with: "R") && $0.dogs.count > 1 }
/// ```
@dynamicMemberLookup
public struct Query<T> {
    enum Node {
        /// A property path. `collection` is the length of its leading part that ends at the first
        /// list, set, map or linking objects it passes through (the rest is read per element), or
        /// `nil` when it passes through none.
        case path(QueryKeyPath, collection: Int?)
        /// A condition, and the collections its per-element comparisons go through (what a
        /// subquery's `.count` counts the elements of).
        case predicate(QueryPredicate, collections: [QueryKeyPath])
        /// `SUBQUERY(…).@count`.
        case subquery(QuerySubquery)
    }

    let node: Node

    init(_ node: Node) { self.node = node }

    init(_ predicate: QueryPredicate, collections: [QueryKeyPath] = []) { node = .predicate(predicate, collections: collections) }

    var path: (QueryKeyPath, Bool) {
        let (keyPath, collection) = pathAndCollection
        return (keyPath, collection != nil)
    }

    var pathAndCollection: (QueryKeyPath, Int?) {
        guard case .path(let keyPath, let collection) = node else {
            preconditionFailure("a predicate or subquery count cannot be used as a property in a query")
        }
        return (keyPath, collection)
    }

    /// The left side of a comparison: a property path (and whether it is per element) or a subquery count.
    var operand: (QueryOperand, quantified: Bool) {
        if case .subquery(let subquery) = node { return (QueryOperand(.subquery(subquery)), false) }
        let (keyPath, quantified) = path
        return (.keyPath(keyPath), quantified)
    }

    /// The collection part of a path that goes through one.
    var collectionPrefix: [QueryKeyPath] {
        guard case .path = node else { return [] }
        let (keyPath, collection) = pathAndCollection
        return collection.map { [QueryKeyPath(elements: Array(keyPath.elements.prefix($0)))] } ?? []
    }

    /// The predicate this query stands for (a Bool property alone means `property == true`).
    var predicate: QueryPredicate {
        switch node {
        case .predicate(let predicate, _): return predicate
        case .path(let keyPath, let collection):
            return .compare(keyPath, .equal, .bool(true), quantifier: collection != nil ? .any : nil)
        case .subquery:
            preconditionFailure("a subquery count must be compared, as in `(…).count > 0`")
        }
    }

    var collections: [QueryKeyPath] {
        switch node {
        case .predicate(_, let collections): collections
        case .path: collectionPrefix
        case .subquery: []
        }
    }

    func appending<V>(_ component: QueryKeyPath.Component, quantified: Bool = false) -> Query<V> {
        let (keyPath, collection) = pathAndCollection
        let elements = keyPath.elements + [QueryKeyPath.Element(component)]
        return Query<V>(.path(QueryKeyPath(elements: elements), collection: collection ?? (quantified ? elements.count : nil)))
    }

    func compare(_ op: QueryOperator, _ value: AtollCore.Value, options: QueryStringOptions = []) -> Query<Bool> {
        let (lhs, quantified) = operand
        return Query<Bool>(.comparison(lhs, op, .value(value), options: options, quantifier: quantified ? .any : nil),
                           collections: collectionPrefix)
    }

    /// `self op other`, two properties of the same object.
    func compare<U>(_ op: QueryOperator, _ other: Query<U>, options: QueryStringOptions = []) -> Query<Bool> {
        let (lhs, lq) = operand, (rhs, rq) = other.operand
        return Query<Bool>(.comparison(lhs, op, rhs, options: options, quantifier: lq || rq ? .any : nil),
                           collections: collectionPrefix + other.collectionPrefix)
    }
}

// MARK: - Member access

extension Query where T: ObjectBase {
    public subscript<V>(dynamicMember member: KeyPath<T, V>) -> Query<V> {
        appending(.property(KeyPathNames.name(member)))
    }
}

extension Query {
    /// Through an optional link: `$0.owner.name`.
    public subscript<O: ObjectBase, V>(dynamicMember member: KeyPath<O, V>) -> Query<V> where T == O? {
        appending(.property(KeyPathNames.name(member)))
    }

    /// Through a list of objects: `$0.dogs.name == "Rex"` matches when any dog is named Rex.
    public subscript<O: ObjectBase, V>(dynamicMember member: KeyPath<O, V>) -> Query<V> where T == List<O> {
        element(KeyPathNames.name(member))
    }

    /// Through a set of objects.
    public subscript<O: ObjectBase, V>(dynamicMember member: KeyPath<O, V>) -> Query<V> where T == MutableSet<O> {
        element(KeyPathNames.name(member))
    }

    /// A property of each element of the collection this path ends at.
    private func element<V>(_ name: String) -> Query<V> {
        let (keyPath, collection) = pathAndCollection
        let elements = keyPath.elements + [QueryKeyPath.Element(.property(name))]
        return Query<V>(.path(QueryKeyPath(elements: elements), collection: collection ?? keyPath.elements.count))
    }

    /// Through the objects linking here: `$0.assignee.name == "Ali"` matches when any does.
    public subscript<O: ObjectBase, V>(dynamicMember member: KeyPath<O, V>) -> Query<V> where T == LinkingObjects<O> {
        element(KeyPathNames.name(member))
    }
}

// MARK: - Comparisons

func queryValue<V: RealmCollectionValue>(_ value: V) -> AtollCore.Value {
    switch value._atollStored() {
    case .value(let v): return v
    case .object(let object):
        guard let state = object._managedState, let pk = state.table.primaryKeyIndex else {
            preconditionFailure("Only managed objects with a primary key can be compared in a query")
        }
        return .link(ObjectLink(objectType: state.table.name, primaryKey: state.scalar(at: pk)))
    case .list, .map:
        preconditionFailure("A list or dictionary held by an AnyRealmValue cannot be compared in a query")
    }
}

extension Query where T: RealmCollectionValue {
    public static func == (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compare(.equal, queryValue(rhs)) }
    public static func != (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compare(.notEqual, queryValue(rhs)) }
    public static func < (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compare(.less, queryValue(rhs)) }
    public static func <= (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compare(.lessOrEqual, queryValue(rhs)) }
    public static func > (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compare(.greater, queryValue(rhs)) }
    public static func >= (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compare(.greaterOrEqual, queryValue(rhs)) }

    /// Two properties compared: `$0.budget > $0.spent`.
    public static func == (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compare(.equal, rhs) }
    public static func != (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compare(.notEqual, rhs) }
    public static func < (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compare(.less, rhs) }
    public static func <= (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compare(.lessOrEqual, rhs) }
    public static func > (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compare(.greater, rhs) }
    public static func >= (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compare(.greaterOrEqual, rhs) }

    /// Matches values equal to one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        let (keyPath, quantified) = path
        return Query<Bool>(.isIn(keyPath, values.map(queryValue), quantifier: quantified ? .any : nil),
                           collections: collectionPrefix)
    }

    /// Matches values in a closed range (`BETWEEN`).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        let (keyPath, quantified) = path
        return Query<Bool>(.between(keyPath, queryValue(range.lowerBound), queryValue(range.upperBound),
                                    quantifier: quantified ? .any : nil), collections: collectionPrefix)
    }

    /// Matches values in a half-open range.
    public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
        self >= range.lowerBound && self < range.upperBound
    }
}

extension Query where T: _QueryBinary {
    public func contains(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.contains, value._queryValue, options: options.queryOptions)
    }
    public func starts(with value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.beginsWith, value._queryValue, options: options.queryOptions)
    }
    public func ends(with value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.endsWith, value._queryValue, options: options.queryOptions)
    }
    /// `LIKE` with `*` and `?` wildcards.
    public func like(_ value: T, caseInsensitive: Bool = false) -> Query<Bool> {
        compare(.like, value._queryValue, options: caseInsensitive ? .caseInsensitive : [])
    }
    public func equals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.equal, value._queryValue, options: options.queryOptions)
    }
    public func notEquals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.notEqual, value._queryValue, options: options.queryOptions)
    }

    // Against another string (or data) property of the object: `$0.name.contains($0.nickname)`.

    public func contains<U: _QueryBinary>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.contains, column, options: options.queryOptions)
    }
    public func starts<U: _QueryBinary>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.beginsWith, column, options: options.queryOptions)
    }
    public func ends<U: _QueryBinary>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.endsWith, column, options: options.queryOptions)
    }
    public func like<U: _QueryBinary>(_ column: Query<U>, caseInsensitive: Bool = false) -> Query<Bool> {
        compare(.like, column, options: caseInsensitive ? .caseInsensitive : [])
    }
    public func equals<U: _QueryBinary>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.equal, column, options: options.queryOptions)
    }
    public func notEquals<U: _QueryBinary>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.notEqual, column, options: options.queryOptions)
    }
}

/// Strings and data (and their optionals) for the string operators of typed queries; on data they
/// compare bytes.
public protocol _QueryBinary { var _queryValue: AtollCore.Value { get } }
/// Strings (and optional strings).
public protocol _QueryString: _QueryBinary {}
extension String: _QueryString { public var _queryValue: AtollCore.Value { .string(self) } }
extension Data: _QueryBinary { public var _queryValue: AtollCore.Value { .data(self) } }
extension Optional: _QueryBinary where Wrapped: _QueryBinary {
    public var _queryValue: AtollCore.Value { self.map(\._queryValue) ?? .null }
}
extension Optional: _QueryString where Wrapped: _QueryString {}

// MARK: - Logic

extension Query where T == Bool {
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query<Bool>(lhs.predicate && rhs.predicate, collections: lhs.collections + rhs.collections)
    }
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query<Bool>(lhs.predicate || rhs.predicate, collections: lhs.collections + rhs.collections)
    }
    public static prefix func ! (query: Query<Bool>) -> Query<Bool> {
        Query<Bool>(!query.predicate, collections: query.collections)
    }
}

// MARK: - Collections

/// Lists, sets and maps in typed queries.
public protocol _QueryCollection { associatedtype _QueryElement: RealmCollectionValue }
extension List: _QueryCollection { public typealias _QueryElement = Element }
extension MutableSet: _QueryCollection { public typealias _QueryElement = Element }
extension Map: _QueryCollection { public typealias _QueryElement = Value }
extension LinkingObjects: _QueryCollection { public typealias _QueryElement = Element }

extension Query where T: _QueryCollection {
    /// The number of elements (`@count`).
    public var count: Query<Int> { appending(.count) }

    /// Matches when the collection holds `value`.
    public func contains(_ value: T._QueryElement) -> Query<Bool> {
        let (keyPath, _) = path
        return Query<Bool>(.any(keyPath, .equal, queryValue(value)), collections: elements.collectionPrefix)
    }

    /// Matches when the collection holds any of `values`.
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T._QueryElement {
        let (keyPath, _) = path
        return Query<Bool>(.isIn(keyPath, values.map(queryValue), quantifier: .any), collections: elements.collectionPrefix)
    }

    /// The elements compared one by one: `$0.scores.elements > 3` matches when any element does.
    public var elements: Query<T._QueryElement> {
        let (keyPath, collection) = pathAndCollection
        return Query<T._QueryElement>(.path(keyPath, collection: collection ?? keyPath.elements.count))
    }

    /// Any element compared with a value: `$0.ratings > 3` matches when some rating is.
    public static func == (lhs: Query<T>, rhs: T._QueryElement) -> Query<Bool> { lhs.elements == rhs }
    public static func != (lhs: Query<T>, rhs: T._QueryElement) -> Query<Bool> { lhs.elements != rhs }
    public static func < (lhs: Query<T>, rhs: T._QueryElement) -> Query<Bool> { lhs.elements < rhs }
    public static func <= (lhs: Query<T>, rhs: T._QueryElement) -> Query<Bool> { lhs.elements <= rhs }
    public static func > (lhs: Query<T>, rhs: T._QueryElement) -> Query<Bool> { lhs.elements > rhs }
    public static func >= (lhs: Query<T>, rhs: T._QueryElement) -> Query<Bool> { lhs.elements >= rhs }

    public var min: Query<T._QueryElement> { appending(.minimum) }
    public var max: Query<T._QueryElement> { appending(.maximum) }
    public var sum: Query<T._QueryElement> { appending(.sum) }
    public var avg: Query<T._QueryElement> { appending(.average) }
}

extension Query where T: _QueryString {
    /// The length of a string (`@size`).
    public var size: Query<Int> { appending(.size) }
}

extension Query where T == Data {
    public var size: Query<Int> { appending(.size) }
}

// MARK: - Results

extension Results {
    /// Narrows the results with a typed query (on values, `$0` is the value: `{ $0 > 3 }`).
    ///
    /// ```swift
    /// let open = tasks.where { $0.owner == "Frodo" && !$0.done && $0.priority > 5 }
    /// ```
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let root: QueryKeyPath = if case .values = core.base { QueryKeyPath("self") } else { QueryKeyPath([]) }
        let query = isIncluded(Query<Element>(.path(root, collection: nil)))
        let combined = core.expression.and(core.storedNames(QueryExpression(predicate: query.predicate)))
        do {
            return with(combined, bound: try core.validate(combined))
        } catch {
            preconditionFailure("\(error)")
        }
    }

}

extension Results where Element: ObjectBase {
    /// Sorts by a property given as a key path.
    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        sorted(byKeyPath: KeyPathNames.name(keyPath), ascending: ascending)
    }

    /// Keeps the first object for each distinct value of the properties.
    public func distinct<V>(by keyPaths: [KeyPath<Element, V>]) -> Results<Element> {
        distinct(by: keyPaths.map { KeyPathNames.name($0) })
    }

    public func min<V: _PersistableScalar>(of keyPath: KeyPath<Element, V>) -> V? { min(ofProperty: KeyPathNames.name(keyPath)) }
    public func max<V: _PersistableScalar>(of keyPath: KeyPath<Element, V>) -> V? { max(ofProperty: KeyPathNames.name(keyPath)) }
    public func sum<V: _PersistableScalar & AdditiveArithmetic>(of keyPath: KeyPath<Element, V>) -> V { sum(ofProperty: KeyPathNames.name(keyPath)) }
    public func average<V: _PersistableScalar & BinaryFloatingPoint>(of keyPath: KeyPath<Element, V>) -> V? {
        average(ofProperty: KeyPathNames.name(keyPath))
    }
}
