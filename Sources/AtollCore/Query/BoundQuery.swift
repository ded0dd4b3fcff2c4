/// A query checked against a schema: every key path resolved to properties and every constant
/// converted to the type it is compared with. Evaluate it on objects in memory with
/// ``evaluate(on:resolver:)``, or have the client store turn it into SQL (`SQLTranslator`); both give the same answers.
///
/// ```swift
/// let query = try BoundQuery(parsing: "owner == %@ AND priority > 2", arguments: [.string("Frodo")],
///                            objectType: "Task", schema: schema)
/// query.evaluate(on: ["owner": .string("Frodo"), "priority": .int(3)], resolver: NoLinkResolver())  // true
/// ```
package struct BoundQuery: Sendable, Hashable {
    package let schema: Schema
    package let objectType: String
    /// The query as parsed or built.
    package let expression: QueryExpression
    package let predicate: BoundPredicate
    /// The tail clauses, in the order written.
    package let clauses: [BoundClause]
}

/// A bound tail clause.
package enum BoundClause: Sendable, Hashable, CustomStringConvertible {
    case sort([BoundKey])
    case distinct([BoundKey])
    case limit(Int)

    package var description: String {
        switch self {
        case .sort(let keys):
            "SORT(" + keys.map { "\($0.keyPath) \($0.ascending ? "ASC" : "DESC")" }.joined(separator: ", ") + ")"
        case .distinct(let keys): "DISTINCT(" + keys.map(\.keyPath.description).joined(separator: ", ") + ")"
        case .limit(let n): "LIMIT(\(n))"
        }
    }
}

extension BoundPredicate {
    /// `operands` joined by `OR` as a balanced tree (depth log2 of the count), for `IN {…}` lists.
    ///
    /// - Precondition: `operands` is not empty.
    static func or(_ operands: ArraySlice<BoundPredicate>) -> BoundPredicate {
        if operands.count == 1 { return operands[operands.startIndex] }
        let middle = operands.startIndex + operands.count / 2
        return .or(or(operands[..<middle]), or(operands[middle...]))
    }
}

/// A key of `SORT` or `DISTINCT`: a key path with one value per object (through to-one links only).
package struct BoundKey: Sendable, Hashable {
    package let keyPath: QueryKeyPath
    /// Always `true` for `DISTINCT` keys.
    package let ascending: Bool
    package let scalar: BoundScalar
    /// The property type the key path ends at (`.object` for a link).
    package let type: PropertyType
}

/// How a bound predicate compares two values.
package enum BoundComparison: String, Sendable, Hashable {
    case equal = "IS", notEqual = "IS NOT", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
}

/// `@sum`, `@avg`, `@min` or `@max`.
package enum BoundAggregate: Sendable, Hashable {
    case sum, average, minimum, maximum
}

package indirect enum BoundPredicate: Sendable, Hashable {
    case constant(Bool)
    case and(BoundPredicate, BoundPredicate)
    case or(BoundPredicate, BoundPredicate)
    case not(BoundPredicate)
    /// `decimal`: compare with the Decimal128 collation.
    case compare(BoundScalar, BoundComparison, BoundScalar, decimal: Bool)
    /// A string operator, or `==` with `[c]`/`[d]`, through ``StringOperator/evaluate(_:_:_:options:)`` (strings)
    /// or ``StringOperator/evaluate(_:bytes:_:options:)`` (data).
    case string(StringOperator, BoundScalar, BoundScalar, options: QueryStringOptions)
    /// Whether the point object `point` evaluates to (of type `pointType`, whose list of doubles is
    /// `coordinates`) lies within the shape.
    case geoWithin(BoundScalar, pointType: String, coordinates: Property, GeoShape)
    /// The inner predicate sees each element as context `collection.context`.
    case quantified(QueryQuantifier, BoundQueryCollection, BoundPredicate)
}

/// An expression with one value, evaluated where some contexts (the object, collection elements) are set.
/// One step into a nested collection of a mixed value.
package enum MixedStep: Sendable, Hashable {
    case index(Int)
    case key(String)

    /// The element of `value` at this step, or `null`.
    package func element(of value: Value) -> Value {
        switch (self, value) {
        case (.index(let i), .list(let items)): items.indices.contains(i) ? items[i] : .null
        case (.key(let k), .map(let entries)): entries[k] ?? .null
        default: .null
        }
    }
}

package indirect enum BoundScalar: Sendable, Hashable {
    case constant(Value)
    /// Context 0 is the object the query runs on; others are collection elements.
    case context(Int)
    /// A property of the object that `base` evaluates to (`null` when `base` is `null`).
    case property(BoundScalar, owner: String, Property)
    /// `map['key']` of the object that `base` evaluates to.
    case mapValue(BoundScalar, owner: String, Property, key: String)
    /// `mixed[2]` or `mixed['key']`: an element of the list or dictionary the mixed value `base`
    /// holds (`null` when it holds none there).
    case mixedElement(BoundScalar, MixedStep)
    case count(BoundQueryCollection)
    /// `element` is evaluated for each element with the collection's context set; `type` is its type.
    case aggregate(BoundAggregate, BoundQueryCollection, element: BoundScalar, type: PropertyType)
    /// The length of a string (Unicode scalars) or data (bytes).
    case size(BoundScalar)
    /// `@type`: the name of the kind of value a mixed value holds (``QueryFunctions/mixedTypeName(_:)``).
    case typeName(BoundScalar)
    /// How many elements of the collection satisfy the predicate (`SUBQUERY(…).@count`).
    case subqueryCount(BoundQueryCollection, BoundPredicate)
    /// The sum of integer scalars (`@links.@count` over every linking property).
    case total([BoundScalar])
}

/// A collection property of the object `base` evaluates to; or, for a backlink, the objects of type
/// `owner` whose link `property` points at that object.
package struct BoundQueryCollection: Sendable, Hashable {
    /// The object a backlink collection's links point at: its type and primary key property.
    package struct Backlink: Sendable, Hashable {
        package var target: String
        package var primaryKey: String?
    }

    package var base: BoundScalar
    package var owner: String
    package var property: Property
    /// Iterate a map's keys instead of its values.
    package var keys: Bool
    /// The context each element is bound to.
    package var context: Int
    /// Set when the collection is the objects linking to `base`, not a property of it.
    package var backlink: Backlink? = nil
    /// Set when the collection is the elements of the list or dictionary the mixed value `base`
    /// holds (`mixed[*]`), not a property.
    package var isMixedElements = false


    /// The object type of the elements, when they are objects.
    package var elementObjectType: String? {
        if backlink != nil { return owner }
        return keys ? nil : property.objectType
    }
}

extension BoundQueryCollection {
    /// `mixed[*]`: the elements of the list or dictionary the mixed value `base` holds.
    init(mixedElementsOf base: BoundScalar, context: Int) {
        self.init(base: base, owner: "", property: Property(name: "[*]", type: .any, collection: .list, isOptional: true),
                  keys: false, context: context)
        isMixedElements = true
    }
}
