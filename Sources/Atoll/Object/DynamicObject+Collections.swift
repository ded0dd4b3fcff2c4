import AtollCore
import Foundation

/// The collections a `DynamicObject` hands out, typed by the property's element type at run
/// time: `List<DynamicObject>` for objects, `List<String>` (or `List<Int?>`…) for values.
enum DynamicCollections {
    /// Builds something generic over the element type of a collection property.
    protocol Maker {
        associatedtype Made
        func make<Element: RealmCollectionValue>(_ element: Element.Type) -> Made
    }

    /// Calls `maker` with the Swift element type of `property` (`DynamicObject` for objects).
    static func open<M: Maker>(_ property: Property, _ maker: M) -> M.Made {
        let optional = property.isOptional
        switch property.type {
        // A map's objects are optional (a value whose object was deleted is nil), as in Realm.
        case .object: return property.collection == .map ? maker.make(DynamicObject?.self) : maker.make(DynamicObject.self)
        case .bool: return optional ? maker.make(Bool?.self) : maker.make(Bool.self)
        case .int: return optional ? maker.make(Int?.self) : maker.make(Int.self)
        case .double: return optional ? maker.make(Double?.self) : maker.make(Double.self)
        case .float: return optional ? maker.make(Float?.self) : maker.make(Float.self)
        case .string: return optional ? maker.make(String?.self) : maker.make(String.self)
        case .data: return optional ? maker.make(Data?.self) : maker.make(Data.self)
        case .date: return optional ? maker.make(Date?.self) : maker.make(Date.self)
        case .objectId: return optional ? maker.make(ObjectId?.self) : maker.make(ObjectId.self)
        case .UUID: return optional ? maker.make(UUID?.self) : maker.make(UUID.self)
        case .decimal128: return optional ? maker.make(Decimal128?.self) : maker.make(Decimal128.self)
        @unknown default: preconditionFailure("'\(property.name)': \(property.typeDescription) collections are not available dynamically yet")
        }
    }

    // MARK: Managed

    private struct Managed: Maker {
        let state: _ManagedObjectState
        let index: Int
        func make<Element: RealmCollectionValue>(_ element: Element.Type) -> AnyObject {
            switch state.table.property(index).collection {
            case .list: state.collection(index) { List<Element>(state: state, index: index) }
            case .set: state.collection(index) { MutableSet<Element>(state: state, index: index) }
            default: state.collection(index) { Map<String, Element>(state: state, index: index) }
            }
        }
    }

    /// The live collection of property `index` of a managed row.
    static func managed(_ state: _ManagedObjectState, _ index: Int) -> AnyObject {
        open(state.table.property(index), Managed(state: state, index: index))
    }

    // MARK: Unmanaged copies

    private struct Copy: Maker {
        let collection: CollectionKind
        let entries: [(key: String?, element: _StoredElement)]
        func make<Element: RealmCollectionValue>(_ element: Element.Type) -> AnyObject {
            let decoded = entries.compactMap { entry in Element._atollFromStored(entry.element).map { (entry.key, $0) } }
            switch collection {
            case .list:
                let list = List<Element>()
                list.append(contentsOf: decoded.map(\.1))
                return list
            case .set:
                let set = MutableSet<Element>()
                set.insert(objectsIn: decoded.map(\.1))
                return set
            default:
                let map = Map<String, Element>()
                for (key, value) in decoded { map[key ?? ""] = value }
                return map
            }
        }
    }

    /// An unmanaged collection holding `entries` (a migration's old object reads these).
    static func copy(_ property: Property, _ entries: [(key: String?, element: _StoredElement)]) -> AnyObject {
        open(property, Copy(collection: property.collection, entries: entries))
    }

    // MARK: Assigning

    /// What assigning `value` (a collection, an array, a dictionary for a map) to a collection
    /// property stores.
    static func content(_ value: Any?, for property: Property, at place: String, in realm: Realm) throws -> _FieldContent {
        var element = property
        element.collection = .single
        func stored(_ item: Any) throws -> _StoredElement {
            if property.type == .any { return try AnyRealmValue._atollFromAny(item)._atollStored() }
            if property.type == .object {
                if let object = item as? ObjectBase { return .object(object) }
                if item is NSNull, property.collection == .map { return .value(.null) }
                throw Realm.Error(.invalidValue, "Invalid value '\(item)' of type '\(type(of: item))' for an element of '\(place)', which holds '\(property.objectType ?? "")' objects.")
            }
            return .value(try DynamicObject.convert(item, to: element, at: place))
        }
        guard let value, !(value is NSNull) else {
            return property.collection == .map ? .entries([]) : .elements([])
        }
        if property.collection == .map {
            guard let entries = mapEntries(value) else {
                throw Realm.Error(.invalidValue, "Invalid value of type '\(type(of: value))' for map property '\(place)': give a Map or a dictionary.")
            }
            return .entries(try entries.map { ($0.key, try stored($0.value)) })
        }
        guard let items = sequenceElements(value) else {
            throw Realm.Error(.invalidValue, "Invalid value of type '\(type(of: value))' for \(property.collection == .list ? "list" : "set") property '\(place)': give a collection or an array.")
        }
        return .elements(try items.map(stored))
    }

    /// The elements of an array, a `List`, a `MutableSet` or `Results`, as `Any`.
    private static func sequenceElements(_ value: Any) -> [Any]? {
        if let array = value as? [Any] { return array }
        if let collection = value as? KeyValueCodingCollection { return collection.kvcElements }
        if let sequence = value as? any Sequence, !(value is String), !(value is any KeyValueCodingMap) {
            return sequence.map { $0 as Any }
        }
        return nil
    }

    private static func mapEntries(_ value: Any) -> [(key: String, value: Any)]? {
        if let dictionary = value as? [String: Any] { return dictionary.map { ($0.key, $0.value) } }
        if let map = value as? any DynamicMapEntries { return map.dynamicEntries }
        return nil
    }
}

/// A `Map`'s entries as `Any`, for assigning one map to another by name.
protocol DynamicMapEntries {
    var dynamicEntries: [(key: String, value: Any)] { get }
}

extension Map: DynamicMapEntries {
    var dynamicEntries: [(key: String, value: Any)] {
        entries.map { entry in
            let stored = entry.value._atollStored()
            if case .value(.null) = stored { return (entry.key, NSNull() as Any) }
            return (entry.key, entry.value as Any)
        }
    }
}
