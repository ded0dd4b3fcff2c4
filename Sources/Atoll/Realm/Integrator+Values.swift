import AtollCore
import Foundation

/// Writing an instruction's value: checked against the property, then stored through the
/// realm's `ObjectStore`.
extension Integrator {
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
        if property.type == .any { return value.isMixedStorable }
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
    func storedElement(_ value: Value, _ table: TableInfo, _ row: Int64, _ p: Int) throws -> (SQLValue, SQLValue) {
        if table.property(p).type == .any { return (value.mixedSQLValue, .null) }
        switch value {
        case .link(let link):
            guard let target = realm.coordinator.table(named: link.objectType) else { return (.null, .null) }
            if let targetRow = try self.row(of: target, link.primaryKey) { return (.integer(targetRow), .null) }
            let stored = ObjectStore.linkTarget(link)
            transaction.unresolvedMayExist = true
            try store.noteUnresolved(stored)
            return (.null, stored)
        case .object(let fields):
            guard let target = embeddedTable(table.property(p)) else { return (.null, .null) }
            return (.integer(try createEmbedded(target, fields, owner: (table, row, p))), .null)
        default:
            return (value.sqlValue(as: table.property(p).type), .null)
        }
    }

    /// Creates an embedded object from its fields (unknown ones dropped, absent ones default).
    func createEmbedded(_ table: TableInfo, _ fields: [String: Value], owner: (TableInfo, Int64, Int)) throws -> Int64 {
        var arguments: [SQLValue] = table.columns.map { index in
            let property = table.property(index)
            guard property.type != .object else { return .null }
            return (fields[property.name] ?? property.initialValue).sqlValue(as: property.type)
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

    func modified(_ table: TableInfo, _ row: Int64, _ p: Int) {
        transaction.summary.modify(table.name, row, table.property(p).name)
        realm.bumpStamp()
    }

    // MARK: - Writing

    func set(_ container: Slot, _ element: PathElement, _ value: Value) throws {
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
    func setField(_ table: TableInfo, _ row: Int64, _ index: Int, _ value: Value, reporting: Bool) throws {
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
            try store.setField(table, row, index, value.sqlValue(as: property.type))
        }
        if reporting { modified(table, row, index) }
    }

    func addInteger(_ slot: Slot, _ delta: Int64) throws {
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
    func findSetElement(_ table: TableInfo, _ row: Int64, _ p: Int, _ value: Value) throws -> Int64? {
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
        return try store.setElement(table, row, p, holding: value.sqlValue(as: property.type))
    }
}
