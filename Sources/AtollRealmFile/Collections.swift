/// Decodes list, set and dictionary values, which hang off a cluster leaf as refs to B+trees.
struct CollectionDecoder {
    let decoder: LeafDecoder
    let budget: VisitBudget
    var reader: NodeReader { decoder.reader }

    /// Realm's largest B+tree node (REALM_MAX_BPNODE_SIZE); larger leaves are treated as corrupt.
    static let maxLeafElements = 1000

    /// Every element of the B+tree at `ref`, in order.
    func elements(_ kind: LeafKind, ref: UInt64) throws(RealmFileError) -> [RealmValue] {
        var values: [RealmValue] = []
        try forEachLeaf(ref, depth: 0) { (leaf: Node) throws(RealmFileError) in
            let count = try decoder.count(kind, leaf)
            guard count <= Self.maxLeafElements else { throw .invalidDatabase(reason: "B+tree leaf \(leaf.ref) claims \(count) elements") }
            for index in 0..<count { values.append(try decoder.value(kind, leaf, index)) }
        }
        return values
    }

    /// The key/value pairs of the dictionary at `ref`.
    func dictionary(ref: UInt64, keyType: RealmColumnType) throws(RealmFileError) -> [RealmDictionaryEntry] {
        guard keyType == .string else { throw .unsupported("dictionary keys of type \(keyType)") }
        if decoder.context.formatVersion <= 22 { return try legacyDictionary(ref: ref) }
        try budget.spend()
        let top = try reader.node(at: ref)
        guard top.hasRefs, top.count >= 2 else { throw .invalidDatabase(reason: "dictionary top \(ref) is malformed") }
        var keys: [RealmValue] = []
        var values: [RealmValue] = []
        if case let .ref(keysRef) = try reader.slot(top, 0) { keys = try elements(.string(enumKeys: nil), ref: keysRef) }
        if case let .ref(valuesRef) = try reader.slot(top, 1) { values = try elements(.mixed, ref: valuesRef) }
        guard keys.count == values.count else { throw .invalidDatabase(reason: "dictionary \(ref) has \(keys.count) keys and \(values.count) values") }
        return zip(keys, values).map { RealmDictionaryEntry(key: $0.stringValue ?? "", value: $1) }
    }

    /// Formats 21 and 22 keep a dictionary as a cluster tree whose leaves hold a key column and a Mixed value column.
    private func legacyDictionary(ref: UInt64) throws(RealmFileError) -> [RealmDictionaryEntry] {
        var entries: [RealmDictionaryEntry] = []
        try forEachClusterLeaf(ref, depth: 0) { (leaf: Node, count: Int) throws(RealmFileError) in
            let keys = try reader.requiredChild(leaf, 1, "dictionary keys")
            let values = try reader.requiredChild(leaf, 2, "dictionary values")
            for index in 0..<count {
                let key = try StringLeaf.optionalString(reader, keys, index) ?? ""
                entries.append(RealmDictionaryEntry(key: key, value: try decoder.value(.mixed, values, index)))
            }
        }
        return entries
    }

    /// Calls `body` with each leaf of the B+tree at `ref`, left to right.
    func forEachLeaf(_ ref: UInt64, depth: Int, _ body: (Node) throws(RealmFileError) -> Void) throws(RealmFileError) {
        try budget.spend()
        guard depth <= NodeReader.maxTreeDepth else { throw .invalidDatabase(reason: "B+tree deeper than \(NodeReader.maxTreeDepth) levels") }
        let node = try reader.node(at: ref)
        guard node.isInnerBPlusTreeNode else { return try body(node) }
        guard node.hasRefs, node.count >= 2 else { throw .invalidDatabase(reason: "B+tree inner node \(ref) is malformed") }
        for index in 1..<(node.count - 1) {
            guard case let .ref(child) = try reader.slot(node, index) else {
                throw .invalidDatabase(reason: "B+tree inner node \(ref) has a non-ref child")
            }
            try forEachLeaf(child, depth: depth + 1, body)
        }
    }

    /// Calls `body` with each leaf of the cluster tree at `ref` and its object count, left to right.
    func forEachClusterLeaf(_ ref: UInt64, depth: Int, _ body: (Node, Int) throws(RealmFileError) -> Void) throws(RealmFileError) {
        try budget.spend()
        guard depth <= NodeReader.maxTreeDepth else { throw .invalidDatabase(reason: "cluster tree deeper than \(NodeReader.maxTreeDepth) levels") }
        let node = try reader.node(at: ref)
        if node.isInnerBPlusTreeNode {
            guard node.hasRefs, node.count >= ClusterLayout.firstChildSlot else { throw .invalidDatabase(reason: "cluster inner node \(ref) is malformed") }
            for index in ClusterLayout.firstChildSlot..<node.count {
                guard case let .ref(child) = try reader.slot(node, index) else {
                    throw .invalidDatabase(reason: "cluster inner node \(ref) has a non-ref child")
                }
                try forEachClusterLeaf(child, depth: depth + 1, body)
            }
        } else {
            try body(node, try ClusterLayout.leafSize(reader, node).count)
        }
    }
}
