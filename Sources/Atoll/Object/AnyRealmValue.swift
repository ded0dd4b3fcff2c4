import AtollCore
import Foundation

/// A value of any type a property can hold, as one property or collection element: realm-swift's
/// mixed type.
///
/// ```swift
/// class Note: Object {
///     @Persisted var payload: AnyRealmValue
///     @Persisted var tags: List<AnyRealmValue>
/// }
/// try realm.write {
///     note.payload = .int(42)
///     note.payload = .object(author)          // a link to an object of any type
///     note.payload = .fromArray([.string("a"), .double(2.5)])
/// }
/// if case .string(let s) = note.payload { print(s) }
/// ```
///
/// A link to an object that is deleted reads as `.none` (it stays unresolved in the store, as
/// typed links do, and resolves again if an object with its primary key comes back). A list or
/// dictionary read from an `AnyRealmValue` property can be edited in place in a write
/// (`note.payload.listValue?.append(.int(1))`): each edit writes the property's whole value again,
/// and it syncs as one value, the last write winning. It is a snapshot of when the property was
/// read (read the property again to see others' changes); one held inside a `List<AnyRealmValue>`
/// element is a copy. Embedded objects and sets cannot be held.
public enum AnyRealmValue: Hashable {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case object(Object)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case uuid(UUID)
    case dictionary(Map<String, AnyRealmValue>)
    case list(List<AnyRealmValue>)

    /// `.none`.
    public init() { self = .none }

