import AtollCore
import Foundation

/// A Swift type a `@Persisted` property can hold. Conformances cover every property kind; the
/// members are implementation details, hence the underscore.
public protocol _Persistable {
    /// How the type is described in the schema.
    static var _atollProperty: _PropertyShape { get }
    /// The value a property of this type has when the declaration gives none.
    static func _atollDefault() -> Self
    /// Reads the property from a managed object.
    static func _atollGet(_ object: _ManagedObjectState, _ index: Int) -> Self
    /// Writes the property of a managed object (inside a write transaction).
    static func _atollSet(_ value: Self, _ object: _ManagedObjectState, _ index: Int)
    /// The content of an unmanaged value, as the store copies it in.
    func _atollContent() -> _FieldContent
    /// Builds a value from a loose `Any` (from `Object(value:)` or `create(_:value:)`).
    static func _atollFromAny(_ any: Any) throws -> Self
    /// Any value of the type, for a key-path probe that reads the property only to learn its name.
    static func _atollProbeValue() -> Self
}

extension _Persistable {
    public static func _atollProbeValue() -> Self { _atollDefault() }
}

/// The schema shape of a persisted Swift type.
public struct _PropertyShape: Sendable {
    public var type: PropertyType
    public var collection: CollectionKind
    public var isOptional: Bool
    /// For links and embedded objects: the target class.
    public var objectClass: ObjectBase.Type?

    public init(type: PropertyType, collection: CollectionKind = .single, isOptional: Bool = false,
                objectClass: ObjectBase.Type? = nil) {
        self.type = type
        self.collection = collection
        self.isOptional = isOptional
        self.objectClass = objectClass
    }
}

/// What an unmanaged property holds, in the store's terms (an implementation detail of persisted
/// types, hence the underscore).
public enum _FieldContent {
    case scalar(Value)
    case link(ObjectBase?)
    /// Elements of a list or set.
    case elements([_StoredElement])
    /// Entries of a map.
    case entries([(String, _StoredElement)])
    /// An `AnyRealmValue`: a scalar, an object, or a nested list or dictionary.
    case mixed(_StoredElement)
}

/// A scalar that converts to and from ``Value``.
public protocol _PersistableScalar: _Persistable, _QueryableValue {
    static var _atollType: PropertyType { get }
    var _atollValue: Value { get }
    init?(_atollValue: Value)
}

extension _PersistableScalar {
    public static var _atollProperty: _PropertyShape { _PropertyShape(type: _atollType) }

    public static func _atollGet(_ object: _ManagedObjectState, _ index: Int) -> Self {
        let value = object.scalar(at: index)
        guard let result = Self(_atollValue: value) else {
            preconditionFailure("Stored value \(value) of '\(object.objectSchema.name).\(object.objectSchema.properties[index].name)' is not a \(Self.self)")
        }
        return result
    }

    public static func _atollSet(_ value: Self, _ object: _ManagedObjectState, _ index: Int) {
        object.setScalar(value._atollValue, at: index)
    }

    public func _atollContent() -> _FieldContent { .scalar(_atollValue) }

    public static func _atollFromAny(_ any: Any) throws -> Self {
        if let same = any as? Self { return same }
        if let value = Value(any: any), let converted = Self(_atollValue: value) { return converted }
        throw Realm.Error(.invalidValue, "\(type(of: any)) value '\(any)' cannot be stored in a \(Self.self) property")
    }

    public static var _atollElementShape: _PropertyShape { _PropertyShape(type: _atollType) }
    public func _atollStored() -> _StoredElement { .value(_atollValue) }
    public static func _atollFromStored(_ stored: _StoredElement) -> Self? {
        guard case .value(let v) = stored else { return nil }
        return Self(_atollValue: v)
    }
}

extension Bool: _PersistableScalar {
    public static var _atollType: PropertyType { .bool }
    public static func _atollDefault() -> Bool { false }
    public var _atollValue: Value { .bool(self) }
    public init?(_atollValue v: Value) {
        guard case .bool(let b) = v else { return nil }
        self = b
    }
}

/// Integers of every width persist as 64-bit integers.
public protocol _PersistableInteger: _PersistableScalar, FixedWidthInteger {}

extension _PersistableInteger {
    public static var _atollType: PropertyType { .int }
    public static func _atollDefault() -> Self { 0 }
    public var _atollValue: Value { .int(Int64(self)) }
    public init?(_atollValue v: Value) {
        switch v {
        case .int(let i): self.init(truncatingIfNeeded: i)
        case .double(let d) where d.rounded() == d: self.init(exactly: d)
        default: return nil
        }
    }
}

extension Int: _PersistableInteger {}
extension Int8: _PersistableInteger {}
extension Int16: _PersistableInteger {}
extension Int32: _PersistableInteger {}
extension Int64: _PersistableInteger {}

