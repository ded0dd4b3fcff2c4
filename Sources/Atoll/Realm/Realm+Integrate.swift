import AtollCore
import Foundation

/// Applying changesets downloaded from the server: the download half of sync.
///
/// Every instruction does to the store exactly what `ReplicaState.apply(_:)` does to the merge
/// model (docs/merge.md), so a realm and the model that applied the same history hold the same
/// data (`canonicalDump()` proves it byte for byte). An instruction that addresses something
/// missing — an unknown type or property, an object that does not exist, a position out of range —
/// changes nothing, and nothing traps on any input. The store is typed where the model is not: a
/// value the property cannot hold (a string for an `Int`, `nil` for a non-optional, a link to
/// another type, a primary key of the wrong kind, a change of a primary key) is ignored too.
///
/// ```swift
/// try realm.integrateRemote(downloaded)      // one write transaction, notifications fire
/// ```
extension Realm {
    /// Applies `changesets` in one write transaction. Nothing is recorded in the local history
    /// (the changes are not local); notifications report exactly what changed.
    @_spi(Sync)
    public func integrateRemote(_ changesets: [Changeset]) throws {
        try checkThread()
        guard transaction == nil else {
            throw Error(.alreadyInWriteTransaction, "Cannot integrate changes from the server inside a write transaction")
        }
        try beginWrite()
        do {
            try integrateRemoteInWrite(changesets)
        } catch {
            cancelWrite()
            throw error
        }
        try commitWrite(recordingHistory: false)
    }

    /// Applies `changesets` inside the open write transaction, recording no instructions.
    @_spi(Sync)
    public func integrateRemoteInWrite(_ changesets: [Changeset]) throws {
        try checkThread()
        guard let transaction else {
            throw Error(.notInWriteTransaction, "Changes from the server can only be integrated inside a write transaction")
        }
        if let error = transaction.error { throw error }
        let wasMuted = transaction.muted
        transaction.muted = true
        defer { transaction.muted = wasMuted }
        var integrator = Integrator(realm: self, transaction: transaction)
        do {
            for changeset in changesets { try integrator.apply(changeset.instructions) }
            try integrator.finish()
        } catch let error as Error {
            throw error
        } catch {
            throw Error(.fileAccess, "changes from the server could not be integrated: \(error)", underlying: error as? any Swift.Error & Sendable)
        }
        bumpStamp()
    }
}

/// Carries out instructions on the store; see `Realm.integrateRemote(_:)`.
struct Integrator {
    let realm: Realm
    let transaction: WriteTransaction
    /// Tables whose links name types not known yet, installed once those arrive.
    private var deferredTables: [ObjectSchema] = []

    init(realm: Realm, transaction: WriteTransaction) {
        self.realm = realm
        self.transaction = transaction
    }

    var store: ObjectStore { realm.store }

    /// Applies instructions in order. An object created together with sets of its scalar fields
    /// (what a bootstrap or a bulk write brings) is inserted with those values in one statement
    /// rather than inserted with defaults and updated field by field; the result is the same.
    mutating func apply(_ instructions: [Instruction]) throws {
        var i = instructions.startIndex
        while i < instructions.endIndex {
            guard case .createObject(let id) = instructions[i] else {
                try apply(instructions[i])
                i += 1
                continue
            }
            var values: [Int: Value] = [:]
            var next = i + 1
            if let table = realm.coordinator.table(named: id.type), !table.schema.isEmbedded {
                while next < instructions.endIndex, case .set(let target, let path, let value) = instructions[next], target == id,
                      path.count == 1, case .property(let name) = path[0],
                      let index = table.schema.properties.firstIndex(where: { $0.name == name }),
                      table.property(index).isSingle, table.property(index).type != .object, !table.property(index).isPrimaryKey,
                      valid(value, table.property(index), element: false) {
                    values[index] = value
                    next += 1
                }
            }
            if try !createObject(id, values: values) {
                // The object existed: the sets apply one by one.
                for instruction in instructions[(i + 1)..<next] { try apply(instruction) }
            }
            i = next
        }
    }

