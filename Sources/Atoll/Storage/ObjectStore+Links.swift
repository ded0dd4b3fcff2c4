import AtollCore
import Foundation

/// The SQL of unresolved links (Realm+UnresolvedLinks.swift says what they are): `_atoll_links`
/// keeps the target of a to-one link whose column holds NULL, the `link` column of an object
/// collection keeps the target of a slot whose `value` is NULL, and `_atoll_unresolved` lists the
/// targets that may have such links. A target is stored as the encoded `Value.link`.
extension ObjectStore {
    /// The stored form of a link target.
    static func linkTarget(_ link: ObjectLink) -> SQLValue {
        var w = BinaryWriter()
        Value.link(link).encode(into: &w)
        return .blob(Data(w.bytes))
    }

    /// The link a stored target names, or `nil` for anything else.
    static func decodeLinkTarget(_ raw: SQLValue) -> ObjectLink? {
        guard case .blob(let data) = raw else { return nil }
        var r = BinaryReader(data)
        guard case .link(let link)? = try? Value.decode(from: &r) else { return nil }
        return link
    }

    // MARK: Targets

    /// Whether unresolved links may name `target`.
    /// Whether any unresolved link target is noted.
    func hasUnresolvedLinks() throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM _atoll_unresolved LIMIT 1") != nil
    }

    func mayBeLinked(_ target: SQLValue) throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM _atoll_unresolved WHERE target = ?", [target]) != nil
    }

    /// Records that `target` may now have unresolved links.
    func noteUnresolved(_ target: SQLValue) throws {
        try connection.execute("INSERT OR IGNORE INTO _atoll_unresolved (target) VALUES (?)", [target])
    }

    func forgetUnresolved(_ target: SQLValue) throws {
        try connection.execute("DELETE FROM _atoll_unresolved WHERE target = ?", [target])
    }

    // MARK: To-one links

    /// Keeps `target` as the unresolved to-one link `property` of `row`.
    func setUnresolvedLink(_ table: TableInfo, _ row: Int64, _ property: String, _ target: SQLValue) throws {
        try connection.execute("INSERT OR REPLACE INTO _atoll_links (owner_type, owner_row, prop, target) VALUES (?, ?, ?, ?)",
                               [.text(table.name), .integer(row), .text(property), target])
    }

    /// The stored target of the unresolved to-one link `property` of `row`.
    func unresolvedLink(_ table: TableInfo, _ row: Int64, _ property: String) throws -> SQLValue? {
        try connection.fetchOne("SELECT target FROM _atoll_links WHERE owner_type = ? AND owner_row = ? AND prop = ?",
                                [.text(table.name), .integer(row), .text(property)])?[0]
    }

    func forgetUnresolvedLink(_ table: TableInfo, _ row: Int64, _ property: String) throws {
        try connection.execute("DELETE FROM _atoll_links WHERE owner_type = ? AND owner_row = ? AND prop = ?",
                               [.text(table.name), .integer(row), .text(property)])
    }

    /// Forgets every unresolved to-one link of a row.
    func forgetUnresolvedLinks(of table: TableInfo, _ row: Int64) throws {
        try connection.execute("DELETE FROM _atoll_links WHERE owner_type = ? AND owner_row = ?", [.text(table.name), .integer(row)])
    }

    /// The rows of `table` whose to-one link `property` is unresolved to `target`.
    func rows(_ table: TableInfo, unresolvedLink property: String, to target: SQLValue) throws -> [Int64] {
        try connection.fetchAll("SELECT owner_row FROM _atoll_links WHERE owner_type = ? AND prop = ? AND target = ?",
                                [.text(table.name), .text(property), target]).compactMap(\.first?.rowNumber)
    }

    /// Forgets the unresolved to-one links `property` of `table` to `target` (they resolved).
    func forgetUnresolvedLinks(_ table: TableInfo, _ property: String, to target: SQLValue) throws {
        try connection.execute("DELETE FROM _atoll_links WHERE owner_type = ? AND prop = ? AND target = ?",
                               [.text(table.name), .text(property), target])
    }

    /// Every unresolved to-one link: owner type, row, property and stored target.
    func allUnresolvedLinks() throws -> [(type: String, row: Int64, property: String, target: SQLValue)] {
        try connection.fetchAll("SELECT owner_type, owner_row, prop, target FROM _atoll_links").compactMap { values in
            guard case .text(let type) = values[0], case .integer(let row) = values[1], case .text(let property) = values[2] else { return nil }
            return (type, row, property, values[3])
        }
    }

    // MARK: Collection slots

    /// The owners whose collection `p` holds `row`.
    func owners(_ table: TableInfo, _ p: Int, holding row: Int64) throws -> [Int64] {
        try connection.fetchAll("SELECT DISTINCT owner FROM \(table.collectionTable(p)) WHERE value = ?", [.integer(row)]).compactMap(\.first?.rowNumber)
    }

    /// The owners whose collection `p` holds an unresolved link to `target`.
    func owners(_ table: TableInfo, _ p: Int, linkingTo target: SQLValue) throws -> [Int64] {
        try connection.fetchAll("SELECT DISTINCT owner FROM \(table.collectionTable(p)) WHERE link = ?", [target]).compactMap(\.first?.rowNumber)
    }

    /// Turns every slot of collection `p` holding `row` into an unresolved link to `target`.
    func unresolveSlots(_ table: TableInfo, _ p: Int, holding row: Int64, to target: SQLValue) throws {
        try connection.execute("UPDATE \(table.collectionTable(p)) SET value = NULL, link = ? WHERE value = ?", [target, .integer(row)])
    }

    /// Points every slot of collection `p` unresolved to `target` at `row`.
    func resolveSlots(_ table: TableInfo, _ p: Int, linkingTo target: SQLValue, at row: Int64) throws {
        try connection.execute("UPDATE \(table.collectionTable(p)) SET value = ?, link = NULL WHERE link = ?", [.integer(row), target])
    }
}
