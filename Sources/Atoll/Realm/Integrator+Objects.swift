import AtollCore
import Foundation

/// Finding what an instruction addresses: an object by type and key, then a path into it.
extension Integrator {
    // MARK: - Objects

    /// The table and row of a top-level object, if it exists.
    func object(_ id: ObjectID) throws -> (TableInfo, Int64)? {
        guard let table = realm.coordinator.table(named: id.type), !table.schema.isEmbedded, validKey(id.primaryKey, table) else { return nil }
        guard let row = try row(of: table, id.primaryKey) else { return nil }
        return (table, row)
    }

    func row(of table: TableInfo, _ key: Value) throws -> Int64? {
        try realm.row(of: table, key)
    }

    /// Whether `key` can name an object of `table`: its primary key's kind, or a row number.
    func validKey(_ key: Value, _ table: TableInfo) -> Bool {
        guard let pk = table.primaryKeyIndex else {
            if case .int(let row) = key { return row > 0 }
            return false
        }
        let property = table.property(pk)
        if case .null = key { return property.isOptional }
        return key.propertyType == property.type
    }

    /// Inserts the object with `values` for some of its scalar fields (defaults for the rest);
    /// false when it exists already (or cannot exist: an unknown type, a key of the wrong kind).
    @discardableResult
    func createObject(_ id: ObjectID, values: [Int: Value] = [:]) throws -> Bool {
        guard let table = realm.coordinator.table(named: id.type), !table.schema.isEmbedded,
              validKey(id.primaryKey, table) else { return false }
        // A non-null primary key is unique in its table (a unique index): the insert itself says
        // whether the object exists, with no lookup before it (most downloaded objects are new).
        // NULL keys are not unique to SQLite, and row numbers are checked, so those look first.
        let insertFindsDuplicate = table.primaryKeyIndex != nil && !id.primaryKey.isNull
        if !insertFindsDuplicate, try row(of: table, id.primaryKey) != nil { return false }
        let arguments: [SQLValue] = table.columns.map { index in
            index == table.primaryKeyIndex ? id.primaryKey.sqlValue
                : (values[index] ?? table.property(index).initialValue).sqlValue(as: table.property(index).type)
        }
        let row: Int64
        if table.primaryKeyIndex == nil, case .int(let number) = id.primaryKey {
            // A type without a primary key is addressed by row number: keep it.
            row = try store.insertRow(table, arguments, row: number)
        } else {
            do {
                row = try store.insertRow(table, arguments)
            } catch where insertFindsDuplicate && ObjectStore.isDuplicateKey(error) {
                return false
            }
        }
        transaction.summary.insert(table.name, row)
        try realm.resolveLinks(to: table, row, id: id, transaction)
        return true
    }

    // MARK: - Navigation

    /// A place in an object that a path leads to.
    enum Slot {
        /// A top-level or embedded object's row.
        case object(TableInfo, Int64)
        /// Property `index` of a row.
        case field(TableInfo, Int64, Int)
        /// The slot at stored position `pos` of list property `index`.
        case listElement(TableInfo, Int64, Int, Int64)
        /// The value at `key` of map property `index`.
        case mapValue(TableInfo, Int64, Int, String)
    }

    func navigate(_ id: ObjectID, _ path: ArraySlice<PathElement>) throws -> Slot? {
        guard let (table, row) = try object(id) else { return nil }
        var slot = Slot.object(table, row)
        for element in path {
            guard let next = try child(slot, element) else { return nil }
            slot = next
        }
        return slot
    }

    func child(_ slot: Slot, _ element: PathElement) throws -> Slot? {
        switch (element, slot) {
        case (.property(let name), _):
            guard let (table, row) = try embeddedObject(slot),
                  let index = table.schema.properties.firstIndex(where: { $0.name == name }) else { return nil }
            return .field(table, row, index)
        case (.index(let i), .field(let table, let row, let p)) where table.property(p).collection == .list:
            guard i >= 0, Int64(i) < (try store.count(table, row, p)) else { return nil }
            return .listElement(table, row, p, Int64(i))
        case (.key(let key), .field(let table, let row, let p)) where table.property(p).collection == .map:
            guard try store.mapValue(table, row, p, key: key) != nil else { return nil }
            return .mapValue(table, row, p, key)
        default:
            return nil
        }
    }

    /// The object a slot holds when it is an object or holds an embedded one.
    func embeddedObject(_ slot: Slot) throws -> (TableInfo, Int64)? {
        let raw: SQLValue?
        let property: Property
        switch slot {
        case .object(let table, let row): return (table, row)
        case .field(let table, let row, let p):
            guard table.property(p).isSingle else { return nil }
            property = table.property(p)
            raw = try store.field(table, row, p)
        case .listElement(let table, let row, let p, let pos):
            property = table.property(p)
            raw = try store.listValue(table, row, p, at: pos)
        case .mapValue(let table, let row, let p, let key):
            property = table.property(p)
            raw = try store.mapValue(table, row, p, key: key)
        }
        guard let target = embeddedTable(property), case .integer(let child)? = raw else { return nil }
        return (target, child)
    }

    func embeddedTable(_ property: Property) -> TableInfo? {
        guard property.type == .object, let target = realm.coordinator.table(named: property.objectType ?? ""),
              target.schema.isEmbedded else { return nil }
        return target
    }
}
