import AtollCore
import Foundation

/// Format 4: dates as seconds since 2001 instead of since 1970.
///
/// Until format 3 a date was stored as `timeIntervalSince1970`, a `Double` computed from `Date`'s
/// own (seconds since 2001) by adding 978,307,200 s, which drops the lowest bit of about half of
/// today's dates: such a date read back was not `==` to the one written. Format 4 stores `Date`'s
/// own `Double`. Upgrading computes, for every stored date, exactly what the old code read back
/// (`Date(timeIntervalSince1970: x)` is `x − 978,307,200` in `Double` arithmetic, which SQLite
/// does the same way), so the app sees the dates it saw before.
///
/// - Date columns and date collections: one `UPDATE` each.
/// - Mixed values (blobs of the value encoding): re-encoded, so a date in them carries the exact
///   tag (equal values must have equal bytes). Old tags still decode, so history records, pending
///   changesets and archives written before keep their meaning without being rewritten.
/// - Sets: two stored dates that differed only below what the old reading kept (the same `Date`
///   to the app) become one element.
extension InternalTables {
    static func upgradeDates(_ connection: Connection, _ stored: [AtollCore.ObjectSchema]) throws {
        let shift = Date.timeIntervalBetween1970AndReferenceDate
        for schema in stored {
            for property in schema.properties where property.type == .date || property.type == .any {
                let (table, keys) = property.isSingle
                    ? (StorageLayout.table(schema.name), [StorageLayout.rowColumn])
                    : (StorageLayout.collectionTable(schema.name, property), collectionKeys(property.collection))
                guard try connection.fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(table)]) != nil
                else { continue }
                let column = StorageLayout.quote(property.isSingle ? property.name : "value")
                let quoted = StorageLayout.quote(table)
                if property.type == .date {
                    try connection.execute(
                        "UPDATE \(quoted) SET \(column) = \(column) - ? WHERE typeof(\(column)) IN ('real', 'integer')", [.real(shift)])
                } else {
                    try reencodeMixed(connection, table: quoted, column: column, keys: keys)
                }
                if property.collection == .set {
                    try connection.execute(
                        "DELETE FROM \(quoted) WHERE rowid NOT IN (SELECT MIN(rowid) FROM \(quoted) GROUP BY owner, value)")
                }
            }
        }
    }

    /// The columns that name one element of a collection table.
    private static func collectionKeys(_ kind: CollectionKind) -> [String] {
        switch kind {
        case .single: [StorageLayout.rowColumn]
        case .list: ["owner", "pos"]
        case .set: ["rowid"]
        case .map: ["owner", "key"]
        }
    }

    /// Decodes and re-encodes every mixed blob that may hold a date (a byte 7, the old date tag,
    /// somewhere in it); writes back those whose bytes change.
    private static func reencodeMixed(_ connection: Connection, table: String, column: String, keys: [String]) throws {
        let keyList = keys.map(StorageLayout.quote).joined(separator: ", ")
        let rows = try connection.fetchAll(
            "SELECT \(column), \(keyList) FROM \(table) WHERE typeof(\(column)) = 'blob' AND instr(\(column), x'07') > 0")
        let match = keys.map { "\(StorageLayout.quote($0)) = ?" }.joined(separator: " AND ")
        for row in rows {
            guard let old = row.first, let value = Value(mixedSQL: old) else { continue }
            let new = value.mixedSQLValue
            guard new != old else { continue }
            try connection.execute("UPDATE \(table) SET \(column) = ? WHERE \(match)", [new] + Array(row.dropFirst()))
        }
    }
}
