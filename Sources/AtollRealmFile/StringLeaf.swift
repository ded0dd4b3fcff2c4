import Foundation

/// Decodes string and binary leaves: short strings, medium (small blobs), big blobs and enumerated strings.
enum StringLeaf {
    /// Number of elements in a string leaf (any of its four forms).
    static func count(_ reader: NodeReader, _ leaf: Node) throws(RealmFileError) -> Int {
        if leaf.hasRefs && !leaf.contextFlag {
            return try reader.requiredChild(leaf, 0, "string offsets").count
        }
        return leaf.count
    }

    /// Element `index` of a string leaf, decoded as UTF-8 text (nil for null).
    static func optionalString(_ reader: NodeReader, _ leaf: Node, _ index: Int, enumKeys: Node? = nil) throws(RealmFileError) -> String? {
        guard let bytes = try stringBytes(reader, leaf, index, enumKeys: enumKeys) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Element `index` of a string leaf; null reads as an empty string.
    static func string(_ reader: NodeReader, _ leaf: Node, _ index: Int) throws(RealmFileError) -> String {
        try optionalString(reader, leaf, index) ?? ""
    }

    /// Raw bytes of element `index` of a string leaf (`ArrayString` forms), without the stored terminator.
    static func stringBytes(_ reader: NodeReader, _ leaf: Node, _ index: Int, enumKeys: Node?) throws(RealmFileError) -> ByteSpan? {
        if !leaf.hasRefs {
            if leaf.scheme == .multiply { return try shortString(reader, leaf, index) }
            guard let enumKeys else { throw .invalidDatabase(reason: "enumerated string leaf \(leaf.ref) without enum keys") }
            let keyIndex = try reader.int(leaf, index)
            guard keyIndex >= 0, keyIndex < Int64(try count(reader, enumKeys)) else {
                throw .invalidDatabase(reason: "enum string index \(keyIndex) out of range")
            }
            guard !enumKeys.hasRefs || !enumKeys.isInnerBPlusTreeNode else { throw .unsupported("enumerated string keys stored as a B+tree") }
            return try stringBytes(reader, enumKeys, Int(keyIndex), enumKeys: nil)
        }
        if leaf.contextFlag { return try bigBlob(reader, leaf, index, dropTerminator: true) }
        return try smallBlob(reader, leaf, index, dropTerminator: true)
    }

    /// Raw bytes of element `index` of a binary leaf (`ArrayBinary` forms).
    static func binaryBytes(_ reader: NodeReader, _ leaf: Node, _ index: Int) throws(RealmFileError) -> ByteSpan? {
        guard leaf.hasRefs else { throw .invalidDatabase(reason: "binary leaf \(leaf.ref) has no refs flag") }
        if leaf.contextFlag { return try bigBlob(reader, leaf, index, dropTerminator: false) }
        return try smallBlob(reader, leaf, index, dropTerminator: false)
    }

    /// Number of elements in a binary leaf.
    static func binaryCount(_ reader: NodeReader, _ leaf: Node) throws(RealmFileError) -> Int {
        if leaf.hasRefs && !leaf.contextFlag { return try reader.requiredChild(leaf, 0, "blob offsets").count }
        return leaf.count
    }

    /// Fixed-width slots of `width` bytes; the last byte of a slot counts the unused bytes (== width means null).
    private static func shortString(_ reader: NodeReader, _ leaf: Node, _ index: Int) throws(RealmFileError) -> ByteSpan? {
        guard index >= 0, index < leaf.count else { throw .invalidDatabase(reason: "string index \(index) outside leaf \(leaf.ref)") }
        let width = leaf.width
        if width == 0 { return nil }
        let slot = try reader.payloadBytes(leaf, offset: index * width, length: width)
        let padding = Int(slot[width - 1])
        if padding == width { return nil }
        guard padding < width else { throw .invalidDatabase(reason: "short string padding \(padding) exceeds width \(width)") }
        return slot.prefixSpan(width - 1 - padding)
    }

    /// Offsets array, one blob of concatenated bytes, and a nulls array.
    private static func smallBlob(_ reader: NodeReader, _ leaf: Node, _ index: Int, dropTerminator: Bool) throws(RealmFileError) -> ByteSpan? {
        let offsets = try reader.requiredChild(leaf, 0, "blob offsets")
        let blob = try reader.requiredChild(leaf, 1, "blob data")
        guard index >= 0, index < offsets.count else { throw .invalidDatabase(reason: "blob index \(index) outside leaf \(leaf.ref)") }
        if leaf.count > 2, let nulls = try reader.child(leaf, 2), try reader.int(nulls, index) != 0 { return nil }
        let begin = index == 0 ? 0 : try reader.int(offsets, index - 1)
        let end = try reader.int(offsets, index)
        guard begin >= 0, end >= begin, end <= Int64(blob.payloadLength) else {
            throw .invalidDatabase(reason: "blob offsets \(begin)..<\(end) outside blob \(blob.ref)")
        }
        var length = Int(end - begin)
        if dropTerminator {
            guard length >= 1 else { throw .invalidDatabase(reason: "stored string without terminator in leaf \(leaf.ref)") }
            length -= 1
        }
        return try reader.payloadBytes(blob, offset: Int(begin), length: length)
    }

    /// One ref per element to its own blob node (0 means null).
    private static func bigBlob(_ reader: NodeReader, _ leaf: Node, _ index: Int, dropTerminator: Bool) throws(RealmFileError) -> ByteSpan? {
        guard let blob = try reader.child(leaf, index) else { return nil }
        guard !blob.contextFlag else { throw .unsupported("blobs split over several nodes (values larger than 16 MB)") }
        var length = blob.payloadLength
        if dropTerminator {
            guard length >= 1 else { throw .invalidDatabase(reason: "stored string without terminator in blob \(blob.ref)") }
            length -= 1
        }
        return try reader.payloadBytes(blob, offset: 0, length: length)
    }
}
