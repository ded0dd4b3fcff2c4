import AtollCore
import Foundation

/// Storage steps behind `AnyRealmValue` properties and collection elements (Value+Mixed.swift
/// says how the store keeps them).
extension Realm {
    /// The value a mixed property stores for `element`: objects are added when unmanaged and held
    /// as links by primary key; nested lists and dictionaries are stored whole.
    func mixedValue(_ element: _StoredElement, _ transaction: WriteTransaction, _ place: @autoclosure () -> String) throws -> Value {
        switch element {
        case .value(let value):
            guard value.isMixedStorable else {
                throw Error(.invalidValue, "\(value.kindName) value \(value) cannot be stored in AnyRealmValue '\(place())'")
            }
            return value
        case .object(let object):
            if let schema = ClassInfo.of(Swift.type(of: object)).schema as AtollCore.ObjectSchema?, schema.isEmbedded {
                throw Error(.invalidValue, "Embedded objects ('\(schema.name)') cannot be stored in AnyRealmValue '\(place())'")
            }
            _ = try addObject(object, update: transaction.linkedAddPolicy, transaction)
            guard let state = object._managedState else {
                throw Error(.invalidValue, "Object of type '\(Swift.type(of: object).className())' could not be added for '\(place())'")
            }
            let (id, _) = try address(state.table, state.row)
            return .link(ObjectLink(objectType: id.type, primaryKey: id.primaryKey))
        case .list(let items):
            return .list(try items.map { try mixedValue($0, transaction, place()) })
        case .map(let entries):
            return .map(try entries.mapValues { try mixedValue($0, transaction, place()) })
        }
    }

    /// The stored value `element` compares equal to, without adding anything: `nil` for an
    /// unmanaged object (which no stored value can hold).
    func mixedKey(_ element: _StoredElement) -> Value? {
        switch element {
        case .value(let value): return value
        case .object(let object):
            guard let state = object._managedState, state.realm === self, let (id, _) = try? address(state.table, state.row) else { return nil }
            return .link(ObjectLink(objectType: id.type, primaryKey: id.primaryKey))
        case .list(let items):
            var values: [Value] = []
            for item in items {
                guard let value = mixedKey(item) else { return nil }
                values.append(value)
            }
            return .list(values)
        case .map(let entries):
            var values: [String: Value] = [:]
            for (key, item) in entries {
                guard let value = mixedKey(item) else { return nil }
                values[key] = value
            }
            return .map(values)
        }
    }

    /// What a stored mixed value reads as: links resolved to objects (a `DynamicObject` when this
    /// process declares no class for the target's type), `null` while unresolved (the target
    /// deleted or not synced yet).
    func mixedElement(_ value: Value) -> _StoredElement {
        switch value {
        case .link(let link):
            guard let table = coordinator.table(named: link.objectType),
                  let row = try? row(of: table, link.primaryKey) else { return .value(.null) }
            guard table.classInfo != nil else {
                return .object(DynamicObject(state: _ManagedObjectState(realm: self, table: table, row: row)))
            }
            return .object(materialize(table, row: row))
        case .list(let items): return .list(items.map(mixedElement))
        case .map(let entries): return .map(entries.mapValues(mixedElement))
        default: return .value(value)
        }
    }

    /// The row of the object a link names: by primary key, or by row number for types without one.
    func row(of table: TableInfo, _ key: Value) throws -> Int64? {
        if table.primaryKeyIndex != nil { return try rowForPrimaryKey(table, key) }
        guard case .int(let row) = key else { return nil }
        return try store.exists(table, row) ? row : nil
    }

    /// Sets a mixed property.
    func setMixed(_ state: _ManagedObjectState, _ index: Int, _ element: _StoredElement, _ transaction: WriteTransaction) throws {
        let table = state.table
        let property = table.property(index)
        let value = try mixedValue(element, transaction, "\(table.name).\(property.name)")
        try store.setField(table, state.row, index, value.mixedSQLValue)
        let (id, path) = try address(table, state.row)
        transaction.record(.set(id, path: path + [.property(property.name)], value: value))
        transaction.summary.modify(table.name, state.row, property.name)
        bumpStamp()
    }
}
