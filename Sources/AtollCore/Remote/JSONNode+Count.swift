extension JSONNode {
    /// How many values the tree holds (itself included).
    package var nodeCount: Int {
        switch self {
        case .array(let items): 1 + items.reduce(0) { $0 + $1.nodeCount }
        case .object(let members): 1 + members.reduce(0) { $0 + $1.1.nodeCount }
        default: 1
        }
    }
}
