import Foundation

/// A reference from one object to another: the target's type and primary key.
///
/// Links travel between devices by primary key, never by a local row number.
public struct ObjectLink: Hashable, Sendable {
    public var objectType: String
    public var primaryKey: Value

    public init(objectType: String, primaryKey: Value) {
        self.objectType = objectType
        self.primaryKey = primaryKey
    }
}

/// Any value a property can hold, as both the client and the server see it.
///
/// `Value` is what queries evaluate, what sync instructions carry and what canonical dumps print.
/// ```swift
/// let v: Value = .string("Frodo")
/// v.compare(to: .string("Sam"))   // .orderedAscending
/// ```
public indirect enum Value: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case float(Float)
    case string(String)
    case data(Data)
    case date(Date)
    case objectId(ObjectId)
    case uuid(UUID)
    case decimal(Decimal128)
    /// A to-one link or an element of a list of links.
    case link(ObjectLink)
    /// An embedded object, held inline by its owner.
    case object([String: Value])
    case list([Value])
    case set([Value])
    case map([String: Value])

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The kind of property this value can be stored in, or `nil` for `null` and collections.
    public var propertyType: PropertyType? {
        switch self {
        case .null, .list, .set, .map: nil
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .float: .float
        case .string: .string
        case .data: .data
        case .date: .date
        case .objectId: .objectId
        case .uuid: .UUID
        case .decimal: .decimal128
        case .link, .object: .object
        }
    }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .list: "list"
        case .set: "set"
        case .map: "map"
        case .object: "embedded object"
        case .link: "link"
        default: propertyType?.rawValue ?? "value"
        }
    }
}

// MARK: - Comparison

extension Value {
    /// Numeric view of numbers of every width, so `int(1) == double(1.0)` compares equal in queries.
    var numericDouble: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        case .float(let f): Double(f)
        case .decimal(let d): d.doubleValue
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    /// Orders two values the way queries and sorts do, or returns `nil` when they are not comparable
    /// (a string and a number, say). Numbers of different kinds compare by value; strings by Unicode
    /// scalars (the same order SQLite's BINARY collation gives on UTF-8); `null` sorts before everything.
    public func compare(to other: Value) -> ComparisonResult? {
        switch (self, other) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case let (.bool(a), .bool(b)): return Self.order(a ? 1 : 0, b ? 1 : 0)
        case let (.int(a), .int(b)): return Self.order(a, b)
        case let (.decimal(a), .decimal(b)): return Self.order(a, b)
        case let (.decimal(a), b) where b.numericDouble != nil:
            return Self.order(a, Decimal128(b.numericDouble!))
        case let (a, .decimal(b)) where a.numericDouble != nil:
            return Self.order(Decimal128(a.numericDouble!), b)
        case (.int, .double), (.int, .float), (.double, _), (.float, _):
            guard let a = numericDouble, let b = other.numericDouble else { return nil }
            return Self.order(a, b)
        case let (.string(a), .string(b)):
            // By Unicode scalars, not by Swift's canonical equivalence: "é" precomposed and
            // decomposed differ, as they do in SQLite, so the order is total and matches the store.
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? .orderedAscending
                : (a.unicodeScalars.elementsEqual(b.unicodeScalars) ? .orderedSame : .orderedDescending)
        case let (.data(a), .data(b)):
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case let (.date(a), .date(b)): return Self.order(a, b)
        case let (.objectId(a), .objectId(b)): return Self.order(a, b)
        case let (.uuid(a), .uuid(b)): return Self.order(a.uuidString, b.uuidString)
        case let (.link(a), .link(b)):
            guard a.objectType == b.objectType else { return nil }
            return a.primaryKey.compare(to: b.primaryKey)
        default: return nil
        }
    }

    /// Whether two values are equal as a query's `==` sees them (numbers by value).
    public func queryEquals(_ other: Value) -> Bool {
        switch (self, other) {
        case (.list, _), (.set, _), (.map, _), (.object, _): return self == other
        default: return compare(to: other) == .orderedSame
        }
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }
}

// MARK: - Description

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .int(let i): String(i)
        case .double(let d): String(d)
        case .float(let f): String(f)
        case .string(let s): "\"" + s.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .data(let d): "B64\"" + d.base64EncodedString() + "\""
        case .date(let d): "T" + String(d.timeIntervalSince1970)
        case .objectId(let o): "O" + o.stringValue
        case .uuid(let u): "U" + u.uuidString.lowercased()
        case .decimal(let d): d.description
        case .link(let l): l.objectType + "(" + l.primaryKey.description + ")"
        case .object(let fields):
            "{" + fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .list(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .set(let items): "set{" + items.map(\.description).sorted().joined(separator: ", ") + "}"
        case .map(let entries):
            "map{" + entries.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}
