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
                for row in try connection.fetchAll("SELECT _row FROM \(table.table)") {
                    if case .integer(let id) = row[0] { try deleteRow(table, id, transaction) }
                }
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
            guard let target = coordinator.table(named: table.property(index).objectType ?? "") else { continue }
            let children: [[SQLValue]] = table.property(index).isSingle
                ? try connection.fetchAll("SELECT \(table.column(index)) FROM \(table.table) WHERE _row = ?", [.integer(row)])
                : try connection.fetchAll("SELECT value FROM \(table.collectionTable(index)) WHERE owner = ?", [.integer(row)])
            for case .integer(let child) in children.map({ $0[0] }) { try deleteRow(target, child, transaction) }
        }
        for index in table.schema.properties.indices where !table.property(index).isSingle {
            try connection.execute("DELETE FROM \(table.collectionTable(index)) WHERE owner = ?", [.integer(row)])
        }
        try forgetUnresolvedLinks(of: table, row)
        // Links to the object stay, unresolved, as on every replica (docs/merge.md): readers no
        // longer see them, and they resolve again if an object with this key is created.
        if let id { try unresolveLinks(to: table, row, id: id, transaction) }
        try connection.execute("DELETE FROM \(table.table) WHERE _row = ?", [.integer(row)])
        transaction.summary.delete(table.name, row)
        bumpStamp()
    }

    /// Moves list positions `>= from` of one owner by `delta`, without tripping the (owner, pos) key.
    func shiftPositions(_ table: String, _ owner: Int64, from: Int64, by delta: Int64) throws {
        try connection.execute("UPDATE \(table) SET pos = -(pos + ?) - 1 WHERE owner = ? AND pos >= ?", [.integer(delta), .integer(owner), .integer(from)])
        try connection.execute("UPDATE \(table) SET pos = -pos - 1 WHERE owner = ? AND pos < 0", [.integer(owner)])
    }
}
