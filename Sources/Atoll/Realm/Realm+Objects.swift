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
        case (.int, .int), (.string, .string), (.objectId, .objectId), (.uuid, .uuid): return value
        case (.objectId, .string(let s)): return (try? ObjectId(string: s)).map(Value.objectId)
        case (.uuid, .string(let s)): return UUID(uuidString: s).map(Value.uuid)
        default: return value.propertyType == property.type ? value : nil
        }
    }

    func rowForPrimaryKey(_ table: TableInfo, _ key: Value) throws -> Int64? {
        guard let pkIndex = table.primaryKeyIndex else { return nil }
        return try connection.fetchInt("SELECT _row FROM \(table.table) WHERE \(table.column(pkIndex)) IS ?", [key.sqlValue])
    }

    /// A managed accessor for a row.
    func materialize(_ table: TableInfo, row: Int64, prefetched: [SQLValue]? = nil) -> ObjectBase {
        guard let info = table.classInfo else {
            preconditionFailure("No class is declared for the object type '\(table.name)' in this process")
        }
        // Fields are bound on first access (see Persisted.managedIndex), not here.
        let object = info.type.init()
        object._managedState = ManagedObjectState(realm: self, table: table, row: row, prefetched: prefetched)
        return object
    }

    // MARK: Identity in history

    /// The top-level object and path that address `row` of `table` in instructions.
    func address(_ table: TableInfo, _ row: Int64) throws -> (ObjectID, [PathElement]) {
        guard table.schema.isEmbedded else {
            // A row gone since the accessor was read (a download deleted it when the write began)
            // has no address: a change to it must fail, never be recorded on a null key (the
            // server refuses such a changeset, and the client could never sync again).
            let column = table.primaryKeyIndex.map { table.column($0) } ?? "_row"
            guard let key = try connection.fetchOne("SELECT \(column) FROM \(table.table) WHERE _row = ?", [.integer(row)])?.first else {
                throw Error(.objectInvalidated, "Object of type '\(table.name)' has been deleted or invalidated")
            }
            guard let pk = table.primaryKeyIndex else { return (ObjectID(type: table.name, primaryKey: .int(row)), []) }
            return (ObjectID(type: table.name, primaryKey: Value(sql: key, type: table.property(pk).type) ?? .null), [])
        }
        guard let parent = try connection.fetchOne("SELECT _parent_type, _parent_row, _parent_prop FROM \(table.table) WHERE _row = ?", [.integer(row)]),
              case .text(let parentType) = parent[0], case .integer(let parentRow) = parent[1], case .text(let parentProperty) = parent[2],
              let parentTable = coordinator.table(named: parentType),
              let propertyIndex = parentTable.schema.properties.firstIndex(where: { $0.name == parentProperty }) else {
            throw Error(.invalidDatabase, "embedded object \(table.name)#\(row) has no owner")
        }
        var (id, path) = try address(parentTable, parentRow)
        path.append(.property(parentProperty))
        let property = parentTable.property(propertyIndex)
        switch property.collection {
        case .list:
            let position = try connection.fetchInt("SELECT pos FROM \(parentTable.collectionTable(propertyIndex)) WHERE owner = ? AND value = ?",
                                                   [.integer(parentRow), .integer(row)]) ?? 0
            path.append(.index(Int(position)))
        case .map:
            if case .text(let key)? = try connection.fetchOne("SELECT key FROM \(parentTable.collectionTable(propertyIndex)) WHERE owner = ? AND value = ?",
                                                              [.integer(parentRow), .integer(row)])?.first {
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
        guard let values = try connection.fetchOne(table.selectRow, [.integer(row)]) else { return .null }
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
        let name = table.collectionTable(index)
        switch property.collection {
        case .single: return .null
        case .list:
            return .list(try connection.fetchAll("SELECT value FROM \(name) WHERE owner = ? ORDER BY pos", [.integer(row)])
                .map { try instructionValue(property, $0[0]) })
        case .set:
            return .set(try connection.fetchAll("SELECT value FROM \(name) WHERE owner = ? ORDER BY rowid", [.integer(row)])
                .map { try instructionValue(property, $0[0]) })
        case .map:
            var entries: [String: Value] = [:]
            for entry in try connection.fetchAll("SELECT key, value FROM \(name) WHERE owner = ?", [.integer(row)]) {
                if case .text(let key) = entry[0] { entries[key] = try instructionValue(property, entry[1]) }
            }
            return .map(entries)
        }
    }
}
