import AtollCore
import Foundation

/// Objects by type name, for code that does not know the model classes.
extension Realm {
    /// All objects of the type named `typeName`, as live results of `DynamicObject`.
    ///
    /// ```swift
    /// let old = realm.dynamicObjects("Dog").filter("age > %d", 3)
    /// print(old.first?["name"] as? String)
    /// ```
    /// A name the realm does not manage stops the program, as Realm raises for it.
    public func dynamicObjects(_ typeName: String) -> Results<DynamicObject> {
        verifyThread()
        _ = dynamicTable(typeName)
        return Results(realm: self, objectType: typeName)
    }

    /// The object of the type named `typeName` with the given primary key, or `nil`.
    ///
    /// ```swift
    /// let task = realm.dynamicObject(ofType: "Task", forPrimaryKey: id)
    /// ```
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
        verifyThread()
        let table = dynamicTable(typeName)
        guard let pkIndex = table.primaryKeyIndex else {
            preconditionFailure("'\(typeName)' does not have a primary key")
        }
        guard let value = Value(any: key) ?? (key is NSNull ? Value.null : nil), let keyValue = coerce(value, to: table.property(pkIndex)) else {
            preconditionFailure("Invalid value '\(key)' of type \(type(of: key)) for primary key '\(typeName).\(table.property(pkIndex).name)'")
        }
        guard let row = try? rowForPrimaryKey(table, keyValue) else { return nil }
        return DynamicObject(state: _ManagedObjectState(realm: self, table: table, row: row))
    }

    /// Creates an object of the type named `typeName` from a dictionary of property names to
    /// values or an array of values in property order; with `update` other than `.error`, updates
    /// the object with the same primary key instead.
    ///
    /// ```swift
    /// try realm.write { realm.dynamicCreate("Dog", value: ["name": "Rex", "age": 3]) }
    /// ```
    @discardableResult
    public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error) -> DynamicObject {
        let table = dynamicTable(typeName)
        if update != .error && table.primaryKeyIndex == nil {
            preconditionFailure("'\(typeName)' does not have a primary key and can not be updated")
        }
        guard let transaction = requireWrite("create objects") else { return DynamicObject() }
        var created: DynamicObject?
        perform(transaction) { created = try dynamicInsert(table, value: value, update: update, transaction) }
        return created ?? DynamicObject()
    }

    /// The table of `typeName`; the program stops when the realm does not manage the type.
    private func dynamicTable(_ typeName: String) -> TableInfo {
        if let table = coordinator.table(named: typeName) { return table }
        // A class this process declares whose table is made on first use.
        if let info = ClassInfo.named(typeName), let table = try? table(for: info.type, create: !configuration.readOnly && !isFrozen) {
            return table
        }
        preconditionFailure("Object type '\(typeName)' is not managed by the Realm.")
    }

    /// Inserts (or with a primary key and `update`, updates) an object of `table` by name.
    func dynamicInsert(_ table: TableInfo, value: Any, update: UpdatePolicy, _ transaction: WriteTransaction) throws -> DynamicObject {
        guard !table.schema.isEmbedded else {
            throw Error(.invalidValue, "Cannot create an embedded object of type '\(table.name)' on its own: assign it to a property of its parent")
        }
        let given = try Self.dynamicValues(value, for: table)
        var primaryKey: Value?
        if let pk = table.primaryKeyIndex {
            let property = table.property(pk)
            let key: Value
            if let given = given.first(where: { $0.index == pk }) {
                key = try DynamicObject.convert(given.value, to: property, at: "\(table.name).\(property.name)")
            } else {
                key = property.isOptional ? .null : property.type == .objectId ? .objectId(.generate()) : Self.zero(property.type)
            }
            primaryKey = key
            if update != .error, let existing = try rowForPrimaryKey(table, key) {
                let state = _ManagedObjectState(realm: self, table: table, row: existing)
                for (index, element) in given where index != pk {
                    if update == .modified, let current = DynamicObject.read(state, index), let element, Self.same(current, element) { continue }
                    try DynamicObject.write(element, state, index, transaction)
                }
                return DynamicObject(state: state)
            }
        }
        var arguments: [SQLValue] = []
        var initial: [(Int, Value)] = []
        for index in table.columns {
            let property = table.property(index)
            let value: Value = index == table.primaryKeyIndex ? primaryKey ?? .null
                : property.isOptional || property.type == .object ? .null : Self.zero(property.type)
            arguments.append(value.sqlValue)
            if index != table.primaryKeyIndex && property.type != .object { initial.append((index, value)) }
        }
        let row: Int64
        do {
            row = try store.insertRow(table, arguments)
        } catch where primaryKey != nil && ObjectStore.isDuplicateKey(error) {
            throw Error(.primaryKeyExists, "Attempting to create an object of type '\(table.name)' with an existing primary key value '\(primaryKey!)'.",
                        underlying: error as? any Swift.Error & Sendable)
        }
        transaction.summary.insert(table.name, row)
        let id = ObjectID(type: table.name, primaryKey: primaryKey ?? .int(row))
        transaction.record(.createObject(id))
        try resolveLinks(to: table, row, id: id, transaction)
        for (index, value) in initial {
            transaction.record(.set(id, path: [.property(table.property(index).name)], value: value))
        }
        let state = _ManagedObjectState(realm: self, table: table, row: row)
        for (index, element) in given where index != table.primaryKeyIndex {
            try DynamicObject.write(element, state, index, transaction)
        }
        bumpStamp()
        return DynamicObject(state: state)
    }

    /// The properties a dictionary, an array or an object gives, by property index. As for
    /// classes, dictionary keys that name no property are ignored.
    private static func dynamicValues(_ value: Any, for table: TableInfo) throws -> [(index: Int, value: Any?)] {
        switch value {
        case let dictionary as [String: Any]:
            return dictionary.compactMap { key, element in
                DynamicObject.propertyIndex(table, key).map { ($0, element is NSNull ? nil : element) }
            }
        case let array as [Any]:
            let order = table.classInfo.map { info in info.publicNames.compactMap { DynamicObject.propertyIndex(table, $0) } }
                ?? Array(table.schema.properties.indices)
            guard array.count <= order.count else {
                throw Error(.invalidValue, "\(array.count) values given for '\(table.name)', which has \(order.count) properties")
            }
            return array.enumerated().map { (order[$0.offset], $0.element is NSNull ? nil : $0.element) }
        case let object as ObjectBase:
            return table.schema.properties.indices.compactMap { index in
                let name = DynamicObject.publicName(table, index)
                guard object is DynamicObject || ClassInfo.of(type(of: object)).propertyIndex[name] != nil else { return nil }
                return (index, object.value(forKey: name))
            }
        default:
            throw Error(.invalidValue, "cannot create '\(table.name)' from a \(type(of: value)); pass a dictionary, an array or an object")
        }
    }

    /// The value a new required property of `type` starts with.
    static func zero(_ type: PropertyType) -> Value {
        switch type {
        case .bool: .bool(false)
        case .int: .int(0)
        case .double: .double(0)
        case .float: .float(0)
        case .string: .string("")
        case .data: .data(Data())
        case .date: .date(Date(timeIntervalSince1970: 0))
        case .objectId: .objectId(ObjectId())
        case .UUID: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .decimal128: .decimal(Decimal128())
        default: .null
        }
    }

    /// The row an object assigned by name stands for: a managed one's own, or in a migration the
    /// new row of an old object.
    func row(of object: DynamicObject) throws -> Int64 {
        if let state = object._managedState {
            guard state.realm === self else {
                throw Error(.wrongRealm, "Object of type '\(state.table.name)' is already managed by another Realm")
            }
            return state.row
        }
        if isMigrating, let snapshot = object.snapshot, let table = coordinator.table(named: snapshot.type),
           try store.exists(table, snapshot.row) {
            return snapshot.row
        }
        throw Error(.invalidValue, "Cannot store a DynamicObject that is not managed by this Realm (of type '\(object.typeName)')")
    }
}
