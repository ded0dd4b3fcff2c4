import AtollCore
import Foundation

/// The SQL a migration block runs. The file's tables are being changed while it runs, so it
/// addresses them by type and property name rather than through `TableInfo`.
///
/// ```swift
/// let store = MigrationStore(connection: connection)
/// try store.setField("Person", row: 3, "fullName", .text("Ann Lee"))
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

    /// Inserts a row whose non-optional columns hold their type's zero value, as in a new column.
    func insertRow(_ schema: AtollCore.ObjectSchema) throws -> Int64 {
        let defaults = schema.properties.compactMap { property -> (String, String)? in
            guard property.isSingle, !property.isOptional, let value = SchemaInstaller.defaultValue(property) else { return nil }
            return (StorageLayout.quote(property.name), value)
        }
        try connection.execute(defaults.isEmpty ? "INSERT INTO \(table(schema.name)) DEFAULT VALUES"
            : "INSERT INTO \(table(schema.name)) (\(defaults.map(\.0).joined(separator: ", "))) VALUES (\(defaults.map(\.1).joined(separator: ", ")))")
        return try connection.lastInsertedRow
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

    /// Column `name` of a row (NULL when the row does not exist).
    func field(_ type: String, _ row: Int64, _ name: String) throws -> SQLValue {
        try connection.fetchOne("SELECT \(StorageLayout.quote(name)) FROM \(table(type)) WHERE _row = ?", [.integer(row)])?.first ?? .null
    }

    func setField(_ type: String, _ row: Int64, _ name: String, _ value: SQLValue) throws {
        try connection.execute("UPDATE \(table(type)) SET \(StorageLayout.quote(name)) = ? WHERE _row = ?", [value, .integer(row)])
    }

    /// The schema version stored in the file at `path`, read without opening it as a realm.
    static func schemaVersion(atPath path: String, key: EncryptionKey? = nil) throws -> Int64? {
        let connection = try Connection(path: path, readOnly: true, key: key)
        defer { try? connection.queue.close() }
        return try connection.fetchInt("SELECT value FROM _atoll_meta WHERE key = 'schema_version'")
    }
}
