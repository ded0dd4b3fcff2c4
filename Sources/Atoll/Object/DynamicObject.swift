import AtollCore
import Foundation

/// An object read and written by property name, for code that does not know the model classes:
/// `realm.dynamicObjects("Dog")`, and the objects of a migration.
///
/// ```swift
/// for dog in realm.dynamicObjects("Dog").filter("age > 3") {
///     print(dog["name"] as! String)
/// }
/// try realm.write { dog["age"] = 5 }
/// let puppies = person.dynamicList("dogs")
/// ```
///
/// Values read as key-value coding gives them (`Int`, `String`, an enum's raw value, `nil`);
/// links as `DynamicObject`; a list of objects as `List<DynamicObject>`, a list of values as the
/// list of its element type (`List<String>`), likewise `MutableSet` and
/// `Map<String, DynamicObject?>`. An unknown name stops the program as it does on any object.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// How a migration's old object reads its values (it has no row in the new schema).
    var snapshot: MigrationSnapshot?

    public required init() { super.init() }

    /// An accessor for a managed row.
    init(state: _ManagedObjectState) {
        super.init()
        _managedState = state
    }

    init(snapshot: MigrationSnapshot) {
        super.init()
        self.snapshot = snapshot
    }

    /// The dynamic accessor of `object`'s row (itself when it is one already).
    static func wrapping(_ object: ObjectBase) -> DynamicObject? {
        if let dynamic = object as? DynamicObject { return dynamic }
        guard let state = object._managedState else { return nil }
        return DynamicObject(state: _ManagedObjectState(realm: state.realm, table: state.table, row: state.row))
    }

    /// The name of the object's type.
    var typeName: String {
        _managedState?.table.name ?? snapshot?.type ?? "DynamicObject"
    }

    public override subscript(key: String) -> Any? {
        get {
            if let snapshot { return snapshot.value(forKey: key) }
            let (state, index) = managedProperty(key)
            return Self.read(state, index)
        }
        set {
            precondition(snapshot == nil, "The old object of a migration is read-only: set '\(key)' on the new object")
            guard let state = _managedState else {
                preconditionFailure("Invalid property name '\(key)' for class 'DynamicObject': a DynamicObject has properties only once it is managed")
            }
            guard let transaction = state.realm.requireWrite("modify '\(state.table.name).\(key)'") else { return }
            guard let index = Self.propertyIndex(state.table, key) else {
                transaction.fail(Realm.Error(.invalidValue, "Invalid property name '\(key)' for class '\(state.table.name)'."))
                return
            }
            state.realm.perform(transaction) { try Self.write(newValue, state, index, transaction) }
        }
    }

    /// `object.name` reads `object["name"]`.
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }

    public override class func shouldIncludeInDefaultSchema() -> Bool { false }

    public override var description: String {
        if let snapshot { return snapshot.description }
        guard let state = _managedState else { return "DynamicObject { unmanaged }" }
        if isInvalidated { return "\(state.table.name) { invalidated }" }
        let fields = state.table.schema.properties.indices.map { index in
            "\t\(Self.publicName(state.table, index)) = \(Self.describe(Self.read(state, index)))"
        }
        return "\(state.table.name) {\n" + fields.joined(separator: ";\n") + ";\n}"
    }

    static func describe(_ value: Any?) -> String {
        switch value {
        case nil: "nil"
        case let object as DynamicObject: object.typeName
        case let string as String: "\"\(string)\""
        case let some?: "\(some)"
        }
    }

    // MARK: Names

    /// The schema index of the property the app names `key`: its Swift name when a class of the
    /// type is known here, or its stored name.
    static func propertyIndex(_ table: TableInfo, _ key: String) -> Int? {
        let stored = table.classInfo?.property(named: key)?.name ?? ClassInfo.storedProperty(table.name, key)?.name ?? key
        return table.schema.properties.firstIndex { $0.name == stored }
    }

    /// The name the app uses for property `index`.
    static func publicName(_ table: TableInfo, _ index: Int) -> String {
        let stored = table.property(index).name
        guard let info = table.classInfo ?? ClassInfo.named(table.name), let position = info.persistedIndex[stored] else { return stored }
        return info.publicNames[position]
    }

    private func managedProperty(_ key: String) -> (_ManagedObjectState, Int) {
        guard let state = _managedState else {
            preconditionFailure("Invalid property name '\(key)' for class 'DynamicObject': a DynamicObject has properties only once it is managed")
        }
        guard let index = Self.propertyIndex(state.table, key) else {
            preconditionFailure("Invalid property name '\(key)' for class '\(state.table.name)'.")
        }
        return (state, index)
    }

    // MARK: Reading and writing a managed row

    static func read(_ state: _ManagedObjectState, _ index: Int) -> Any? {
        let property = state.table.property(index)
        guard property.isSingle else { return DynamicCollections.managed(state, index) }
        switch state.stored(at: index) {
        case .object(let object) where property.type != .any: return wrapping(object)
        case .value(let value) where property.type != .any: return swiftValue(value)
        case let stored: return AnyRealmValue._atollFromStored(stored) ?? AnyRealmValue.none
        }
    }

    static func write(_ value: Any?, _ state: _ManagedObjectState, _ index: Int, _ transaction: WriteTransaction) throws {
        let realm = state.realm
        let property = state.table.property(index)
        let place = "\(state.table.name).\(publicName(state.table, index))"
        guard property.isSingle else {
            let content = try DynamicCollections.content(value, for: property, at: place, in: realm)
            try realm.replaceCollection(state, index, content, transaction)
            return
        }
        if property.type == .any {
            try realm.setMixed(state, index, AnyRealmValue._atollFromAny(value as Any)._atollStored(), transaction)
            return
        }
        if property.type == .object {
            switch value {
            case nil, is NSNull:
                try realm.setField(state, index, .null, transaction)
            case let object as ObjectBase:
                try realm.setLink(state, index, object, transaction)
            case let fields as [String: Any]:
                guard let target = realm.coordinator.table(named: property.objectType ?? ""), !target.schema.isEmbedded else {
                    throw Realm.Error(.invalidValue, "'\(place)': give an object, not a dictionary, for an embedded object")
                }
                try realm.setLink(state, index, try realm.dynamicInsert(target, value: fields, update: .error, transaction), transaction)
            default:
                throw Realm.Error(.invalidValue, "Invalid value '\(value!)' of type '\(type(of: value!))' for 'object' property '\(place)'.")
            }
            return
        }
        let converted = try convert(value, to: property, at: place)
        if realm.isMigrating && property.isPrimaryKey {
            // A migration may give objects new keys (a new primary key property, say).
            try realm.store.setField(state.table, state.row, index, converted.sqlValue)
            realm.bumpStamp()
            return
        }
        try realm.setField(state, index, converted, transaction)
    }

    // MARK: Values

    /// `value` as the stored kind of `property`, or an `.invalidValue` error naming `place`.
    static func convert(_ value: Any?, to property: Property, at place: String) throws -> Value {
        var value = value
        if let persistableEnum = value as? any PersistableEnum { value = persistableEnum.rawValue }
        let given: Value? = if let value, !(value is NSNull) { Value(any: value) } else { .null }
        switch (given, property.type) {
        case (.null?, _) where property.isOptional:
            return .null
        case (.null?, _):
            throw Realm.Error(.invalidValue, "Invalid value nil for '\(property.typeDescription)' property '\(place)': it is not optional.")
        case (.int(let i)?, .double): return .double(Double(i))
        case (.int(let i)?, .float): return .float(Float(i))
        case (.double(let d)?, .float): return .float(Float(d))
        case (.float(let f)?, .double): return .double(Double(f))
        case (let v?, _) where v.propertyType == property.type && property.type != .object:
            return v
        default:
            throw Realm.Error(.invalidValue, "Invalid value '\(value!)' of type '\(type(of: value!))' for '\(property.typeDescription)' property '\(place)'.")
        }
    }

    /// A stored scalar as key-value coding gives it: `nil` for null, `Int` for integers.
    static func swiftValue(_ value: Value) -> Any? {
        switch value {
        case .null: nil
        case .bool(let b): b
        case .int(let i): Int(i)
        case .double(let d): d
        case .float(let f): f
        case .string(let s): s
        case .data(let d): d
        case .date(let d): d
        case .objectId(let o): o
        case .uuid(let u): u
        case .decimal(let d): d
        default: value
        }
    }
}