    mutating func apply(_ instruction: Instruction) throws {
        switch instruction {
        case .addTable(let schema): try addTable(schema)
        case .addColumn(let type, let property): try addColumn(type, property)
        case .createObject(let id): try createObject(id)
        case .eraseObject(let id):
            guard let (table, row) = try object(id) else { return }
            try realm.deleteRow(table, row, transaction)
        case .set(let id, let path, let value):
            guard let last = path.last, let container = try navigate(id, path.dropLast()) else { return }
            try set(container, last, value)
        case .addInteger(let id, let path, let delta):
            guard let slot = try navigate(id, path[...]) else { return }
            try addInteger(slot, delta)
        case .listInsert(let id, let path, let index, let value):
            guard case .field(let table, let row, let p)? = try navigate(id, path[...]),
                  table.property(p).collection == .list else { return }
            let count = try store.count(table, row, p)
            guard index >= 0, Int64(index) <= count, valid(value, table.property(p), element: true) else { return }
            if Int64(index) < count { try store.shiftPositions(table, row, p, from: Int64(index), by: 1) }
            let (stored, link) = try storedElement(value, table, row, p)
            try store.insertListValue(table, row, p, at: Int64(index), stored, link: link)
            modified(table, row, p)
        case .listErase(let id, let path, let index):
            guard case .field(let table, let row, let p)? = try navigate(id, path[...]),
                  table.property(p).collection == .list else { return }
            guard index >= 0, Int64(index) < (try store.count(table, row, p)) else { return }
            try realm.deleteEmbedded(table.property(p), try store.listValue(table, row, p, at: Int64(index)), transaction)
            try store.removeListValue(table, row, p, at: Int64(index))
            modified(table, row, p)
        case .listMove(let id, let path, let from, let to):
            guard case .field(let table, let row, let p)? = try navigate(id, path[...]),
                  table.property(p).collection == .list else { return }
            let count = try store.count(table, row, p)
            guard from >= 0, to >= 0, Int64(from) < count, Int64(to) < count, from != to else { return }
            try store.moveListValue(table, row, p, from: Int64(from), to: Int64(to))
            modified(table, row, p)
        case .clear(let id, let path):
            guard case .field(let table, let row, let p)? = try navigate(id, path[...]), !table.property(p).isSingle,
                  try store.count(table, row, p) > 0 else { return }
            try realm.clearCollection(table, row, p, transaction)
            modified(table, row, p)
        case .setInsert(let id, let path, let value):
            guard case .field(let table, let row, let p)? = try navigate(id, path[...]),
                  table.property(p).collection == .set, valid(value, table.property(p), element: true),
                  try findSetElement(table, row, p, value) == nil else { return }
            let (stored, link) = try storedElement(value, table, row, p)
            try store.insertSetValue(table, row, p, stored, link: link)
            modified(table, row, p)
        case .setErase(let id, let path, let value):
            guard case .field(let table, let row, let p)? = try navigate(id, path[...]),
                  table.property(p).collection == .set, let rowid = try findSetElement(table, row, p, value) else { return }
            try store.removeSetElement(table, p, rowid)
            modified(table, row, p)
        case .mapErase(let id, let path, let key):
            guard case .field(let table, let row, let p)? = try navigate(id, path[...]),
                  table.property(p).collection == .map,
                  let old = try store.mapValue(table, row, p, key: key) else { return }
            try realm.deleteEmbedded(table.property(p), old, transaction)
            try store.removeMapValue(table, row, p, key: key)
            modified(table, row, p)
        }
    }

    /// Tables still deferred name types that never arrived: they stay out of the schema.
    func finish() throws {}

    // MARK: - Schema

    private mutating func addTable(_ schema: ObjectSchema) throws {
        if let existing = realm.coordinator.table(named: schema.name) {
            for property in schema.properties where existing.schema[property: property.name] == nil {
                try addColumn(schema.name, property)
            }
            return
        }
        guard try install(schema) else {
            deferredTables.append(schema)
            return
        }
        // A table may complete the links of tables deferred before it.
        var progress = true
        while progress {
            progress = false
            for (index, deferred) in deferredTables.enumerated() where try install(deferred) {
                deferredTables.remove(at: index)
                progress = true
                break
            }
        }
    }

