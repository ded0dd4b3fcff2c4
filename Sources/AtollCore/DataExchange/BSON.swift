import Foundation

/// BSON (bsonspec.org, what `mongodump` writes) read into the canonical Extended JSON v2 tree the
/// import types (``DocumentTyping``), and written from it for export. Pure; every length is
/// checked against the bytes, and nesting against ``JSONLimits/maxDepth``.
///
/// ```swift
/// let node = try BSON.read(documentBytes)        // {"_id": {"$oid": "…"}, …}
/// let bytes = try BSON.write(node)               // the same document as BSON
/// ```
package enum BSON {
    /// One BSON document (its int32 length included) as an Extended JSON tree.
    /// - Throws: ``DataImportError`` (`malformedJSON` for malformed BSON, `tooDeep`, `tooLarge`).
    package static func read(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(DataImportError) -> JSONNode {
        guard bytes.count <= limits.maxDocumentBytes else { throw DataImportError(.tooLarge, "a BSON document of \(bytes.count) bytes") }
        var reader = Reader(bytes: bytes, limits: limits)
        let node = try reader.document(depth: 1, isArray: false)
        guard reader.position == bytes.count else { throw reader.bad("bytes after the document") }
        return node
    }

    struct Reader {
        let bytes: [UInt8]
        let limits: JSONLimits
        var position = 0

        func bad(_ message: String) -> DataImportError { DataImportError(.malformedJSON, "BSON: \(message) (byte \(position))") }

        mutating func take(_ n: Int) throws(DataImportError) -> ArraySlice<UInt8> {
            guard n >= 0, bytes.count - position >= n else { throw bad("a length past the end") }
            defer { position += n }
            return bytes[position..<position + n]
        }

        mutating func int32() throws(DataImportError) -> Int32 {
            let b = try take(4)
            return b.reversed().reduce(Int32(0)) { $0 << 8 | Int32($1) }
        }

        mutating func int64() throws(DataImportError) -> Int64 {
            let b = try take(8)
            return b.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }

        mutating func cString() throws(DataImportError) -> String {
            guard let end = bytes[position...].firstIndex(of: 0) else { throw bad("an unterminated name") }
            guard let s = String(utf8Validating: bytes[position..<end]) else { throw bad("a name that is not UTF-8") }
            position = end + 1
            return s
        }

        mutating func document(depth: Int, isArray: Bool) throws(DataImportError) -> JSONNode {
            guard depth <= limits.maxDepth else { throw DataImportError(.tooDeep, "nested deeper than \(limits.maxDepth)") }
            let start = position
            let length = Int(try int32())
            guard length >= 5, bytes.count - start >= length else { throw bad("a document length of \(length)") }
            let end = start + length
            var members: [(String, JSONNode)] = []
            while position < end - 1 {
                let type = try take(1).first!
                let name = try cString()
                members.append((name, try element(type, depth: depth)))
                guard members.count <= limits.maxElements else { throw DataImportError(.tooLarge, "more than \(limits.maxElements) elements") }
            }
            guard position == end - 1, try take(1).first == 0 else { throw bad("a document that does not end where its length says") }
            return isArray ? .array(members.map(\.1)) : .object(members)
        }

        mutating func element(_ type: UInt8, depth: Int) throws(DataImportError) -> JSONNode {
            func wrap(_ key: String, _ value: JSONNode) -> JSONNode { .object([(key, value)]) }
            switch type {
            case 0x01:
                let d = Double(bitPattern: UInt64(bitPattern: try int64()))
                return wrap("$numberDouble", .string(ExtendedJSON.doubleText(d)))
            case 0x02:
                let length = Int(try int32())
                guard length >= 1, length <= limits.maxStringBytes + 1 else { throw DataImportError(.tooLarge, "a string of \(length) bytes") }
                let body = try take(length)
                guard body.last == 0, let s = String(utf8Validating: body.dropLast()) else { throw bad("a malformed string") }
                return .string(s)
            case 0x03: return try document(depth: depth + 1, isArray: false)
            case 0x04: return try document(depth: depth + 1, isArray: true)
            case 0x05:
                let length = Int(try int32())
                let subType = try take(1).first!
                let body = Data(try take(length))
                return wrap("$binary", .object([("base64", .string(body.base64EncodedString())),
                                                ("subType", .string(String(format: "%02x", subType)))]))
            case 0x06, 0x0A: return .null
            case 0x07: return wrap("$oid", .string(try take(12).map { String(format: "%02x", $0) }.joined()))
            case 0x08:
                switch try take(1).first! {
                case 0: return .bool(false)
                case 1: return .bool(true)
                default: throw bad("a boolean that is neither 0 nor 1")
                }
            case 0x09: return wrap("$date", wrap("$numberLong", .string("\(try int64())")))
            case 0x10: return wrap("$numberInt", .string("\(try int32())"))
            case 0x12: return wrap("$numberLong", .string("\(try int64())"))
            case 0x13: return wrap("$numberDecimal", .string(Decimal128(bsonBytes: try take(16)).description))
            default:
                throw DataImportError(.wrongType, "BSON element type 0x\(String(type, radix: 16)) (regex, code, timestamp, min/max key …) has no Atoll type")
            }
        }
    }

    /// Cuts a `.bson` file's bytes (documents one after another) at `offset`: the length of the
    /// document starting there, or nil when fewer than 4 bytes remain.
    package static func documentLength(in bytes: some Collection<UInt8>) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return Int(Int32(bitPattern: bytes.prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
    }
}

extension JSONNode {
    /// The tree as JSON text (compact; members in order).
    package var text: String {
        switch self {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .number(let s, _): s
        case .string(let s): ExtendedJSON.quoted(s)
        case .array(let items): "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { ExtendedJSON.quoted($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }
}

extension BSON {
    /// A document of canonical Extended JSON (what ``ExtendedJSON/canonical(_:of:schema:)``
    /// writes) as BSON, wrappers turned back into their element types.
    /// - Throws: ``DataImportError`` when `node` is not a document or a wrapper is malformed.
    package static func write(_ node: JSONNode) throws(DataImportError) -> [UInt8] {
        guard case .object(let members) = node else { throw DataImportError(.notADocument, "BSON holds documents") }
        return try document(members)
    }

    static func document(_ members: [(String, JSONNode)]) throws(DataImportError) -> [UInt8] {
        var body: [UInt8] = []
        for (name, value) in members {
            let (type, bytes) = try element(value, path: name)
            body.append(type)
            body += Array(name.utf8) + [0]
            body += bytes
        }
        body.append(0)
        return le(Int32(body.count + 4)) + body
    }

    static func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

    static func element(_ node: JSONNode, path: String) throws(DataImportError) -> (UInt8, [UInt8]) {
        switch node {
        case .null: return (0x0A, [])
        case .bool(let b): return (0x08, [b ? 1 : 0])
        case .string(let s): return (0x02, le(Int32(s.utf8.count + 1)) + Array(s.utf8) + [0])
        case .number(let text, let isInteger):
            if isInteger, let i = Int64(text) { return Int32(exactly: i).map { (0x10, le($0)) } ?? (0x12, le(i)) }
            guard let d = Double(text) else { throw DataImportError(.wrongType, "the number \(text.prefix(40))", path: path) }
            return (0x01, le(d.bitPattern))
        case .array(let items):
            return (0x04, try document(items.enumerated().map { ("\($0.offset)", $0.element) }))
        case .object(let members):
            // The wrappers carrying `_binary` and `$date` are turned back into their elements; the
            // scalar ones are read through ExtendedJSON.scalar, which checks them.
            if case .object(let inner)? = node["$binary"], case .string(let b64)? = JSONNode.object(inner)["base64"],
               case .string(let sub)? = JSONNode.object(inner)["subType"], let data = Data(base64Encoded: b64), let subType = UInt8(sub, radix: 16) {
                return (0x05, le(Int32(data.count)) + [subType] + Array(data))
            }
            switch try ExtendedJSON.scalar(node, path: path) {
            case nil: return (0x03, try document(members))
            case .objectId(let o)?: return (0x07, o.bytes)
            case .int(let i)?: return members.first?.0 == "$numberInt" ? (0x10, le(Int32(i))) : (0x12, le(i))
            case .double(let d)?: return (0x01, le(d.bitPattern))
            case .decimal(let d)?: return (0x13, d.bsonBytes())
            case .date(let date)?: return (0x09, le(Int64((date.timeIntervalSince1970 * 1000).rounded())))
            case .uuid(let u)?: return (0x05, le(Int32(16)) + [4] + withUnsafeBytes(of: u.uuid) { Array($0) })
            case .data(let d)?: return (0x05, le(Int32(d.count)) + [0] + Array(d))
            case let other?: throw DataImportError(.wrongType, "\(other.kindName) has no BSON form here", path: path)
            }
        }
    }
}
