import AtollCore

/// Declares a stored property of an `Object` or `EmbeddedObject`.
///
/// ```swift
/// class Task: Object {
///     @Persisted(primaryKey: true) var _id: ObjectId
///     @Persisted(indexed: true) var owner = ""
///     @Persisted var tags: List<String>
/// }
/// ```
/// Unmanaged objects keep the value in the wrapper; once the object is added to a realm, reads and
/// writes go to the realm.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline
    enum Storage {
        case unmanaged(Value)
        /// Unmanaged with the type's default, made on first read (so a managed accessor, whose
        /// fields are bound right after `init()`, never pays for defaults such as a fresh ObjectId).
        case unmanagedDefault
        case managed(Int)
        /// Managed, in an accessor of an `Encodable` class: the property index and the object
        /// holding the field, so `encode(to:)`, which sees only the field, can read it. Boxed, so
        /// that this case costs one reference and every field keeps the size of the others
        /// (unboxed, a `Persisted<Int>` grew from 9 to 17 bytes and bulk inserts slowed down).
        case managedIn(ManagedFieldOwner)
    }

    @usableFromInline var storage: Storage
    @usableFromInline let options: PersistedOptions

    @inlinable public init() {
        storage = .unmanagedDefault
        options = []
    }

    @inlinable public init(wrappedValue: Value) {
        storage = .unmanaged(wrappedValue)
        options = .hasDefault
    }

    @inlinable public init(primaryKey: Bool) {
        storage = .unmanagedDefault
        options = primaryKey ? .primaryKey : []
    }

    @inlinable public init(wrappedValue: Value, primaryKey: Bool) {
        storage = .unmanaged(wrappedValue)
        options = primaryKey ? [.primaryKey, .hasDefault] : .hasDefault
    }

    @inlinable public init(indexed: Bool) {
        storage = .unmanagedDefault
        options = indexed ? .indexed : []
    }

    @inlinable public init(wrappedValue: Value, indexed: Bool) {
        storage = .unmanaged(wrappedValue)
        options = indexed ? [.indexed, .hasDefault] : .hasDefault
    }

    @available(*, unavailable, message: "@Persisted can only be used on Object and EmbeddedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError() }
        // swiftlint:disable:next unused_setter_value
        set { fatalError() }
    }

    @inlinable public static subscript<EnclosingSelf: ObjectBase>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            let storage = object[keyPath: storageKeyPath].storage
            if let state = object._managedState {
                let index = managedIndex(object, state, storage, storageKeyPath)
                let value = Value._atollGet(state, index)
                // Swift Observation: out of line, so that what is inlined here stays small.
                _atollObserveRead(object, state, index, wrappedKeyPath)
                return value
            }
            switch storage {
            case .unmanaged(let value):
                _atollObserveRead(object, wrappedKeyPath)
                return value
            case .unmanagedDefault:
                let value = Value._atollDefault()
                object[keyPath: storageKeyPath].storage = .unmanaged(value)
                _atollObserveRead(object, wrappedKeyPath)
                return value
            case .managed(let index):
                // A key-path probe (see KeyPathNames): report which property was read.
                KeyPathNames.record(object, index)
                return Value._atollProbeValue()
            case .managedIn(let owner):
                KeyPathNames.record(object, owner.index)
                return Value._atollProbeValue()
            }
        }
        // Always inlined, so that the storage key path folds into a direct field access (with the
        // branch for observed objects, the optimizer kept setters out of line: a key-path
        // projection at run time made bulk inserts 9% slower).
        @inline(__always) set {
            if let state = object._managedState {
                let storage = object[keyPath: storageKeyPath].storage
                Value._atollSet(newValue, state, managedIndex(object, state, storage, storageKeyPath))
            } else if object._atollObservation == nil {
                // Made by the object's first read: an object nobody read has no observers.
                object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
            } else {
                // Out of line: the setter is inlined at every call site.
                observedSet(object, wrappedKeyPath, storageKeyPath, newValue)
            }
        }
    }

    /// Writes a property of an unmanaged object that was read, so may be observed.
    @usableFromInline
    static func observedSet<EnclosingSelf: ObjectBase>(
        _ object: EnclosingSelf, _ wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>, _ newValue: Value
    ) {
        guard #available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *), let registrar = object._atollObservation?.registrar.base else {
            return object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
        }
        registrar.withMutation(of: object, keyPath: wrappedKeyPath) {
            object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
        }
    }

    /// The property index of a managed object's field. Accessors made for stored rows are not
    /// bound field by field when made; the first access of a field finds its index on the class's
    /// bound probe instance and records it in the field.
    @inlinable
    static func managedIndex<EnclosingSelf: ObjectBase>(
        _ object: EnclosingSelf, _ state: _ManagedObjectState, _ storage: Storage,
        _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Int {
        switch storage {
        case .managed(let index): return index
        case .managedIn(let owner): return owner.index
        case .unmanaged, .unmanagedDefault: break
        }
        switch (state._probe as! EnclosingSelf)[keyPath: storageKeyPath].storage {
        case .managed(let index):
            object[keyPath: storageKeyPath].storage = .managed(index)
            return index
        case .managedIn(let owner):
            object[keyPath: storageKeyPath].storage = .managed(owner.index)
            return owner.index
        case .unmanaged, .unmanagedDefault:
            preconditionFailure("the probe of \(EnclosingSelf.self) is not bound")
        }
    }
}