    /// Creates a table for a type the file does not have, if the schema stays valid with it.
    private func install(_ schema: ObjectSchema) throws -> Bool {
        guard realm.coordinator.table(named: schema.name) == nil else { return true }
        guard (try? Schema(realm.coordinator.allTables.map(\.schema) + [schema])) != nil else { return false }
        try SchemaInstaller.addTypes([schema], connection: realm.connection, path: realm.coordinator.path)
        realm.coordinator.install(TableInfo(schema: schema, classInfo: nil))
        return true
    }

    private mutating func addColumn(_ type: String, _ property: Property) throws {
        if let index = deferredTables.firstIndex(where: { $0.name == type }) {
            if deferredTables[index][property: property.name] == nil { deferredTables[index].properties.append(property) }
            return
        }
        // A type with a class keeps the class's properties: a column the class does not declare
        // would make the next open of the file require a migration.
        guard let table = realm.coordinator.table(named: type), table.classInfo == nil,
              table.schema[property: property.name] == nil, !property.isPrimaryKey else { return }
        var schema = table.schema
        schema.properties.append(property)
        guard (try? Schema(realm.coordinator.allTables.filter { $0.name != type }.map(\.schema) + [schema])) != nil else { return }
        try SchemaInstaller.addProperty(type, property, realm.connection)
        if property.isSingle { try SchemaInstaller.createIndexes(type, property, realm.connection) }
        try SchemaInstaller.replaceStoredType(schema, connection: realm.connection, path: realm.coordinator.path)
        realm.coordinator.install(TableInfo(schema: schema, classInfo: nil))
    }

    // MARK: - Objects

    /// The table and row of a top-level object, if it exists.
    func object(_ id: ObjectID) throws -> (TableInfo, Int64)? {
        guard let table = realm.coordinator.table(named: id.type), !table.schema.isEmbedded, validKey(id.primaryKey, table) else { return nil }
        guard let row = try row(of: table, id.primaryKey) else { return nil }
        return (table, row)
    }

    private func row(of table: TableInfo, _ key: Value) throws -> Int64? {
        if table.primaryKeyIndex != nil { return try realm.rowForPrimaryKey(table, key) }
        guard case .int(let row) = key else { return nil }
        return try store.exists(table, row) ? row : nil
    }

