import AtollCore
import Foundation

/// The realm's data as the merge model sees it, to compare replicas.
extension Realm {
    /// The realm's data in `ReplicaState`'s canonical byte form: a realm and a `ReplicaState`
    /// holding the same data give equal bytes. Unresolved links are part of the data.
    ///
    /// ```swift
    /// #expect(try realm.canonicalDump() == state.canonicalDump())
    /// ```
    @_spi(Testing)
    public func canonicalDump() throws -> [UInt8] {
        try replicaState().canonicalDump()
    }

    /// The realm's schema and objects as a ``ReplicaState`` (built by applying `addTable`,
    /// `createObject` and whole-field `set` instructions, so it encodes exactly as the model does).
    @_spi(Testing)
    public func replicaState() throws -> ReplicaState {
        verifyThread()
        var state = ReplicaState()
        let tables = coordinator.allTables
        for table in tables { state.apply(.addTable(table.schema)) }
        for table in tables where !table.schema.isEmbedded {
            for case .integer(let row) in try connection.fetchAll("SELECT _row FROM \(table.table)").map({ $0[0] }) {
                let (id, _) = try address(table, row)
                state.apply(.createObject(id))
                for (name, value) in try dumpFields(table, row) where name != table.schema.primaryKey {
                    state.apply(.set(id, path: [.property(name)], value: value))
                }
            }
        }
        return state
    }

    /// Every property of a row, links by primary key (unresolved ones too), embedded objects inline.
    private func dumpFields(_ table: TableInfo, _ row: Int64) throws -> [String: Value] {
        guard let values = try connection.fetchOne(table.selectRow, [.integer(row)]) else { return [:] }
        var fields: [String: Value] = [:]
        for (position, index) in table.columns.enumerated() {
            let property = table.property(index)
            var value = try dumpElement(property, values[position], .null)
            if property.type == .object, case .null = value, let link = unresolvedLink(table, row, property.name) {
                value = .link(link)
            }
            fields[property.name] = value
        }
        for index in table.schema.properties.indices where !table.property(index).isSingle {
            let property = table.property(index)
            let name = table.collectionTable(index)
            let link = property.type == .object ? "link" : "NULL"
            switch property.collection {
            case .list:
                fields[property.name] = .list(try connection.fetchAll("SELECT value, \(link) FROM \(name) WHERE owner = ? ORDER BY pos", [.integer(row)])
                    .map { try dumpElement(property, $0[0], $0[1]) })
            case .set:
                fields[property.name] = .set(try connection.fetchAll("SELECT value, \(link) FROM \(name) WHERE owner = ? ORDER BY rowid", [.integer(row)])
                    .map { try dumpElement(property, $0[0], $0[1]) })
            case .map:
                var entries: [String: Value] = [:]
                for entry in try connection.fetchAll("SELECT key, value, \(link) FROM \(name) WHERE owner = ?", [.integer(row)]) {
                    if case .text(let key) = entry[0] { entries[key] = try dumpElement(property, entry[1], entry[2]) }
                }
                fields[property.name] = .map(entries)
            case .single:
                break
            }
        }
        return fields
    }

    private func dumpElement(_ property: Property, _ raw: SQLValue, _ link: SQLValue) throws -> Value {
        guard property.type == .object else { return Value(sql: raw, type: property.type) ?? .null }
        guard case .integer(let row) = raw, let target = coordinator.table(named: property.objectType ?? "") else {
            return Self.decodeLinkTarget(link).map(Value.link) ?? .null
        }
        if target.schema.isEmbedded { return .object(try dumpFields(target, row)) }
        let (id, _) = try address(target, row)
        return .link(ObjectLink(objectType: id.type, primaryKey: id.primaryKey))
    }
}
