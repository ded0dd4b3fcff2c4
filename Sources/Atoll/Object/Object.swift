import AtollCore
import Foundation

/// The common base of `Object` and `EmbeddedObject`: identity, the owning realm, and key-value access.
open class ObjectBase: Hashable, CustomStringConvertible {
    /// Set once the object is managed by a realm.
    @usableFromInline package var _managedState: _ManagedObjectState?
    /// The Swift Observation registrar of an unmanaged object, made by its first read (see
    /// Observation+Objects.swift).
    @usableFromInline final var _atollObservation: _UnmanagedObservation?

    public required init() {}

    /// Creates an unmanaged object from a dictionary of property names to values, or an array of
    /// values in property order, or another object.
    ///
    /// ```swift
    /// let dog = Dog(value: ["name": "Rex", "age": 3])
    /// ```
    public convenience init(value: Any) {
        self.init()
        do {
            try ClassInfo.of(type(of: self)).assign(value, to: self)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// The name the schema uses for this class.
    open class func className() -> String {
        String(describing: self)
    }

    /// The realm managing the object, or `nil` while it is unmanaged.
    public var realm: Realm? { _managedState?.realm }

    /// Whether the object was deleted from its realm, or its realm was invalidated.
    public var isInvalidated: Bool { _managedState?.isInvalidated ?? false }

    /// Whether the object is a frozen snapshot.
    public var isFrozen: Bool { _managedState?.realm.isFrozen ?? false }

    /// The schema of this object's type, with the property names the class declares (a property
    /// renamed by ``propertiesMapping()`` shows its Swift name).
    public var objectSchema: AtollCore.ObjectSchema {
        let info = ClassInfo.of(type(of: self))
        return info.publicSchema(_managedState?.objectSchema ?? info.schema)
    }

    /// Reads or writes a property by its Swift name.
    ///
    /// ```swift
    /// dog["name"] = "Rex"
    /// let age = dog["age"] as! Int
    /// ```
    /// See ``value(forKey:)`` and ``setValue(_:forKey:)`` for the values and the errors.
    open subscript(key: String) -> Any? {
        get { ClassInfo.of(type(of: self)).value(forKey: key, of: self) }
        set { kvcSet(newValue, forKey: key) }
    }

    // MARK: Model customisation

    /// Override to store and sync properties under other names than their Swift names: keys are
    /// Swift property names, values the persisted names.
    ///
    /// ```swift
    /// class Person: Object {
    ///     @Persisted(primaryKey: true) var _id: ObjectId
    ///     @Persisted var name = ""
    ///     override class func propertiesMapping() -> [String: String] { ["name": "full_name"] }
    /// }
    /// ```
    /// The file's column, the sync instructions and the server's schema use the persisted name.
    /// The app keeps using the Swift name: in queries, sorting, key-value coding, `objectSchema`
    /// and notifications (queries also accept the persisted name). Keys that name no `@Persisted`
    /// property are ignored.
    open class func propertiesMapping() -> [String: String] { [:] }

    /// Override to return `false` to keep the class out of the default schema: a realm whose
    /// configuration lists no `objectTypes` then manages it only when another class of the schema
    /// links to it. List it in `objectTypes` to use it on its own.
    open class func shouldIncludeInDefaultSchema() -> Bool { true }

    /// Whether two accessors refer to the same stored object (or are the same unmanaged instance).
    public func isSameObject(as other: ObjectBase?) -> Bool {
        guard let other else { return false }
        if self === other { return true }
        guard let a = _managedState, let b = other._managedState else { return false }
        return a.table === b.table && a.row == b.row && a.realm.coordinator === b.realm.coordinator
    }

    public static func == (lhs: ObjectBase, rhs: ObjectBase) -> Bool { lhs.isSameObject(as: rhs) }

    public func hash(into hasher: inout Hasher) {
        if let state = _managedState {
            hasher.combine(state.row)
            hasher.combine(ObjectIdentifier(state.table))
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }

    open var description: String {
        let info = ClassInfo.of(type(of: self))
        if isInvalidated { return "\(info.schema.name) { invalidated }" }
        let fields = info.publicNames.indices.map { "\t\(info.publicNames[$0]) = \(describe(info.value(at: $0, of: self)))" }
        return "\(info.schema.name) {\n" + fields.joined(separator: ";\n") + ";\n}"
    }

    private func describe(_ value: Any?) -> String {
        switch value {
        case nil: "nil"
        case let object as ObjectBase: "\(object.objectSchema.name)"
        case let string as String: "\"\(string)\""
        case let some?: "\(some)"
        }
    }

    // MARK: Key-value coding

    /// The value of the property with this Swift name: `nil` for nil, an enum's raw value, the live
    /// `List`, `MutableSet` or `Map` of a collection property.
    ///
    /// An unknown name stops the program, as Realm raises for it.
    open func value(forKey key: String) -> Any? { self[key] }

    /// Sets the property with this Swift name from a value of its type or one that converts to it
    /// (a raw value for an enum, a dictionary for an object, an array for a list).
    ///
    /// ```swift
    /// try realm.write { person.setValue("Toronto", forKey: "currentCity") }
    /// ```
    /// Realm raises for an unknown name or a value of the wrong type. On a managed object such an
    /// error fails the write transaction instead: `realm.write` throws it as a `Realm.Error` with
    /// code `.invalidValue` and nothing is written. On an unmanaged object it stops the program.
    open func setValue(_ value: Any?, forKey key: String) { self[key] = value }
}

/// A top-level persisted object type. Subclass it and declare `@Persisted` properties.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(primaryKey: true) var _id: ObjectId
///     @Persisted var name = ""
///     @Persisted var age = 0
/// }
/// ```
open class Object: ObjectBase {
    public required init() { super.init() }

    /// The primary key property name, if the type declares one: with `@Persisted(primaryKey: true)`,
    /// or, as older Realm models do, by overriding this method.
    open class func primaryKey() -> String? {
        if ClassInfo.isAskingForOverride { return nil }
        let info = ClassInfo.of(self)
        return info.primaryKeyIndex.map { info.publicNames[$0] }
    }
}

/// An object type with no identity of its own, owned by exactly one parent object.
/// Deleting the parent deletes it.
open class EmbeddedObject: ObjectBase {
    public required init() { super.init() }
}

extension ObjectBase: RealmCollectionValue {
    public static var _atollElementShape: _PropertyShape {
        _PropertyShape(type: .object, objectClass: self)
    }
    public func _atollStored() -> _StoredElement { .object(self) }
    public static func _atollFromStored(_ stored: _StoredElement) -> Self? {
        guard case .object(let o) = stored else { return nil }
        if let same = o as? Self { return same }
        // A collection or results of `DynamicObject` reads every row by name.
        return Self.self == DynamicObject.self ? DynamicObject.wrapping(o) as? Self : nil
    }
    public static func _atollFromAny(_ any: Any) throws -> Self {
        if let object = any as? Self { return object }
        if any is [String: Any] || any is [Any] {
            let object = self.init()
            try ClassInfo.of(self).assign(any, to: object)
            return object
        }
        throw Realm.Error(.invalidValue, "\(type(of: any)) value '\(any)' cannot be stored as a \(self) object")
    }
}
