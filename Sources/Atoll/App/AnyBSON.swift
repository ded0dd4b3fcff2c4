import AtollCore
import Foundation

/// A type that is a BSON value: what ``AnyBSON`` wraps.
public protocol BSON: Equatable {}

extension NSNull: BSON {}
extension Int: BSON {}
extension Int32: BSON {}
extension Int64: BSON {}
extension Bool: BSON {}
extension Double: BSON {}
extension String: BSON {}
extension Data: BSON {}
extension Date: BSON {}
extension Decimal128: BSON {}
extension ObjectId: BSON {}
extension UUID: BSON {}
extension NSRegularExpression: BSON {}

/// A BSON document: what `user.customData` is.
///
/// ```swift
/// let color = user.customData["favoriteColor"]??.stringValue
/// ```
public typealias Document = [String: AnyBSON?]

extension Dictionary: BSON where Key == String, Value == AnyBSON? {}
extension Array: BSON where Element == AnyBSON? {}

/// The greatest BSON value.
public struct MaxKey: BSON, Hashable, Sendable {
    public init() {}
}

/// The smallest BSON value.
public struct MinKey: BSON, Hashable, Sendable {
    public init() {}
}

/// Any BSON value, as in realm-swift: custom user data, function arguments.
///
/// ```swift
/// let arguments: [AnyBSON] = ["security question", 42, ["answer": "blue"]]
/// try await app.emailPasswordAuth.callResetPasswordFunction(email: email, password: newPassword, args: arguments)
/// ```
/// (`@unchecked Sendable` for `.regex`: `NSRegularExpression` is immutable and documented thread-safe.)
@frozen public enum AnyBSON: BSON, Hashable, @unchecked Sendable {
    case double(Double)
    case string(String)
    indirect case document(Document)
    indirect case array([AnyBSON?])
    case binary(Data)
    case objectId(ObjectId)
    case bool(Bool)
    case datetime(Date)
    case regex(NSRegularExpression)
    case int32(Int32)
    case timestamp(Date)
    case int64(Int64)
    case decimal128(Decimal128)
    case uuid(UUID)
    case minKey
    case maxKey
    case null

    /// An `.int64` (an `.int32` where `Int` has 32 bits).
    public init(_ int: Int) {
        self = MemoryLayout<Int>.size == 4 ? .int32(Int32(int)) : .int64(Int64(int))
    }

    /// The case that holds `bson`; `.null` for a type that is no BSON value.
    public init<T: BSON>(_ bson: T) {
        switch bson {
        case let value as Int: self = AnyBSON(value)
        case let value as Int32: self = .int32(value)
        case let value as Int64: self = .int64(value)
        case let value as Double: self = .double(value)
        case let value as String: self = .string(value)
        case let value as Data: self = .binary(value)
        case let value as Date: self = .datetime(value)
        case let value as Decimal128: self = .decimal128(value)
        case let value as UUID: self = .uuid(value)
        case let value as ObjectId: self = .objectId(value)
        case let value as Document: self = .document(value)
        case let value as [AnyBSON?]: self = .array(value)
        case let value as Bool: self = .bool(value)
        case let value as AnyBSON: self = value
        case is MaxKey: self = .maxKey
        case is MinKey: self = .minKey
        case let value as NSRegularExpression: self = .regex(value)
        default: self = .null
        }
    }

    public var int32Value: Int32? { if case .int32(let v) = self { v } else { nil } }
    public var int64Value: Int64? { if case .int64(let v) = self { v } else { nil } }
    public var regexValue: NSRegularExpression? { if case .regex(let v) = self { v } else { nil } }
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { v } else { nil } }
    public var dateValue: Date? { if case .datetime(let v) = self { v } else { nil } }
    public var arrayValue: [AnyBSON?]? { if case .array(let v) = self { v } else { nil } }
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var documentValue: Document? { if case .document(let v) = self { v } else { nil } }
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    public var binaryValue: Data? { if case .binary(let v) = self { v } else { nil } }
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { v } else { nil } }
    public var timestampValue: Date? { if case .timestamp(let v) = self { v } else { nil } }
    public var uuidValue: UUID? { if case .uuid(let v) = self { v } else { nil } }
    public var isNull: Bool { self == .null }

    /// The value as an `Int` when that loses nothing (from `.int32`, `.int64` or `.double`).
    public func asInt() -> Int? {
        switch self {
        case .int32(let v): Int(v)
        case .int64(let v): Int(exactly: v)
        case .double(let v): Int(exactly: v)
        default: nil
        }
    }

    public func asInt32() -> Int32? {
        switch self {
        case .int32(let v): v
        case .int64(let v): Int32(exactly: v)
        case .double(let v): Int32(exactly: v)
        default: nil
        }
    }

    public func asInt64() -> Int64? {
        switch self {
        case .int32(let v): Int64(v)
        case .int64(let v): v
        case .double(let v): Int64(exactly: v)
        default: nil
        }
    }

    public func asDouble() -> Double? {
        if case .double(let v) = self { return v }
        return asInt().map(Double.init)
    }

    public func asDecimal128() -> Decimal128? {
        switch self {
        case .decimal128(let v): v
        case .int64(let v): try? Decimal128(string: String(v))
        case .int32(let v): try? Decimal128(string: String(v))
        case .double(let v): try? Decimal128(string: String(v))
        default: nil
        }
    }

    /// The value as a `T` when it holds one.
    public func value<T: BSON>() -> T? {
        switch self {
        case .int32(let v): T.self == Int.self && MemoryLayout<Int>.size == 4 ? Int(v) as? T : v as? T
        case .int64(let v): T.self == Int.self && MemoryLayout<Int>.size != 4 ? Int(v) as? T : v as? T
        case .bool(let v): v as? T
        case .double(let v): v as? T
        case .string(let v): v as? T
        case .binary(let v): v as? T
        case .datetime(let v): v as? T
        case .decimal128(let v): v as? T
        case .objectId(let v): v as? T
        case .document(let v): v as? T
        case .array(let v): v as? T
        case .uuid(let v): v as? T
        case .maxKey: MaxKey() as? T
        case .minKey: MinKey() as? T
        case .regex(let v): v as? T
        case .timestamp, .null: nil
        }
    }
}

extension AnyBSON: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension AnyBSON: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension AnyBSON: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension AnyBSON: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) { self.init(value) }
}

extension AnyBSON: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, AnyBSON?)...) {
        self = .document(Document(elements, uniquingKeysWith: { $1 }))
    }
}

extension AnyBSON: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: AnyBSON?...) { self = .array(elements) }
}
