import AtollCore
import Foundation

/// The objects of a type that match a query, in the realm's current snapshot. Results are lazy
/// (nothing is read until used) and live (they reflect later writes once the realm advances).
///
/// ```swift
/// let mine = realm.objects(Task.self).filter("owner == %@", "Frodo").sorted(byKeyPath: "priority")
/// for task in mine { print(task.name) }
/// ```
public struct Results<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    let core: ResultsCore

    init(realm: Realm, objectType: String, base: ResultsCore.Base = .table,
         expression: QueryExpression = QueryExpression(predicate: .truePredicate)) {
        core = ResultsCore(realm: realm, objectType: objectType, base: base, expression: expression)
    }

    init(core: ResultsCore) { self.core = core }

    /// The realm the results read from.
    public var realm: Realm? { core.realm }

    public var isFrozen: Bool { core.realm.isFrozen }

    /// Whether the realm was invalidated.
    public var isInvalidated: Bool { false }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The number of matching objects.
    /// - Complexity: O(n) on first use after a change, then O(1).
    public var count: Int { core.rows().count }

    public subscript(position: Int) -> Element {
        let rows = core.rows()
        precondition(position >= 0 && position < rows.count, "Index \(position) is out of bounds (must be less than \(rows.count)).")
        return Element.decoded(core.element(at: position, rows))
    }

    public var first: Element? { isEmpty ? nil : self[0] }
    public var last: Element? { isEmpty ? nil : self[count - 1] }

    public func index(of object: Element) -> Int? {
        // An object (or the object a projection projects), or a value.
        guard case .object(let target) = object._atollStored() else { return firstIndex(of: object) }
        guard let state = target._managedState, state.table.name == core.objectType else { return nil }
        return core.rows().firstIndex { $0.row == state.row }
    }

    public var description: String { "Results<\(Element.self)> (\(count) objects)" }

    /// Iterates the results as they are at each step, reading them once per element (an
    /// `IndexingIterator` read them for the end index, the bounds check and the element, and
    /// trapped when a write in the loop took more than one object out of them).
    public func makeIterator() -> RLMIterator<Element> { RLMIterator(results: self) }

    // MARK: Derived results

    func with(_ expression: QueryExpression, bound: BoundQuery? = nil) -> Results<Element> {
        Results(core: core.with(expression, bound: bound))
    }

    /// Narrows the results with a query in the Realm Query Language.
    ///
    /// ```swift
    /// results.filter("owner == %@ AND priority > %d", "Frodo", 5)
    /// ```
    /// An invalid query stops the program with a message saying what is wrong and where; use
    /// ``filter(query:arguments:)`` to get the error as a value.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        do {
            return try filter(query: predicateFormat, arguments: args)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Narrows the results with a query, throwing a `Realm.Error` with code `.invalidQuery` when the
    /// query does not parse or does not fit the schema.
    public func filter(query: String, arguments: [Any] = []) throws -> Results<Element> {
        let values = try arguments.map { argument -> QueryArgument in
            if let shape = argument as? any _GeoShapeConvertible { return .geometry(shape._geoShape) }
            return .value(try QueryArguments.value(argument))
        }
        let parsed: QueryExpression
        do {
            parsed = core.storedNames(try QueryExpression.parse(query, arguments: values))
        } catch {
            throw Realm.Error(.invalidQuery, "\(error)", underlying: error)
        }
        let combined = core.expression.and(parsed)
        return with(combined, bound: try core.validate(combined))
    }

    /// Sorts by a key path (`"dog.name"` goes through a link).
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        with(core.expression.sorted(by: core.storedKeyPath(keyPath), ascending: ascending))
    }

    /// Sorts by several properties, most significant first.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        var expression = core.expression
        expression.clauses.append(.sort(descriptors.map { QuerySortKey(core.storedKeyPath($0.keyPath), ascending: $0.ascending) }))
        return with(expression)
    }

    /// Keeps the first object of each distinct combination of the given properties.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        with(core.expression.distinct(by: keyPaths.map { core.storedKeyPath($0) }))
    }

    // MARK: Aggregates

    /// The smallest value of a property among the results, or `nil` when empty.
    public func min<T: _PersistableScalar>(ofProperty property: String) -> T? {
        core.aggregate(property).compactMap { T(_atollValue: $0) }.min { a, b in
            a._atollValue.compare(to: b._atollValue) == .orderedAscending
        }
    }

    public func max<T: _PersistableScalar>(ofProperty property: String) -> T? {
        core.aggregate(property).compactMap { T(_atollValue: $0) }.max { a, b in
            a._atollValue.compare(to: b._atollValue) == .orderedAscending
        }
    }

    /// The sum of a numeric property (0 when empty).
    public func sum<T: _PersistableScalar & AdditiveArithmetic>(ofProperty property: String) -> T {
        core.aggregate(property).compactMap { T(_atollValue: $0) }.reduce(.zero, +)
    }

    /// The mean of a numeric property, or `nil` when empty.
    public func average<T: _PersistableScalar & BinaryFloatingPoint>(ofProperty property: String) -> T? {
        let values = core.aggregate(property).compactMap(\.numericValue)
        guard !values.isEmpty else { return nil }
        return T(values.reduce(0, +) / Double(values.count))
    }

    // MARK: Freezing

    /// An immutable copy of the results that can be read from any thread.
    public func freeze() -> Results<Element> {
        if isFrozen { return self }
        let frozen = core.realm.freeze()
        return Results(core: core.moved(to: frozen))
    }

    /// The live results of a frozen copy, on the current thread's realm.
    public func thaw() -> Results<Element>? {
        guard isFrozen, let live = try? Realm.ofCurrentThread(core.realm.configuration, atLeast: core.realm.snapshotVersion) else { return self }
        return Results(core: core.moved(to: live))
    }
}

