/// Layout of cluster-tree nodes (the per-table object store).
enum ClusterLayout {
    /// Inner nodes: key offsets ref (0 = compact), depth, object count, then children.
    static let keysSlot = 0
    static let depthSlot = 1
    static let sizeSlot = 2
    static let firstChildSlot = 3

    /// Object count of a cluster leaf and its key array (nil when keys are simply 0..<count).
    static func leafSize(_ reader: NodeReader, _ leaf: Node) throws(RealmFileError) -> (count: Int, keys: Node?) {
        guard leaf.hasRefs, leaf.count >= 1 else { throw .invalidDatabase(reason: "cluster leaf \(leaf.ref) is malformed") }
        let result: (count: Int, keys: Node?)
        switch try reader.slot(leaf, 0) {
        case let .tagged(count): result = (Int(clamping: count), nil)
        case let .ref(ref):
            let keys = try reader.node(at: ref)
            result = (keys.count, keys)
        case .none: result = (0, nil)
        }
        guard result.count >= 0, result.count <= CollectionDecoder.maxLeafElements else {
            throw .invalidDatabase(reason: "cluster leaf \(leaf.ref) claims \(result.count) objects")
        }
        return result
    }

    /// Object count of any cluster node.
    static func size(_ reader: NodeReader, _ node: Node) throws(RealmFileError) -> Int {
        if node.isInnerBPlusTreeNode {
            guard node.count > sizeSlot, case let .tagged(size) = try reader.slot(node, sizeSlot), size >= 0 else {
                throw .invalidDatabase(reason: "cluster inner node \(node.ref) has no size")
            }
            return Int(clamping: size)
        }
        return try leafSize(reader, node).count
    }
}

/// An inner cluster node: child offsets are either stored or implied by the node's depth.
struct InnerClusterNode {
    let node: Node
    let keys: Node?
    let childCount: Int
    let shift: Int
    private let reader: NodeReader

    init(_ reader: NodeReader, _ node: Node) throws(RealmFileError) {
        guard node.hasRefs, node.count > ClusterLayout.firstChildSlot else { throw .invalidDatabase(reason: "cluster inner node \(node.ref) is malformed") }
        self.reader = reader
        self.node = node
        childCount = node.count - ClusterLayout.firstChildSlot
        keys = try reader.child(node, ClusterLayout.keysSlot)
        if let keys, keys.count < childCount { throw .invalidDatabase(reason: "cluster inner node \(node.ref) has too few key offsets") }
        guard case let .tagged(depth) = try reader.slot(node, ClusterLayout.depthSlot), depth >= 1, depth <= Int64(NodeReader.maxTreeDepth) else {
            throw .invalidDatabase(reason: "cluster inner node \(node.ref) has no valid depth")
        }
        if keys == nil {
            // Compact nodes imply offsets of child << (depth × log2(node capacity)). Realm's default capacity is
            // 256 (shift 8); test builds use 4 (shift 2), recognisable by every node holding at most 4 entries.
            let first = try reader.node(at: Self.ref(reader, node, 0))
            let firstSize = first.isInnerBPlusTreeNode ? first.count - ClusterLayout.firstChildSlot : try ClusterLayout.leafSize(reader, first).count
            let perLevel = childCount <= 4 && firstSize <= 4 ? 2 : 8
            shift = min(Int(depth) * perLevel, 62)
        } else {
            shift = 0
        }
    }

    func childRef(_ index: Int) throws(RealmFileError) -> UInt64 { try Self.ref(reader, node, index) }

    /// Key offset of child `index`.
    func offset(_ index: Int) throws(RealmFileError) -> Int64 {
        if let keys { return Int64(bitPattern: try reader.unsigned(keys, index)) }
        return Int64(index) << shift
    }

    /// The child whose key range holds `key` (relative to this node), with its offset.
    func child(containing key: Int64) throws(RealmFileError) -> (Int, Int64)? {
        var found: (Int, Int64)?
        for index in 0..<childCount {
            let offset = try offset(index)
            if offset <= key { found = (index, offset) } else { break }
        }
        return found
    }

    private static func ref(_ reader: NodeReader, _ node: Node, _ index: Int) throws(RealmFileError) -> UInt64 {
        guard case let .ref(ref) = try reader.slot(node, ClusterLayout.firstChildSlot + index) else {
            throw .invalidDatabase(reason: "cluster inner node \(node.ref) has a non-ref child")
        }
        return ref
    }
}

/// Walks a table's cluster tree lazily, yielding objects in object-key order.
public struct RealmObjectCursor {
    private struct Frame {
        let inner: InnerClusterNode
        let base: Int64
        let depth: Int
        var next = 0
    }

    private let table: RealmTable
    private let budget: VisitBudget
    private var stack: [Frame] = []
    private var leaf: (node: Node, keys: Node?, count: Int, base: Int64)?
    private var leafIndex = 0
    private var started = false
    private var finished = false

    init(table: RealmTable) {
        self.table = table
        budget = VisitBudget(fileSize: table.context.reader.fileSize)
    }

    /// The next object, or nil after the last one.
    public mutating func next() throws(RealmFileError) -> RealmObject? {
        guard !finished else { return nil }
        do {
            return try advance()
        } catch {
            finished = true
            throw error
        }
    }

    private mutating func advance() throws(RealmFileError) -> RealmObject? {
        let reader = table.context.reader
        while true {
            if let current = leaf, leafIndex < current.count {
                let index = leafIndex
                leafIndex += 1
                let relative = try current.keys.map { keys throws(RealmFileError) in Int64(bitPattern: try reader.unsigned(keys, index)) } ?? Int64(index)
                return try table.makeObject(leaf: current.node, index: index, key: current.base &+ relative, budget: budget)
            }
            leaf = nil
            if !started {
                started = true
                try descend(to: table.clusterRoot, base: 0, depth: 0)
                continue
            }
            guard var frame = stack.popLast() else {
                finished = true
                return nil
            }
            guard frame.next < frame.inner.childCount else { continue }
            let index = frame.next
            frame.next += 1
            stack.append(frame)
            try descend(to: frame.inner.childRef(index), base: frame.base &+ (try frame.inner.offset(index)), depth: frame.depth + 1)
        }
    }

    private mutating func descend(to ref: UInt64, base: Int64, depth: Int) throws(RealmFileError) {
        try budget.spend()
        guard depth <= NodeReader.maxTreeDepth else { throw .invalidDatabase(reason: "cluster tree deeper than \(NodeReader.maxTreeDepth) levels") }
        let reader = table.context.reader
        let node = try reader.node(at: ref)
        if node.isInnerBPlusTreeNode {
            stack.append(Frame(inner: try InnerClusterNode(reader, node), base: base, depth: depth))
        } else {
            let (count, keys) = try ClusterLayout.leafSize(reader, node)
            leaf = (node, keys, count, base)
            leafIndex = 0
        }
    }
}
