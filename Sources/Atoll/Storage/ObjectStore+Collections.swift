import AtollCore
import Foundation

/// The SQL of `List`, `MutableSet` and `Map` properties: one child table per property, keyed by
/// owner row and position (lists), insertion (sets) or key (maps). Every call names the owner's
/// table, row and property index.
///
/// Object collections keep unresolved links as slots with `value` NULL and the target in `link`
/// (see Realm+UnresolvedLinks.swift); `link` defaults to NULL, a resolved or scalar slot.
extension ObjectStore {
    // MARK: Reads

    /// How many slots the owner has; with `visibleOnly`, only those holding a value.
    func count(_ table: TableInfo, _ owner: Int64, _ p: Int, visibleOnly: Bool = false) throws -> Int64 {
        try connection.fetchInt("SELECT COUNT(\(visibleOnly ? "value" : "*")) FROM \(table.collectionTable(p)) WHERE owner = ?", [.integer(owner)]) ?? 0
    }

    /// The stored position of the `offset`-th list slot that holds a value.
    func position(_ table: TableInfo, _ owner: Int64, _ p: Int, ofVisible offset: Int) throws -> Int64? {
        try connection.fetchInt("SELECT pos FROM \(table.collectionTable(p)) WHERE owner = ? AND value IS NOT NULL ORDER BY pos LIMIT 1 OFFSET ?",
                                [.integer(owner), .integer(Int64(offset))])
    }

    /// The value of the list slot at stored position `position`; `nil` when there is none.
    func listValue(_ table: TableInfo, _ owner: Int64, _ p: Int, at position: Int64) throws -> SQLValue? {
        try connection.fetchOne("SELECT value FROM \(table.collectionTable(p)) WHERE owner = ? AND pos = ?", [.integer(owner), .integer(position)])?[0]
    }

    /// Every slot's value (with its key in a map): lists in position order, sets in insertion
    /// order, maps by key. With `visibleOnly`, slots holding no value are left out.
    func elements(_ table: TableInfo, _ owner: Int64, _ p: Int, visibleOnly: Bool = false) throws -> [(key: String?, value: SQLValue)] {
        let name = table.collectionTable(p)
        let visible = visibleOnly ? " AND value IS NOT NULL" : ""
        let sql: String = switch table.property(p).collection {
        case .list: "SELECT NULL, value FROM \(name) WHERE owner = ?\(visible) ORDER BY pos"
        case .set: "SELECT NULL, value FROM \(name) WHERE owner = ?\(visible) ORDER BY rowid"
        default: "SELECT key, value FROM \(name) WHERE owner = ? ORDER BY key"
        }
        return try connection.fetchAll(sql, [.integer(owner)]).map { row in
            var key: String?
            if case .text(let k) = row[0] { key = k }
            return (key, row[1])
        }
    }

    /// Every slot of a property, by owner: (value, link) for lists and sets, (value, link, key)
    /// for maps; lists in position order, sets in insertion order.
    func allElements(_ table: TableInfo, _ p: Int) throws -> [Int64: [[SQLValue]]] {
        let name = table.collectionTable(p)
        let link = table.property(p).type == .object ? "link" : "NULL"
        let sql = switch table.property(p).collection {
        case .list: "SELECT owner, value, \(link) FROM \(name) ORDER BY owner, pos"
        case .map: "SELECT owner, value, \(link), key FROM \(name) ORDER BY owner"
        default: "SELECT owner, value, \(link) FROM \(name) ORDER BY owner, rowid"
        }
        var byOwner: [Int64: [[SQLValue]]] = [:]
        for values in try connection.fetchAll(sql) {
            guard case .integer(let owner) = values[0] else { continue }
            byOwner[owner, default: []].append(Array(values.dropFirst()))
        }
        return byOwner
    }

    /// Where a list holds the embedded object `child`.
    func position(_ table: TableInfo, _ owner: Int64, _ p: Int, of child: Int64) throws -> Int64? {
        try connection.fetchInt("SELECT pos FROM \(table.collectionTable(p)) WHERE owner = ? AND value = ?", [.integer(owner), .integer(child)])
    }

    /// Under which key a map holds the embedded object `child`.
    func key(_ table: TableInfo, _ owner: Int64, _ p: Int, of child: Int64) throws -> String? {
        guard case .text(let key)? = try connection.fetchOne("SELECT key FROM \(table.collectionTable(p)) WHERE owner = ? AND value = ?",
                                                             [.integer(owner), .integer(child)])?.first else { return nil }
        return key
    }

    // MARK: Lists

    func insertListValue(_ table: TableInfo, _ owner: Int64, _ p: Int, at position: Int64, _ value: SQLValue, link: SQLValue = .null) throws {
        let name = table.collectionTable(p)
        if table.property(p).type == .object {
            try connection.execute("INSERT INTO \(name) (owner, pos, value, link) VALUES (?, ?, ?, ?)", [.integer(owner), .integer(position), value, link])
        } else {
            try connection.execute("INSERT INTO \(name) (owner, pos, value) VALUES (?, ?, ?)", [.integer(owner), .integer(position), value])
        }
    }

    func setListValue(_ table: TableInfo, _ owner: Int64, _ p: Int, at position: Int64, _ value: SQLValue, link: SQLValue = .null) throws {
        let name = table.collectionTable(p)
        if table.property(p).type == .object {
            try connection.execute("UPDATE \(name) SET value = ?, link = ? WHERE owner = ? AND pos = ?", [value, link, .integer(owner), .integer(position)])
        } else {
            try connection.execute("UPDATE \(name) SET value = ? WHERE owner = ? AND pos = ?", [value, .integer(owner), .integer(position)])
        }
    }

