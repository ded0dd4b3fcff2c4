import AtollCore
import Foundation

/// The realm's data as the merge model sees it, to compare replicas and to compute a client
/// reset's difference.
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
    ///
    /// Each table, collection table and the unresolved-link table is read in one scan (a client
    /// reset reads every object of the file: one query per object made that the largest cost).
    package func replicaState() throws -> ReplicaState {
        verifyThread()
        var state = ReplicaState()
        let tables = coordinator.allTables
        for table in tables { state.apply(.addTable(table.schema)) }
        var reader = DumpReader(realm: self)
        // Applied as changesets of a few thousand instructions: each object's sets then form one
        // run, applied to its fields taken out once (`ReplicaState.apply(_: Changeset)`), where
        // one instruction at a time looked the object up again for every field.
        var batch: [Instruction] = []
        func flush() {
            guard !batch.isEmpty else { return }
            state.apply(Changeset(version: 0, timestamp: 0, instructions: batch))
            batch.removeAll(keepingCapacity: true)
        }
        for table in tables where !table.schema.isEmbedded {
            for (row, values) in try reader.rows(of: table) {
                let id = ObjectID(type: table.name, primaryKey: reader.primaryKey(table, row: row, values: values))
                batch.append(.createObject(id))
                for (name, value) in try reader.fields(table, row: row, values: values) where name != table.schema.primaryKey {
                    batch.append(.set(id, path: [.property(name)], value: value))
                }
                if batch.count >= 4096 { flush() }
            }
        }
        flush()
        return state
    }
}

/// Reads whole tables once and answers per-row questions from what it read.
private struct DumpReader {
    let realm: Realm
    /// Rows of each table read so far, by row id, with the single-valued columns in `columns` order.
    private var tableRows: [String: [Int64: [SQLValue]]] = [:]
    /// Collection elements by collection table, then owner row, in order.
    private var elements: [String: [Int64: [[SQLValue]]]] = [:]
    /// Unresolved links by owner type, row and property.
    private var unresolved: [String: ObjectLink]?

    init(realm: Realm) { self.realm = realm }

    /// Every row of `table` in row order.
    mutating func rows(of table: TableInfo) throws -> [(Int64, [SQLValue])] {
        try load(table)
        return tableRows[table.name]!.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    private mutating func load(_ table: TableInfo) throws {
        guard tableRows[table.name] == nil else { return }
        var rows: [Int64: [SQLValue]] = [:]
        for (row, values) in try realm.store.allRows(table) { rows[row] = values }
        tableRows[table.name] = rows
    }

    func primaryKey(_ table: TableInfo, row: Int64, values: [SQLValue]) -> Value {
        guard let pk = table.primaryKeyIndex, let position = table.columnPosition[pk] else { return .int(row) }
        return Value(sql: values[position], type: table.property(pk).type) ?? .null
    }

    /// Every property of a row, links by primary key (unresolved ones too), embedded objects inline.
    mutating func fields(_ table: TableInfo, row: Int64, values: [SQLValue]) throws -> [String: Value] {
        var fields: [String: Value] = [:]
        for (position, index) in table.columns.enumerated() {
            let property = table.property(index)
            var value = try element(property, values[position], .null)
            if property.type == .object, case .null = value, let link = try unresolvedLink(table.name, row, property.name) {
                value = .link(link)
            }
            fields[property.name] = value
        }
        for index in table.schema.properties.indices where !table.property(index).isSingle {
            let property = table.property(index)
            let items = try collection(table, index)[row] ?? []
            switch property.collection {
            case .list:
                fields[property.name] = .list(try items.map { try element(property, $0[0], $0[1]) })
            case .set:
                fields[property.name] = .set(try items.map { try element(property, $0[0], $0[1]) })
            case .map:
                var entries: [String: Value] = [:]
                for item in items {
                    if case .text(let key) = item[2] { entries[key] = try element(property, item[0], item[1]) }
                }
                fields[property.name] = .map(entries)
            case .single:
                break
            }
        }
        return fields
    }

    /// A collection table's elements by owner: (value, link) for lists and sets, (value, link,
    /// key) for maps; lists in position order, sets in insertion order.
    private mutating func collection(_ table: TableInfo, _ index: Int) throws -> [Int64: [[SQLValue]]] {
        let name = table.collectionTable(index)
        if let known = elements[name] { return known }
        let byOwner = try realm.store.allElements(table, index)
        elements[name] = byOwner
        return byOwner
    }

    private mutating func element(_ property: Property, _ raw: SQLValue, _ link: SQLValue) throws -> Value {
        guard property.type == .object else { return Value(sql: raw, type: property.type) ?? .null }
        guard case .integer(let row) = raw, let target = realm.coordinator.table(named: property.objectType ?? "") else {
            return ObjectStore.decodeLinkTarget(link).map(Value.link) ?? .null
        }
        try load(target)
        guard let values = tableRows[target.name]?[row] else {
            // A row id that leads nowhere reads as an empty embedded object or a link to no key.
            return target.schema.isEmbedded ? .object([:]) : .link(ObjectLink(objectType: target.name, primaryKey: .null))
        }
        if target.schema.isEmbedded { return .object(try fields(target, row: row, values: values)) }
        return .link(ObjectLink(objectType: target.name, primaryKey: primaryKey(target, row: row, values: values)))
    }

    private mutating func unresolvedLink(_ type: String, _ row: Int64, _ property: String) throws -> ObjectLink? {
        if unresolved == nil {
            var links: [String: ObjectLink] = [:]
            for (owner, ownerRow, prop, target) in (try? realm.store.allUnresolvedLinks()) ?? [] {
                guard let link = ObjectStore.decodeLinkTarget(target) else { continue }
                links["\(owner)\u{0}\(ownerRow)\u{0}\(prop)"] = link
            }
            unresolved = links
        }
        return unresolved?["\(type)\u{0}\(row)\u{0}\(property)"]
    }
}
