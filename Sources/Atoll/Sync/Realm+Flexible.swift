import AtollCore
import Foundation

/// What a synced realm tells the server about itself: its schema (as history) and, for flexible
/// sync, the objects it holds.
extension Realm {
    /// Every object of a synced type the realm holds, by type and primary key (flexible sync's
    /// `heldObjects` message).
    func heldObjectIDs() throws -> [ObjectID] {
        var ids: [ObjectID] = []
        // Asymmetric objects are the server's once uploaded: never held, never downloaded.
        for table in coordinator.allTables where !table.schema.isEmbedded && !table.schema.isAsymmetric {
            guard let pk = table.primaryKeyIndex else { continue }
            let type = table.property(pk).type
            for key in try store.column(table, pk) {
                ids.append(ObjectID(type: table.name, primaryKey: Value(sql: key, type: type) ?? .null))
            }
        }
        return ids
    }

    /// Records the realm's schema as history (`addTable` of every type, in one changeset) when it
    /// differs from the schema recorded last, so the server and other clients learn every type
    /// and property, including those installed when the file was created. Tables merge
    /// additively, so announcing a type again is harmless.
    func announceSchemaIfNeeded() throws {
        let schemas = coordinator.allTables.map(\.schema).sorted { $0.name < $1.name }
        let announced = Changeset(version: 0, timestamp: 0, instructions: schemas.map(Instruction.addTable)).encoded()
        if let known = try? syncStateStore.announcedSchema(), known == announced { return }
        try write {
            try saveAnnouncedSchema(announced)
            for schema in schemas { transaction?.record(.addTable(schema)) }
        }
    }
}
