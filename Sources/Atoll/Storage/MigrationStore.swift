import AtollCore
import Foundation

/// The SQL a migration block runs. The file's tables are being changed while it runs, so it
/// addresses them by type and property name rather than through `TableInfo`.
///
/// ```swift
/// let store = MigrationStore(connection: connection)
/// try store.deleteRow("Person", 3)
/// ```
struct MigrationStore {
    let connection: Connection

    private func table(_ type: String) -> String { StorageLayout.quote(StorageLayout.table(type)) }
    private func collection(_ type: String, _ property: Property) -> String {
        StorageLayout.quote(StorageLayout.collectionTable(type, property))
    }

    /// Every row of a type with its single-valued columns, in row order.
    func rows(_ schema: AtollCore.ObjectSchema) throws -> [(row: Int64, values: [SQLValue])] {
        let columns = schema.properties.filter(\.isSingle).map { ", " + StorageLayout.quote($0.name) }.joined()
        return try connection.fetchRows("SELECT _row\(columns) FROM \(table(schema.name)) ORDER BY _row", [])
    }

    /// The row numbers of a type, old and created by the migration.
    func allRows(_ type: String) throws -> [Int64] {
        try connection.fetchAll("SELECT _row FROM \(table(type)) ORDER BY _row").compactMap {
            if case .integer(let row) = $0[0] { row } else { nil }
        }
    }

    /// A collection property's entries by owner row: lists in order, sets in insertion order,
    /// maps by key. Unresolved links (NULL values of object lists and sets) are left out.
    func collectionEntries(_ type: String, _ property: Property) throws -> [Int64: [(key: String?, value: SQLValue)]] {
        let name = collection(type, property)
        let skipNull = property.type == .object && property.collection != .map ? " WHERE value IS NOT NULL" : ""
        let sql = switch property.collection {
        case .list: "SELECT owner, NULL, value FROM \(name)\(skipNull) ORDER BY owner, pos"
        case .set: "SELECT owner, NULL, value FROM \(name)\(skipNull) ORDER BY owner, rowid"
        default: "SELECT owner, key, value FROM \(name) ORDER BY owner, key"
        }
        var result: [Int64: [(key: String?, value: SQLValue)]] = [:]
        for entry in try connection.fetchAll(sql) {
            guard case .integer(let owner) = entry[0] else { continue }
            let key: String? = if case .text(let text) = entry[1] { text } else { nil }
            result[owner, default: []].append((key, entry[2]))
        }
        return result
    }

    func deleteRow(_ type: String, _ row: Int64) throws {
        try connection.execute("DELETE FROM \(table(type)) WHERE _row = ?", [.integer(row)])
    }

    func deleteAll(_ type: String) throws {
        try connection.execute("DELETE FROM \(table(type))")
    }

    func clear(_ type: String, _ property: Property, owner: Int64) throws {
        try connection.execute("DELETE FROM \(collection(type, property)) WHERE owner = ?", [.integer(owner)])
    }

    /// Removes the links `property` of `ownerType` holds to `row`: a link becomes NULL, a set or
    /// list drops the element (closing the gap), a map keeps the key with NULL.
    func removeLinks(_ ownerType: String, _ property: Property, to row: Int64) throws {
        switch property.collection {
        case .single:
            let column = StorageLayout.quote(property.name)
            try connection.execute("UPDATE \(table(ownerType)) SET \(column) = NULL WHERE \(column) = ?", [.integer(row)])
        case .set:
            try connection.execute("DELETE FROM \(collection(ownerType, property)) WHERE value = ?", [.integer(row)])
        case .map:
            try connection.execute("UPDATE \(collection(ownerType, property)) SET value = NULL WHERE value = ?", [.integer(row)])
        case .list:
            let name = collection(ownerType, property)
            let entries = try connection.fetchAll("SELECT owner, pos FROM \(name) WHERE value = ? ORDER BY owner, pos DESC", [.integer(row)])
            for entry in entries {
                guard case .integer(let listOwner) = entry[0], case .integer(let position) = entry[1] else { continue }
                try connection.execute("DELETE FROM \(name) WHERE owner = ? AND pos = ?", [.integer(listOwner), .integer(position)])
                // Close the gap without tripping the (owner, pos) key: negate, then restore.
                try connection.execute("UPDATE \(name) SET pos = -pos WHERE owner = ? AND pos > ?", [.integer(listOwner), .integer(position)])
                try connection.execute("UPDATE \(name) SET pos = -pos - 1 WHERE owner = ? AND pos < 0", [.integer(listOwner)])
            }
        }
    }

    /// Copies a property's data to a property of the same type under another name.
    func copy(_ type: String, from old: Property, to new: Property) throws {
        if old.isSingle {
            try connection.execute("UPDATE \(table(type)) SET \(StorageLayout.quote(new.name)) = \(StorageLayout.quote(old.name))")
        } else {
            try connection.execute("INSERT INTO \(collection(type, new)) SELECT * FROM \(collection(type, old))")
        }
    }

    /// The schema version stored in the file at `path`, read without opening it as a realm.
    static func schemaVersion(atPath path: String, key: EncryptionKey? = nil) throws -> Int64? {
        let connection = try Connection(path: path, readOnly: true, key: key)
        defer { try? connection.queue.close() }
        return try connection.fetchInt("SELECT value FROM _atoll_meta WHERE key = 'schema_version'")
    }
}
