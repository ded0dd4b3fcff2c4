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
    package func integrateRemote(_ changesets: [Changeset]) throws {
        try checkThread()
        guard transaction == nil else {
            throw Error(.alreadyInWriteTransaction, "Cannot integrate changes from the server inside a write transaction")
        }
        try beginWriteTransaction()
        do {
            try integrateRemoteInWrite(changesets)
        } catch {
            cancelWrite()
            throw error
        }
        try commitWrite(recordingHistory: false)
    }

    /// Applies `changesets` inside the open write transaction, recording no instructions.
    package func integrateRemoteInWrite(_ changesets: [Changeset]) throws {
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
    var deferredTables: [ObjectSchema] = []

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
}
