/// How the header's width field translates into payload bytes.
enum WidthScheme: UInt8, Sendable {
    /// `width` is the number of bits per element.
    case bits = 0
    /// `width` is the number of bytes per element.
    case multiply = 1
    /// Each element is one byte, whatever `width` says.
    case ignore = 2
}

/// A validated array node: its 8-byte header decoded, with a payload known to lie inside the file.
struct Node: Sendable {
    let ref: UInt64
    let isInnerBPlusTreeNode: Bool
    let hasRefs: Bool
    let contextFlag: Bool
    let scheme: WidthScheme
    let width: Int
    let count: Int
    /// File offset of the first payload byte.
    let payload: Int
    /// Number of payload bytes implied by scheme, width and count.
    let payloadLength: Int

    static let headerSize = 8
}

/// A ref-or-tagged-integer slot value: even values are refs (0 = none), odd values carry an integer.
enum Slot: Sendable, Equatable {
    case ref(UInt64)
    case tagged(Int64)
    case none

    init(_ raw: Int64) {
        if raw == 0 { self = .none }
        else if raw & 1 == 1 { self = .tagged(raw >> 1) }
        else { self = .ref(UInt64(bitPattern: raw)) }
    }
}

/// Bounds work done on one walk over possibly corrupted trees: each node visit spends one unit, so a cycle
/// of refs ends in an error instead of a hang.
final class VisitBudget {
    private(set) var remaining: Int
    /// Collection nodes entered on this walk. Realm never shares a node between two parents, so meeting one
    /// twice means a damaged file; refusing it keeps a few shared nodes from standing for millions of values.
    private var entered: Set<UInt64> = []

    init(fileSize: Int) { remaining = fileSize / 8 + 64 }

    func spend() throws(RealmFileError) {
        remaining -= 1
        if remaining < 0 { throw .invalidDatabase(reason: "more nodes visited than the file can hold (a ref cycle?)") }
    }

    /// Spends one unit for the collection node at `ref`, which must not have been entered before on this walk.
    func enter(_ ref: UInt64) throws(RealmFileError) {
        try spend()
        guard entered.insert(ref).inserted else {
            throw .invalidDatabase(reason: "node \(ref) is reached from two places (a ref cycle or shared subtree)")
        }
    }
}

/// Checked access to nodes of one file: every ref is validated before it is followed.
struct NodeReader: Sendable {
    let bytes: MappedBytes
    var fileSize: Int { bytes.count }

    /// Maximum nesting of B+tree and cluster-tree levels accepted before a file is called corrupt.
    static let maxTreeDepth = 48

    /// Reads and validates the node header at `ref`.
    func node(at ref: UInt64) throws(RealmFileError) -> Node {
        guard ref != 0 else { throw .invalidDatabase(reason: "null ref where a node is required") }
        guard ref % 8 == 0 else { throw .invalidDatabase(reason: "ref \(ref) is not 8-byte aligned") }
        guard ref < UInt64(fileSize), Int(ref) + Node.headerSize <= fileSize else {
            throw .invalidDatabase(reason: "ref \(ref) points outside the file (\(fileSize) bytes)")
        }
        let offset = Int(ref)
        try bytes.checkReadable(offset, Node.headerSize)
        let flags = bytes.byte(at: offset + 4)
        guard let scheme = WidthScheme(rawValue: (flags & 0x18) >> 3) else {
            throw .unsupported("node at \(ref) uses an unknown width scheme \((flags & 0x18) >> 3) (compressed arrays of a newer format?)")
        }
        let width = (1 << Int(flags & 0x07)) >> 1
        let count = Int(bytes.byte(at: offset + 5)) << 16 | Int(bytes.byte(at: offset + 6)) << 8 | Int(bytes.byte(at: offset + 7))
        let length: Int
        switch scheme {
        case .bits: length = (count * width + 7) / 8
        case .multiply: length = count * width
        case .ignore: length = count
        }
        guard length <= fileSize - offset - Node.headerSize else {
            throw .invalidDatabase(reason: "node at \(ref) claims \(count) elements of width \(width), past the end of the file")
        }
        try bytes.checkReadable(offset, Node.headerSize + length)
        return Node(ref: ref, isInnerBPlusTreeNode: flags & 0x80 != 0, hasRefs: flags & 0x40 != 0,
                    contextFlag: flags & 0x20 != 0, scheme: scheme, width: width, count: count,
                    payload: offset + Node.headerSize, payloadLength: length)
    }

    /// Element `index` of an integer array (widths below 8 bits are unsigned, wider ones signed).
    func int(_ node: Node, _ index: Int) throws(RealmFileError) -> Int64 {
        try checkIntegerAccess(node, index)
        switch node.width {
        case 0: return 0
        case 1, 2, 4:
            let bit = index * node.width
            let byte = bytes.byte(at: node.payload + bit / 8)
            return Int64((byte >> UInt8(bit % 8)) & UInt8((1 << node.width) - 1))
        case 8: return Int64(Int8(bitPattern: bytes.byte(at: node.payload + index)))
        case 16: return Int64(Int16(truncatingIfNeeded: bytes.uint(at: node.payload + index * 2, size: 2)))
        case 32: return Int64(Int32(truncatingIfNeeded: bytes.uint(at: node.payload + index * 4, size: 4)))
        default: return Int64(bitPattern: bytes.uint(at: node.payload + index * 8, size: 8))
        }
    }

    /// Element `index` of an unsigned integer array (object keys, B+tree offsets).
    func unsigned(_ node: Node, _ index: Int) throws(RealmFileError) -> UInt64 {
        try checkIntegerAccess(node, index)
        switch node.width {
        case 0, 1, 2, 4: return UInt64(bitPattern: try int(node, index))
        default: return bytes.uint(at: node.payload + index * (node.width / 8), size: node.width / 8)
        }
    }

    /// Element `index` of a has-refs array, read as a ref or a tagged integer.
    func slot(_ node: Node, _ index: Int) throws(RealmFileError) -> Slot {
        Slot(try int(node, index))
    }

    /// The node referenced by element `index`, or nil when that element is a null ref.
    func child(_ node: Node, _ index: Int) throws(RealmFileError) -> Node? {
        switch try slot(node, index) {
        case .none: return nil
        case let .ref(ref): return try self.node(at: ref)
        case .tagged: throw .invalidDatabase(reason: "element \(index) of node \(node.ref) is an integer where a ref is expected")
        }
    }

    /// The node referenced by element `index`, which must not be null.
    func requiredChild(_ node: Node, _ index: Int, _ what: String) throws(RealmFileError) -> Node {
        guard let child = try child(node, index) else { throw .invalidDatabase(reason: "missing \(what) (node \(node.ref) slot \(index))") }
        return child
    }

    /// `length` payload bytes starting `offset` bytes into the payload of `node`.
    func payloadBytes(_ node: Node, offset: Int, length: Int) throws(RealmFileError) -> ByteSpan {
        guard offset >= 0, length >= 0, offset <= node.payloadLength, length <= node.payloadLength - offset else {
            throw .invalidDatabase(reason: "read of \(length) bytes at \(offset) outside node \(node.ref)")
        }
        return bytes.span(node.payload + offset, length)
    }

    private func checkIntegerAccess(_ node: Node, _ index: Int) throws(RealmFileError) {
        guard index >= 0, index < node.count else {
            throw .invalidDatabase(reason: "index \(index) outside node \(node.ref) of \(node.count) elements")
        }
        guard node.scheme == .bits else {
            throw .invalidDatabase(reason: "node \(node.ref) read as integers but its width scheme is \(node.scheme)")
        }
    }
}
