import AtollCore

/// An enum stored by its raw value: `enum Status: String, PersistableEnum { case open, done }`,
/// then `@Persisted var status = Status.open`.
public protocol PersistableEnum: _PersistableScalar, RawRepresentable, CaseIterable, Hashable
where RawValue: _PersistableScalar {}

extension PersistableEnum {
    public static var _atollType: PropertyType { RawValue._atollType }
    /// The first case, as Realm does when a declaration gives no default.
    public static func _atollDefault() -> Self { allCases.first! }
    public var _atollValue: Value { rawValue._atollValue }
    public init?(_atollValue value: Value) {
        guard let raw = RawValue(_atollValue: value) else { return nil }
        self.init(rawValue: raw)
    }
}

extension Realm: Equatable {
    /// Two realms are equal when they are the same instance (Realm's value semantics compare the
    /// underlying instance too).
    public static func == (lhs: Realm, rhs: Realm) -> Bool { lhs === rhs }
}
