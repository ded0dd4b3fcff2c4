import AtollCore
import Foundation

/// Unresolved links: links to an object that does not exist (it was erased, or a changeset from
/// the server links to a key this file has not seen created).
///
/// The merge model (docs/merge.md) keeps such a link where it is — a to-one link, a list slot, a
/// set element, a map value — so list positions in instructions agree on every replica, and an
/// object created again with that primary key resolves it. The store keeps them too, hidden from
/// the public API:
/// - a to-one link column holds NULL (reads `nil`, queries see `nil`) and `_atoll_links` keeps the
///   target for the owner's row and property;
/// - a list, set or map of objects keeps the slot with `value` NULL and the target in its `link`
///   column. Lists and sets skip such slots for users (`List` indices, counts, queries; a list
///   or set of objects never holds a real NULL); a map shows the value as `nil`, as Realm does;
/// - `_atoll_unresolved` lists the targets that may have unresolved links, so creating an object
///   costs one indexed lookup when nothing names it.
///
/// Targets are stored as the encoded `Value.link(ObjectLink(type, primary key))`.
extension Realm {
    /// The stored form of a link target.
    static func linkTarget(_ link: ObjectLink) -> SQLValue {
        var w = BinaryWriter()
        Value.link(link).encode(into: &w)
        return .blob(Data(w.bytes))
    }

    static func linkTarget(_ id: ObjectID) -> SQLValue {
        linkTarget(ObjectLink(objectType: id.type, primaryKey: id.primaryKey))
    }

    /// The link a stored target names, or `nil` for anything else.
    static func decodeLinkTarget(_ raw: SQLValue) -> ObjectLink? {
        guard case .blob(let data) = raw else { return nil }
        var r = BinaryReader(data)
        guard case .link(let link)? = try? Value.decode(from: &r) else { return nil }
        return link
    }

    /// Turns every link to `row` (being erased) into an unresolved link naming `id`. The erase
    /// instruction implies this on every replica, so nothing is recorded; owners are reported to
    /// notifications as changed.
    func unresolveLinks(to table: TableInfo, _ row: Int64, id: ObjectID, _ transaction: WriteTransaction) throws {
        let target = Self.linkTarget(id)
        var unresolved = false
        for (owner, index) in coordinator.incomingLinks(to: table.name) {
            let property = owner.property(index)
            if property.isSingle {
                let owners = try connection.fetchAll("SELECT _row FROM \(owner.table) WHERE \(owner.column(index)) = ?", [.integer(row)])
                for case .integer(let ownerRow) in owners.map({ $0[0] }) {
                    try connection.execute("INSERT OR REPLACE INTO _atoll_links (owner_type, owner_row, prop, target) VALUES (?, ?, ?, ?)",
                                           [.text(owner.name), .integer(ownerRow), .text(property.name), target])
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                guard !owners.isEmpty else { continue }
                try connection.execute("UPDATE \(owner.table) SET \(owner.column(index)) = NULL WHERE \(owner.column(index)) = ?", [.integer(row)])
            } else {
                let name = owner.collectionTable(index)
                let owners = try connection.fetchAll("SELECT DISTINCT owner FROM \(name) WHERE value = ?", [.integer(row)])
                for case .integer(let ownerRow) in owners.map({ $0[0] }) {
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                guard !owners.isEmpty else { continue }
                try connection.execute("UPDATE \(name) SET value = NULL, link = ? WHERE value = ?", [target, .integer(row)])
            }
            unresolved = true
        }
        if unresolved {
            try connection.execute("INSERT OR IGNORE INTO _atoll_unresolved (target) VALUES (?)", [target])
        }
    }

    /// Points every unresolved link naming `id` at `row`, just created.
    func resolveLinks(to table: TableInfo, _ row: Int64, id: ObjectID, _ transaction: WriteTransaction) throws {
        let target = Self.linkTarget(id)
        guard (try? connection.fetchOne("SELECT 1 FROM _atoll_unresolved WHERE target = ?", [target])) ?? nil != nil else { return }
        for (owner, index) in coordinator.incomingLinks(to: table.name) {
            let property = owner.property(index)
            if property.isSingle {
                let owners = try connection.fetchAll("SELECT owner_row FROM _atoll_links WHERE owner_type = ? AND prop = ? AND target = ?",
                                                     [.text(owner.name), .text(property.name), target])
                for case .integer(let ownerRow) in owners.map({ $0[0] }) {
                    try connection.execute("UPDATE \(owner.table) SET \(owner.column(index)) = ? WHERE _row = ?", [.integer(row), .integer(ownerRow)])
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                try connection.execute("DELETE FROM _atoll_links WHERE owner_type = ? AND prop = ? AND target = ?",
                                       [.text(owner.name), .text(property.name), target])
            } else {
                let name = owner.collectionTable(index)
                let owners = try connection.fetchAll("SELECT DISTINCT owner FROM \(name) WHERE link = ?", [target])
                for case .integer(let ownerRow) in owners.map({ $0[0] }) {
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                guard !owners.isEmpty else { continue }
                try connection.execute("UPDATE \(name) SET value = ?, link = NULL WHERE link = ?", [.integer(row), target])
            }
        }
        try connection.execute("DELETE FROM _atoll_unresolved WHERE target = ?", [target])
        bumpStamp()
    }

    /// Records that `target` may now have unresolved links.
    func noteUnresolved(_ target: SQLValue) throws {
        try connection.execute("INSERT OR IGNORE INTO _atoll_unresolved (target) VALUES (?)", [target])
    }

    /// Makes the to-one link `property` of `row` an unresolved link to `link`.
    func setUnresolvedLink(_ table: TableInfo, _ row: Int64, _ property: String, _ link: ObjectLink) throws {
        let target = Self.linkTarget(link)
        try connection.execute("INSERT OR REPLACE INTO _atoll_links (owner_type, owner_row, prop, target) VALUES (?, ?, ?, ?)",
                               [.text(table.name), .integer(row), .text(property), target])
        try noteUnresolved(target)
    }

    /// Forgets the unresolved to-one link `property` of `row`, if any (the link is being written).
    func forgetUnresolvedLink(_ table: TableInfo, _ row: Int64, _ property: String) throws {
        try connection.execute("DELETE FROM _atoll_links WHERE owner_type = ? AND owner_row = ? AND prop = ?",
                               [.text(table.name), .integer(row), .text(property)])
    }

    /// Forgets the unresolved to-one links of a row being deleted.
    func forgetUnresolvedLinks(of table: TableInfo, _ row: Int64) throws {
        guard table.schema.properties.contains(where: { $0.isLink }) else { return }
        try connection.execute("DELETE FROM _atoll_links WHERE owner_type = ? AND owner_row = ?", [.text(table.name), .integer(row)])
    }

    /// The unresolved to-one link `property` of `row`, if it has one.
    func unresolvedLink(_ table: TableInfo, _ row: Int64, _ property: String) -> ObjectLink? {
        guard let raw = try? connection.fetchOne("SELECT target FROM _atoll_links WHERE owner_type = ? AND owner_row = ? AND prop = ?",
                                                 [.text(table.name), .integer(row), .text(property)]) else { return nil }
        return Self.decodeLinkTarget(raw[0])
    }
}
