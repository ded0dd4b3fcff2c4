import Foundation

/// Typing a document straight from its bytes: the values the schema's properties need are read
/// from the JSON text as the scanner meets them, with no ``JSONNode`` tree in between.
///
/// The byte path is an accelerator, never a second definition: it reads the constructs a
/// mongoexport file is made of (strings, numbers, booleans, null, the one-string wrappers,
/// `$binary`, arrays of those, embedded documents of those) and hands anything else (a link, a
/// map, a mixed value, a wrapper of another shape) to ``DocumentTyping/value(_:for:element:path:links:)``
/// on that one value's node. When anything is wrong with the document (bad JSON, a limit, a
/// type that does not fit), it stops and the whole document goes through
/// `type(JSONNode.parse(bytes), as:)`, so a refusal is exactly the one the node path gives.
///
/// ```swift
/// let typed = try DocumentTyping(schema: schema).type(bytes: Array(line.utf8), as: "Task")
/// ```
extension DocumentTyping {
    /// The document typed as a top-level object of `typeName`: the same ``TypedDocument`` as
    /// `type(JSONNode.parse(bytes, limits: limits), as: typeName)`, or the same error.
    /// - Throws: ``DataImportError``, the node path's.
    /// - Complexity: O(*n*) in the document's bytes.
    package func type(bytes: [UInt8], as typeName: String, limits: JSONLimits = JSONLimits()) throws(DataImportError) -> TypedDocument {
        var instructions: [Instruction] = []
        var typed = try type(bytes: bytes, as: typeName, limits: limits, appendingTo: &instructions)
        typed.instructions = instructions
        return typed
    }

    /// ``type(bytes:as:limits:)`` writing the document's instructions at the end of
    /// `instructions` (a batch's one array) rather than into the document returned, whose
    /// ``TypedDocument/instructions`` is empty. Nothing is appended when the document is refused.
    /// - Throws: ``DataImportError``, the node path's.
    package func type(bytes: [UInt8], as typeName: String, limits: JSONLimits = JSONLimits(),
                      appendingTo instructions: inout [Instruction]) throws(DataImportError) -> TypedDocument {
        if let typed = scanned(bytes, as: typeName, limits: limits, appendingTo: &instructions) { return typed }
        var typed = try type(JSONNode.parse(bytes, limits: limits), as: typeName)
        instructions += typed.instructions
        typed.instructions = []
        return typed
    }

    /// The realm a document of a partition-based app belongs to, from its bytes: its member `key`
    /// read alone, every other value stepped over (checked, not built). The same value or error
    /// as ``partition(of:key:)`` of the parsed document: anything wrong, and that decides.
    package static func partition(ofBytes bytes: [UInt8], key: String, limits: JSONLimits = JSONLimits()) throws(DataImportError) -> PartitionValue {
        if bytes.count <= limits.maxDocumentBytes, let members = try? keyMember(bytes, key, limits),
           let value = try? partition(of: .object(members), key: key) {
            return value
        }
        return try partition(of: JSONNode.parse(bytes, limits: limits), key: key)
    }