extension Double: _PersistableScalar {
    public static var _atollType: PropertyType { .double }
    public static func _atollDefault() -> Double { 0 }
    public var _atollValue: Value { .double(self) }
    public init?(_atollValue v: Value) {
        switch v {
        case .double(let d): self = d
        case .float(let f): self = Double(f)
        case .int(let i): self = Double(i)
        default: return nil
        }
    }
}

extension Float: _PersistableScalar {
    public static var _atollType: PropertyType { .float }
    public static func _atollDefault() -> Float { 0 }
    public var _atollValue: Value { .float(self) }
    public init?(_atollValue v: Value) {
        switch v {
        case .float(let f): self = f
        case .double(let d): self = Float(d)
        case .int(let i): self = Float(i)
        default: return nil
        }
    }
}

extension String: _PersistableScalar {
    public static var _atollType: PropertyType { .string }
    public static func _atollDefault() -> String { "" }
    public var _atollValue: Value { .string(self) }
    public init?(_atollValue v: Value) {
        guard case .string(let s) = v else { return nil }
        self = s
    }
}

extension Data: _PersistableScalar {
    public static var _atollType: PropertyType { .data }
    public static func _atollDefault() -> Data { Data() }
    public var _atollValue: Value { .data(self) }
    public init?(_atollValue v: Value) {
        guard case .data(let d) = v else { return nil }
        self = d
    }
}

extension Date: _PersistableScalar {
    public static var _atollType: PropertyType { .date }
    public static func _atollDefault() -> Date { Date(timeIntervalSince1970: 0) }
    public var _atollValue: Value { .date(self) }
    public init?(_atollValue v: Value) {
        guard case .date(let d) = v else { return nil }
        self = d
    }
}

extension ObjectId: _PersistableScalar {
    public static var _atollType: PropertyType { .objectId }
    public static func _atollDefault() -> ObjectId { .generate() }
    public var _atollValue: Value { .objectId(self) }
    public init?(_atollValue v: Value) {
        switch v {
        case .objectId(let o): self = o
        case .string(let s): guard let o = try? ObjectId(string: s) else { return nil }; self = o
        default: return nil
        }
    }
}

extension UUID: _PersistableScalar {
    public static var _atollType: PropertyType { .UUID }
    public static func _atollDefault() -> UUID { UUID() }
    public var _atollValue: Value { .uuid(self) }
    public init?(_atollValue v: Value) {
        switch v {
        case .uuid(let u): self = u
        case .string(let s): guard let u = UUID(uuidString: s) else { return nil }; self = u
        default: return nil
        }
    }
}

extension Decimal128: _PersistableScalar {
    public static var _atollType: PropertyType { .decimal128 }
    public static func _atollDefault() -> Decimal128 { Decimal128() }
    public var _atollValue: Value { .decimal(self) }
    public init?(_atollValue v: Value) {
        switch v {
        case .decimal(let d): self = d
        case .int(let i): self = Decimal128(Int(i))
        case .double(let d): self = Decimal128(d)
        case .string(let s): guard let d = try? Decimal128(string: s) else { return nil }; self = d
        default: return nil
        }
    }
}

extension Value {
    /// A number object by the type it was made from: `c`/`B` (a boolean; JSON's `true`), `f`,
    /// `d`, else an integer.
    init(_ number: NSNumber) {
        switch String(cString: number.objCType) {
        case "c", "B": self = .bool(number.boolValue)
        case "f": self = .float(number.floatValue)
        case "d": self = .double(number.doubleValue)
        default: self = .int(number.int64Value)
        }
    }

    /// Converts a loose Swift value (from a dictionary passed to `Object(value:)`) to a `Value`.
    init?(any: Any) {
        // An NSNumber (JSONSerialization's numbers, NSDictionary values) casts to Bool when it
        // holds 0 or 1, on Linux as on Darwin: its own type says what it is.
        if type(of: any) is NSNumber.Type, let number = any as? NSNumber {
            self = Value(number)
            return
        }
        switch any {
        case let v as Value: self = v
        case is NSNull: self = .null
        case let b as Bool: self = .bool(b)
        case let i as Int: self = .int(Int64(i))
        case let i as Int64: self = .int(i)
        case let i as Int32: self = .int(Int64(i))
        case let i as Int16: self = .int(Int64(i))
        case let i as Int8: self = .int(Int64(i))
        case let d as Double: self = .double(d)
        case let f as Float: self = .float(f)
        case let s as String: self = .string(s)
        case let d as Data: self = .data(d)
        case let d as Date: self = .date(d)
        case let o as ObjectId: self = .objectId(o)
        case let u as UUID: self = .uuid(u)
        case let d as Decimal128: self = .decimal(d)
        default: return nil
        }
    }
}
