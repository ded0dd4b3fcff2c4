import AtollCore
import Foundation

extension Realm {
    /// Deletes an object. Embedded objects it owns go with it; links to it become `nil` and it
    /// leaves every list, set and map that held it.
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
        if !table.schema.isEmbedded {
            transaction.record(.eraseObject(try address(table, row).0))
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
        if !table.schema.isEmbedded { try unlink(table, row, transaction) }
        try connection.execute("DELETE FROM \(table.table) WHERE _row = ?", [.integer(row)])
        transaction.summary.delete(table.name, row)
        bumpStamp()
    }

    /// Removes links to a deleted row. The erase instruction implies these on every replica, so
    /// they are not recorded; they are reported to notifications as changes of the owners.
    private func unlink(_ table: TableInfo, _ row: Int64, _ transaction: WriteTransaction) throws {
        for (owner, index) in coordinator.incomingLinks(to: table.name) {
            let property = owner.property(index)
            switch property.collection {
            case .single:
                for case .integer(let ownerRow) in try connection.fetchAll("SELECT _row FROM \(owner.table) WHERE \(owner.column(index)) = ?", [.integer(row)]).map({ $0[0] }) {
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                try connection.execute("UPDATE \(owner.table) SET \(owner.column(index)) = NULL WHERE \(owner.column(index)) = ?", [.integer(row)])
            case .list:
                let name = owner.collectionTable(index)
                let entries = try connection.fetchAll("SELECT owner, pos FROM \(name) WHERE value = ? ORDER BY owner, pos DESC", [.integer(row)])
                for entry in entries {
                    guard case .integer(let ownerRow) = entry[0], case .integer(let position) = entry[1] else { continue }
                    try connection.execute("DELETE FROM \(name) WHERE owner = ? AND pos = ?", [.integer(ownerRow), .integer(position)])
                    try shiftPositions(name, ownerRow, from: position + 1, by: -1)
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
            case .set:
                let name = owner.collectionTable(index)
                for case .integer(let ownerRow) in try connection.fetchAll("SELECT owner FROM \(name) WHERE value = ?", [.integer(row)]).map({ $0[0] }) {
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                try connection.execute("DELETE FROM \(name) WHERE value = ?", [.integer(row)])
            case .map:
                let name = owner.collectionTable(index)
                for case .integer(let ownerRow) in try connection.fetchAll("SELECT owner FROM \(name) WHERE value = ?", [.integer(row)]).map({ $0[0] }) {
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                try connection.execute("UPDATE \(name) SET value = NULL WHERE value = ?", [.integer(row)])
            }
        }
    }

    /// Moves list positions `>= from` of one owner by `delta`, without tripping the (owner, pos) key.
    func shiftPositions(_ table: String, _ owner: Int64, from: Int64, by delta: Int64) throws {
        try connection.execute("UPDATE \(table) SET pos = -(pos + ?) - 1 WHERE owner = ? AND pos >= ?", [.integer(delta), .integer(owner), .integer(from)])
        try connection.execute("UPDATE \(table) SET pos = -pos - 1 WHERE owner = ? AND pos < 0", [.integer(owner)])
    }
}
