import Foundation

/// How the values of one leaf are laid out, derived from a column's type and nullability.
enum LeafKind: Sendable {
    case int(nullable: Bool)
    case bool(nullable: Bool)
    case string(enumKeys: Node?)
    case binary
    case float(nullable: Bool)
    case double(nullable: Bool)
    case timestamp
    case decimal128
    case fixedBytes(size: Int, isUUID: Bool)
    case mixed
    /// Object keys of `table`; stored as key + `adjustment` (1 in cluster leaves, where 0 is null).
    case link(table: String, adjustment: Int64)
    case typedLink
}

/// Reads single elements of leaves of every kind.
struct LeafDecoder {
    let context: FileContext
    /// Node visits left for the walk this read belongs to (shared with the collections it opens).
    let budget: VisitBudget
    /// Collections enclosing the leaf: 0 for a column's own leaf, 1 inside a list, set or dictionary column.
    let level: Int
    var reader: NodeReader { context.reader }

    init(context: FileContext, budget: VisitBudget, level: Int = 0) {
        self.context = context
        self.budget = budget
        self.level = level
    }

    /// Realm's limit on collection nesting (`CollectionParent::s_max_level`), counting a collection column as
    /// level 1; deeper nesting is corrupt.
    static let maxLevel = 100

    /// The decoder for the elements of a collection at this position.
    var insideCollection: LeafDecoder { LeafDecoder(context: context, budget: budget, level: level + 1) }

    /// Number of elements in `leaf`.
    func count(_ kind: LeafKind, _ leaf: Node) throws(RealmFileError) -> Int {
        switch kind {
        case .int(nullable: true):
            guard leaf.count >= 1 else { throw .invalidDatabase(reason: "nullable integer leaf \(leaf.ref) lacks its null marker") }
            return leaf.count - 1
        case .string: return try StringLeaf.count(reader, leaf)
        case .binary: return try StringLeaf.binaryCount(reader, leaf)
        case .timestamp:
            let seconds = try reader.requiredChild(leaf, 0, "timestamp seconds")
            return max(seconds.count - 1, 0)
        case let .fixedBytes(size, _):
            let block = size * 8 + 1
            return (leaf.count - (leaf.count + block - 1) / block) / size
        case .mixed: return try reader.requiredChild(leaf, 0, "mixed types").count
        case .typedLink: return leaf.count / 2
        case .int(nullable: false), .bool, .float, .double, .decimal128, .link: return leaf.count
        }
    }

    /// Element `index` of `leaf`.
    func value(_ kind: LeafKind, _ leaf: Node, _ index: Int) throws(RealmFileError) -> RealmValue {
        switch kind {
        case let .int(nullable):
            if nullable {
                let value = try reader.int(leaf, index + 1)
                return value == (try reader.int(leaf, 0)) ? .null : .int(value)
            }
            return .int(try reader.int(leaf, index))
        case .bool:
            switch try reader.int(leaf, index) {
            case 0: return .bool(false)
            case 1: return .bool(true)
            case 3: return .null
            case let other: throw .invalidDatabase(reason: "boolean leaf \(leaf.ref) holds \(other)")
            }
        case let .string(enumKeys):
            guard let text = try StringLeaf.optionalString(reader, leaf, index, enumKeys: enumKeys) else { return .null }
            return .string(text)
        case .binary:
            guard let bytes = try StringLeaf.binaryBytes(reader, leaf, index) else { return .null }
            return .binary(Data(bytes))
        case let .float(nullable):
            let bits = UInt32(try fixedWidth(leaf, index, bytes: 4))
            if nullable && bits == 0x7fc0_00aa { return .null }
            return .float(Float(bitPattern: bits))
        case let .double(nullable):
            let bits = try fixedWidth(leaf, index, bytes: 8)
            if nullable && bits == 0x7ff8_0000_0000_00aa { return .null }
            return .double(Double(bitPattern: bits))
        case .timestamp:
            let seconds = try reader.requiredChild(leaf, 0, "timestamp seconds")
            let nanoseconds = try reader.requiredChild(leaf, 1, "timestamp nanoseconds")
            let value = try reader.int(seconds, index + 1)
            if value == (try reader.int(seconds, 0)) { return .null }
            return .timestamp(RealmTimestamp(seconds: value, nanoseconds: Int32(truncatingIfNeeded: try reader.int(nanoseconds, index))))
        case .decimal128:
            return try decimal(leaf, index)
        case let .fixedBytes(size, isUUID):
            return try fixedBytes(leaf, index, size: size, isUUID: isUUID)
        case .mixed:
            return try MixedLeaf(decoder: self, top: leaf).value(index)
        case let .link(table, adjustment):
            let stored = try reader.int(leaf, index)
            if adjustment == 1 && stored == 0 { return .null }
            return .link(RealmLink(table: table, objectKey: stored - adjustment))
        case .typedLink:
            let tableKey = try reader.int(leaf, index * 2)
            let objectKey = try reader.int(leaf, index * 2 + 1)
            if tableKey == 0 { return .null }
            return .link(RealmLink(table: try context.tableName(forKey: (tableKey - 1) & 0x7FFF_FFFF), objectKey: objectKey - 1))
        }
    }