    /// Whether `key` can name an object of `table`: its primary key's kind, or a row number.
    private func validKey(_ key: Value, _ table: TableInfo) -> Bool {
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
    private func createObject(_ id: ObjectID, values: [Int: Value] = [:]) throws -> Bool {
        guard let table = realm.coordinator.table(named: id.type), !table.schema.isEmbedded,
              validKey(id.primaryKey, table), try row(of: table, id.primaryKey) == nil else { return false }
        let arguments: [SQLValue] = table.columns.map { index in
            index == table.primaryKeyIndex ? id.primaryKey.sqlValue : (values[index] ?? table.property(index).initialValue).sqlValue
        }
        let row: Int64
        if table.primaryKeyIndex == nil, case .int(let number) = id.primaryKey {
            // A type without a primary key is addressed by row number: keep it.
            row = try store.insertRow(table, arguments, row: number)
        } else {
            row = try store.insertRow(table, arguments)
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

    private func child(_ slot: Slot, _ element: PathElement) throws -> Slot? {
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
    private func embeddedObject(_ slot: Slot) throws -> (TableInfo, Int64)? {
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

    private func embeddedTable(_ property: Property) -> TableInfo? {
        guard property.type == .object, let target = realm.coordinator.table(named: property.objectType ?? ""),
              target.schema.isEmbedded else { return nil }
        return target
    }

    // MARK: - Values

    /// Whether the store can hold `value` in `property` (as one element of it when `element`).
    func valid(_ value: Value, _ property: Property, element: Bool) -> Bool {
        if !element && !property.isSingle {
            switch (property.collection, value) {
            case (.list, .list(let items)), (.set, .set(let items)):
                return items.allSatisfy { valid($0, property, element: true) }
            case (.map, .map(let entries)):
                return entries.values.allSatisfy { valid($0, property, element: true) }
            default:
                return false
            }
        }
        if case .null = value {
            if property.type == .object { return property.isSingle || property.collection == .map }
            return property.isOptional
        }
        guard property.type == .object else { return value.propertyType == property.type }
        guard let target = realm.coordinator.table(named: property.objectType ?? "") else { return false }
        switch value {
        case .link(let link):
            return !target.schema.isEmbedded && link.objectType == target.name && validKey(link.primaryKey, target)
        case .object(let fields):
            guard target.schema.isEmbedded else { return false }
            return fields.allSatisfy { name, field in
                target.schema[property: name].map { valid(field, $0, element: false) } ?? true
            }
        default:
            return false
        }
    }

    /// The stored value of an element (a scalar, a row, or NULL) and the target of an
    /// unresolved link; embedded objects are created, owned by property `p` of `row`.
    private func storedElement(_ value: Value, _ table: TableInfo, _ row: Int64, _ p: Int) throws -> (SQLValue, SQLValue) {
        switch value {
        case .link(let link):
            guard let target = realm.coordinator.table(named: link.objectType) else { return (.null, .null) }
            if let targetRow = try self.row(of: target, link.primaryKey) { return (.integer(targetRow), .null) }
            let stored = ObjectStore.linkTarget(link)
            try store.noteUnresolved(stored)
            return (.null, stored)
        case .object(let fields):
            guard let target = embeddedTable(table.property(p)) else { return (.null, .null) }
            return (.integer(try createEmbedded(target, fields, owner: (table, row, p))), .null)
        default:
            return (value.sqlValue, .null)
        }
    }

    /// Creates an embedded object from its fields (unknown ones dropped, absent ones default).
    private func createEmbedded(_ table: TableInfo, _ fields: [String: Value], owner: (TableInfo, Int64, Int)) throws -> Int64 {
        var arguments: [SQLValue] = table.columns.map { index in
            let property = table.property(index)
            guard property.type != .object else { return .null }
            return (fields[property.name] ?? property.initialValue).sqlValue
        }
        arguments += [.text(owner.0.name), .integer(owner.1), .text(owner.0.property(owner.2).name)]
        let row = try store.insertRow(table, arguments)
        transaction.summary.insert(table.name, row)
        for (index, property) in table.schema.properties.enumerated() where property.type == .object || !property.isSingle {
            guard let value = fields[property.name] else { continue }
            try setField(table, row, index, value, reporting: false)
        }
        return row
    }

    private func modified(_ table: TableInfo, _ row: Int64, _ p: Int) {
        transaction.summary.modify(table.name, row, table.property(p).name)
        realm.bumpStamp()
    }

    // MARK: - Writing

    private func set(_ container: Slot, _ element: PathElement, _ value: Value) throws {
        switch (element, container) {
        case (.property(let name), _):
            guard let (table, row) = try embeddedObject(container),
                  let index = table.schema.properties.firstIndex(where: { $0.name == name }),
                  !table.property(index).isPrimaryKey, valid(value, table.property(index), element: false) else { return }
            try setField(table, row, index, value, reporting: true)
        case (.index(let i), .field(let table, let row, let p)) where table.property(p).collection == .list:
            guard i >= 0, Int64(i) < (try store.count(table, row, p)), valid(value, table.property(p), element: true) else { return }
            try realm.deleteEmbedded(table.property(p), try store.listValue(table, row, p, at: Int64(i)), transaction)
            let (stored, link) = try storedElement(value, table, row, p)
            try store.setListValue(table, row, p, at: Int64(i), stored, link: link)
            modified(table, row, p)
        case (.key(let key), .field(let table, let row, let p)) where table.property(p).collection == .map:
            guard valid(value, table.property(p), element: true) else { return }
            try realm.deleteEmbedded(table.property(p), try store.mapValue(table, row, p, key: key), transaction)
            let (stored, link) = try storedElement(value, table, row, p)
            try store.setMapValue(table, row, p, key: key, stored, link: link)
            modified(table, row, p)
        default:
            return
        }
    }

    /// Sets property `index` of a row to a valid `value`: a scalar, a link, an embedded object
    /// or a whole collection.
    private func setField(_ table: TableInfo, _ row: Int64, _ index: Int, _ value: Value, reporting: Bool) throws {
        let property = table.property(index)
        if !property.isSingle {
            try realm.clearCollection(table, row, index, transaction)
            switch value {
            case .list(let items):
                for (position, item) in items.enumerated() {
                    let (stored, link) = try storedElement(item, table, row, index)
                    try store.insertListValue(table, row, index, at: Int64(position), stored, link: link)
                }
            case .set(let items):
                var seen: [Value] = []
                for item in items where !seen.contains(item) {
                    seen.append(item)
                    let (stored, link) = try storedElement(item, table, row, index)
                    try store.insertSetValue(table, row, index, stored, link: link)
                }
            case .map(let entries):
                for (key, item) in entries.sorted(by: { $0.key < $1.key }) {
                    let (stored, link) = try storedElement(item, table, row, index)
                    try store.setMapValue(table, row, index, key: key, stored, link: link)
                }
            default:
                break
            }
        } else if property.type == .object {
            try store.forgetUnresolvedLink(table, row, property.name)
            if embeddedTable(property) != nil {
                try realm.deleteEmbedded(property, try store.field(table, row, index), transaction)
            }
            var stored = SQLValue.null
            switch value {
            case .link(let link):
                if let target = realm.coordinator.table(named: link.objectType), let targetRow = try self.row(of: target, link.primaryKey) {
                    stored = .integer(targetRow)
                } else {
                    try realm.setUnresolvedLink(table, row, property.name, link)
                }
            case .object(let fields):
                if let target = embeddedTable(property) {
                    // The column is cleared first: the new child's row must not be taken for the old one.
                    try store.setField(table, row, index, .null)
                    stored = .integer(try createEmbedded(target, fields, owner: (table, row, index)))
                }
            default:
                break
            }
            try store.setField(table, row, index, stored)
        } else {
            try store.setField(table, row, index, value.sqlValue)
        }
        if reporting { modified(table, row, index) }
    }

    private func addInteger(_ slot: Slot, _ delta: Int64) throws {
        switch slot {
        case .field(let table, let row, let p):
            guard table.property(p).isSingle, table.property(p).type == .int, !table.property(p).isPrimaryKey,
                  case .integer(let n)? = try store.field(table, row, p) else { return }
            try store.setField(table, row, p, .integer(n &+ delta))
            modified(table, row, p)
        case .listElement(let table, let row, let p, let pos):
            guard table.property(p).type == .int,
                  case .integer(let n)? = try store.listValue(table, row, p, at: pos) else { return }
            try store.setListValue(table, row, p, at: pos, .integer(n &+ delta))
            modified(table, row, p)
        case .mapValue(let table, let row, let p, let key):
            guard table.property(p).type == .int,
                  case .integer(let n)? = try store.mapValue(table, row, p, key: key) else { return }
            try store.setMapValue(table, row, p, key: key, .integer(n &+ delta))
            modified(table, row, p)
        case .object:
            return
        }
    }

    /// The rowid of the set element equal to `value` (an unresolved link compares by its target).
    private func findSetElement(_ table: TableInfo, _ row: Int64, _ p: Int, _ value: Value) throws -> Int64? {
        let property = table.property(p)
        if property.type == .object {
            guard case .link(let link) = value, link.objectType == property.objectType,
                  let target = realm.coordinator.table(named: link.objectType), validKey(link.primaryKey, target) else { return nil }
            if let targetRow = try self.row(of: target, link.primaryKey) {
                return try store.setElement(table, row, p, holding: .integer(targetRow))
            }
            return try store.setElement(table, row, p, linkingTo: ObjectStore.linkTarget(link))
        }
        guard valid(value, property, element: true) else { return nil }
        return try store.setElement(table, row, p, holding: value.sqlValue)
    }
}
