import AtollCore
import Foundation

extension Realm {
    // MARK: Reading

    /// All objects of a type, as a live, lazily evaluated collection.
    public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> {
        verifyThread()
        // Make the type's table now when the realm may be written, so the schema knows it.
        if !configuration.readOnly && !isFrozen { _ = try? table(for: type, create: true) }
        return Results(realm: self, objectType: ClassInfo.of(type).schema.name)
    }

    /// The object of `type` with the given primary key, or `nil`.
    ///
    /// ```swift
    /// let dog = realm.object(ofType: Dog.self, forPrimaryKey: id)
    /// ```
    public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        verifyThread()
        guard let table = try? self.table(for: type, create: false) else { return nil }
        guard let pkIndex = table.primaryKeyIndex else {
            preconditionFailure("'\(table.name)' does not have a primary key")
        }
        guard let value = Value(any: key as Any) ?? ((key as Any?) == nil ? Value.null : nil),
              let keyValue = coerce(value, to: table.property(pkIndex)) else {
            preconditionFailure("Invalid value '\(key)' of type \(KeyType.self) for primary key '\(table.name).\(table.property(pkIndex).name)'")
        }
        guard let row = try? rowForPrimaryKey(table, keyValue) else { return nil }
        return materialize(table, row: row) as? Element
    }

    func coerce(_ value: Value, to property: Property) -> Value? {
        if case .null = value { return property.isOptional ? .null : nil }
        switch (property.type, value) {
        case (.int, .int), (.string, .string), (.objectId, .objectId), (.UUID, .uuid): return value
        case (.objectId, .string(let s)): return (try? ObjectId(string: s)).map(Value.objectId)
        case (.UUID, .string(let s)): return UUID(uuidString: s).map(Value.uuid)
        default: return value.propertyType == property.type ? value : nil
        }
    }

    func rowForPrimaryKey(_ table: TableInfo, _ key: Value) throws -> Int64? {
        try store.row(table, primaryKey: key)
    }

    /// A managed accessor for a row.
    func materialize(_ table: TableInfo, row: Int64, prefetched: [SQLValue]? = nil) -> ObjectBase {
        guard let info = table.classInfo else {
            // A type of the file no class of this process declares: read by name.
            return DynamicObject(state: _ManagedObjectState(realm: self, table: table, row: row, prefetched: prefetched))
        }
        // Fields are bound on first access (see Persisted.managedIndex), not here; except in a
        // `Codable` class, whose synthesized `encode(to:)` reads fields without that access.
        let object = info.type.init()
        if info.isEncodable { info.bind(object) }
        object._managedState = _ManagedObjectState(realm: self, table: table, row: row, prefetched: prefetched)
        return object
    }

    /// A managed accessor of type `type` for a row: `DynamicObject` or the table's class.
    func materialize<T: ObjectBase>(_ table: TableInfo, row: Int64, as type: T.Type) -> T? {
        T._atollFromStored(.object(materialize(table, row: row)))
    }

    // MARK: Identity in history

    /// The top-level object and path that address `row` of `table` in instructions.
    func address(_ table: TableInfo, _ row: Int64) throws -> (ObjectID, [PathElement]) {
        guard table.schema.isEmbedded else {
            // A row gone since the accessor was read (a download deleted it when the write began)
            // has no address: a change to it must fail, never be recorded on a null key (the
            // server refuses such a changeset, and the client could never sync again).
            guard let pk = table.primaryKeyIndex else {
                guard try store.exists(table, row) else {
                    throw Error(.objectInvalidated, "Object of type '\(table.name)' has been deleted or invalidated")
                }
                return (ObjectID(type: table.name, primaryKey: .int(row)), [])
            }
            guard let key = try store.field(table, row, pk) else {
                throw Error(.objectInvalidated, "Object of type '\(table.name)' has been deleted or invalidated")
            }
            return (ObjectID(type: table.name, primaryKey: Value(sql: key, type: table.property(pk).type) ?? .null), [])
        }
        guard let (parentType, parentRow, parentProperty) = try store.parent(table, row),
              let parentTable = coordinator.table(named: parentType),
              let propertyIndex = parentTable.schema.properties.firstIndex(where: { $0.name == parentProperty }) else {
            throw Error(.invalidDatabase, "embedded object \(table.name)#\(row) has no owner")
        }
        var (id, path) = try address(parentTable, parentRow)
        path.append(.property(parentProperty))
        let property = parentTable.property(propertyIndex)
        switch property.collection {
        case .list:
            let position = try store.position(parentTable, parentRow, propertyIndex, of: row) ?? 0
            path.append(.index(Int(position)))
        case .map:
            if let key = try store.key(parentTable, parentRow, propertyIndex, of: row) {
                path.append(.key(key))
            }
        default: break
        }
        return (id, path)
    }

    /// The value an instruction carries for a stored element: links by primary key, embedded
    /// objects inline.
    func instructionValue(_ property: Property, _ raw: SQLValue) throws -> Value {
        guard property.type == .object else { return Value(sql: raw, type: property.type) ?? .null }
        guard case .integer(let row) = raw, let target = coordinator.table(named: property.objectType ?? "") else { return .null }
        if target.schema.isEmbedded { return try embeddedValue(target, row) }
        let (id, _) = try address(target, row)
        return .link(ObjectLink(objectType: id.type, primaryKey: id.primaryKey))
    }

    /// An embedded object's whole content, as one value.
    func embeddedValue(_ table: TableInfo, _ row: Int64) throws -> Value {
        guard let values = try store.values(table, row) else { return .null }
        var fields: [String: Value] = [:]
        for (position, index) in table.columns.enumerated() {
            fields[table.property(index).name] = try instructionValue(table.property(index), values[position])
        }
        for index in table.schema.properties.indices where !table.property(index).isSingle {
            fields[table.property(index).name] = try collectionValue(table, index, row)
        }
        return .object(fields)
    }

    func collectionValue(_ table: TableInfo, _ index: Int, _ row: Int64) throws -> Value {
        let property = table.property(index)
        guard !property.isSingle else { return .null }
        let elements = try store.elements(table, row, index)
        switch property.collection {
        case .list: return .list(try elements.map { try instructionValue(property, $0.value) })
        case .set: return .set(try elements.map { try instructionValue(property, $0.value) })
        default:
            var entries: [String: Value] = [:]
            for entry in elements {
                if let key = entry.key { entries[key] = try instructionValue(property, entry.value) }
            }
            return .map(entries)
        }
    }
}
