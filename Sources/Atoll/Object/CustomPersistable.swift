import AtollCore
import Foundation

/// A type stored as another type Atoll stores: declare the stored type, how to make a value from
/// it and how to turn a value into it.
///
/// ```swift
/// struct Money: CustomPersistable, Hashable {
///     typealias PersistedType = Int       // cents
///     var cents: Int
///     init(persistedValue: Int) { cents = persistedValue }
///     var persistableValue: Int { cents }
/// }
///
/// class Invoice: Object {
///     @Persisted var total: Money
///     @Persisted var lines: List<Money>
/// }
/// ```
/// The file, sync and queries see the stored type: `$0.total == Money(cents: 100)` compares
/// stored values, and a value of the stored type works there too.
public protocol CustomPersistable: _CustomPersistable {
    /// A value made from its stored form.
    init(persistedValue: PersistedType)
    /// The stored form of the value.
    var persistableValue: PersistedType { get }
}

/// ``CustomPersistable`` for types whose stored form may not convert back.
///
/// ```swift
/// extension URL: FailableCustomPersistable {
///     typealias PersistedType = String
///     init?(persistedValue: String) { self.init(string: persistedValue) }
///     var persistableValue: String { absoluteString }
/// }
/// ```
/// As in realm-swift, a stored value that does not convert reads as `nil` in an optional
/// property (`URL?`) and stops the program in a non-optional one; a property declared without a
/// default needs the stored type's default (`""` for a string) to convert.
public protocol FailableCustomPersistable: _CustomPersistable {
    /// A value made from its stored form, or `nil` when it does not convert.
    init?(persistedValue: PersistedType)
    /// The stored form of the value.
    var persistableValue: PersistedType { get }
}

/// What ``CustomPersistable`` and ``FailableCustomPersistable`` share; the members are
/// implementation details.
public protocol _CustomPersistable: _Persistable, RealmCollectionValue {
    /// The type the value is stored as: a type `@Persisted` takes, such as `String` or `Int`.
    associatedtype PersistedType: _Persistable & RealmCollectionValue
    /// The value of a stored form, or `nil` when it does not convert.
    static func _atollConverted(_ persisted: PersistedType) -> Self?
    /// The stored form.
    var _atollPersisted: PersistedType { get }
}

extension CustomPersistable {
    public static func _atollConverted(_ persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
    public var _atollPersisted: PersistedType { persistableValue }
}

extension FailableCustomPersistable {
    public static func _atollConverted(_ persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
    public var _atollPersisted: PersistedType { persistableValue }
}

extension _CustomPersistable {
    public static var _atollProperty: _PropertyShape { PersistedType._atollProperty }

    public static func _atollDefault() -> Self {
        guard let value = _atollConverted(PersistedType._atollDefault()) else {
            preconditionFailure("Failed to default construct a \(Self.self) using the default value for persisted type \(PersistedType.self). "
                + "This conversion must either succeed, the property must be optional, or you must explicitly specify a default value for the property.")
        }
        return value
    }

    public static func _atollGet(_ object: _ManagedObjectState, _ index: Int) -> Self {
        let persisted = PersistedType._atollGet(object, index)
        guard let value = _atollConverted(persisted) else {
            preconditionFailure("Failed to convert persisted value '\(persisted)' to type '\(Self.self)' in a non-optional context.")
        }
        return value
    }

    public static func _atollSet(_ value: Self, _ object: _ManagedObjectState, _ index: Int) {
        PersistedType._atollSet(value._atollPersisted, object, index)
    }

    public func _atollContent() -> _FieldContent { _atollPersisted._atollContent() }

    /// A value of the type, or of its stored type (from `Object(value:)` or `create(_:value:)`).
    public static func _atollFromAny(_ any: Any) throws -> Self {
        if let value = any as? Self { return value }
        let persisted = try PersistedType._atollFromAny(any)
        guard let value = _atollConverted(persisted) else {
            throw Realm.Error(.invalidValue, "\(PersistedType.self) value '\(persisted)' does not convert to a \(Self.self)")
        }
        return value
    }