/// The iterator of `Results` (realm-swift's name): it reads the results at each step, and ends
/// when its position passes their end.
public struct RLMIterator<Element: RealmCollectionValue>: IteratorProtocol {
    private let results: Results<Element>
    private var position = 0

    init(results: Results<Element>) { self.results = results }

    public mutating func next() -> Element? {
        let rows = results.core.rows()
        guard position < rows.count else { return nil }
        defer { position += 1 }
        return Element.decoded(results.core.element(at: position, rows))
    }
}

/// One sort key for `sorted(by:)`.
public struct SortDescriptor: Sendable, Hashable, ExpressibleByStringLiteral {
    public var keyPath: String
    public var ascending: Bool

    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// A sort on the property a key path names (`SortDescriptor(keyPath: \Person.age)`).
    public init<Element: ObjectBase>(keyPath: PartialKeyPath<Element>, ascending: Bool = true) {
        self.init(keyPath: KeyPathNames.name(of: keyPath), ascending: ascending)
    }

    public init(stringLiteral value: String) { self.init(keyPath: value) }

    public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }
}

extension AtollCore.Value {
    var numericValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        case .float(let f): Double(f)
        case .decimal(let d): d.doubleValue
        default: nil
        }
    }
}

/// Converts query arguments passed from Swift into values.
enum QueryArguments {
    static func value(_ argument: Any) throws -> AtollCore.Value {
        if let value = AtollCore.Value(any: argument) { return value }
        if let custom = argument as? any _CustomPersistable { return try value(custom._atollPersisted) }
        if let object = argument as? ObjectBase {
            guard let state = object._managedState else {
                throw Realm.Error(.invalidQuery, "an unmanaged object cannot be a query argument")
            }
            guard let pk = state.table.primaryKeyIndex else {
                throw Realm.Error(.invalidQuery, "an object of '\(state.table.name)', which has no primary key, cannot be a query argument")
            }
            return .link(ObjectLink(objectType: state.table.name, primaryKey: state.scalar(at: pk)))
        }
        if let array = argument as? [Any] { return .list(try array.map(value)) }
        if let set = argument as? Set<AnyHashable> { return .list(try set.map { try value($0.base) }) }
        if case Optional<Any>.none = argument { return .null }
        throw Realm.Error(.invalidQuery, "a \(type(of: argument)) cannot be a query argument")
    }
}