    /// The first member named `key` of the document in `bytes` (none, or that one), the document checked whole.
    private static func keyMember(_ bytes: [UInt8], _ key: String, _ limits: JSONLimits) throws(DataImportError) -> [(String, JSONNode)] {
        var parser = JSONParser(bytes: bytes, limits: limits)
        parser.skipWhitespace()
        guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: "{"), 1 <= limits.maxDepth else {
            throw parser.error("not a document")
        }
        parser.position += 1
        parser.skipWhitespace()
        var found: JSONNode?
        if parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: "}") {
            parser.position += 1
        } else {
            var count = 0
            while true {
                parser.skipWhitespace()
                guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: "\"") else { throw parser.error("expected a member name") }
                let name = try parser.string()
                parser.skipWhitespace()
                guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: ":") else { throw parser.error("expected ':'") }
                parser.position += 1
                parser.skipWhitespace()
                if found == nil, name == key { found = try parser.value(depth: 1) } else { try parser.skipValue(depth: 1) }
                count += 1
                guard count <= limits.maxElements else { throw parser.error("too many members", .tooLarge) }
                parser.skipWhitespace()
                guard parser.position < bytes.count else { throw parser.error("unexpected end") }
                if bytes[parser.position] == UInt8(ascii: ",") { parser.position += 1; continue }
                if bytes[parser.position] == UInt8(ascii: "}") { parser.position += 1; break }
                throw parser.error("expected ',' or '}'")
            }
        }
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.error("text after the JSON value") }
        return found.map { [(key, $0)] } ?? []
    }

    /// The byte path alone: nil whenever it does not type the document itself (any error included).
    package func scanned(_ bytes: [UInt8], as typeName: String, limits: JSONLimits) -> TypedDocument? {
        var instructions: [Instruction] = []
        guard var typed = scanned(bytes, as: typeName, limits: limits, appendingTo: &instructions) else { return nil }
        typed.instructions = instructions
        return typed
    }

    /// ``scanned(_:as:limits:)`` appending the instructions to `instructions` (nothing when nil).
    func scanned(_ bytes: [UInt8], as typeName: String, limits: JSONLimits, appendingTo instructions: inout [Instruction]) -> TypedDocument? {
        guard bytes.count <= limits.maxDocumentBytes, let objectSchema = schema[typeName], !objectSchema.isEmbedded,
              let key = objectSchema.primaryKeyProperty else { return nil }
        var scanner = DocumentScanner(typing: self, parser: JSONParser(bytes: bytes, limits: limits))
        do {
            return try scanner.document(objectSchema, key: key, appendingTo: &instructions)
        } catch {
            return nil
        }
    }
}

/// A member of the document as the byte path read it, before the primary key is known.
private enum ScannedMember {
    case single(String, Value)
    case clear(String)
    case elements(String, [Value], isList: Bool)
    case map(String, [(String, Value)])
}

/// Why the byte path stopped (the node path then decides): never seen outside this file.
private struct NotScanned: Error {}

/// The byte path's state over one document. Depths count as ``JSONParser/value(depth:)`` counts
/// them: the document's members are read at depth 1.
private struct DocumentScanner {
    let typing: DocumentTyping
    var parser: JSONParser

    /// Members the byte path compares names against without a hash set (more: the node path).
    static let maxScannedMembers = 64

    var bytes: [UInt8] { parser.bytes }
    var limits: JSONLimits { parser.limits }

    mutating func peek() throws(DataImportError) -> UInt8 {
        guard parser.position < parser.bytes.count else { throw parser.error("unexpected end") }
        return parser.bytes[parser.position]
    }

    /// Steps over `byte` (after whitespace) or stops.
    mutating func expect(_ byte: UInt8) throws(DataImportError) {
        parser.skipWhitespace()
        guard try peek() == byte else { throw parser.error("unexpected character") }
        parser.position += 1
    }

    /// After a member or element: true for `,`, false for `close`.
    mutating func next(_ close: UInt8) throws(DataImportError) -> Bool {
        parser.skipWhitespace()
        let byte = try peek()
        parser.position += 1
        if byte == UInt8(ascii: ",") { return true }
        if byte == close { return false }
        throw parser.error("unexpected character")
    }

    /// A member's name and the colon after it; the value's first byte is next.
    mutating func memberName() throws(DataImportError) -> String {
        parser.skipWhitespace()
        guard try peek() == UInt8(ascii: "\"") else { throw parser.error("expected a member name") }
        let name = try parser.string()
        try expect(UInt8(ascii: ":"))
        parser.skipWhitespace()
        return name
    }

