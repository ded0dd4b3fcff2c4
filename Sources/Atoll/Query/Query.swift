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
        /// A property path; `quantified` when it passes through a list, set or map.
        case path(QueryKeyPath, quantified: Bool)
        case predicate(QueryPredicate)
    }

    let node: Node

    init(_ node: Node) { self.node = node }

    var path: (QueryKeyPath, Bool) {
        guard case .path(let keyPath, let quantified) = node else {
            preconditionFailure("a predicate cannot be used as a property in a query")
        }
        return (keyPath, quantified)
    }

    /// The predicate this query stands for (a Bool property alone means `property == true`).
    var predicate: QueryPredicate {
        switch node {
        case .predicate(let predicate): return predicate
        case .path(let keyPath, let quantified):
            return .compare(keyPath, .equal, .bool(true), quantifier: quantified ? .any : nil)
        }
    }

    func appending<V>(_ component: QueryKeyPath.Component, quantified: Bool = false) -> Query<V> {
        let (keyPath, wasQuantified) = path
        return Query<V>(.path(QueryKeyPath(elements: keyPath.elements + [QueryKeyPath.Element(component)]),
                              quantified: wasQuantified || quantified))
    }

    func compare(_ op: QueryOperator, _ value: AtollCore.Value, options: QueryStringOptions = []) -> Query<Bool> {
        let (keyPath, quantified) = path
        return Query<Bool>(.predicate(.compare(keyPath, op, value, options: options, quantifier: quantified ? .any : nil)))
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
        appending(.property(KeyPathNames.name(member)), quantified: true)
    }

    /// Through a set of objects.
    public subscript<O: ObjectBase, V>(dynamicMember member: KeyPath<O, V>) -> Query<V> where T == MutableSet<O> {
        appending(.property(KeyPathNames.name(member)), quantified: true)
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

    /// Matches values equal to one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        let (keyPath, quantified) = path
        return Query<Bool>(.predicate(.isIn(keyPath, values.map(queryValue), quantifier: quantified ? .any : nil)))
    }

    /// Matches values in a closed range (`BETWEEN`).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        let (keyPath, quantified) = path
        return Query<Bool>(.predicate(.between(keyPath, queryValue(range.lowerBound), queryValue(range.upperBound),
                                               quantifier: quantified ? .any : nil)))
    }

    /// Matches values in a half-open range.
    public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
        self >= range.lowerBound && self < range.upperBound
    }
}

extension Query where T: _QueryString {
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
}

/// Strings (and optional strings) for the string operators of typed queries.
public protocol _QueryString { var _queryValue: AtollCore.Value { get } }
extension String: _QueryString { public var _queryValue: AtollCore.Value { .string(self) } }
extension Optional: _QueryString where Wrapped == String {
    public var _queryValue: AtollCore.Value { self.map(AtollCore.Value.string) ?? .null }
}

// MARK: - Logic

extension Query where T == Bool {
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query<Bool>(.predicate(lhs.predicate && rhs.predicate))
    }
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query<Bool>(.predicate(lhs.predicate || rhs.predicate))
    }
    public static prefix func ! (query: Query<Bool>) -> Query<Bool> {
        Query<Bool>(.predicate(!query.predicate))
    }
}

// MARK: - Collections

/// Lists, sets and maps in typed queries.
public protocol _QueryCollection { associatedtype _QueryElement: RealmCollectionValue }
extension List: _QueryCollection { public typealias _QueryElement = Element }
extension MutableSet: _QueryCollection { public typealias _QueryElement = Element }
extension Map: _QueryCollection { public typealias _QueryElement = Value }

extension Query where T: _QueryCollection {
    /// The number of elements (`@count`).
    public var count: Query<Int> { appending(.count) }

    /// Matches when the collection holds `value`.
    public func contains(_ value: T._QueryElement) -> Query<Bool> {
        let (keyPath, _) = path
        return Query<Bool>(.predicate(.any(keyPath, .equal, queryValue(value))))
    }

    /// Matches when the collection holds any of `values`.
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T._QueryElement {
        let (keyPath, _) = path
        return Query<Bool>(.predicate(.isIn(keyPath, values.map(queryValue), quantifier: .any)))
    }

    /// The elements compared one by one: `$0.scores.elements > 3` matches when any element does.
    public var elements: Query<T._QueryElement> {
        let (keyPath, _) = path
        return Query<T._QueryElement>(.path(keyPath, quantified: true))
    }

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
    /// Narrows the results with a typed query.
    ///
    /// ```swift
    /// let open = tasks.where { $0.owner == "Frodo" && !$0.done && $0.priority > 5 }
    /// ```
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let query = isIncluded(Query<Element>(.path(QueryKeyPath([]), quantified: false)))
        let combined = core.expression.and(core.storedNames(QueryExpression(predicate: query.predicate)))
        do {
            return with(combined, bound: try core.validate(combined))
        } catch {
            preconditionFailure("\(error)")
        }
    }

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
