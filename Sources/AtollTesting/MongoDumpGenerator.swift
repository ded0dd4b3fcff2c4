import Foundation

/// Writes mongodump-shaped `.bson` files by the spec (bsonspec.org): documents one after another,
/// each an int32 little-endian length, elements (type byte, C-string name, value) and a 0.
package enum MongoDumpGenerator {
    package indirect enum Element: Sendable {
        case double(Double), string(String), document([(String, Element)]), array([Element])
        case binary(UInt8, [UInt8]), objectId([UInt8]), bool(Bool), dateTime(Int64), null
        case int32(Int32), int64(Int64), decimal128Bytes([UInt8]), timestamp(UInt64)
    }

    package static func document(_ members: [(String, Element)]) -> [UInt8] {
        var body: [UInt8] = []
        for (name, element) in members {
            body.append(typeByte(element))
            body += Array(name.utf8) + [0]
            body += bytes(element)
        }
        body.append(0)
        return le(Int32(body.count + 4)) + body
    }

    static func typeByte(_ e: Element) -> UInt8 {
        switch e {
        case .double: 0x01
        case .string: 0x02
        case .document: 0x03
        case .array: 0x04
        case .binary: 0x05
        case .objectId: 0x07
        case .bool: 0x08
        case .dateTime: 0x09
        case .null: 0x0A
        case .int32: 0x10
        case .timestamp: 0x11
        case .int64: 0x12
        case .decimal128Bytes: 0x13
        }
    }

    static func bytes(_ e: Element) -> [UInt8] {
        switch e {
        case .double(let d): le(d.bitPattern)
        case .string(let s): le(Int32(s.utf8.count + 1)) + Array(s.utf8) + [0]
        case .document(let members): document(members)
        case .array(let items): document(items.enumerated().map { ("\($0.offset)", $0.element) })
        case .binary(let sub, let data): le(Int32(data.count)) + [sub] + data
        case .objectId(let id): id
        case .bool(let b): [b ? 1 : 0]
        case .dateTime(let ms): le(ms)
        case .null: []
        case .int32(let i): le(i)
        case .timestamp(let t): le(t)
        case .int64(let i): le(i)
        case .decimal128Bytes(let b): b
        }
    }

    static func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

    /// Task `n` as `MongoExportGenerator.task(n, format:)` has it, in BSON (price given by its
    /// Decimal128 bytes, which the caller computes).
    package static func task(_ n: Int, priceBytes: [UInt8]) -> [UInt8] {
        let id = stride(from: 0, to: 24, by: 2).map { i -> UInt8 in
            let hex = Array(MongoExportGenerator.objectId(n))
            return UInt8(String(hex[i..<i + 2]), radix: 16)!
        }
        let uuid = withUnsafeBytes(of: MongoExportGenerator.uuid(n).uuid) { Array($0) }
        return document([
            ("_id", .objectId(id)),
            ("title", .string("Task \(n) \"quoted\" é")),
            ("priority", .int32(Int32(n % 5))),
            ("big", .int64(9_007_199_254_740_993 + Int64(n))),
            ("estimate", .double(Double(n) + 0.5)),
            ("due", .dateTime(1_700_000_000_000 + Int64(n) * 1_000)),
            ("price", .decimal128Bytes(priceBytes)),
            ("tag", .binary(4, uuid)),
            ("tags", .array([.string("t\(n % 3)"), .string("all")])),
            ("address", .document([("street", .string("\(n) Main St")), ("city", .string("Atoll"))])),
        ])
    }
}
