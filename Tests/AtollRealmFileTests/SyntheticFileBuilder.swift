import Foundation

/// Writes minimal Realm files node by node, to test leaf layouts no fixture contains (Float, Decimal128,
/// UUID and typed-link columns, lists, enumerated strings, narrow integer widths...).
///
/// It follows the layout in docs/realm-file-format.md; it checks the reader against that description,
/// while the fixtures check the description against Realm.
struct SyntheticFileBuilder {
    private(set) var bytes = [UInt8](repeating: 0, count: 24)

    enum Scheme: UInt8 { case bits = 0, multiply = 1, ignore = 2 }

    static func tagged(_ value: Int64) -> Int64 { value << 1 | 1 }

    /// Appends a node and returns its ref.
    mutating func node(count: Int, width: Int, scheme: Scheme, payload: [UInt8],
                       hasRefs: Bool = false, inner: Bool = false, context: Bool = false) -> Int64 {
        let ref = Int64(bytes.count)
        let widthCode = UInt8([0, 1, 2, 4, 8, 16, 32, 64].firstIndex(of: width)!)
        var flags = widthCode | scheme.rawValue << 3
        if inner { flags |= 0x80 }
        if hasRefs { flags |= 0x40 }
        if context { flags |= 0x20 }
        bytes += Array("AAAA".utf8) + [flags, UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        bytes += payload
        while bytes.count % 8 != 0 { bytes.append(0) }
        return ref
    }

    /// An integer array packed at the narrowest width that holds every value.
    mutating func ints(_ values: [Int64], hasRefs: Bool = false, inner: Bool = false, context: Bool = false) -> Int64 {
        let width = [0, 1, 2, 4, 8, 16, 32, 64].first { width in
            values.allSatisfy { value in
                switch width {
                case 0: value == 0
                case 1, 2, 4: value >= 0 && value < 1 << width
                case 64: true
                default: value >= -(1 << (width - 1)) && value < 1 << (width - 1)
                }
            }
        }!
        var payload = [UInt8](repeating: 0, count: (values.count * width + 7) / 8)
        for (index, value) in values.enumerated() where width > 0 {
            if width < 8 {
                let bit = index * width
                payload[bit / 8] |= UInt8(value) << UInt8(bit % 8)
            } else {
                for byte in 0..<(width / 8) { payload[index * width / 8 + byte] = UInt8(truncatingIfNeeded: value >> (8 * Int64(byte))) }
            }
        }
        return node(count: values.count, width: width, scheme: .bits, payload: payload, hasRefs: hasRefs, inner: inner, context: context)
    }

    mutating func refs(_ values: [Int64]) -> Int64 { ints(values, hasRefs: true) }

    /// A short-string leaf (slots of 4–64 bytes; the last byte counts the padding, == width for null).
    mutating func shortStrings(_ values: [String?]) -> Int64 {
        let longest = values.map { $0?.utf8.count ?? 0 }.max() ?? 0
        let width = [4, 8, 16, 32, 64].first { $0 > longest }!
        var payload: [UInt8] = []
        for value in values {
            var slot = [UInt8](repeating: 0, count: width)
            if let value {
                slot.replaceSubrange(0..<value.utf8.count, with: Array(value.utf8))
                slot[width - 1] = UInt8(width - 1 - value.utf8.count)
            } else {
                slot[width - 1] = UInt8(width)
            }
            payload += slot
        }
        return node(count: values.count, width: width, scheme: .multiply, payload: payload)
    }

    /// A small-blobs leaf: end offsets, concatenated bytes, null flags.
    mutating func smallBlobs(_ values: [[UInt8]?]) -> Int64 {
        var blob: [UInt8] = []
        var ends: [Int64] = []
        for value in values {
            blob += value ?? []
            ends.append(Int64(blob.count))
        }
        let offsets = ints(ends)
        let data = node(count: blob.count, width: 1, scheme: .ignore, payload: blob)
        let nulls = ints(values.map { $0 == nil ? 1 : 0 })
        return refs([offsets, data, nulls])
    }

    /// Values of `size` bytes in blocks of one null-bit byte plus eight values.
    mutating func fixedBytes(_ values: [[UInt8]?], size: Int) -> Int64 {
        var payload: [UInt8] = []
        for (index, value) in values.enumerated() {
            if index % 8 == 0 { payload.append(0) }
            let block = (index / 8) * (size * 8 + 1)
            if let value { payload += value } else {
                payload[block] |= 1 << UInt8(index % 8)
                payload += [UInt8](repeating: 0, count: size)
            }
        }
        return node(count: payload.count, width: 1, scheme: .multiply, payload: payload)
    }

    /// A leaf of raw little-endian values of `width` bytes (Float, Double, Decimal128).
    mutating func wide(_ words: [[UInt64]], width: Int) -> Int64 {
        var payload: [UInt8] = []
        for value in words {
            for word in value { for byte in 0..<min(8, width) { payload.append(UInt8(truncatingIfNeeded: word >> (8 * UInt64(byte)))) } }
        }
        return node(count: words.count, width: width, scheme: .multiply, payload: payload)
    }

    struct Column {
        let name: String
        let type: Int64
        let attributes: Int64
        let target: Int64
        let leaf: Int64
    }

    /// A table top with spec and a single cluster leaf of `count` objects (keys 0..<count).
    mutating func table(key: Int64, columns: [Column], count: Int, primaryKey: Int? = nil, enumKeys: [Int: Int64] = [:]) -> Int64 {
        let types = ints(columns.map(\.type))
        let names = shortStrings(columns.map(\.name))
        let attributes = ints(columns.map(\.attributes))
        let columnKeys = columns.enumerated().map { Int64($0.offset) | ($0.element.type & 0x3F) << 16 | $0.element.attributes << 22 }
        let keys = ints(columnKeys)
        let enumRefs = enumKeys.isEmpty ? 0 : refs(columns.indices.map { enumKeys[$0] ?? 0 })
        let spec = refs([types, names, attributes, 0, enumRefs, keys])
        let cluster = refs([Self.tagged(Int64(count))] + columns.map(\.leaf))
        let opposite = ints(columns.map(\.target))
        let oppositeColumns = ints(columns.map { _ in 0 })
        let pk = primaryKey.map { Self.tagged(columnKeys[$0]) } ?? 0
        return refs([spec, 0, cluster, Self.tagged(key), 0, Self.tagged(0), Self.tagged(0), opposite, oppositeColumns,
                     Self.tagged(0), 0, pk, Self.tagged(0)])
    }

    /// Appends the group and returns the finished file (format `format`, top ref in slot 1).
    mutating func finish(tableNames: [String], tables: [Int64], format: UInt8 = 23) -> Data {
        let names = shortStrings(tableNames)
        let tableRefs = refs(tables)
        let top = refs([names, tableRefs, Self.tagged(Int64(bytes.count))])
        var file = bytes
        for byte in 0..<8 { file[8 + byte] = UInt8(truncatingIfNeeded: top >> (8 * Int64(byte))) }
        file.replaceSubrange(16..<20, with: Array("T-DB".utf8))
        file[21] = format
        file[23] = 1
        return Data(file)
    }
}
