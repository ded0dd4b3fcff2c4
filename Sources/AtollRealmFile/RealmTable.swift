/// A table of a Realm file: its schema and access to its objects.
public struct RealmTable: Sendable {
    /// The table's name as stored (object-store classes carry a `class_` prefix).
    public let name: String
    /// The table key (its low 16 bits are the table's position in the file).
    public let key: Int64
    /// Top-level, embedded or asymmetric.
    public let kind: RealmTableKind
    /// Public columns in the file's order (backlink columns are not listed).
    public let columns: [RealmColumn]
    /// Name of the primary key column, if the table has one.
    public let primaryKey: String?

    let clusterRoot: UInt64
    let backlinkSlots: [Int]
    let enumKeys: [Int: Node]
    let context: FileContext

    static let classPrefix = "class_"

    /// Whether this table holds a Realm object class (its name starts with `class_`).
    public var isClassTable: Bool { name.hasPrefix(Self.classPrefix) }
    /// The object class name: the table name without its `class_` prefix.
    public var className: String { isClassTable ? String(name.dropFirst(Self.classPrefix.count)) : name }

    /// The column called `name`.
    public func column(named name: String) -> RealmColumn? { columns.first { $0.name == name } }

    /// Number of objects in the table.
    public func objectCount() throws(RealmFileError) -> Int {
        try ClusterLayout.size(context.reader, context.reader.node(at: clusterRoot))
    }

    /// A cursor over the table's objects in object-key order, decoding one object at a time.
    public func objects() -> RealmObjectCursor { RealmObjectCursor(table: self) }

    /// All objects of the table, in object-key order.
    public func allObjects() throws(RealmFileError) -> [RealmObject] {
        var cursor = objects()
        var result: [RealmObject] = []
        while let object = try cursor.next() { result.append(object) }
        return result
    }

    /// The object with object key `key`, or nil when there is none.
    public func object(key: Int64) throws(RealmFileError) -> RealmObject? {
        let reader = context.reader
        let budget = VisitBudget(fileSize: reader.fileSize)
        var node = try reader.node(at: clusterRoot)
        var remaining = key
        for _ in 0...NodeReader.maxTreeDepth {
            try budget.spend()
            if !node.isInnerBPlusTreeNode {
                let (count, keys) = try ClusterLayout.leafSize(reader, node)
                for index in 0..<count {
                    let stored = if let keys { try reader.unsigned(keys, index) } else { UInt64(index) }
                    if stored == UInt64(bitPattern: remaining) {
                        return try makeObject(leaf: node, index: index, key: key, budget: budget)
                    }
                }
                return nil
            }
            let inner = try InnerClusterNode(reader, node)
            guard let (index, offset) = try inner.child(containing: remaining) else { return nil }
            remaining &-= offset
            node = try reader.node(at: inner.childRef(index))
        }
        throw .invalidDatabase(reason: "cluster tree deeper than \(NodeReader.maxTreeDepth) levels")
    }

    /// The first object whose primary key equals `value`, found by a scan.
    public func object(primaryKey value: RealmValue) throws(RealmFileError) -> RealmObject? {
        guard let primaryKey else { throw .notFound("primary key of table \(name)") }
        var cursor = objects()
        while let object = try cursor.next() {
            if object[primaryKey] == value { return object }
        }
        return nil
    }

    /// Decodes the object at `index` of cluster leaf `leaf`.
    func makeObject(leaf: Node, index: Int, key: Int64, budget: VisitBudget) throws(RealmFileError) -> RealmObject {
        let reader = context.reader
        let decoder = LeafDecoder(context: context, budget: budget)
        let collections = CollectionDecoder(decoder: decoder)
        var values: [RealmValue] = []
        values.reserveCapacity(columns.count)
        for column in columns {
            guard column.clusterSlot < leaf.count else { throw .invalidDatabase(reason: "cluster leaf \(leaf.ref) lacks column \(column.name)") }
            let columnLeaf = try reader.requiredChild(leaf, column.clusterSlot, "leaf of column \(column.name)")
            switch column.collection {
            case .single:
                values.append(try decoder.value(leafKind(column, inCollection: false), columnLeaf, index))
            case .list, .set, .dictionary:
                let ref: UInt64?
                switch try reader.slot(columnLeaf, index) {
                case let .ref(r): ref = r
                case .none: ref = nil
                case .tagged: throw .invalidDatabase(reason: "collection slot of \(column.name) holds an integer")
                }
                values.append(try collectionValue(column, ref: ref, collections))
            }
        }
        var backlinks = 0
        for slot in backlinkSlots {
            guard slot < leaf.count else { throw .invalidDatabase(reason: "cluster leaf \(leaf.ref) lacks a backlink column") }
            let backlinkLeaf = try reader.requiredChild(leaf, slot, "backlink leaf")
            switch try reader.slot(backlinkLeaf, index) {
            case .none: break
            case .tagged: backlinks += 1
            case let .ref(ref):
                let list = try reader.node(at: ref)
                if list.isInnerBPlusTreeNode {
                    guard list.count >= 2, case let .tagged(size) = try reader.slot(list, list.count - 1) else {
                        throw .invalidDatabase(reason: "backlink tree \(ref) has no size")
                    }
                    backlinks += Int(clamping: size)
                } else {
                    backlinks += list.count
                }
            }
        }
        return RealmObject(key: key, columnNames: columns.map(\.name), values: values, backlinkCount: backlinks)
    }

    private func collectionValue(_ column: RealmColumn, ref: UInt64?, _ collections: CollectionDecoder) throws(RealmFileError) -> RealmValue {
        switch column.collection {
        case .list: return .list(try ref.map { r throws(RealmFileError) in try collections.elements(leafKind(column, inCollection: true), ref: r) } ?? [])
        case .set: return .set(try ref.map { r throws(RealmFileError) in try collections.elements(leafKind(column, inCollection: true), ref: r) } ?? [])
        case let .dictionary(keyType):
            return .dictionary(try ref.map { r throws(RealmFileError) in try collections.dictionary(ref: r, keyType: keyType) } ?? [])
        case .single: return .null
        }
    }

    /// The leaf layout used for `column`'s values (or elements, inside collections).
    func leafKind(_ column: RealmColumn, inCollection: Bool) throws(RealmFileError) -> LeafKind {
        switch column.type {
        case .int: return .int(nullable: column.isNullable)
        case .bool: return .bool(nullable: column.isNullable)
        case .string: return .string(enumKeys: inCollection ? nil : enumKeys[column.specIndex])
        case .binary: return .binary
        case .float: return .float(nullable: column.isNullable)
        case .double: return .double(nullable: column.isNullable)
        case .timestamp: return .timestamp
        case .decimal128: return .decimal128
        case .objectId: return .fixedBytes(size: 12, isUUID: false)
        case .uuid: return .fixedBytes(size: 16, isUUID: true)
        case .mixed: return .mixed
        case .typedLink: return .typedLink
        case .link:
            guard let target = column.targetTable else { throw .invalidDatabase(reason: "link column \(column.name) has no target table") }
            return .link(table: target, adjustment: inCollection ? 0 : 1)
        }
    }
}
