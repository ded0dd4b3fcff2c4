/// Decodes list, set and dictionary values, which hang off a cluster leaf (or a Mixed value) as refs to B+trees.
struct CollectionDecoder {
    /// Decoder for the position of the collections read (their level of nesting).
    let decoder: LeafDecoder
    var budget: VisitBudget { decoder.budget }
    var reader: NodeReader { decoder.reader }

    /// Realm's largest B+tree node (REALM_MAX_BPNODE_SIZE); larger leaves are treated as corrupt.
    static let maxLeafElements = 1000

    /// Every element of the B+tree at `ref`, in order.
    func elements(_ kind: LeafKind, ref: UInt64) throws(RealmFileError) -> [RealmValue] {
        let elementDecoder = decoder.insideCollection
        var values: [RealmValue] = []
        try forEachLeaf(ref, depth: 0) { (leaf: Node) throws(RealmFileError) in
            let count = try elementDecoder.count(kind, leaf)
            guard count <= Self.maxLeafElements else { throw .invalidDatabase(reason: "B+tree leaf \(leaf.ref) claims \(count) elements") }
            for index in 0..<count { values.append(try elementDecoder.value(kind, leaf, index)) }
        }
        return values
    }

    /// The key/value pairs of the dictionary at `ref`.
    func dictionary(ref: UInt64, keyType: RealmColumnType) throws(RealmFileError) -> [RealmDictionaryEntry] {
        guard keyType == .string else { throw .unsupported("dictionary keys of type \(keyType)") }
        if decoder.context.formatVersion <= 22 { return try legacyDictionary(ref: ref) }
        guard case let .dictionary(entries) = try nestedValue(NestedCollection(isList: false, ref: ref), level: decoder.level + 1) else {
            throw .invalidDatabase(reason: "dictionary \(ref) did not read as a dictionary")
        }
        return entries
    }

    /// The full value of a collection nested in a Mixed value (or of a dictionary column, which has the same
    /// layout), whose own nesting level is `level`.
    ///
    /// Collections in collections are read with an explicit stack rather than by recursion, so the depth of
    /// nesting (at most Realm's 100 levels) does not reach the thread's stack; only each collection's own
    /// B+tree is walked recursively, up to `NodeReader.maxTreeDepth` levels.
    func nestedValue(_ root: NestedCollection, level: Int) throws(RealmFileError) -> RealmValue {
        struct Frame {
            /// The dictionary's keys, or nil for a list.
            let keys: [String]?
            let elements: [MixedElement]
            var values: [RealmValue] = []
            var next = 0

            var value: RealmValue {
                guard let keys else { return .list(values) }
                return .dictionary(zip(keys, values).map { RealmDictionaryEntry(key: $0, value: $1) })
            }
        }
        func open(_ collection: NestedCollection, level: Int) throws(RealmFileError) -> Frame {
            guard level <= LeafDecoder.maxLevel else {
                throw .invalidDatabase(reason: "collections nest deeper than Realm allows (\(LeafDecoder.maxLevel) levels)")
            }
            guard let ref = collection.ref else { return Frame(keys: collection.isList ? nil : [], elements: []) }
            if collection.isList { return Frame(keys: nil, elements: try mixedElements(ref: ref)) }
            let (keys, elements) = try dictionaryParts(ref: ref)
            return Frame(keys: keys, elements: elements)
        }

        var stack = [try open(root, level: level)]
        while true {
            let top = stack.count - 1
            if stack[top].next < stack[top].elements.count {
                let element = stack[top].elements[stack[top].next]
                stack[top].next += 1
                switch element {
                case let .value(value): stack[top].values.append(value)
                case let .nested(collection): stack.append(try open(collection, level: level + stack.count))
                }
                continue
            }
            let finished = stack.removeLast().value
            if stack.isEmpty { return finished }
            stack[stack.count - 1].values.append(finished)
        }
    }

    /// The elements of the Mixed B+tree at `ref`, nested collections located but not read.
    private func mixedElements(ref: UInt64) throws(RealmFileError) -> [MixedElement] {
        let elementDecoder = decoder.insideCollection
        var elements: [MixedElement] = []
        try forEachLeaf(ref, depth: 0) { (leaf: Node) throws(RealmFileError) in
            let count = try elementDecoder.count(.mixed, leaf)
            guard count <= Self.maxLeafElements else { throw .invalidDatabase(reason: "B+tree leaf \(leaf.ref) claims \(count) elements") }
            let mixed = MixedLeaf(decoder: elementDecoder, top: leaf)
            for index in 0..<count { elements.append(try mixed.element(index)) }
        }
        return elements
    }

    /// Formats 23 and later: a two-slot top array with a B+tree of string keys and a parallel B+tree of Mixed
    /// values. Dictionaries nested in Mixed values (format 24) have the same form.
    private func dictionaryParts(ref: UInt64) throws(RealmFileError) -> (keys: [String], values: [MixedElement]) {
        try budget.enter(ref)
        let top = try reader.node(at: ref)
        guard top.hasRefs, top.count >= 2 else { throw .invalidDatabase(reason: "dictionary top \(ref) is malformed") }
        var keys: [String] = []
        var values: [MixedElement] = []
        if case let .ref(keysRef) = try reader.slot(top, 0) {
            keys = try elements(.string(enumKeys: nil), ref: keysRef).map { $0.stringValue ?? "" }
        }
        if case let .ref(valuesRef) = try reader.slot(top, 1) { values = try mixedElements(ref: valuesRef) }
        guard keys.count == values.count else { throw .invalidDatabase(reason: "dictionary \(ref) has \(keys.count) keys and \(values.count) values") }
        return (keys, values)
    }

    /// Formats 21 and 22 keep a dictionary as a cluster tree whose leaves hold a key column and a Mixed value column.
    private func legacyDictionary(ref: UInt64) throws(RealmFileError) -> [RealmDictionaryEntry] {
        let elementDecoder = decoder.insideCollection
        var entries: [RealmDictionaryEntry] = []
        try forEachClusterLeaf(ref, depth: 0) { (leaf: Node, count: Int) throws(RealmFileError) in
            let keys = try reader.requiredChild(leaf, 1, "dictionary keys")
            let values = try reader.requiredChild(leaf, 2, "dictionary values")
            for index in 0..<count {
                let key = try StringLeaf.optionalString(reader, keys, index) ?? ""
                entries.append(RealmDictionaryEntry(key: key, value: try elementDecoder.value(.mixed, values, index)))
            }
        }
        return entries
    }

    /// Calls `body` with each leaf of the B+tree at `ref`, left to right.
    func forEachLeaf(_ ref: UInt64, depth: Int, _ body: (Node) throws(RealmFileError) -> Void) throws(RealmFileError) {
        try budget.enter(ref)
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
        try budget.enter(ref)
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
