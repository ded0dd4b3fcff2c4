/// What every table of a file shares: the node reader and the table directory used to name link targets.
final class FileContext: Sendable {
    let reader: NodeReader
    let formatVersion: Int
    /// Table names by position in the group; nil for removed tables.
    let tableNames: [String?]
    /// Table keys by position in the group; nil for removed tables.
    let tableKeys: [Int64?]

    init(reader: NodeReader, formatVersion: Int, tableNames: [String?], tableKeys: [Int64?]) {
        self.reader = reader
        self.formatVersion = formatVersion
        self.tableNames = tableNames
        self.tableKeys = tableKeys
    }

    /// The name of the table with key `key` (the low 16 bits of a table key are its position in the group).
    func tableName(forKey key: Int64) throws(RealmFileError) -> String {
        let index = Int(key & 0xFFFF)
        guard index < tableNames.count, let name = tableNames[index], tableKeys[index] == key else {
            throw .invalidDatabase(reason: "link to unknown table key \(key)")
        }
        return name
    }
}

/// Reads the group (top array): table names, table refs, and each table's spec.
struct GroupReader {
    let reader: NodeReader
    let topRef: UInt64
    let formatVersion: Int

    // Slots of the group's top array.
    static let tableNamesSlot = 0
    static let tablesSlot = 1
    static let logicalFileSizeSlot = 2

    // Slots of a table's top array.
    static let specSlot = 0
    static let clusterTreeSlot = 2
    static let tableKeySlot = 3
    static let oppositeTableSlot = 7
    static let primaryKeySlot = 11
    static let flagsSlot = 12

    // Slots of a spec.
    static let typesSlot = 0
    static let namesSlot = 1
    static let attributesSlot = 2
    static let enumKeysSlot = 4
    static let columnKeysSlot = 5

    func tables() throws(RealmFileError) -> [RealmTable] {
        guard topRef != 0 else { return [] }
        let top = try reader.node(at: topRef)
        guard top.hasRefs, top.count >= 3 else { throw .invalidDatabase(reason: "group top array is malformed") }
        if case let .tagged(logicalSize) = try reader.slot(top, Self.logicalFileSizeSlot), logicalSize > Int64(reader.fileSize) {
            throw .invalidDatabase(reason: "file is \(reader.fileSize) bytes but its group says \(logicalSize): truncated")
        }
        let namesNode = try reader.requiredChild(top, Self.tableNamesSlot, "table names")
        let tablesNode = try reader.requiredChild(top, Self.tablesSlot, "table refs")
        guard tablesNode.hasRefs else { throw .invalidDatabase(reason: "table ref array has no refs flag") }
        guard try StringLeaf.count(reader, namesNode) == tablesNode.count else {
            throw .invalidDatabase(reason: "table name and table ref counts differ")
        }
        var names: [String?] = []
        var keys: [Int64?] = []
        var tops: [Node?] = []
        for index in 0..<tablesNode.count {
            switch try reader.slot(tablesNode, index) {
            case let .ref(ref):
                let tableTop = try reader.node(at: ref)
                guard tableTop.hasRefs, tableTop.count > Self.tableKeySlot else {
                    throw .invalidDatabase(reason: "table \(index) top array is malformed")
                }
                guard case let .tagged(key) = try reader.slot(tableTop, Self.tableKeySlot) else {
                    throw .invalidDatabase(reason: "table \(index) has no table key")
                }
                let name = try StringLeaf.string(reader, namesNode, index)
                names.append(name)
                keys.append(key)
                tops.append(tableTop)
            default:
                names.append(nil)
                keys.append(nil)
                tops.append(nil)
            }
        }
        let context = FileContext(reader: reader, formatVersion: formatVersion, tableNames: names, tableKeys: keys)
        var tables: [RealmTable] = []
        for (index, top) in tops.enumerated() {
            guard let top, let name = names[index], let key = keys[index] else { continue }
            tables.append(try table(top: top, name: name, key: key, context: context))
        }
        return tables
    }

