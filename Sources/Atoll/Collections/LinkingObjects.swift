import AtollCore
import Foundation

/// Constrains `@Persisted(originProperty:)` to `LinkingObjects` properties.
public protocol LinkingObjectsProtocol {
    associatedtype Element
    init(fromType: Element.Type, property: String)
}

/// The objects that link to an object through one of their properties: an inverse relationship,
/// computed from the links on each side and never stored or synced itself.
///
/// ```swift
/// class Task: Object {
///     @Persisted var title = ""
///     @Persisted(originProperty: "tasks") var assignee: LinkingObjects<Person>
/// }
/// task.assignee.first?.name   // the person whose `tasks` list holds the task
/// ```
/// Live like `Results`: it reflects later writes once the realm advances. An unmanaged object's
/// linking objects are always empty.
public struct LinkingObjects<Element: ObjectBase>: RandomAccessCollection, CustomStringConvertible, LinkingObjectsProtocol {
    /// The property of `Element` that links to the object.
    public let propertyName: String
    /// The live objects, once the object is managed.
    let results: Results<Element>?

    /// The objects of type `Element` linking to the object through `propertyName`.
    public init(fromType _: Element.Type, property propertyName: String) {
        self.propertyName = propertyName
        results = nil
    }

    init(propertyName: String, results: Results<Element>) {
        self.propertyName = propertyName
        self.results = results
    }

    /// The realm of the object, if it is managed.
    public var realm: Realm? { results?.realm }
    public var isInvalidated: Bool { results?.isInvalidated ?? false }
    public var isFrozen: Bool { results?.isFrozen ?? false }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public var count: Int { results?.count ?? 0 }

    public subscript(position: Int) -> Element {
        guard let results else { preconditionFailure("Index \(position) is out of bounds: an unmanaged object has no linking objects") }
        return results[position]
    }

    public var first: Element? { results?.first }
    public var last: Element? { results?.last }

    public func index(of object: Element) -> Int? { results?.index(of: object) }

    /// The index of the first object matching a query, or `nil`.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        guard let results, let match = filtered(predicateFormat, args).first else { return nil }
        return results.index(of: match)
    }

    public var description: String { "LinkingObjects<\(Element.self)> (\(count) objects)" }

    /// The live results behind a managed object's linking objects.
    private func live(_ operation: String) -> Results<Element> {
        guard let results else {
            preconditionFailure("\(operation) needs the linking objects of a managed object; add the object to a realm first")
        }
        return results
    }

    private func filtered(_ predicateFormat: String, _ args: [Any]) -> Results<Element> {
        do {
            return try live("filter").filter(query: predicateFormat, arguments: args)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    // MARK: Queries

    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { filtered(predicateFormat, args) }

    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { live("where").where(isIncluded) }

    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        live("sorted").sorted(byKeyPath: keyPath, ascending: ascending)
    }

    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        live("sorted").sorted(by: keyPath, ascending: ascending)
    }

    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        live("sorted").sorted(by: descriptors)
    }

    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        live("distinct").distinct(by: keyPaths)
    }

    // MARK: Aggregates

    public func min<T: _PersistableScalar>(ofProperty property: String) -> T? { results?.min(ofProperty: property) }
    public func max<T: _PersistableScalar>(ofProperty property: String) -> T? { results?.max(ofProperty: property) }
    public func sum<T: _PersistableScalar & AdditiveArithmetic>(ofProperty property: String) -> T {
        results?.sum(ofProperty: property) ?? .zero
    }
    public func average<T: _PersistableScalar & BinaryFloatingPoint>(ofProperty property: String) -> T? {
        results?.average(ofProperty: property)
    }

    // MARK: Notifications and threads

    /// Calls `block` with the linking objects first, then whenever objects start or stop linking
    /// here or a linking object changes (see `Results.observe`).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        let name = propertyName
        return live("observe").observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let results): block(.initial(LinkingObjects(propertyName: name, results: results)))
            case .update(let results, let deletions, let insertions, let modifications):
                block(.update(LinkingObjects(propertyName: name, results: results),
                              deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }

    /// An immutable copy that can be read from any thread.
    public func freeze() -> LinkingObjects<Element> {
        guard let results else { return self }
        return LinkingObjects(propertyName: propertyName, results: results.freeze())
    }

    /// The live linking objects of a frozen copy, on the current thread's realm.
    public func thaw() -> LinkingObjects<Element>? {
        guard let results else { return self }
        return results.thaw().map { LinkingObjects(propertyName: propertyName, results: $0) }
    }
}

