import AtollCore
import Foundation

// What realm-swift's `Query` has beyond plain comparisons: aggregates through collections, subquery
// counts, map keys and values, enum raw values and geospatial containment.

/// Numbers and dates, for `.min`, `.max`, `.sum` and `.avg` through a collection.
public protocol _QueryNumeric {}
extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Date: _QueryNumeric {}
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric {}

extension Query where T: _QueryNumeric {
    /// The smallest value over the collection the path goes through: `$0.dogs.age.min < 2`.
    public var min: Query<T> { aggregate(.minimum, "min") }
    /// The largest value over the collection the path goes through.
    public var max: Query<T> { aggregate(.maximum, "max") }
    /// The sum over the collection the path goes through (0 when it is empty).
    public var sum: Query<T> { aggregate(.sum, "sum") }
    /// The mean over the collection the path goes through: `$0.dogs.age.avg > 5`.
    public var avg: Query<T> { aggregate(.average, "avg") }

    /// `dogs.age` becomes `dogs.@avg.age`: one value per object.
    private func aggregate(_ component: QueryKeyPath.Component, _ name: String) -> Query<T> {
        let (keyPath, collection) = pathAndCollection
        guard let collection else {
            preconditionFailure("'.\(name)' needs a key path through a list, set or linking objects, like `$0.dogs.age.\(name)`")
        }
        let elements = Array(keyPath.elements.prefix(collection)) + [QueryKeyPath.Element(component)]
            + Array(keyPath.elements.dropFirst(collection))
        return Query<T>(.path(QueryKeyPath(elements: elements), collection: nil))
    }
}

extension Query where T == Bool {
    /// How many elements of one collection satisfy the comparisons (a subquery):
    /// `($0.tasks.isComplete == false && $0.tasks.assignee == "Alex").count > 0`.
    ///
    /// Every per-element comparison must go through the same collection.
    public var count: Query<Int> {
        var distinct: [QueryKeyPath] = []
        for collection in collections where !distinct.contains(collection) { distinct.append(collection) }
        guard distinct.count == 1 else {
            preconditionFailure("A subquery's `.count` needs comparisons through exactly one list, set or linking objects, "
                + "got \(distinct.count): \(distinct.map(\.description))")
        }
        let variable = "obj"
        let inner = Self.rewriting(predicate, prefix: distinct[0], variable: variable)
        return Query<Int>(.subquery(QuerySubquery(collection: distinct[0], variable: variable, predicate: inner)))
    }

    /// `predicate` with every key path starting with `prefix` read from `$variable` instead.
    private static func rewriting(_ predicate: QueryPredicate, prefix: QueryKeyPath, variable: String) -> QueryPredicate {
        switch predicate.kind {
        case .constant: return predicate
        case .and(let a, let b):
            return rewriting(a, prefix: prefix, variable: variable) && rewriting(b, prefix: prefix, variable: variable)
        case .or(let a, let b):
            return rewriting(a, prefix: prefix, variable: variable) || rewriting(b, prefix: prefix, variable: variable)
        case .not(let a): return !rewriting(a, prefix: prefix, variable: variable)
        case .comparison(var comparison):
            var moved = false
            func rewrite(_ operand: QueryOperand) -> QueryOperand {
                guard case .keyPath(let path) = operand.kind,
                      path.components.starts(with: prefix.components) else { return operand }
                moved = true
                return .keyPath(QueryKeyPath([.variable(variable)] + path.components.dropFirst(prefix.components.count)))
            }
            comparison.lhs = rewrite(comparison.lhs)
            comparison.rhs = rewrite(comparison.rhs)
            // Per element now; a collection further along the path is still an implicit ANY.
            if moved, comparison.quantifier == .any { comparison.quantifier = nil }
            return QueryPredicate(.comparison(comparison))
        }
    }
}

/// Maps with string keys, for `.keys`, `.values` and subscripts in typed queries.
public protocol _QueryMap: _QueryCollection {}
extension Map: _QueryMap {}

extension Query where T: _QueryMap {
    /// The keys, compared one by one: `$0.scores.keys == "math"` (`@keys`).
    public var keys: Query<String> {
        let (keyPath, collection) = pathAndCollection
        let elements = keyPath.elements + [QueryKeyPath.Element(.keys)]
        return Query<String>(.path(QueryKeyPath(elements: elements), collection: collection ?? elements.count))
    }

    /// The values, compared one by one: `$0.scores.values > 90` (`@values`).
    public var values: Query<T._QueryElement> {
        let (keyPath, collection) = pathAndCollection
        let elements = keyPath.elements + [QueryKeyPath.Element(.values)]
        return Query<T._QueryElement>(.path(QueryKeyPath(elements: elements), collection: collection ?? elements.count))
    }

    /// The value for one key (null when absent): `$0.scores["math"] > 90`.
    public subscript(member: String) -> Query<T._QueryElement> {
        appending(.key(member))
    }
}

extension Query where T: PersistableEnum {
    /// The enum's stored raw value: `$0.status.rawValue > 1`.
    public var rawValue: Query<T.RawValue> {
        let (keyPath, collection) = pathAndCollection
        return Query<T.RawValue>(.path(keyPath, collection: collection))
    }
}

// MARK: - Geospatial

/// `GeoBox`, `GeoCircle` and `GeoPolygon`: the shapes `geoWithin` and `GEOWITHIN %@` take.
public protocol _GeoShapeConvertible { var _geoShape: GeoShape { get } }
extension GeoBox: _GeoShapeConvertible { public var _geoShape: GeoShape { .box(self) } }
extension GeoCircle: _GeoShapeConvertible { public var _geoShape: GeoShape { .circle(self) } }
extension GeoPolygon: _GeoShapeConvertible { public var _geoShape: GeoShape { .polygon(self) } }

/// Embedded point objects (`type` = "Point", `coordinates` = [longitude, latitude]) in typed queries.
public protocol _QueryGeoPoint {}
extension EmbeddedObject: _QueryGeoPoint {}
extension Optional: _QueryGeoPoint where Wrapped: _QueryGeoPoint {}

extension Query where T: _QueryGeoPoint {
    /// Matches when the point lies within `shape`: `$0.location.geoWithin(circle)`.
    public func geoWithin<Shape: _GeoShapeConvertible>(_ shape: Shape) -> Query<Bool> {
        let (keyPath, quantified) = path
        return Query<Bool>(.comparison(.keyPath(keyPath), .geoWithin, QueryOperand(.geometry(shape._geoShape)),
                                       quantifier: quantified ? .any : nil), collections: collectionPrefix)
    }
}

// MARK: - Nested collections in AnyRealmValue

extension Query where T == AnyRealmValue {
    /// The element at `position` of the list the value holds (null otherwise): `$0.value[0] == 1`.
    public subscript(position: Int) -> Query<AnyRealmValue> {
        appending(.index(position))
    }

    /// The value for `key` of the dictionary the value holds (null otherwise): `$0.value["name"] == "Rex"`.
    public subscript(key: String) -> Query<AnyRealmValue> {
        appending(.key(key))
    }

    /// Every element of the list or dictionary the value holds, compared one by one:
    /// `$0.value.any == "Rex"` (`value[*]`).
    public var any: Query<AnyRealmValue> {
        appending(.allElements, quantified: true)
    }
}