    private func table(top: Node, name: String, key: Int64, context: FileContext) throws(RealmFileError) -> RealmTable {
        let spec = try reader.requiredChild(top, Self.specSlot, "spec of table \(name)")
        guard spec.hasRefs, spec.count > Self.columnKeysSlot else { throw .invalidDatabase(reason: "spec of table \(name) is malformed") }
        let types = try reader.requiredChild(spec, Self.typesSlot, "column types")
        let names = try reader.requiredChild(spec, Self.namesSlot, "column names")
        let attributes = try reader.requiredChild(spec, Self.attributesSlot, "column attributes")
        let enumKeys = try reader.child(spec, Self.enumKeysSlot)
        let columnKeys = try reader.requiredChild(spec, Self.columnKeysSlot, "column keys")
        let opposite = top.count > Self.oppositeTableSlot ? try reader.child(top, Self.oppositeTableSlot) : nil
        guard attributes.count >= types.count, columnKeys.count >= types.count, names.count <= types.count else {
            throw .invalidDatabase(reason: "spec arrays of table \(name) have inconsistent sizes")
        }

        var columns: [RealmColumn] = []
        var backlinkSlots: [Int] = []
        var enumKeyRefs: [Int: Node] = [:]
        for index in 0..<types.count {
            let rawType = try reader.int(types, index)
            let columnKey = try reader.int(columnKeys, index)
            if rawType & 0xFFFF == 14 {
                backlinkSlots.append(Int(columnKey & 0xFFFF) + 1)
                continue
            }
            guard index < names.count else { throw .invalidDatabase(reason: "column \(index) of \(name) has no name") }
            let columnName = try StringLeaf.string(reader, names, index)
            guard let type = RealmColumnType(storedType: rawType & 0xFFFF) else {
                throw .unsupported("column \(name).\(columnName) has legacy or unknown type \(rawType & 0xFFFF)")
            }
            let attribute = try reader.int(attributes, index)
            let collection: RealmCollectionKind
            if attribute & ColumnAttribute.list != 0 || rawType & 0xFFFF == 13 { collection = .list }
            else if attribute & ColumnAttribute.set != 0 { collection = .set }
            else if attribute & ColumnAttribute.dictionary != 0 {
                collection = .dictionary(keyType: RealmColumnType(storedType: rawType >> 16) ?? .string)
            } else { collection = .single }
            var target: String?
            if type == .link, let opposite {
                guard index < opposite.count else { throw .invalidDatabase(reason: "link column \(name).\(columnName) has no target") }
                target = try context.tableName(forKey: reader.int(opposite, index))
            }
            if type == .string, let enumKeys, index < enumKeys.count, let keysNode = try reader.child(enumKeys, index) {
                enumKeyRefs[index] = keysNode
            }
            columns.append(RealmColumn(name: columnName, type: type,
                                       isNullable: attribute & ColumnAttribute.nullable != 0 || (type == .link && collection == .single),
                                       collection: collection, isIndexed: attribute & ColumnAttribute.indexed != 0,
                                       targetTable: target, key: columnKey, specIndex: index))
        }

        var primaryKey: String?
        if top.count > Self.primaryKeySlot, case let .tagged(pkKey) = try reader.slot(top, Self.primaryKeySlot) {
            primaryKey = columns.first(where: { $0.key == pkKey })?.name
        }
        var kind = RealmTableKind.topLevel
        if top.count > Self.flagsSlot, case let .tagged(flags) = try reader.slot(top, Self.flagsSlot) {
            switch flags & 3 {
            case 1: kind = .embedded
            case 2: kind = .asymmetric
            default: kind = .topLevel
            }
        }
        let clusterRoot: UInt64
        switch try reader.slot(top, Self.clusterTreeSlot) {
        case let .ref(ref): clusterRoot = ref
        default: throw .invalidDatabase(reason: "table \(name) has no cluster tree")
        }
        return RealmTable(name: name, key: key, kind: kind, columns: columns, primaryKey: primaryKey,
                          clusterRoot: clusterRoot, backlinkSlots: backlinkSlots, enumKeys: enumKeyRefs, context: context)
    }
}