/// The object type of migrations: `DynamicObject` under its migration name.
public typealias MigrationObject = DynamicObject

/// The block `Migration.enumerateObjects(ofType:_:)` calls with each object's old and new form.
public typealias MigrationObjectEnumerateBlock = (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void

extension Object {
    /// The list property `propertyName` of this object, with `DynamicObject` elements.
    ///
    /// ```swift
    /// let dogs = person.dynamicList("dogs")
    /// try realm.write { dogs.append(realm.dynamicObjects("Dog").first!) }
    /// ```
    public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
        dynamicCollection(propertyName, as: List<DynamicObject>.self)
    }

    /// The set property `propertyName` of this object, with `DynamicObject` elements.
    public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
        dynamicCollection(propertyName, as: MutableSet<DynamicObject>.self)
    }

    /// The map property `propertyName` of this object, with `DynamicObject` values (`nil` for a
    /// key whose object was deleted), as realm-swift's.
    public func dynamicMap<Key: _MapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
        if Key.self == String.self { return dynamicCollection(propertyName, as: Map<Key, DynamicObject?>.self) }
        guard let state = _managedState, let index = DynamicObject.propertyIndex(state.table, propertyName) else {
            preconditionFailure("Invalid property name '\(propertyName)' for class '\(objectSchema.name)'.")
        }
        return Map(state: state, index: index)
    }

    private func dynamicCollection<C>(_ propertyName: String, as type: C.Type) -> C {
        let dynamic: DynamicObject
        if let object = self as? DynamicObject {
            dynamic = object
        } else if let wrapped = DynamicObject.wrapping(self) {
            dynamic = wrapped
        } else {
            preconditionFailure("Dynamic collections of '\(objectSchema.name).\(propertyName)' need a managed object")
        }
        guard let collection = dynamic[propertyName] as? C else {
            preconditionFailure("'\(dynamic.typeName).\(propertyName)' is not a \(C.self): it is a \(Swift.type(of: dynamic[propertyName] as Any))")
        }
        return collection
    }
}
