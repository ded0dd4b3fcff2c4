import Foundation

/// Finds the objects that links point to, for evaluating queries in memory.
package protocol ObjectResolver {
    /// The property values of the linked object, or `nil` if it does not exist.
    func object(for link: ObjectLink) -> [String: Value]?

    /// The objects of type `originType` whose link `property` (a to-one link, list or set) points at
    /// the object `link` names, each once, as links or property maps: backlinks (`@links`,
    /// `LinkingObjects`). The default finds none.
    func objects(linkingTo link: ObjectLink, from originType: String, through property: String) -> [Value]
}

extension ObjectResolver {
    package func objects(linkingTo link: ObjectLink, from originType: String, through property: String) -> [Value] { [] }
}

extension ObjectResolver {
    /// Whether `fields[property]` links to `link` (directly, or as an element of a list or set).
    package static func fields(_ fields: [String: Value], link property: String, to link: ObjectLink) -> Bool {
        switch fields[property] {
        case .link(let l)?: return l == link
        case .list(let items)?, .set(let items)?: return items.contains(.link(link))
        default: return false
        }
    }
}

/// A resolver for objects without links: every link resolves to nothing.
package struct NoLinkResolver: ObjectResolver {
    package init() {}
    package func object(for link: ObjectLink) -> [String: Value]? { nil }
}

/// A resolver over objects held in a dictionary.
package struct DictionaryObjectResolver: ObjectResolver, Sendable {
    package var objects: [ObjectLink: [String: Value]]
    package init(_ objects: [ObjectLink: [String: Value]]) { self.objects = objects }
    package func object(for link: ObjectLink) -> [String: Value]? { objects[link] }

    package func objects(linkingTo link: ObjectLink, from originType: String, through property: String) -> [Value] {
        objects.compactMap { key, fields in
            key.objectType == originType && Self.fields(fields, link: property, to: link) ? .link(key) : nil
        }
    }
}

extension BoundQuery {
    /// Whether `object` (property name → value) matches the predicate. Missing properties are `null`,
    /// missing collections empty; links are resolved through `resolver`.
    ///
    /// Nulls behave as in Realm: `x == nil` holds for null, `x != "a"` holds for null, and `<`, `<=`, `>`,
    /// `>=` and the string operators never hold when either side is null.
    package func evaluate(on object: [String: Value], resolver: some ObjectResolver) -> Bool {
        QueryEvaluator(resolver: resolver, contexts: [0: .object(object)]).test(predicate)
    }
}

/// Evaluates bound predicates with some contexts (the object, the current collection elements) set.
struct QueryEvaluator<Resolver: ObjectResolver> {
    let resolver: Resolver
    var contexts: [Int: Value]

