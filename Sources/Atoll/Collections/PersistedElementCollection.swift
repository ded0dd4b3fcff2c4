import AtollCore

/// What `List` and `MutableSet` share as `@Persisted` properties: a collection of elements kept in
/// its own table once the owner is managed.
public protocol _PersistedElementCollection: AnyObject, _Persistable {
    associatedtype Element: RealmCollectionValue
    static var _collectionKind: CollectionKind { get }
    init()
    init(_managed state: _ManagedObjectState, index: Int)
    var _elements: [Element] { get }
    func _appendUnmanaged(_ element: Element)
}

extension _PersistedElementCollection {
    public static var _atollProperty: _PropertyShape {
        var shape = Element._atollElementShape
        shape.collection = _collectionKind
        return shape
    }

    public static func _atollDefault() -> Self { Self() }

    public static func _atollGet(_ object: _ManagedObjectState, _ index: Int) -> Self {
        object.collection(index) { Self(_managed: object, index: index) }
    }

    public static func _atollSet(_ value: Self, _ object: _ManagedObjectState, _ index: Int) {
        let elements = value._elements.map { $0._atollStored() }
        guard let transaction = object.realm.requireWrite("assign '\(object.table.property(index).name)'") else { return }
        object.realm.perform(transaction) { try object.realm.replaceCollection(object, index, .elements(elements), transaction) }
    }

    public func _atollContent() -> _FieldContent { .elements(_elements.map { $0._atollStored() }) }

    public static func _atollFromAny(_ any: Any) throws -> Self {
        if let same = any as? Self { return same }
        guard let array = any as? [Any] else {
            throw Realm.Error(.invalidValue, "a \(type(of: any)) cannot be stored in a \(Self.self)")
        }
        let collection = Self()
        for element in array { collection._appendUnmanaged(try Element._atollFromAny(element)) }
        return collection
    }
}
