import AtollCore
import Foundation

extension Realm {
    /// Deletes an object. Embedded objects it owns go with it; links to it become `nil` and it
    /// leaves every list and set that held it (map values become `nil`).
    public func delete(_ object: ObjectBase) {
        guard let transaction = requireWrite("delete objects") else { return }
        guard let state = object._managedState else {
            preconditionFailure("Can only delete an object from the Realm it belongs to (this one is unmanaged)")
        }
        precondition(state.realm === self, "Can only delete an object from the Realm it belongs to")
        perform(transaction) {
            guard state.values() != nil else {
                throw Error(.objectInvalidated, "Object of type '\(state.table.name)' has already been deleted")
            }
            try deleteRow(state.table, state.row, transaction)
        }
    }

    /// Deletes every object of a sequence (results are read first, so deleting a live query works).
    public func delete<S: Sequence>(_ objects: S) where S.Element: ObjectBase {
        for object in Array(objects) { delete(object) }
    }

    /// Deletes every object in the realm.
    public func deleteAll() {
        guard let transaction = requireWrite("delete objects") else { return }
        perform(transaction) {
            for table in coordinator.allTables where !table.schema.isEmbedded {
                for row in try store.rows(table) { try deleteRow(table, row, transaction) }
            }
        }
    }

    func deleteRow(_ table: TableInfo, _ row: Int64, _ transaction: WriteTransaction) throws {
        var id: ObjectID?
        if !table.schema.isEmbedded {
            id = try address(table, row).0
            transaction.record(.eraseObject(id!))
        }
        // Embedded children go with their owner.
        for index in table.schema.properties.indices where isEmbedded(table.property(index)) {
            let children: [SQLValue] = table.property(index).isSingle
                ? [try store.field(table, row, index)].compactMap { $0 }
                : try store.elements(table, row, index).map(\.value)
            for child in children { try deleteEmbedded(table.property(index), child, transaction) }
        }
        for index in table.schema.properties.indices where !table.property(index).isSingle {
            try store.clear(table, row, index)
        }
        try forgetUnresolvedLinks(of: table, row)
        // Links to the object stay, unresolved, as on every replica (docs/merge.md): readers no
        // longer see them, and they resolve again if an object with this key is created.
        if let id { try unresolveLinks(to: table, row, id: id, transaction) }
        try store.deleteRow(table, row)
        transaction.summary.delete(table.name, row)
        bumpStamp()
    }

    /// Deletes the embedded object a stored value of `property` holds, if it holds one.
    func deleteEmbedded(_ property: Property, _ raw: SQLValue?, _ transaction: WriteTransaction) throws {
        guard isEmbedded(property), case .integer(let child)? = raw,
              let target = coordinator.table(named: property.objectType ?? "") else { return }
        try deleteRow(target, child, transaction)
    }

    /// Empties collection `p` of a row, deleting the embedded objects it held.
    func clearCollection(_ table: TableInfo, _ row: Int64, _ p: Int, _ transaction: WriteTransaction) throws {
        if isEmbedded(table.property(p)) {
            for element in try store.elements(table, row, p) { try deleteEmbedded(table.property(p), element.value, transaction) }
        }
        try store.clear(table, row, p)
    }
}