    /// Moves list positions `>= from` of one owner by `delta`, without tripping the (owner, pos) key.
    func shiftPositions(_ table: TableInfo, _ owner: Int64, _ p: Int, from: Int64, by delta: Int64) throws {
        let name = table.collectionTable(p)
        try connection.execute("UPDATE \(name) SET pos = -(pos + ?) - 1 WHERE owner = ? AND pos >= ?", [.integer(delta), .integer(owner), .integer(from)])
        try connection.execute("UPDATE \(name) SET pos = -pos - 1 WHERE owner = ? AND pos < 0", [.integer(owner)])
    }

    /// Deletes the slot at stored position `position` and closes the gap.
    func removeListValue(_ table: TableInfo, _ owner: Int64, _ p: Int, at position: Int64) throws {
        try connection.execute("DELETE FROM \(table.collectionTable(p)) WHERE owner = ? AND pos = ?", [.integer(owner), .integer(position)])
        try shiftPositions(table, owner, p, from: position + 1, by: -1)
    }

    /// Moves the slot at stored position `from` to `to`, as `Array.insert(remove(at: from), at: to)`.
    func moveListValue(_ table: TableInfo, _ owner: Int64, _ p: Int, from: Int64, to: Int64) throws {
        guard from != to else { return }
        let name = table.collectionTable(p)
        try connection.execute("UPDATE \(name) SET pos = -1 WHERE owner = ? AND pos = ?", [.integer(owner), .integer(from)])
        if from < to {
            try connection.execute("UPDATE \(name) SET pos = -(pos - 1) - 2 WHERE owner = ? AND pos > ? AND pos <= ?", [.integer(owner), .integer(from), .integer(to)])
        } else {
            try connection.execute("UPDATE \(name) SET pos = -(pos + 1) - 2 WHERE owner = ? AND pos >= ? AND pos < ?", [.integer(owner), .integer(to), .integer(from)])
        }
        try connection.execute("UPDATE \(name) SET pos = -pos - 2 WHERE owner = ? AND pos < -1", [.integer(owner)])
        try connection.execute("UPDATE \(name) SET pos = ? WHERE owner = ? AND pos = -1", [.integer(to), .integer(owner)])
    }

    /// Deletes every slot of the owner's collection.
    func clear(_ table: TableInfo, _ owner: Int64, _ p: Int) throws {
        try connection.execute("DELETE FROM \(table.collectionTable(p)) WHERE owner = ?", [.integer(owner)])
    }

    // MARK: Sets

    /// The rowid of the set element holding `value`.
    func setElement(_ table: TableInfo, _ owner: Int64, _ p: Int, holding value: SQLValue) throws -> Int64? {
        try connection.fetchInt("SELECT rowid FROM \(table.collectionTable(p)) WHERE owner = ? AND value IS ?", [.integer(owner), value])
    }

    /// The rowid of the set element holding an unresolved link to `target`.
    func setElement(_ table: TableInfo, _ owner: Int64, _ p: Int, linkingTo target: SQLValue) throws -> Int64? {
        try connection.fetchInt("SELECT rowid FROM \(table.collectionTable(p)) WHERE owner = ? AND link = ?", [.integer(owner), target])
    }

    func insertSetValue(_ table: TableInfo, _ owner: Int64, _ p: Int, _ value: SQLValue, link: SQLValue = .null) throws {
        let name = table.collectionTable(p)
        if table.property(p).type == .object {
            try connection.execute("INSERT INTO \(name) (owner, value, link) VALUES (?, ?, ?)", [.integer(owner), value, link])
        } else {
            try connection.execute("INSERT INTO \(name) (owner, value) VALUES (?, ?)", [.integer(owner), value])
        }
    }

    func removeSetElement(_ table: TableInfo, _ p: Int, _ rowid: Int64) throws {
        try connection.execute("DELETE FROM \(table.collectionTable(p)) WHERE rowid = ?", [.integer(rowid)])
    }

    // MARK: Maps

    /// The value at `key`; `nil` when the map has no such key.
    func mapValue(_ table: TableInfo, _ owner: Int64, _ p: Int, key: String) throws -> SQLValue? {
        try connection.fetchOne("SELECT value FROM \(table.collectionTable(p)) WHERE owner = ? AND key = ?", [.integer(owner), .text(key)])?[0]
    }

    func setMapValue(_ table: TableInfo, _ owner: Int64, _ p: Int, key: String, _ value: SQLValue, link: SQLValue = .null) throws {
        let name = table.collectionTable(p)
        if table.property(p).type == .object {
            try connection.execute("INSERT OR REPLACE INTO \(name) (owner, key, value, link) VALUES (?, ?, ?, ?)", [.integer(owner), .text(key), value, link])
        } else {
            try connection.execute("INSERT OR REPLACE INTO \(name) (owner, key, value) VALUES (?, ?, ?)", [.integer(owner), .text(key), value])
        }
    }

    func removeMapValue(_ table: TableInfo, _ owner: Int64, _ p: Int, key: String) throws {
        try connection.execute("DELETE FROM \(table.collectionTable(p)) WHERE owner = ? AND key = ?", [.integer(owner), .text(key)])
    }
}