    private func fixedWidth(_ leaf: Node, _ index: Int, bytes: Int) throws(RealmFileError) -> UInt64 {
        guard leaf.scheme == .multiply, leaf.width == bytes, index >= 0, index < leaf.count else {
            throw .invalidDatabase(reason: "leaf \(leaf.ref) is not a \(bytes)-byte array with element \(index)")
        }
        return reader.bytes.uint(at: leaf.payload + index * bytes, size: bytes)
    }

    private func decimal(_ leaf: Node, _ index: Int) throws(RealmFileError) -> RealmValue {
        guard index >= 0, index < leaf.count, leaf.scheme == .multiply else {
            throw .invalidDatabase(reason: "decimal leaf \(leaf.ref) has no element \(index)")
        }
        // Each width has its own null pattern: a NaN with payload 0xaa, compared before widening.
        let value: RealmDecimal128
        switch leaf.width {
        case 0: return leaf.contextFlag ? .decimal128(RealmDecimal128(low: 0, high: 0x3040_0000_0000_0000)) : .null
        case 4:
            let bits = UInt32(reader.bytes.uint(at: leaf.payload + index * 4, size: 4))
            if bits == 0x7c00_00aa { return .null }
            value = RealmDecimal128(bid32: bits)
        case 8:
            let bits = reader.bytes.uint(at: leaf.payload + index * 8, size: 8)
            if bits == 0x7c00_0000_0000_00aa { return .null }
            value = RealmDecimal128(bid64: bits)
        case 16:
            value = RealmDecimal128(low: reader.bytes.uint(at: leaf.payload + index * 16, size: 8),
                                    high: reader.bytes.uint(at: leaf.payload + index * 16 + 8, size: 8))
            if value == .null { return .null }
        default: throw .invalidDatabase(reason: "decimal leaf \(leaf.ref) has width \(leaf.width)")
        }
        return .decimal128(value)
    }

    /// Blocks of one null-bit byte followed by eight values of `size` bytes.
    private func fixedBytes(_ leaf: Node, _ index: Int, size: Int, isUUID: Bool) throws(RealmFileError) -> RealmValue {
        guard index >= 0, index < (try count(.fixedBytes(size: size, isUUID: isUUID), leaf)) else {
            throw .invalidDatabase(reason: "fixed-size leaf \(leaf.ref) has no element \(index)")
        }
        if leaf.width == 0 { return .null }
        let block = (index / 8) * (size * 8 + 1)
        let nullBits = try reader.payloadBytes(leaf, offset: block, length: 1)[0]
        if nullBits & (1 << UInt8(index % 8)) != 0 { return .null }
        let raw = try reader.payloadBytes(leaf, offset: block + 1 + (index % 8) * size, length: size)
        if isUUID {
            let b = Array(raw)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        }
        return .objectId(RealmObjectId(bytes: Array(raw))!)
    }
}

/// One element of a Mixed leaf: a value, or where a collection nested in it (file format 24) is stored.
enum MixedElement {
    case value(RealmValue)
    case nested(NestedCollection)
}

/// A list or dictionary nested in a Mixed value; `ref` is nil for one created but never filled.
struct NestedCollection {
    let isList: Bool
    let ref: UInt64?
}

/// An `ArrayMixed` leaf: a composite array of type tags with inline small values, plus side arrays for
/// wide integers, integer pairs, strings and nested collections.
///
/// A tag is `payload << 8 | side array << 5 | (type + 1)`; tag 0 is null. The payload is the value itself
/// (small integers, booleans) or an index into the side array.
struct MixedLeaf {
    let decoder: LeafDecoder
    let top: Node

    static let compositeSlot = 0, intsSlot = 1, pairsSlot = 2, stringsSlot = 3, refsSlot = 4

    /// Element `index`, with any nested collection read in full.
    func value(_ index: Int) throws(RealmFileError) -> RealmValue {
        switch try element(index) {
        case let .value(value): return value
        case let .nested(collection): return try CollectionDecoder(decoder: decoder).nestedValue(collection, level: decoder.level + 1)
        }
    }