    /// The document typed, its instructions appended to `instructions` once it has been read whole.
    mutating func document(_ objectSchema: ObjectSchema, key: Property, appendingTo instructions: inout [Instruction]) throws -> TypedDocument {
        parser.skipWhitespace()
        guard try peek() == UInt8(ascii: "{"), 1 <= limits.maxDepth else { throw NotScanned() }
        parser.position += 1
        parser.skipWhitespace()
        guard try peek() != UInt8(ascii: "}") else { throw NotScanned() }  // no primary key
        var primaryKey: Value?
        var members: [ScannedMember] = []
        members.reserveCapacity(objectSchema.properties.count)
        var seen: [String] = []
        var ignored: [String] = []
        var links: [ObjectLink] = []
        var count = 0
        repeat {
            let name = try memberName()
            count += 1
            guard count <= limits.maxElements, count <= Self.maxScannedMembers else { throw NotScanned() }
            if name == key.name {
                if primaryKey == nil {
                    primaryKey = try value(key, depth: 1, links: &links)
                } else {
                    _ = try parser.value(depth: 1)  // the node path reads only the first
                }
                continue
            }
            if name == typing.skippedField {
                _ = try parser.value(depth: 1)
                continue
            }
            guard !seen.contains(name) else { throw NotScanned() }
            seen.append(name)
            guard let property = objectSchema[property: name] else {
                ignored.append(name)
                _ = try parser.value(depth: 1)
                continue
            }
            switch property.collection {
            case .single:
                members.append(.single(name, try value(property, depth: 1, links: &links)))
            case .list, .set:
                switch try peek() {
                case UInt8(ascii: "n"):
                    try parser.literal("null")
                    members.append(.clear(name))
                case UInt8(ascii: "["):
                    members.append(.elements(name, try elements(property, depth: 1, links: &links), isList: property.collection == .list))
                default:
                    throw NotScanned()
                }
            case .map:
                switch try parser.value(depth: 1) {
                case .null: members.append(.clear(name))
                case .object(let entries):
                    var typed: [(String, Value)] = []
                    for (entry, element) in entries {
                        typed.append((entry, try typing.value(element, for: property, element: true, path: "", links: &links)))
                    }
                    members.append(.map(name, typed))
                default:
                    throw NotScanned()
                }
            }
        } while try next(UInt8(ascii: "}"))
        parser.skipWhitespace()
        guard parser.position == bytes.count, let primaryKey, !primaryKey.isNull || key.isOptional else { throw NotScanned() }

        let id = ObjectID(type: objectSchema.name, primaryKey: primaryKey)
        instructions.append(.createObject(id))
        for member in members {
            switch member {
            case .single(let name, let value):
                instructions.append(.set(id, path: [.property(name)], value: value))
            case .clear(let name):
                instructions.append(.clear(id, path: [.property(name)]))
            case .elements(let name, let values, let isList):
                let path: [PathElement] = [.property(name)]
                instructions.append(.clear(id, path: path))
                for (index, value) in values.enumerated() {
                    instructions.append(isList ? .listInsert(id, path: path, index: index, value: value) : .setInsert(id, path: path, value: value))
                }
            case .map(let name, let entries):
                let path: [PathElement] = [.property(name)]
                instructions.append(.clear(id, path: path))
                for (entry, value) in entries { instructions.append(.set(id, path: path + [.key(entry)], value: value)) }
            }
        }
        return TypedDocument(id: id, instructions: [], links: links, ignoredFields: ignored)
    }