    func test(_ predicate: BoundPredicate) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .and(let a, let b): return test(a) && test(b)
        case .or(let a, let b): return test(a) || test(b)
        case .not(let a): return !test(a)
        case .compare(let lhs, let op, let rhs, _):
            let a = value(lhs), b = value(rhs)
            switch op {
            case .equal: return QueryOrdering.equal(a, b)
            case .notEqual: return !QueryOrdering.equal(a, b)
            default:
                guard !a.isNull, !b.isNull, let order = QueryOrdering.compare(a, b) else { return false }
                switch op {
                case .less: return order == .orderedAscending
                case .lessOrEqual: return order != .orderedDescending
                case .greater: return order == .orderedDescending
                default: return order != .orderedAscending
                }
            }
        case .string(let op, let lhs, let rhs, let options):
            let a = value(lhs), b = value(rhs)
            if case .data = a { return StringOperator.evaluate(op, bytes: data(a), data(b), options: options) }
            if case .data = b { return StringOperator.evaluate(op, bytes: data(a), data(b), options: options) }
            return StringOperator.evaluate(op, string(a), string(b), options: options)
        case .geoWithin(let point, _, let coordinates, let shape):
            guard let fields = object(value(point)) else { return false }
            let type = if case .string(let t)? = fields["type"] { t } else { String?.none }
            guard case .list(let numbers)? = fields[coordinates.name], numbers.count >= 2 else { return false }
            return GeoShape.contains(shape, type: type, longitude: numbers[0].numericDouble, latitude: numbers[1].numericDouble)
        case .quantified(let quantifier, let collection, let inner):
            var scope = self
            let matches = { (element: Value) -> Bool in
                scope.contexts[collection.context] = element
                return scope.test(inner)
            }
            let items = elements(of: collection)
            switch quantifier {
            case .any: return items.contains(where: matches)
            case .all: return items.allSatisfy(matches)
            case .none: return !items.contains(where: matches)
            }
        }
    }

    func value(_ scalar: BoundScalar) -> Value {
        switch scalar {
        case .constant(let value): return value
        case .context(let id): return contexts[id] ?? .null
        case .property(let base, _, let property):
            return object(value(base))?[property.name] ?? .null
        case .mapValue(let base, _, let property, let key):
            guard case .map(let entries) = object(value(base))?[property.name] else { return .null }
            return entries[key] ?? .null
        case .mixedElement(let base, let step):
            return step.element(of: value(base))
        case .count(let collection):
            return .int(Int64(elements(of: collection).count))
        case .aggregate(let kind, let collection, let element, let type):
            var scope = self
            var values: [Value] = []
            for item in elements(of: collection) {
                scope.contexts[collection.context] = item
                let v = scope.value(element)
                if !v.isNull { values.append(v) }
            }
            return Self.aggregate(kind, values, type: type)
        case .typeName(let base):
            return .string(QueryFunctions.mixedTypeName(value(base)))
        case .size(let base):
            switch value(base) {
            case .string(let s): return .int(Int64(s.unicodeScalars.count))
            case .data(let d): return .int(Int64(d.count))
            default: return .null
            }
        case .subqueryCount(let collection, let predicate):
            var scope = self
            var count: Int64 = 0
            for item in elements(of: collection) {
                scope.contexts[collection.context] = item
                if scope.test(predicate) { count += 1 }
            }
            return .int(count)
        case .total(let parts):
            return .int(parts.reduce(Int64(0)) { sum, part in
                if case .int(let i) = value(part) { sum + i } else { sum }
            })
        }
    }

    func object(_ value: Value) -> [String: Value]? {
        switch value {
        case .object(let fields): fields
        case .link(let link): resolver.object(for: link)
        default: nil
        }
    }

    func elements(of collection: BoundQueryCollection) -> [Value] {
        if let backlink = collection.backlink {
            let target: ObjectLink
            switch value(collection.base) {
            case .link(let link): target = link
            case .object(let fields):
                guard let key = backlink.primaryKey, let pk = fields[key] else { return [] }
                target = ObjectLink(objectType: backlink.target, primaryKey: pk)
            default: return []
            }
            return resolver.objects(linkingTo: target, from: collection.owner, through: collection.property.name)
        }
        if collection.isMixedElements {
            switch value(collection.base) {
            case .list(let items): return items
            case .map(let entries): return Array(entries.values)
            default: return []
            }
        }
        switch object(value(collection.base))?[collection.property.name] {
        case .list(let items), .set(let items): return items
        case .map(let entries): return collection.keys ? entries.keys.map { .string($0) } : Array(entries.values)
        default: return []
        }
    }

    private func data(_ value: Value) -> Data? {
        if case .data(let d) = value { return d }
        return nil
    }

    private func string(_ value: Value) -> String? {
        if case .string(let s) = value { return s }
        return nil
    }

    /// `values` holds no nulls. Sums of no values are 0; averages, minimums and maximums `null`.
    static func aggregate(_ kind: BoundAggregate, _ values: [Value], type: PropertyType) -> Value {
        let decimals: [Decimal128] = values.compactMap { value -> Decimal128? in
            if case .decimal(let d) = value { return d }
            return nil
        }
        switch kind {
        case .sum:
            switch type {
            case .int:
                return .int(values.reduce(Int64(0)) { total, v in if case .int(let i) = v { total &+ i } else { total } })
            case .decimal128: return .decimal(QueryFunctions.sumOfDecimals(decimals))
            default: return .double(values.reduce(0) { $0 + ($1.numericDouble ?? 0) })
            }
        case .average:
            if type == .decimal128 { return QueryFunctions.averageOfDecimals(decimals).map(Value.decimal) ?? .null }
            guard !values.isEmpty else { return .null }
            return .double(values.reduce(0) { $0 + ($1.numericDouble ?? 0) } / Double(values.count))
        case .minimum:
            return values.min { QueryOrdering.compare($0, $1) == .orderedAscending } ?? .null
        case .maximum:
            return values.max { QueryOrdering.compare($0, $1) == .orderedAscending } ?? .null
        }
    }
}

/// The order and equality queries and sorts use, matching SQLite's on the stored form of each value:
/// `null` first; numbers by value; strings by Unicode scalars (UTF-8 bytes); data, ObjectId and UUID by
/// bytes; dates by seconds since 1970; decimals by value (the `ATOLL_DECIMAL` collation).
enum QueryOrdering {
    static func compare(_ a: Value, _ b: Value) -> ComparisonResult? {
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case let (.int(x), .int(y)): return order(x, y)
        case let (.bool(x), .bool(y)): return order(x ? 1 : 0, y ? 1 : 0)
        case let (.decimal(x), .decimal(y)): return QueryFunctions.compare(x, y)
        case let (.decimal(x), y) where isNumber(y):
            return QueryFunctions.compare(x, Decimal128(y.numericDouble ?? 0))
        case let (x, .decimal(y)) where isNumber(x):
            return QueryFunctions.compare(Decimal128(x.numericDouble ?? 0), y)
        case let (x, y) where isNumber(x) && isNumber(y):
            return order(x.numericDouble ?? 0, y.numericDouble ?? 0)
        case let (.string(x), .string(y)):
            if x.unicodeScalars.elementsEqual(y.unicodeScalars) { return .orderedSame }
            return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) ? .orderedAscending : .orderedDescending
        case let (.data(x), .data(y)): return bytes(Array(x), Array(y))
        case let (.date(x), .date(y)): return order(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case let (.objectId(x), .objectId(y)): return bytes(Array(x.bytes), Array(y.bytes))
        case let (.uuid(x), .uuid(y)): return bytes(uuidBytes(x), uuidBytes(y))
        case let (.link(x), .link(y)):
            guard x.objectType == y.objectType else { return nil }
            return compare(x.primaryKey, y.primaryKey)
        default: return nil
        }
    }

    static func equal(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.null, _), (_, .null): false
        case let (.object(x), .object(y)): x == y
        default: compare(a, b) == .orderedSame
        }
    }

    private static func isNumber(_ v: Value) -> Bool {
        switch v {
        case .int, .double, .float: true
        default: false
        }
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    private static func bytes<T: Comparable>(_ a: [T], _ b: [T]) -> ComparisonResult {
        a.lexicographicallyPrecedes(b) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    private static func uuidBytes(_ u: UUID) -> [UInt8] { withUnsafeBytes(of: u.uuid) { Array($0) } }
}
