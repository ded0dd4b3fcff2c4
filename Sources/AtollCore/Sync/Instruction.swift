import Foundation

/// One step into an object: a property, a list position or a map key. Paths address fields of
/// embedded objects from their top-level owner, e.g. `address.lines[2]`.
package enum PathElement: Hashable, Sendable {
    case property(String)
    case index(Int)
    case key(String)
}

/// An object's identity in history: its type and primary key. Types without a primary key are
/// local-only and are identified by their local row (`.int(row)`); sync never sees them.
package struct ObjectID: Hashable, Sendable {
    package var type: String
    package var primaryKey: Value

    package init(type: String, primaryKey: Value) {
        self.type = type
        self.primaryKey = primaryKey
    }
}

/// One change to a realm, as recorded in history and carried by sync.
///
/// Field paths start at a top-level object (`object`) and end at the field changed; collection
/// operations address the collection at `path`.
package enum Instruction: Hashable, Sendable {
    case addTable(ObjectSchema)
    case addColumn(type: String, Property)
    case createObject(ObjectID)
    case eraseObject(ObjectID)
    /// Sets a field (or, with an `.index`/`.key` last element, a list element or map value).
    case set(ObjectID, path: [PathElement], value: Value)
    /// Adds to an integer field: concurrent adds both count.
    case addInteger(ObjectID, path: [PathElement], delta: Int64)
    case listInsert(ObjectID, path: [PathElement], index: Int, value: Value)
    case listErase(ObjectID, path: [PathElement], index: Int)
    case listMove(ObjectID, path: [PathElement], from: Int, to: Int)
    case clear(ObjectID, path: [PathElement])
    case setInsert(ObjectID, path: [PathElement], value: Value)
    case setErase(ObjectID, path: [PathElement], value: Value)
    case mapErase(ObjectID, path: [PathElement], key: String)

    /// The object the instruction changes, if any.
    package var object: ObjectID? {
        switch self {
        case .addTable, .addColumn: nil
        case .createObject(let o), .eraseObject(let o): o
        case .set(let o, _, _), .addInteger(let o, _, _), .listInsert(let o, _, _, _), .listErase(let o, _, _),
             .listMove(let o, _, _, _), .clear(let o, _), .setInsert(let o, _, _), .setErase(let o, _, _),
             .mapErase(let o, _, _):
            o
        }
    }
}

/// The instructions of one committed write transaction, stamped with where and when it was made.
package struct Changeset: Hashable, Sendable {
    /// The local version this transaction produced.
    package var version: Int64
    /// Milliseconds since 1970 at commit, for last-writer-wins ordering.
    package var timestamp: Int64
    /// The writing file's identity (assigned by the server; 0 until then).
    package var fileIdent: Int64
    package var instructions: [Instruction]

    package init(version: Int64, timestamp: Int64, fileIdent: Int64 = 0, instructions: [Instruction]) {
        self.version = version
        self.timestamp = timestamp
        self.fileIdent = fileIdent
        self.instructions = instructions
    }
}
