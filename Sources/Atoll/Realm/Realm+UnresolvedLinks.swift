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
    static func linkTarget(_ id: ObjectID) -> SQLValue {
        ObjectStore.linkTarget(ObjectLink(objectType: id.type, primaryKey: id.primaryKey))
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
                let owners = try store.rows(owner, where: index, in: [.integer(row)])
                for ownerRow in owners {
                    try store.setUnresolvedLink(owner, ownerRow, property.name, target)
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                guard !owners.isEmpty else { continue }
                try store.clearField(owner, index, where: .integer(row))
            } else {
                let owners = try store.owners(owner, index, holding: row)
                for ownerRow in owners {
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                guard !owners.isEmpty else { continue }
                try store.unresolveSlots(owner, index, holding: row, to: target)
            }
            unresolved = true
        }
        if unresolved {
            transaction.unresolvedMayExist = true
            try store.noteUnresolved(target)
        }
    }

    /// Points every unresolved link naming `id` at `row`, just created.
    func resolveLinks(to table: TableInfo, _ row: Int64, id: ObjectID, _ transaction: WriteTransaction) throws {
        if transaction.unresolvedMayExist == nil { transaction.unresolvedMayExist = (try? store.hasUnresolvedLinks()) ?? true }
        guard transaction.unresolvedMayExist == true else { return }
        let target = Self.linkTarget(id)
        guard (try? store.mayBeLinked(target)) == true else { return }
        for (owner, index) in coordinator.incomingLinks(to: table.name) {
            let property = owner.property(index)
            if property.isSingle {
                for ownerRow in try store.rows(owner, unresolvedLink: property.name, to: target) {
                    try store.setField(owner, ownerRow, index, .integer(row))
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                try store.forgetUnresolvedLinks(owner, property.name, to: target)
            } else {
                let owners = try store.owners(owner, index, linkingTo: target)
                for ownerRow in owners {
                    transaction.summary.modify(owner.name, ownerRow, property.name)
                }
                guard !owners.isEmpty else { continue }
                try store.resolveSlots(owner, index, linkingTo: target, at: row)
            }
        }
        try store.forgetUnresolved(target)
        bumpStamp()
    }

    /// Makes the to-one link `property` of `row` an unresolved link to `link`.
    func setUnresolvedLink(_ table: TableInfo, _ row: Int64, _ property: String, _ link: ObjectLink) throws {
        let target = ObjectStore.linkTarget(link)
        try store.setUnresolvedLink(table, row, property, target)
        transaction?.unresolvedMayExist = true
        try store.noteUnresolved(target)
    }

    /// Forgets the unresolved to-one links of a row being deleted.
    func forgetUnresolvedLinks(of table: TableInfo, _ row: Int64) throws {
        guard table.schema.properties.contains(where: { $0.isLink }) else { return }
        try store.forgetUnresolvedLinks(of: table, row)
    }

    /// The unresolved to-one link `property` of `row`, if it has one.
    func unresolvedLink(_ table: TableInfo, _ row: Int64, _ property: String) -> ObjectLink? {
        guard let raw = try? store.unresolvedLink(table, row, property) else { return nil }
        return ObjectStore.decodeLinkTarget(raw)
    }
}
