import AtollCore
import Foundation

/// An element of a persisted collection stored in the form the store understands. An
/// implementation detail of persisted types, hence the underscore.
public enum _StoredElement {
    case value(Value)
    case object(ObjectBase)
    /// A list an `AnyRealmValue` holds, element by element (objects not yet added stay objects).
    indirect case list([_StoredElement])
    /// A dictionary an `AnyRealmValue` holds.
    indirect case map([String: _StoredElement])
}

/// A type that can be an element of `List`, `MutableSet` or a value of `Map`: every scalar, their
/// optionals, and object types.
public protocol RealmCollectionValue: Hashable {
    /// The schema shape of an element (non-optional; `Optional` marks it optional).
    static var _atollElementShape: _PropertyShape { get }
    func _atollStored() -> _StoredElement
    static func _atollFromStored(_ stored: _StoredElement) -> Self?
    static func _atollFromAny(_ any: Any) throws -> Self
}

extension Optional: RealmCollectionValue where Wrapped: RealmCollectionValue {
    public static var _atollElementShape: _PropertyShape {
        var shape = Wrapped._atollElementShape
        shape.isOptional = true
        return shape
    }
    public func _atollStored() -> _StoredElement { self?._atollStored() ?? .value(.null) }
    public static func _atollFromStored(_ stored: _StoredElement) -> Self? {
        if case .value(.null) = stored { return .some(.none) }
        if let value = Wrapped._atollFromStored(stored) { return .some(value) }
        // A stored value a failable custom type cannot convert reads as nil, as in realm-swift.
        if let custom = Wrapped.self as? any FailableCustomPersistable.Type, custom._atollHoldsPersisted(stored) { return .some(.none) }
        return nil
    }
    public static func _atollFromAny(_ any: Any) throws -> Self {
        if any is NSNull { return nil }
        if case Optional<Any>.none = any { return nil }
        return .some(try Wrapped._atollFromAny(any))
    }
}

/// An optional scalar or an optional link (`Dog?`) as a property.
extension Optional: _Persistable where Wrapped: RealmCollectionValue {
    public static var _atollProperty: _PropertyShape { _atollElementShape }
    public static func _atollDefault() -> Self { nil }

    public static func _atollGet(_ object: _ManagedObjectState, _ index: Int) -> Self {
        guard let value = Self._atollFromStored(object.stored(at: index)) else {
            preconditionFailure("Stored value of '\(object.objectSchema.name).\(object.objectSchema.properties[index].name)' is not a \(Self.self)")
        }
        return value
    }

    public static func _atollSet(_ value: Self, _ object: _ManagedObjectState, _ index: Int) {
        object.setStored(value._atollStored(), at: index)
    }

    public func _atollContent() -> _FieldContent {
        switch _atollStored() {
        case .value(let v): .scalar(v)
        case .object(let o): .link(o)
        case let nested: .mixed(nested)
        }
    }
}
