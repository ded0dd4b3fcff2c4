import AtollCore
import Foundation

/// Declares a property of a ``Projection``: a key path into the projected object, read and
/// written through it.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var firstName
///     @Projected(\Person.address?.city) var homeCity
///     @Projected(\Person.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
/// }
/// ```
/// A key path whose last step is writable (`\Person.firstName`) can be set, inside a write
/// transaction; setting a read-only one (`\Person.lastName.localizedUppercase`) stops the program.
@propertyWrapper
public struct Projected<T: ObjectBase, Value> {
    let keyPath: KeyPath<T, Value>

    public init(_ projectedKeyPath: KeyPath<T, Value>) {
        keyPath = projectedKeyPath
    }

    @available(*, unavailable, message: "@Projected can only be used on Projection subclasses")
    public var wrappedValue: Value {
        get { fatalError() }
        // swiftlint:disable:next unused_setter_value
        set { fatalError() }
    }

    public static subscript<EnclosingSelf: Projection<T>>(
        _enclosingInstance projection: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Projected<T, Value>>
    ) -> Value {
        get { projection.rootObject[keyPath: projection[keyPath: storageKeyPath].keyPath] }
        set {
            guard let writable = projection[keyPath: storageKeyPath].keyPath as? ReferenceWritableKeyPath<T, Value> else {
                preconditionFailure("The key path of \(EnclosingSelf.self) is not writable")
            }
            projection.rootObject[keyPath: writable] = newValue
        }
    }
}

/// What every `Projection` is, without its generic class: what `observe` and
/// `realm.objects(_:)` work with.
public protocol ProjectionObservable: AnyObject {
    /// The projected object type, an `Object` or `EmbeddedObject` subclass.
    associatedtype Root: ObjectBase
    /// The projected object.
    var rootObject: Root { get }
    init(projecting object: Root)
}

/// A lighter view of an `Object`: the properties it declares with ``Projected`` read and write
/// the projected object, renamed, reached through links, or mapped over a list.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var firstName
///     @Projected(\Person.address?.city) var homeCity
///     @Projected(\Person.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
/// }
///
/// let people = realm.objects(PersonProjection.self).filter("lastName == %@", "Snow")
/// let one = PersonProjection(projecting: person)
/// try realm.write { one.firstName = "Jon" }
/// ```
/// Queries and sort keys of `Results<PersonProjection>` name the projected object's
/// properties (`lastName` above), as in realm-swift.
open class Projection<Root: ObjectBase>: RealmCollectionValue, ProjectionObservable, CustomStringConvertible {
    /// The projected object.
    public let rootObject: Root

    /// A projection of `object` (a managed object, or an unmanaged one to read and write in memory).
    public required init(projecting object: Root) {
        rootObject = object
        // Checks the declarations now, so a wrong one fails where the projection is made.
        _ = ProjectionSchema.of(Swift.type(of: self), sample: self)
    }

    public static func == (lhs: Projection<Root>, rhs: Projection<Root>) -> Bool {
        lhs.rootObject.isSameObject(as: rhs.rootObject)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(rootObject) }

    open var description: String {
        let properties = ProjectionSchema.of(Swift.type(of: self), sample: self).properties
        let lines = properties.map { "\t\($0.label)(\\.\($0.rootName)) = \(describe($0.read(rootObject)));" }
        return "\(Swift.type(of: self))<\(Root.self)> {\n" + lines.joined(separator: "\n") + "\n}"
    }

    private func describe(_ value: Any) -> String {
        if case Optional<Any>.none = value { return "nil" }
        if case Optional<Any>.some(let wrapped) = value { return "\(wrapped)" }
        return "\(value)"
    }

    // MARK: Thread confinement

    /// The realm of the projected object.
    public var realm: Realm? { rootObject.realm }

    /// Whether the projected object was deleted or its realm invalidated.
    public var isInvalidated: Bool { rootObject.isInvalidated }

    public var isFrozen: Bool { rootObject.isFrozen }

    /// A projection of a frozen snapshot of the object, readable from any thread.
    public func freeze() -> Self { Self(projecting: rootObject.freeze()) }

    /// A projection of the live object of a frozen one (`nil` when it was deleted).
    public func thaw() -> Self? { rootObject.thaw().map { Self(projecting: $0) } }

    // MARK: RealmCollectionValue

    public static var _atollElementShape: _PropertyShape { Root._atollElementShape }

    public func _atollStored() -> _StoredElement { .object(rootObject) }

    /// A results' or collection's object seen through this projection.
    public static func _atollFromStored(_ stored: _StoredElement) -> Self? {
        guard let root = Root._atollFromStored(stored) else { return nil }
        return Self(projecting: root)
    }

    public static func _atollFromAny(_ any: Any) throws -> Self {
        if let projection = any as? Self { return projection }
        return Self(projecting: try Root._atollFromAny(any))
    }
}

/// A `@Projected` field as a projection's schema sees it.
protocol AnyProjected {
    /// The name of the projected object's property the key path starts with, or `nil` when the
    /// key path reads no `@Persisted` property.
    var rootName: String? { get }
    func read(_ root: ObjectBase) -> Any
}

extension Projected: AnyProjected {
    var rootName: String? { KeyPathNames.nameIfPersisted(keyPath) }
    func read(_ root: ObjectBase) -> Any { (root as! T)[keyPath: keyPath] }
}

/// The `@Projected` properties of a projection class, found once by reflection.
struct ProjectionSchema: @unchecked Sendable {
    struct Property {
        /// The name the projection gives it.
        let label: String
        /// The projected object's property its key path starts with.
        let rootName: String
        let field: any AnyProjected

        func read(_ root: ObjectBase) -> Any { field.read(root) }
    }

    let properties: [Property]

    private static let cache = Locked<[ObjectIdentifier: ProjectionSchema]>([:])

    /// The schema of `type`, read from `sample` the first time.
    static func of(_ type: AnyObject.Type, sample: AnyObject) -> ProjectionSchema {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        var properties: [Property] = []
        var mirror: Mirror? = Mirror(reflecting: sample)
        var levels: [[Property]] = []
        // Superclass fields first, as the class hierarchy declares them.
        while let current = mirror {
            var level: [Property] = []
            for child in current.children {
                guard let field = child.value as? any AnyProjected, let label = child.label else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                guard let rootName = field.rootName else {
                    preconditionFailure("@Projected property '\(name)' of \(type) must read a @Persisted property of the projected object")
                }
                level.append(Property(label: name, rootName: rootName, field: field))
            }
            levels.append(level)
            mirror = current.superclassMirror
        }
        for level in levels.reversed() { properties += level }
        let schema = ProjectionSchema(properties: properties)
        cache.withLock { $0[ObjectIdentifier(type)] = schema }
        return schema
    }
}

extension ProjectionObservable {
    var projectionSchema: ProjectionSchema { ProjectionSchema.of(Swift.type(of: self), sample: self) }
}