    public var intValue: Int? { if case .int(let v) = self { v } else { nil } }
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    public var floatValue: Float? { if case .float(let v) = self { v } else { nil } }
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { v } else { nil } }
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { v } else { nil } }
    public var uuidValue: UUID? { if case .uuid(let v) = self { v } else { nil } }
    public var dictionaryValue: Map<String, AnyRealmValue>? { if case .dictionary(let v) = self { v } else { nil } }
    public var listValue: List<AnyRealmValue>? { if case .list(let v) = self { v } else { nil } }

    /// The object held, if it is a `T`.
    public func object<T: Object>(_ objectType: T.Type) -> T? {
        if case .object(let o) = self { return o as? T }
        return nil
    }

    /// The object held, read by name: also for an object whose type this process declares no
    /// class for (a type a newer version of the app synced).
    public var dynamicObject: DynamicObject? {
        if case .object(let o) = self { return DynamicObject.wrapping(o) }
        return nil
    }

    /// A value holding a dictionary with these entries.
    public static func fromDictionary(_ dictionary: [String: AnyRealmValue]) -> AnyRealmValue {
        let map = Map<String, AnyRealmValue>()
        for (key, value) in dictionary { map[key] = value }
        return .dictionary(map)
    }

    /// A value holding a list with these elements.
    public static func fromArray(_ array: [AnyRealmValue]) -> AnyRealmValue {
        let list = List<AnyRealmValue>()
        list.append(objectsIn: array)
        return .list(list)
    }

    public static func == (lhs: AnyRealmValue, rhs: AnyRealmValue) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none): true
        case let (.int(a), .int(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case let (.float(a), .float(b)): a == b
        case let (.double(a), .double(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.data(a), .data(b)): a == b
        case let (.date(a), .date(b)): a == b
        case let (.object(a), .object(b)): a == b
        case let (.objectId(a), .objectId(b)): a == b
        case let (.decimal128(a), .decimal128(b)): a == b
        case let (.uuid(a), .uuid(b)): a == b
        case let (.list(a), .list(b)): a === b || Array(a) == Array(b)
        case let (.dictionary(a), .dictionary(b)):
            a === b || a.entries.elementsEqual(b.entries) { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .none: hasher.combine(0)
        case .int(let v): hasher.combine(v)
        case .bool(let v): hasher.combine(v)
        case .float(let v): hasher.combine(v)
        case .double(let v): hasher.combine(v)
        case .string(let v): hasher.combine(v)
        case .data(let v): hasher.combine(v)
        case .date(let v): hasher.combine(v)
        case .object(let v): hasher.combine(v)
        case .objectId(let v): hasher.combine(v)
        case .decimal128(let v): hasher.combine(v)
        case .uuid(let v): hasher.combine(v)
        case .list(let v): hasher.combine(v.count)
        case .dictionary(let v): hasher.combine(v.count)
        }
    }
}

// MARK: - Storage

extension AnyRealmValue: RealmCollectionValue, _Persistable {
    public static var _atollElementShape: _PropertyShape { _PropertyShape(type: .any, isOptional: true) }
    public static var _atollProperty: _PropertyShape { _atollElementShape }
    public static func _atollDefault() -> AnyRealmValue { .none }

    public static func _atollGet(_ object: _ManagedObjectState, _ index: Int) -> AnyRealmValue {
        let value = _atollFromStored(object.stored(at: index)) ?? .none
        // A nested list or dictionary read from the property writes the property's whole value
        // back when it (or one nested in it) changes, so editing it in place works as in Realm.
        value.attachWriteBack { object.setStored(value._atollStored(), at: index) }
        return value
    }

    /// Makes every list and dictionary in this value call `write` after a change.
    func attachWriteBack(_ write: @escaping () -> Void) {
        switch self {
        case .list(let list):
            list.nestedWriteBack = write
            for element in list.elements { element.attachWriteBack(write) }
        case .dictionary(let map):
            map.nestedWriteBack = write
            for entry in map.entries { entry.value.attachWriteBack(write) }
        default:
            break
        }
    }

    public static func _atollSet(_ value: AnyRealmValue, _ object: _ManagedObjectState, _ index: Int) {
        object.setStored(value._atollStored(), at: index)
    }

    public func _atollContent() -> _FieldContent { .mixed(_atollStored()) }

    public func _atollStored() -> _StoredElement {
        switch self {
        case .none: .value(.null)
        case .int(let v): .value(.int(Int64(v)))
        case .bool(let v): .value(.bool(v))
        case .float(let v): .value(.float(v))
        case .double(let v): .value(.double(v))
        case .string(let v): .value(.string(v))
        case .data(let v): .value(.data(v))
        case .date(let v): .value(.date(v))
        case .objectId(let v): .value(.objectId(v))
        case .decimal128(let v): .value(.decimal(v))
        case .uuid(let v): .value(.uuid(v))
        case .object(let o): .object(o)
        case .list(let l): .list(l.elements.map { $0._atollStored() })
        case .dictionary(let m): .map(Dictionary(uniqueKeysWithValues: m.entries.map { ($0.key, $0.value._atollStored()) }))
        }
    }

    public static func _atollFromStored(_ stored: _StoredElement) -> AnyRealmValue? {
        switch stored {
        case .object(let o as Object): return .object(o)
        case .object: return nil
        case .list(let items): return .list(List(unmanaged: items.map { _atollFromStored($0) ?? .none }))
        case .map(let entries):
            let map = Map<String, AnyRealmValue>()
            for (key, item) in entries { map[key] = _atollFromStored(item) ?? AnyRealmValue.none }
            return .dictionary(map)
        case .value(let value): return AnyRealmValue(scalar: value)
        }
    }

    /// The mixed value a scalar `Value` is (links are resolved by the realm before they get here).
    init?(scalar value: Value) {
        switch value {
        case .null: self = .none
        case .bool(let v): self = .bool(v)
        case .int(let v): self = .int(Int(truncatingIfNeeded: v))
        case .double(let v): self = .double(v)
        case .float(let v): self = .float(v)
        case .string(let v): self = .string(v)
        case .data(let v): self = .data(v)
        case .date(let v): self = .date(v)
        case .objectId(let v): self = .objectId(v)
        case .uuid(let v): self = .uuid(v)
        case .decimal(let v): self = .decimal128(v)
        case .list(let items): self = .list(List(unmanaged: items.map { AnyRealmValue(scalar: $0) ?? .none }))
        case .map(let entries):
            let map = Map<String, AnyRealmValue>()
            for (key, item) in entries { map[key] = AnyRealmValue(scalar: item) ?? AnyRealmValue.none }
            self = .dictionary(map)
        case .link, .object, .set: return nil
        }
    }

    /// Realm's loose conversions: `AnyRealmValue` itself, an `Object`, `nil`/`NSNull`, any scalar,
    /// an array (a list) or a `[String: Any]` (a dictionary).
    public static func _atollFromAny(_ any: Any) throws -> AnyRealmValue {
        switch any {
        case let value as AnyRealmValue: return value
        case let object as Object: return .object(object)
        case is NSNull: return .none
        case Optional<Any>.none: return .none
        case let array as [Any]: return .list(List(unmanaged: try array.map(_atollFromAny)))
        case let dictionary as [String: Any]:
            let map = Map<String, AnyRealmValue>()
            for (key, item) in dictionary { map[key] = try _atollFromAny(item) }
            return .dictionary(map)
        default:
            if let value = Value(any: any), let mixed = AnyRealmValue(scalar: value) { return mixed }
            throw Realm.Error(.invalidValue, "\(type(of: any)) value '\(any)' cannot be stored in an AnyRealmValue property")
        }
    }
}

extension List {
    /// A list holding `elements`, not managed by any realm.
    convenience init(unmanaged elements: [Element]) {
        self.init()
        backing = .unmanaged(elements)
    }
}
