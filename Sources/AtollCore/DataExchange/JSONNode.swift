import Foundation

/// One JSON value as read from a document, members kept in their order, numbers kept as written
/// (so `1` and `1.0` stay apart, as relaxed Extended JSON needs).
package indirect enum JSONNode: Hashable, Sendable {
    case null
    case bool(Bool)
    /// The number as written, and whether it has no fraction or exponent.
    case number(String, isInteger: Bool)
    case string(String)
    case array([JSONNode])
    case object([(String, JSONNode)])

    package static func == (lhs: JSONNode, rhs: JSONNode) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a, x), .number(b, y)): a == b && x == y
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .number(let s, _): hasher.combine(s)
        case .string(let s): hasher.combine(s)
        case .array(let a): hasher.combine(a)
        case .object(let members): for (k, v) in members { hasher.combine(k); hasher.combine(v) }
        }
    }

    /// The member named `key` of an object.
    package subscript(key: String) -> JSONNode? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// Parses one JSON value (surrounding whitespace allowed), within `limits`.
    ///
    /// ```swift
    /// let doc = try JSONNode.parse(Array(#"{"_id": {"$oid": "5f1d7e…"}}"#.utf8))
    /// ```
    /// - Throws: ``DataImportError`` (`malformedJSON`, `tooDeep`, `tooLarge`) with the byte offset.
    package static func parse(_ bytes: some Collection<UInt8>, limits: JSONLimits = JSONLimits()) throws(DataImportError) -> JSONNode {
        guard bytes.count <= limits.maxDocumentBytes else {
            throw DataImportError(.tooLarge, "the document has \(bytes.count) bytes, more than \(limits.maxDocumentBytes)")
        }
        var parser = JSONParser(bytes: Array(bytes), limits: limits)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else { throw parser.error("text after the JSON value") }
        return value
    }
}

/// A recursive-descent JSON parser (RFC 8259) whose recursion is bounded by `limits.maxDepth`.
struct JSONParser {
    let bytes: [UInt8]
    let limits: JSONLimits
    var position = 0

    init(bytes: [UInt8], limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    func error(_ message: String, _ code: DataImportError.Code = .malformedJSON) -> DataImportError {
        DataImportError(code, "\(message) (byte \(position))")
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws(DataImportError) -> JSONNode {
        guard position < bytes.count else { throw error("unexpected end") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character")
        }
    }

    /// Steps over one value as ``value(depth:)`` reads it (the same checks: depth, counts, strings,
    /// numbers) without building it; strings are still made once, to check their UTF-8.
    mutating func skipValue(depth: Int) throws(DataImportError) {
        guard position < bytes.count else { throw error("unexpected end") }
        switch bytes[position] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = bytes[position] == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            guard depth + 1 <= limits.maxDepth else { throw error("nested deeper than \(limits.maxDepth)", .tooDeep) }
            position += 1
            skipWhitespace()
            if position < bytes.count, bytes[position] == close { position += 1; return }
            var count = 0
            while true {
                skipWhitespace()
                if isObject {
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                    _ = try string()
                    skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected ':'") }
                    position += 1
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                count += 1
                guard count <= limits.maxElements else { throw error("more than \(limits.maxElements) elements", .tooLarge) }
                skipWhitespace()
                guard position < bytes.count else { throw error("unexpected end") }
                if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                if bytes[position] == close { position += 1; return }
                throw error("expected ',' or a closing bracket")
            }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw error("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws(DataImportError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
              word.withUTF8Buffer({ bytes[position..<position + count].elementsEqual($0) }) else {
            throw error("unexpected word")
        }
        position += count
    }

    private mutating func object(depth: Int) throws(DataImportError) -> JSONNode {
        guard depth <= limits.maxDepth else { throw error("nested deeper than \(limits.maxDepth)", .tooDeep) }
        position += 1
        var members: [(String, JSONNode)] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object([]) }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try string()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected ':'") }
            position += 1
            skipWhitespace()
            members.append((key, try value(depth: depth)))
            guard members.count <= limits.maxElements else { throw error("more than \(limits.maxElements) members", .tooLarge) }
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }

    private mutating func array(depth: Int) throws(DataImportError) -> JSONNode {
        guard depth <= limits.maxDepth else { throw error("nested deeper than \(limits.maxDepth)", .tooDeep) }
        position += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array([]) }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            guard elements.count <= limits.maxElements else { throw error("more than \(limits.maxElements) elements", .tooLarge) }
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(elements) }
            throw error("expected ',' or ']'")
        }
    }

    mutating func number() throws(DataImportError) -> JSONNode {
        let start = position
        let bytes = self.bytes
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        func digits(_ p: inout Int) -> Int {
            let s = p
            while p < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[p]) { p += 1 }
            return p - s
        }
        guard digits(&position) > 0 else { throw error("malformed number") }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard digits(&position) > 0 else { throw error("malformed number") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits(&position) > 0 else { throw error("malformed number") }
        }
        guard position - start <= 400 else { throw error("a number of more than 400 characters", .tooLarge) }
        return .number(String(decoding: bytes[start..<position], as: UTF8.self), isInteger: isInteger)
    }

    mutating func string() throws(DataImportError) -> String {
        position += 1
        // Most strings have no escape: made from their bytes at once.
        var end = position
        while end < bytes.count, end - position <= limits.maxStringBytes {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                guard let text = String(utf8Validating: bytes[position..<end]) else {
                    position = end
                    throw error("a string that is not UTF-8")
                }
                position = end + 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            end += 1
        }
        var out: [UInt8] = []
        while true {
            guard position < bytes.count else { throw error("unterminated string") }
            let byte = bytes[position]
            guard out.count <= limits.maxStringBytes else { throw error("a string of more than \(limits.maxStringBytes) bytes", .tooLarge) }
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(utf8Validating: out) else { throw error("a string that is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw error("unterminated string") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                            throw error("a lone surrogate")
                        }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("a lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("a lone surrogate") }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                default: throw error("an unknown escape")
                }
            case 0..<0x20: throw error("a control character in a string")
            default:
                out.append(byte)
                position += 1
            }
        }
    }

    private mutating func hex4() throws(DataImportError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw error("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[position]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("a malformed \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }
}