/// A managed field's property index and the object holding it (``Persisted/Storage/managedIn``).
@usableFromInline
final class ManagedFieldOwner {
    @usableFromInline let index: Int
    /// Unowned: the field lives inside this object, so the object outlives every read of it.
    let owner: Unmanaged<ObjectBase>

    init(index: Int, owner: ObjectBase) {
        self.index = index
        self.owner = Unmanaged.passUnretained(owner)
    }
}

@usableFromInline
struct PersistedOptions: OptionSet {
    @usableFromInline let rawValue: UInt8
    @inlinable init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable static var primaryKey: PersistedOptions { PersistedOptions(rawValue: 1) }
    @inlinable static var indexed: PersistedOptions { PersistedOptions(rawValue: 2) }
    @inlinable static var hasDefault: PersistedOptions { PersistedOptions(rawValue: 4) }
}

/// Type-erased access to a `Persisted` field at a known offset inside an object, used for schema
/// discovery, for binding an object to a realm, and for key-value access by property name.
protocol PersistedField {
    static var shape: _PropertyShape { get }
    static func options(at pointer: UnsafeRawPointer) -> (primaryKey: Bool, indexed: Bool)
    /// Binds the field to property `index` (after `keepSample`, when `keepsSample`).
    static func bind(at pointer: UnsafeMutableRawPointer, index: Int)
    /// Binds the field and records the object holding it (for `Encodable` classes).
    static func bind(at pointer: UnsafeMutableRawPointer, index: Int, owner: ObjectBase)
    /// Whether the field's type is a custom persistable one, whose declared default a bind keeps.
    static var keepsSample: Bool { get }
    /// Keeps the field's declared default for key-path probes, before it is bound.
    static func keepSample(_ pointer: UnsafeMutableRawPointer)
    static func content(at pointer: UnsafeRawPointer) -> _FieldContent?
    static func assign(_ any: Any, at pointer: UnsafeMutableRawPointer, index: Int, object: ObjectBase) throws
    static func get(at pointer: UnsafeRawPointer, index: Int, object: ObjectBase) -> Any
}

extension Persisted: PersistedField {
    static var shape: _PropertyShape { Value._atollProperty }

    static func options(at pointer: UnsafeRawPointer) -> (primaryKey: Bool, indexed: Bool) {
        let options = pointer.assumingMemoryBound(to: Self.self).pointee.options
        return (options.contains(.primaryKey), options.contains(.indexed))
    }

    static func bind(at pointer: UnsafeMutableRawPointer, index: Int) {
        pointer.assumingMemoryBound(to: Self.self).pointee.storage = .managed(index)
    }

    static func bind(at pointer: UnsafeMutableRawPointer, index: Int, owner: ObjectBase) {
        pointer.assumingMemoryBound(to: Self.self).pointee.storage = .managedIn(ManagedFieldOwner(index: index, owner: owner))
    }

    static var keepsSample: Bool { Value.self is any _CustomPersistable.Type }

    /// A declared default of a custom persistable type, kept for key-path probes (see
    /// `_CustomPersistable._atollProbeValue()`).
    static func keepSample(_ pointer: UnsafeMutableRawPointer) {
        guard keepsSample, case .unmanaged(let value) = pointer.assumingMemoryBound(to: Self.self).pointee.storage else { return }
        CustomPersistableSamples.keep(value)
    }

    static func content(at pointer: UnsafeRawPointer) -> _FieldContent? {
        let field = UnsafeMutableRawPointer(mutating: pointer).assumingMemoryBound(to: Self.self)
        switch field.pointee.storage {
        case .unmanaged(let value): return value._atollContent()
        case .unmanagedDefault:
            // The default becomes the stored value, so the object reads back what was saved.
            let value = Value._atollDefault()
            field.pointee.storage = .unmanaged(value)
            return value._atollContent()
        case .managed, .managedIn: return nil
        }
    }

    static func assign(_ any: Any, at pointer: UnsafeMutableRawPointer, index: Int, object: ObjectBase) throws {
        let value = try Value._atollFromAny(any)
        if let state = object._managedState {
            Value._atollSet(value, state, index)
        } else {
            pointer.assumingMemoryBound(to: Self.self).pointee.storage = .unmanaged(value)
        }
    }

    static func get(at pointer: UnsafeRawPointer, index: Int, object: ObjectBase) -> Any {
        if let state = object._managedState { return Value._atollGet(state, index) }
        switch pointer.assumingMemoryBound(to: Self.self).pointee.storage {
        case .unmanaged(let value): return value
        case .unmanagedDefault:
            let field = UnsafeMutableRawPointer(mutating: pointer).assumingMemoryBound(to: Self.self)
            let value = Value._atollDefault()
            field.pointee.storage = .unmanaged(value)
            return value
        case .managed, .managedIn: return Value._atollDefault()
        }
    }
}
