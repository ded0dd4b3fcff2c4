import AtollCore
import Foundation

/// An element type whose collections are queried as values (`self`): scalars, their optionals and
/// `AnyRealmValue`, not objects.
public protocol _QueryableValue: RealmCollectionValue {}

extension Optional: _QueryableValue where Wrapped: _QueryableValue {}
extension AnyRealmValue: _QueryableValue {}

extension CollectionBacking {
    /// The managed collection as live results: of its objects, or of its values.
    func anyResults<Element: RealmCollectionValue>(of type: Element.Type, noun: String) -> Results<Element> {
        guard case .managed(let state, let index) = self else {
            preconditionFailure("Only \(noun) of managed objects can be queried; add the owner to a realm first")
        }
        let property = state.table.property(index)
        guard property.type != .object else {
            return Results(realm: state.realm, objectType: property.objectType ?? "", base: .collection(owner: state, property: index))
        }
        return Results(realm: state.realm, objectType: ResultsCore.valuesType, base: .values(owner: state, property: index))
    }

    /// The managed collection's values as live results, queried in memory (ResultsCore+Values.swift).
    func valueResults<Element: _QueryableValue>(of type: Element.Type, noun: String) -> Results<Element> {
        guard case .managed(let state, let index) = self else {
            preconditionFailure("Only \(noun) of managed objects can be queried; add the owner to a realm first")
        }
        return Results(realm: state.realm, objectType: ResultsCore.valuesType, base: .values(owner: state, property: index))
    }
}

/// What `List`, `MutableSet` and `Results` of values share: queries on `self`.
///
/// ```swift
/// let high = scores.filter("self > 90").sorted(ascending: false)
/// scores.distinct().count
/// ```
public protocol _ValueCollectionQueries {
    associatedtype _QueriedValue: _QueryableValue
    /// The collection's values as live results.
    var _valueResults: Results<_QueriedValue> { get }
    /// The values, managed or not, for aggregates.
    var _allValues: [_QueriedValue] { get }
}

extension _ValueCollectionQueries {
    /// The values in ascending (or descending) order.
    public func sorted(ascending: Bool = true) -> Results<_QueriedValue> {
        _valueResults.with(_valueResults.core.expression.sorted(by: QueryKeyPath("self"), ascending: ascending))
    }

    /// Each value once, in the order first seen.
    public func distinct() -> Results<_QueriedValue> {
        _valueResults.with(_valueResults.core.expression.distinct(by: [QueryKeyPath("self")]))
    }
}

extension _ValueCollectionQueries where _QueriedValue: _PersistableScalar & AdditiveArithmetic {
    /// The sum of the values (zero when empty).
    public func sum() -> _QueriedValue { _allValues.reduce(.zero, +) }
}

extension _ValueCollectionQueries where _QueriedValue: _PersistableScalar {
    /// The mean of the values, or `nil` when empty or not numbers.
    public func average<T: BinaryFloatingPoint>() -> T? {
        let numbers = _allValues.compactMap(\._atollValue.numericValue)
        return numbers.isEmpty ? nil : T(numbers.reduce(0, +) / Double(numbers.count))
    }

    func _extreme(_ ascending: Bool) -> _QueriedValue? {
        _allValues.min { a, b in
            let order = a._atollValue.compare(to: b._atollValue)
            return ascending ? order == .orderedAscending : order == .orderedDescending
        }
    }
}

// `min()` and `max()` are declared on each type, not on the protocol, so they are preferred to
// `Sequence`'s over comparable elements (as realm-swift's are).

extension Results: _ValueCollectionQueries where Element: _QueryableValue {
    public var _valueResults: Results<Element> { self }
    public var _allValues: [Element] { Array(self) }
}

extension Results where Element: _PersistableScalar {
    public func min() -> Element? { _extreme(true) }
    public func max() -> Element? { _extreme(false) }
}

extension List: _ValueCollectionQueries where Element: _QueryableValue {
    public var _valueResults: Results<Element> { backing.valueResults(of: Element.self, noun: "lists") }
    public var _allValues: [Element] { elements }
}

extension List where Element: _PersistableScalar {
    public func min() -> Element? { _extreme(true) }
    public func max() -> Element? { _extreme(false) }
}


extension MutableSet: _ValueCollectionQueries where Element: _QueryableValue {
    public var _valueResults: Results<Element> { backing.valueResults(of: Element.self, noun: "sets") }
    public var _allValues: [Element] { backing.elements() }
}

extension MutableSet where Element: _PersistableScalar {
    public func min() -> Element? { _extreme(true) }
    public func max() -> Element? { _extreme(false) }
}


extension Map: _ValueCollectionQueries where Value: _QueryableValue {
    /// The map's values (in key order) as live results.
    public var _valueResults: Results<Value> { backing.valueResults(of: Value.self, noun: "maps") }
    public var _allValues: [Value] { entries.map(\.value) }

    /// The values matching a query on `self` (`"self > 2"`), in key order.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value> {
        do {
            return try _valueResults.filter(query: predicateFormat, arguments: args)
        } catch {
            preconditionFailure("\(error)")
        }
    }
}

extension Map where Value: _PersistableScalar {
    public func min() -> Value? { _extreme(true) }
    public func max() -> Value? { _extreme(false) }
}