    /// Element `index`; a nested collection is located but not read.
    func element(_ index: Int) throws(RealmFileError) -> MixedElement {
        guard top.hasRefs else { throw .invalidDatabase(reason: "mixed leaf \(top.ref) has no refs flag") }
        let composite = try decoder.reader.requiredChild(top, Self.compositeSlot, "mixed type array")
        let tag = try decoder.reader.int(composite, index)
        if tag == 0 { return .value(.null) }
        let type = (tag & 0x1F) - 1
        let payload = tag >> 8
        switch type {
        case 19, 21:
            // A list or dictionary (format 24): the payload indexes the refs side array, which holds its ref.
            guard (tag & 0xE0) >> 5 == Int64(Self.refsSlot) else {
                throw .invalidDatabase(reason: "mixed leaf \(top.ref) has a nested collection outside its refs array")
            }
            return .nested(NestedCollection(isList: type == 19, ref: try collectionRef(payload)))
        case 20: throw .invalidDatabase(reason: "mixed leaf \(top.ref) holds a set, which Realm never nests in a Mixed value")
        default: return .value(try scalar(type: type, usesSideArray: tag & 0xE0 != 0, payload: payload, tag: tag))
        }
    }

    private func scalar(type: Int64, usesSideArray: Bool, payload: Int64, tag: Int64) throws(RealmFileError) -> RealmValue {
        switch type {
        case 0: return .int(usesSideArray ? try side(Self.intsSlot, payload) : payload)
        case 1: return .bool(payload != 0)
        case 2:
            guard let bytes = try string(payload) else { return .null }
            return .string(String(decoding: bytes, as: UTF8.self))
        case 4:
            guard let bytes = try string(payload) else { return .null }
            return .binary(Data(bytes))
        case 8:
            return .timestamp(RealmTimestamp(seconds: try side(Self.pairsSlot, payload * 2),
                                             nanoseconds: Int32(truncatingIfNeeded: try side(Self.pairsSlot, payload * 2 + 1))))
        case 9: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: try side(Self.intsSlot, payload))))
        case 10: return .double(Double(bitPattern: UInt64(bitPattern: try side(Self.intsSlot, payload))))
        case 11:
            return .decimal128(RealmDecimal128(low: UInt64(bitPattern: try side(Self.pairsSlot, payload * 2)),
                                               high: UInt64(bitPattern: try side(Self.pairsSlot, payload * 2 + 1))))
        case 12: throw .unsupported("untyped link stored in a Mixed value")
        case 15:
            guard let bytes = try string(payload), bytes.count == 12 else { throw .invalidDatabase(reason: "mixed ObjectId is not 12 bytes") }
            return .objectId(RealmObjectId(bytes: Array(bytes))!)
        case 16:
            let tableKey = try side(Self.pairsSlot, payload * 2)
            let objectKey = try side(Self.pairsSlot, payload * 2 + 1)
            return .link(RealmLink(table: try decoder.context.tableName(forKey: Int64(UInt32(truncatingIfNeeded: tableKey))), objectKey: objectKey))
        case 17:
            guard let b = try string(payload).map(Array.init), b.count == 16 else { throw .invalidDatabase(reason: "mixed UUID is not 16 bytes") }
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        default: throw .invalidDatabase(reason: "mixed leaf \(top.ref) has unknown type tag \(tag & 0x1F)")
        }
    }

    /// The nested collection's ref at `index` of the refs array (nil for a null ref).
    private func collectionRef(_ index: Int64) throws(RealmFileError) -> UInt64? {
        guard index >= 0, index < Int64(Int32.max), top.count > Self.refsSlot else {
            throw .invalidDatabase(reason: "mixed collection index \(index) out of range")
        }
        let refs = try decoder.reader.requiredChild(top, Self.refsSlot, "mixed collection refs")
        guard refs.hasRefs else { throw .invalidDatabase(reason: "mixed collection refs \(refs.ref) lack the refs flag") }
        switch try decoder.reader.slot(refs, Int(index)) {
        case .none: return nil
        case let .ref(ref): return ref
        case .tagged: throw .invalidDatabase(reason: "mixed collection ref \(index) of \(refs.ref) is an integer")
        }
    }

    private func side(_ slot: Int, _ index: Int64) throws(RealmFileError) -> Int64 {
        guard index >= 0, index < Int64(Int32.max), top.count > slot else { throw .invalidDatabase(reason: "mixed payload index \(index) out of range") }
        let array = try decoder.reader.requiredChild(top, slot, "mixed payload array")
        return try decoder.reader.int(array, Int(index))
    }

    private func string(_ index: Int64) throws(RealmFileError) -> ByteSpan? {
        guard index >= 0, index < Int64(Int32.max), top.count > Self.stringsSlot else { throw .invalidDatabase(reason: "mixed string index \(index) out of range") }
        let strings = try decoder.reader.requiredChild(top, Self.stringsSlot, "mixed strings")
        return try StringLeaf.stringBytes(decoder.reader, strings, Int(index), enumKeys: nil)
    }
}