    /// The elements of an array (the scanner at its `[`), each typed for `property`.
    mutating func elements(_ property: Property, depth: Int, links: inout [ObjectLink]) throws -> [Value] {
        guard depth + 1 <= limits.maxDepth else { throw NotScanned() }
        parser.position += 1
        parser.skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            parser.position += 1
            return []
        }
        var values: [Value] = []
        repeat {
            parser.skipWhitespace()
            values.append(try value(property, depth: depth + 1, links: &links))
            guard values.count <= limits.maxElements else { throw NotScanned() }
        } while try next(UInt8(ascii: "]"))
        return values
    }

    /// One value for `property` (a single property or one element): read here when it is one of
    /// the constructs the byte path knows, else its node typed by the node path's own function.
    mutating func value(_ property: Property, depth: Int, links: inout [ObjectLink]) throws -> Value {
        let start = parser.position
        if let value = try scalar(property, depth: depth) { return value }
        parser.position = start
        return try typing.value(try parser.value(depth: depth), for: property, element: false, path: "", links: &links)
    }

    /// A value read from the bytes, or nil (nothing promised about the position) for the node path.
    mutating func scalar(_ property: Property, depth: Int) throws -> Value? {
        let byte = try peek()
        if property.type == .object {
            guard byte == UInt8(ascii: "{"), let target = property.objectType, let targetSchema = typing.schema[target],
                  targetSchema.isEmbedded else { return nil }
            return try embedded(targetSchema, depth: depth)
        }
        if property.type == .any { return nil }
        let read: Value
        switch byte {
        case UInt8(ascii: "\""): read = .string(try parser.string())
        case UInt8(ascii: "t"): try parser.literal("true"); read = .bool(true)
        case UInt8(ascii: "f"): try parser.literal("false"); read = .bool(false)
        case UInt8(ascii: "n"):
            try parser.literal("null")
            guard property.isOptional else { throw NotScanned() }
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard case .number(let text, let isInteger) = try parser.number(),
                  let number = ExtendedJSON.number(text, isInteger: isInteger) else { throw NotScanned() }
            read = number
        case UInt8(ascii: "{"):
            guard let wrapped = try wrapper(depth: depth) else { return nil }
            read = wrapped
        default:
            return nil
        }
        return try typing.convert(read, to: property) { _ in DataImportError(.wrongType, "") }
    }

    /// A wrapper of the shapes mongoexport writes, `{"$oid": "…"}` (any one-string wrapper,
    /// `$date` with its ISO string) or `{"$binary": {"base64": "…", "subType": "…"}}`; nil for
    /// any other shape.
    mutating func wrapper(depth: Int) throws -> Value? {
        guard depth + 2 <= limits.maxDepth else { return nil }
        parser.position += 1
        parser.skipWhitespace()
        guard try peek() == UInt8(ascii: "\"") else { return nil }
        let key = try memberName()
        let value: Value
        switch key {
        case "$oid", "$numberInt", "$numberLong", "$numberDouble", "$numberDecimal", "$uuid", "$date":
            guard try peek() == UInt8(ascii: "\"") else { return nil }
            value = try ExtendedJSON.wrapped(key, try parser.string(), path: "")
        case "$binary":
            guard try peek() == UInt8(ascii: "{") else { return nil }
            parser.position += 1
            var base64: String?, subType: String?
            for member in 0..<2 {
                if member > 0 {
                    parser.skipWhitespace()
                    guard try peek() == UInt8(ascii: ",") else { return nil }
                    parser.position += 1
                }
                switch try memberName() {
                case "base64" where base64 == nil:
                    guard try peek() == UInt8(ascii: "\"") else { return nil }
                    base64 = try parser.string()
                case "subType" where subType == nil:
                    guard try peek() == UInt8(ascii: "\"") else { return nil }
                    subType = try parser.string()
                default: return nil
                }
            }
            guard let base64, let subType else { return nil }
            try expect(UInt8(ascii: "}"))
            value = try ExtendedJSON.binary(base64: base64, subType: subType, path: "")
        default:
            return nil
        }
        parser.skipWhitespace()
        guard try peek() == UInt8(ascii: "}") else { return nil }
        parser.position += 1
        return value
    }

    /// An embedded document (the scanner at its `{`) as the `.object` value the node path makes;
    /// nil when it starts like a wrapper (`$`), which the node path tells apart.
    mutating func embedded(_ target: ObjectSchema, depth: Int) throws -> Value? {
        guard depth + 1 <= limits.maxDepth else { return nil }
        parser.position += 1
        parser.skipWhitespace()
        var fields: [String: Value] = [:]
        if try peek() == UInt8(ascii: "}") {
            parser.position += 1
            return .object(fields)
        }
        var count = 0
        var links: [ObjectLink] = []
        repeat {
            let name = try memberName()
            if count == 0, name.hasPrefix("$") { return nil }
            count += 1
            guard count <= limits.maxElements else { throw NotScanned() }
            guard let property = target[property: name] else {
                _ = try parser.value(depth: depth + 1)
                continue
            }
            switch property.collection {
            case .single:
                guard let value = try scalar(property, depth: depth + 1) else { return nil }
                fields[name] = value
            case .list, .set:
                guard try peek() == UInt8(ascii: "[") else { return nil }
                let values = try elements(property, depth: depth + 1, links: &links)
                fields[name] = property.collection == .list ? .list(values) : .set(values)
            case .map:
                return nil
            }
            // A link inside an embedded document: the node path keeps its order among the links.
            guard links.isEmpty else { return nil }
        } while try next(UInt8(ascii: "}"))
        return .object(fields)
    }
}
