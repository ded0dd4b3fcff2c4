import AtollCore
import Foundation
import GRDB

/// The SQL of objects: rows, fields, list/set/map slots and unresolved links.
///
/// Local writes (`Realm+Add`, `Realm+Collections`, `Realm+Delete`), changes from the server
/// (`Integrator`) and client reset all go through it, so each storage step is one statement in
/// one place. It decides nothing: callers check, record instructions and report changes.
///
/// ```swift
/// let row = try realm.store.insertRow(table, values)
/// try realm.store.setField(table, row, index, .integer(7))
/// ```
///
/// Statements are prepared once per connection (`Connection` caches them by text).
struct ObjectStore {
    let connection: Connection

    // MARK: Rows

    /// Inserts a row: the values of `table.columns`, then (embedded objects) the parent's type,
    /// row and property. Returns the new row number.
    func insertRow(_ table: TableInfo, _ values: [SQLValue]) throws -> Int64 {
        try connection.insert(table.insertRow, values)
    }

    /// Inserts a row with a given row number (how objects without a primary key are addressed).
    func insertRow(_ table: TableInfo, _ values: [SQLValue], row: Int64) throws -> Int64 {
        try connection.execute(table.insertNumberedRow, [.integer(row)] + values)
        return try connection.lastInsertedRow
    }

    /// Whether `error` is a unique index refusing a row (a duplicate primary key).
    static func isDuplicateKey(_ error: any Error) -> Bool {
        (error as? DatabaseError)?.resultCode == .SQLITE_CONSTRAINT
    }

    /// The values of `table.columns` of a row, or `nil` when the row does not exist.
    func values(_ table: TableInfo, _ row: Int64) throws -> [SQLValue]? {
        try connection.fetchOne(table.selectRow, [.integer(row)])
    }

    func exists(_ table: TableInfo, _ row: Int64) throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM \(table.table) WHERE _row = ?", [.integer(row)]) != nil
    }

    /// Whether the table holds no row.
    func isEmpty(_ table: TableInfo) throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM \(table.table) LIMIT 1") == nil
    }

    func row(_ table: TableInfo, primaryKey key: Value) throws -> Int64? {
        guard let sql = table.selectRowByPrimaryKey else { return nil }
        return try connection.fetchInt(sql, [key.sqlValue])
    }

    /// Every row number of the table.
    func rows(_ table: TableInfo) throws -> [Int64] {
        try connection.fetchAll("SELECT _row FROM \(table.table)").compactMap(\.first?.rowNumber)
    }

    /// The rows whose column `index` holds one of `values`.
    func rows(_ table: TableInfo, where index: Int, in values: [SQLValue]) throws -> [Int64] {
        let placeholders = values.map { _ in "?" }.joined(separator: ", ")
        return try connection.fetchAll("SELECT _row FROM \(table.table) WHERE \(table.column(index)) IN (\(placeholders))", values)
            .compactMap(\.first?.rowNumber)
    }

    /// Every row with its values, in no particular order.
    func allRows(_ table: TableInfo) throws -> [(row: Int64, values: [SQLValue])] {
        let columns = table.columns.map { ", " + table.column($0) }.joined()
        return try connection.fetchRows("SELECT _row\(columns) FROM \(table.table)", [])
    }

    /// Column `index` of every row (e.g. every primary key).
    func column(_ table: TableInfo, _ index: Int) throws -> [SQLValue] {
        try connection.fetchAll("SELECT \(table.column(index)) FROM \(table.table)").map { $0[0] }
    }

    func deleteRow(_ table: TableInfo, _ row: Int64) throws {
        try connection.execute("DELETE FROM \(table.table) WHERE _row = ?", [.integer(row)])
    }

    /// The owner of an embedded object: its type, row and property.
    func parent(_ table: TableInfo, _ row: Int64) throws -> (type: String, row: Int64, property: String)? {
        guard let parent = try connection.fetchOne("SELECT _parent_type, _parent_row, _parent_prop FROM \(table.table) WHERE _row = ?", [.integer(row)]),
              case .text(let type) = parent[0], case .integer(let parentRow) = parent[1], case .text(let property) = parent[2] else { return nil }
        return (type, parentRow, property)
    }

    // MARK: Fields

    /// Column `index` of a row; `nil` when the row does not exist.
    func field(_ table: TableInfo, _ row: Int64, _ index: Int) throws -> SQLValue? {
        try connection.fetchOne("SELECT \(table.column(index)) FROM \(table.table) WHERE _row = ?", [.integer(row)])?[0]
    }

    func setField(_ table: TableInfo, _ row: Int64, _ index: Int, _ value: SQLValue) throws {
        try connection.execute("UPDATE \(table.table) SET \(table.column(index)) = ? WHERE _row = ?", [value, .integer(row)])
    }

    /// Sets column `index` to NULL in every row where it holds `value` (links to a row going away).
    func clearField(_ table: TableInfo, _ index: Int, where value: SQLValue) throws {
        try connection.execute("UPDATE \(table.table) SET \(table.column(index)) = NULL WHERE \(table.column(index)) = ?", [value])
    }
}

extension SQLValue {
    /// The integer this value holds (a row number), if it is one.
    var rowNumber: Int64? {
        if case .integer(let i) = self { return i }
        return nil
    }
}
