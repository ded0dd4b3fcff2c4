import AtollCore

/// Which rows a run of transactions inserted, deleted and modified, per object type. Notifications
/// are computed from it.
struct ChangeSummary: Sendable {
    struct TableChanges: Sendable {
        /// Rows are inserted in ascending runs: kept as ranges (RowSet), not hashed one by one.
        var inserted = RowSet()
        var deleted: Set<Int64> = []
        /// Row → names of the properties that changed (collections included).
        var modified: [Int64: Set<String>] = [:]

        var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && modified.isEmpty }
    }

    var tables: [String: TableChanges] = [:]
    /// Set when the change cannot be described row by row (a migration, a reset of the file).
    var isWholesale = false

    var isEmpty: Bool { !isWholesale && tables.values.allSatisfy(\.isEmpty) }

    mutating func insert(_ type: String, _ row: Int64) {
        tables[type, default: .init()].inserted.insert(row)
    }

    // Changed in place: a copy taken out of `tables` and stored back copied every set of the
    // table on each call (the dictionary still held them), O(rows changed) per change.
    mutating func delete(_ type: String, _ row: Int64) {
        Self.change(&tables[type, default: .init()]) { changes in
            if changes.inserted.remove(row) == nil { changes.deleted.insert(row) }
            changes.modified[row] = nil
        }
    }

    mutating func modify(_ type: String, _ row: Int64, _ property: String) {
        Self.change(&tables[type, default: .init()]) { changes in
            if !changes.inserted.contains(row) { changes.modified[row, default: []].insert(property) }
        }
    }

    private static func change(_ changes: inout TableChanges, _ body: (inout TableChanges) -> Void) {
        body(&changes)
    }

    /// The summary of `self` followed by `later`.
    mutating func append(_ later: ChangeSummary) {
        isWholesale = isWholesale || later.isWholesale
        for (type, next) in later.tables {
            var changes = tables[type, default: .init()]
            for row in next.inserted { changes.inserted.insert(row); changes.deleted.remove(row) }
            for (row, properties) in next.modified where !changes.inserted.contains(row) {
                changes.modified[row, default: []].formUnion(properties)
            }
            for row in next.deleted {
                if changes.inserted.remove(row) == nil { changes.deleted.insert(row) }
                changes.modified[row] = nil
            }
            tables[type] = changes
        }
    }

    func changes(for type: String) -> TableChanges? { tables[type] }
}