extension Persisted where Value: LinkingObjectsProtocol {
    /// Declares the objects linking to this one through `originProperty` of `Value.Element`.
    public init(originProperty: String) {
        self.init(wrappedValue: Value(fromType: Value.Element.self, property: originProperty))
    }
}

/// What schema discovery reads from a `LinkingObjects` property: the origin class and property.
public protocol _LinkingObjectsValue {
    static var _originClass: ObjectBase.Type { get }
    var _originProperty: String { get }
}

extension LinkingObjects: _LinkingObjectsValue {
    public static var _originClass: ObjectBase.Type { Element.self }
    public var _originProperty: String { propertyName }
}

extension LinkingObjects: _Persistable {
    public static var _atollProperty: _PropertyShape {
        _PropertyShape(type: .object, collection: .list, objectClass: Element.self)
    }

    public static func _atollDefault() -> LinkingObjects { LinkingObjects(fromType: Element.self, property: "") }

    /// The live objects linking to `object`: the objects of the origin type whose origin property
    /// (a to-one link, list or set) points at it.
    public static func _atollGet(_ object: _ManagedObjectState, _ index: Int) -> LinkingObjects {
        let info = ClassInfo.of(type(of: object._probe))
        let field = info.linkingFields[index - info.fields.count]
        let originInfo = ClassInfo.of(field.originClass)
        let originName = originInfo.schema.name
        guard let origin = object.realm.coordinator.table(named: originName) else {
            preconditionFailure("'\(info.schema.name).\(field.name)' links from '\(originName)', which is not in the realm's schema")
        }
        // The app names the origin property by its Swift name; the table knows its persisted name.
        let persisted = originInfo.propertyIndex[field.originProperty].map { originInfo.schema.properties[$0].name } ?? field.originProperty
        guard let property = origin.schema.properties.firstIndex(where: { $0.name == persisted }),
              origin.property(property).type == .object, origin.property(property).objectType == object.table.name else {
            preconditionFailure("'\(info.schema.name).\(field.name)': '\(originName)' has no property '\(field.originProperty)' linking to '\(object.table.name)'")
        }
        let results = Results<Element>(core: ResultsCore(realm: object.realm, objectType: originName,
                                                         base: .linking(target: object, property: property),
                                                         expression: QueryExpression(predicate: .truePredicate)))
        return LinkingObjects(propertyName: field.originProperty, results: results)
    }

    public static func _atollSet(_ value: LinkingObjects, _ object: _ManagedObjectState, _ index: Int) {
        preconditionFailure("LinkingObjects are computed from the links to an object; they cannot be assigned")
    }

    public func _atollContent() -> _FieldContent { .elements([]) }

    public static func _atollFromAny(_ any: Any) throws -> LinkingObjects {
        throw Realm.Error(.invalidValue, "LinkingObjects are computed from the links to an object; they cannot be given a value")
    }
}

/// A `@Persisted(originProperty:)` field, found by schema discovery.
protocol LinkingObjectsField {
    static var originClass: ObjectBase.Type { get }
    static func originProperty(at pointer: UnsafeRawPointer) -> String
}

extension Persisted: LinkingObjectsField where Value: _LinkingObjectsValue {
    static var originClass: ObjectBase.Type { Value._originClass }

    static func originProperty(at pointer: UnsafeRawPointer) -> String {
        if case .unmanaged(let value) = pointer.assumingMemoryBound(to: Self.self).pointee.storage { return value._originProperty }
        return ""
    }
}
