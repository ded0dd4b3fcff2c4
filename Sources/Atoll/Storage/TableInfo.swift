import AtollCore
import Foundation

/// How one object type is laid out in SQLite, with its statements prepared as text.
final class TableInfo: @unchecked Sendable {
    let schema: AtollCore.ObjectSchema
    let classInfo: ClassInfo?
    let table: String
    /// Property indices of the single-valued properties, in column order of `selectRow`.
    let columns: [Int]
    /// For each property, its position in a fetched row (`nil` for collections).
    let columnPosition: [Int?]
    let selectRow: String
    let insertRow: String
    /// `insertRow` with the row number given first (objects without a primary key keep theirs).
    let insertNumberedRow: String
    let primaryKeyIndex: Int?
    /// The row of an object by its primary key (`nil` without one): made once, not per lookup.
    let selectRowByPrimaryKey: String?
    /// The class's bound probe, cached here: the hot path of field access reads it.
    var probe: ObjectBase {
        guard let classInfo else { preconditionFailure("No class is declared for '\(schema.name)' in this process") }
        return classInfo.probe
    }
    /// Quoted column and collection table names, per property (computed once: they are on hot paths).
    private let quotedColumns: [String]
    private let quotedCollectionTables: [String?]

    init(schema: AtollCore.ObjectSchema, classInfo: ClassInfo?) {
        self.schema = schema
        self.classInfo = classInfo
        table = StorageLayout.quote(StorageLayout.table(schema.name))
        columns = schema.properties.indices.filter { schema.properties[$0].isSingle }
        var positions = [Int?](repeating: nil, count: schema.properties.count)
        for (position, index) in columns.enumerated() { positions[index] = position }
        columnPosition = positions
        let names = columns.map { StorageLayout.quote(schema.properties[$0].name) }
        selectRow = "SELECT \(names.isEmpty ? "NULL" : names.joined(separator: ", ")) FROM \(table) WHERE _row = ?"
        let extra = schema.isEmbedded ? ["_parent_type", "_parent_row", "_parent_prop"] : []
        let all = names + extra
        insertRow = all.isEmpty ? "INSERT INTO \(table) DEFAULT VALUES"
            : "INSERT INTO \(table) (\(all.joined(separator: ", "))) VALUES (\(all.map { _ in "?" }.joined(separator: ", ")))"
        let numbered = ["_row"] + names
        insertNumberedRow = "INSERT INTO \(table) (\(numbered.joined(separator: ", "))) VALUES (\(numbered.map { _ in "?" }.joined(separator: ", ")))"
        primaryKeyIndex = schema.properties.firstIndex(where: \.isPrimaryKey)
        quotedColumns = schema.properties.map { StorageLayout.quote($0.name) }
        let table = table
        selectRowByPrimaryKey = schema.properties.firstIndex(where: \.isPrimaryKey).map {
            "SELECT _row FROM \(table) WHERE \(StorageLayout.quote(schema.properties[$0].name)) IS ?"
        }
        quotedCollectionTables = schema.properties.map {
            $0.isSingle ? nil : StorageLayout.quote(StorageLayout.collectionTable(schema.name, $0))
        }
    }

    var name: String { schema.name }

    func property(_ index: Int) -> Property { schema.properties[index] }

    func collectionTable(_ index: Int) -> String {
        guard let name = quotedCollectionTables[index] else {
            preconditionFailure("'\(schema.name).\(schema.properties[index].name)' is not a collection")
        }
        return name
    }

    func column(_ index: Int) -> String { quotedColumns[index] }

    // MARK: DDL

    static func affinity(_ property: Property) -> String {
        switch property.type {
        // `.linkingObjects` never reaches a table (Schema.validate refuses it).
        case .bool, .int, .object, .linkingObjects: "INTEGER"
        case .double, .float, .date: "REAL"
        case .string: "TEXT"
        case .decimal128: "TEXT COLLATE \(StorageLayout.decimalCollation)"
        case .data, .objectId, .UUID: "BLOB"
        // The value's encoding, which carries its type (Value+Mixed.swift).
        case .any: "BLOB"
        }
    }

    /// Statements creating the table, its collection tables and its indexes.
    static func createStatements(for schema: AtollCore.ObjectSchema) -> [String] {
        let table = StorageLayout.quote(StorageLayout.table(schema.name))
        var columns = ["_row INTEGER PRIMARY KEY AUTOINCREMENT"]
        var statements: [String] = []
        for property in schema.properties where property.isSingle {
            columns.append(columnDefinition(property))
        }
        if schema.isEmbedded {
            columns += ["_parent_type TEXT", "_parent_row INTEGER", "_parent_prop TEXT"]
        }
        statements.append("CREATE TABLE \(table) (\(columns.joined(separator: ", ")))")
        for property in schema.properties {
            statements += propertyStatements(schema.name, property)
        }
        return statements
    }

    static func columnDefinition(_ property: Property) -> String {
        StorageLayout.quote(property.name) + " " + affinity(property)
    }

    /// Collection table and index statements for one property.
    static func propertyStatements(_ type: String, _ property: Property) -> [String] {
        let table = StorageLayout.quote(StorageLayout.table(type))
        var statements: [String] = []
        let element = affinity(property)
        // Object collections keep unresolved links (value NULL, the target in `link`), see
        // Realm+UnresolvedLinks.swift.
        let link = property.type == .object ? ", link BLOB" : ""
        switch property.collection {
        case .single:
            if property.isPrimaryKey {
                statements.append("CREATE UNIQUE INDEX \(StorageLayout.quote("pk_\(type)_\(property.name)")) ON \(table)(\(StorageLayout.quote(property.name)))")
            } else if property.isIndexed || property.type == .object {
                statements.append("CREATE INDEX \(StorageLayout.quote("idx_\(type)_\(property.name)")) ON \(table)(\(StorageLayout.quote(property.name)))")
            }
        case .list:
            let name = StorageLayout.quote(StorageLayout.collectionTable(type, property))
            statements.append("CREATE TABLE \(name) (owner INTEGER NOT NULL, pos INTEGER NOT NULL, value \(element)\(link), PRIMARY KEY (owner, pos)) WITHOUT ROWID")
            if property.type == .object { statements.append(valueIndex(name, type, property)) }
        case .set:
            let name = StorageLayout.quote(StorageLayout.collectionTable(type, property))
            statements.append("CREATE TABLE \(name) (owner INTEGER NOT NULL, value \(element)\(link))")
            statements.append("CREATE INDEX \(StorageLayout.quote("own_\(type)_\(property.name)")) ON \(name)(owner, value)")
            if property.type == .object { statements.append(valueIndex(name, type, property)) }
        case .map:
            let name = StorageLayout.quote(StorageLayout.collectionTable(type, property))
            statements.append("CREATE TABLE \(name) (owner INTEGER NOT NULL, key TEXT NOT NULL, value \(element)\(link), PRIMARY KEY (owner, key)) WITHOUT ROWID")
            if property.type == .object { statements.append(valueIndex(name, type, property)) }
        }
        return statements
    }

    private static func valueIndex(_ table: String, _ type: String, _ property: Property) -> String {
        "CREATE INDEX \(StorageLayout.quote("val_\(type)_\(property.name)")) ON \(table)(value)"
    }
}