    /// The default, or for a failable type whose stored default does not convert (`URL` from
    /// `""`), a default some model declares, so typed queries and key paths work for it.
    public static func _atollProbeValue() -> Self {
        if let value = _atollConverted(PersistedType._atollProbeValue()) ?? CustomPersistableSamples.sample(of: Self.self) {
            return value
        }
        return _atollDefault()
    }

    public static var _atollElementShape: _PropertyShape { PersistedType._atollElementShape }

    public func _atollStored() -> _StoredElement { _atollPersisted._atollStored() }

    public static func _atollFromStored(_ stored: _StoredElement) -> Self? {
        PersistedType._atollFromStored(stored).flatMap(_atollConverted)
    }

    /// Whether `stored` is a value of the stored type (that may not convert).
    static func _atollHoldsPersisted(_ stored: _StoredElement) -> Bool {
        PersistedType._atollFromStored(stored) != nil
    }

    public func hash(into hasher: inout Hasher) { _atollPersisted.hash(into: &hasher) }
}

/// Values of custom persistable types that models declare as defaults, by type.
enum CustomPersistableSamples {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var samples: [ObjectIdentifier: Any] = [:]

    static func keep<T>(_ value: T) {
        lock.withLock { if samples[ObjectIdentifier(T.self)] == nil { samples[ObjectIdentifier(T.self)] = value } }
    }

    static func sample<T>(of type: T.Type) -> T? { lock.withLock { samples[ObjectIdentifier(T.self)] as? T } }
}

// MARK: - Queries

extension Query where T: _CustomPersistable {
    /// Compares with a value of the stored type: `$0.homepage == "https://example.com"`.
    public static func == (lhs: Query<T>, rhs: T.PersistedType) -> Query<Bool> { lhs.compare(.equal, queryValue(rhs)) }
    public static func != (lhs: Query<T>, rhs: T.PersistedType) -> Query<Bool> { lhs.compare(.notEqual, queryValue(rhs)) }
}

extension Query where T: _CustomPersistable, T.PersistedType: Comparable {
    public static func < (lhs: Query<T>, rhs: T.PersistedType) -> Query<Bool> { lhs.compare(.less, queryValue(rhs)) }
    public static func <= (lhs: Query<T>, rhs: T.PersistedType) -> Query<Bool> { lhs.compare(.lessOrEqual, queryValue(rhs)) }
    public static func > (lhs: Query<T>, rhs: T.PersistedType) -> Query<Bool> { lhs.compare(.greater, queryValue(rhs)) }
    public static func >= (lhs: Query<T>, rhs: T.PersistedType) -> Query<Bool> { lhs.compare(.greaterOrEqual, queryValue(rhs)) }
}

extension Query where T: _CustomPersistable, T.PersistedType: _QueryBinary {
    /// String operators on the stored form: `$0.homepage.starts(with: "https:")`.
    public func contains(_ value: T.PersistedType, options: StringOptions = []) -> Query<Bool> {
        compare(.contains, value._queryValue, options: options.queryOptions)
    }
    public func starts(with value: T.PersistedType, options: StringOptions = []) -> Query<Bool> {
        compare(.beginsWith, value._queryValue, options: options.queryOptions)
    }
    public func ends(with value: T.PersistedType, options: StringOptions = []) -> Query<Bool> {
        compare(.endsWith, value._queryValue, options: options.queryOptions)
    }
    public func like(_ value: T.PersistedType, caseInsensitive: Bool = false) -> Query<Bool> {
        compare(.like, value._queryValue, options: caseInsensitive ? .caseInsensitive : [])
    }
}

extension Query where T: _CustomPersistable {
    /// The stored form of the value, for every operator of its type:
    /// `$0.homepage.persistableValue.contains("example")`.
    public var persistableValue: Query<T.PersistedType> {
        let (keyPath, collection) = pathAndCollection
        return Query<T.PersistedType>(.path(keyPath, collection: collection))
    }
}
