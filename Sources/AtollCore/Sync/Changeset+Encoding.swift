import Foundation

extension Value {
    /// A value's tag byte. A date is tagged ``date`` and holds `Date`'s own bits (seconds since
    /// 2001 as a `Double`), so it decodes `==` to the date encoded. Before protocol version 2 and
    /// realm file format 4 a date was tagged ``legacyDate`` and held seconds since 1970, which
    /// loses the lowest bit of about half of today's dates; such bytes (in old history records,
    /// pending changesets, backups) still decode, as the old code read them.
    private enum Tag: UInt8 {
        case null = 0, bool, int, double, float, string, data, legacyDate, objectId, uuid, decimal, link, object, list, set, map, date
    }

    package func encode(into w: inout BinaryWriter) {
        switch self {
        case .null: w.byte(Tag.null.rawValue)
        case .bool(let b): w.byte(Tag.bool.rawValue); w.byte(b ? 1 : 0)
        case .int(let i): w.byte(Tag.int.rawValue); w.int(i)
        case .double(let d): w.byte(Tag.double.rawValue); w.fixed64(d.bitPattern)
        case .float(let f): w.byte(Tag.float.rawValue); w.varint(UInt64(f.bitPattern))
        case .string(let s): w.byte(Tag.string.rawValue); w.string(s)
        case .data(let d): w.byte(Tag.data.rawValue); w.blob(d)
        case .date(let d):
            // + 0 turns -0 into +0: equal dates have equal bytes.
            w.byte(Tag.date.rawValue); w.fixed64((d.timeIntervalSinceReferenceDate + 0).bitPattern)
        case .objectId(let o): w.byte(Tag.objectId.rawValue); w.blob(o.bytes)
        case .uuid(let u): w.byte(Tag.uuid.rawValue); withUnsafeBytes(of: u.uuid) { w.blob(Array($0)) }
        case .decimal(let d):
            w.byte(Tag.decimal.rawValue); w.fixed64(d.bid.high); w.fixed64(d.bid.low)
        case .link(let l): w.byte(Tag.link.rawValue); w.string(l.objectType); l.primaryKey.encode(into: &w)
        case .object(let fields):
            w.byte(Tag.object.rawValue); w.varint(UInt64(fields.count))
            for (k, v) in fields.sorted(by: { $0.key < $1.key }) { w.string(k); v.encode(into: &w) }
        case .list(let items): w.byte(Tag.list.rawValue); w.varint(UInt64(items.count)); for v in items { v.encode(into: &w) }
        case .set(let items): w.byte(Tag.set.rawValue); w.varint(UInt64(items.count)); for v in items { v.encode(into: &w) }
        case .map(let entries):
            w.byte(Tag.map.rawValue); w.varint(UInt64(entries.count))
            for (k, v) in entries.sorted(by: { $0.key < $1.key }) { w.string(k); v.encode(into: &w) }
        }
    }

    package static func decode(from r: inout BinaryReader, depth: Int = 0) throws(DecodingFailure) -> Value {
        try r.spendElement()
        guard depth < 64 else { throw DecodingFailure("values nested deeper than 64 levels") }
        let raw = try r.byte()
        guard let tag = Tag(rawValue: raw) else { throw DecodingFailure("unknown value tag \(raw) at byte \(r.offset - 1)") }
        switch tag {
        case .null: return .null
        case .bool: return .bool(try r.byte() != 0)
        case .int: return .int(try r.int())
        case .double: return .double(Double(bitPattern: try r.fixed64()))
        case .float:
            let bits = try r.varint()
            guard bits <= UInt64(UInt32.max) else { throw DecodingFailure("float out of range at byte \(r.offset)") }
            return .float(Float(bitPattern: UInt32(bits)))
        case .string: return .string(try r.string())
        case .data: return .data(Data(try r.blob()))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try r.fixed64())))
        case .legacyDate: return .date(Date(timeIntervalSince1970: Double(bitPattern: try r.fixed64())))
        case .objectId:
            let b = try r.blob()
            guard b.count == 12 else { throw DecodingFailure("ObjectId of \(b.count) bytes at byte \(r.offset)") }
            return .objectId(ObjectId(bytes: b))
        case .uuid:
            let b = try r.blob()
            guard b.count == 16 else { throw DecodingFailure("UUID of \(b.count) bytes at byte \(r.offset)") }
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .decimal:
            let high = try r.fixed64()
            return .decimal(Decimal128(bid: high, low: try r.fixed64()))
        case .link:
            let type = try r.string()
            return .link(ObjectLink(objectType: type, primaryKey: try decode(from: &r, depth: depth + 1)))
        case .object, .map:
            let n = try r.count()
            var fields: [String: Value] = [:]
            for _ in 0..<n {
                let key = try r.string()
                fields[key] = try decode(from: &r, depth: depth + 1)
            }
            return tag == .object ? .object(fields) : .map(fields)
        case .list, .set:
            let n = try r.count()
            var items: [Value] = []
            for _ in 0..<n { items.append(try decode(from: &r, depth: depth + 1)) }
            return tag == .list ? .list(items) : .set(items)
        }
    }
}

/// Writes instructions compactly: names (types, properties, map keys in paths) are interned —
/// written once, then referred to by number — and an instruction on the same object as the one
/// before it says so in one byte. A changeset that creates many objects shrinks about threefold.
struct ChangesetWriter {
    var w = BinaryWriter()
    private var strings: [String: UInt64] = [:]
    private var lastObject: ObjectID?

    mutating func name(_ s: String) {
        if let index = strings[s] {
            w.varint(index + 1)
        } else {
            w.varint(0)
            w.string(s)
            strings[s] = UInt64(strings.count)
        }
    }

    mutating func object(_ object: ObjectID) {
        if object == lastObject {
            w.byte(1)
            return
        }
        w.byte(0)
        name(object.type)
        object.primaryKey.encode(into: &w)
        lastObject = object
    }
}

/// Reads what ``ChangesetWriter`` wrote.
struct ChangesetReader {
    var r: BinaryReader
    private var strings: [String] = []
    private var lastObject: ObjectID?

    init(_ r: BinaryReader) { self.r = r }

    mutating func name() throws(DecodingFailure) -> String {
        let raw = try r.varint()
        if raw == 0 {
            let s = try r.string()
            strings.append(s)
            return s
        }
        guard raw - 1 < UInt64(strings.count) else {
            throw DecodingFailure("name reference \(raw - 1) at byte \(r.offset) before it was defined")
        }
        return strings[Int(raw - 1)]
    }

    mutating func object() throws(DecodingFailure) -> ObjectID {
        switch try r.byte() {
        case 1:
            guard let lastObject else { throw DecodingFailure("'same object' at byte \(r.offset) with no object before it") }
            return lastObject
        case 0:
            let type = try name()
            let object = ObjectID(type: type, primaryKey: try Value.decode(from: &r))
            lastObject = object
            return object
        case let other:
            throw DecodingFailure("unknown object marker \(other) at byte \(r.offset - 1)")
        }
    }
}

extension Changeset {
    private enum Op: UInt8 {
        case addTable = 1, addColumn, createObject, eraseObject, set, addInteger, listInsert, listErase, listMove, clear,
             setInsert, setErase, mapErase
    }

    static let format: UInt8 = 2

    /// The changeset in Atoll's binary form.
    package func encoded() -> Data {
        var c = ChangesetWriter()
        c.w.byte(Self.format)
        c.w.int(version)
        c.w.int(timestamp)
        c.w.int(fileIdent)
        c.w.varint(UInt64(instructions.count))
        for instruction in instructions { Self.encode(instruction, into: &c) }
        return Data(c.w.bytes)
    }

    /// Decodes ``encoded()``; malformed input throws a ``DecodingFailure`` saying where.
    package init(decoding data: Data) throws(DecodingFailure) {
        var unlimited = Int.max
        try self.init(decoding: data, elementBudget: &unlimited)
    }

    /// Decodes ``encoded()``, spending one of `elementBudget` per instruction and per value.
    package init(decoding data: Data, elementBudget: inout Int) throws(DecodingFailure) {
        var c = ChangesetReader(BinaryReader(data))
        c.r.elementBudget = elementBudget
        defer { elementBudget = c.r.elementBudget }
        let format = try c.r.byte()
        guard format == Self.format else { throw DecodingFailure("unknown changeset format \(format)") }
        version = try c.r.int()
        timestamp = try c.r.int()
        fileIdent = try c.r.int()
        let n = try c.r.count()
        var instructions: [Instruction] = []
        instructions.reserveCapacity(n)
        for _ in 0..<n { instructions.append(try Self.decodeInstruction(&c)) }
        guard c.r.isAtEnd else { throw DecodingFailure("\(data.count - c.r.offset) trailing bytes after the changeset") }
        self.instructions = instructions
    }

    private static func encode(_ path: [PathElement], _ c: inout ChangesetWriter) {
        c.w.varint(UInt64(path.count))
        for element in path {
            switch element {
            case .property(let p): c.w.byte(0); c.name(p)
            case .index(let i): c.w.byte(1); c.w.int(Int64(i))
            case .key(let k): c.w.byte(2); c.w.string(k)
            }
        }
    }

    private static func encode(_ schema: ObjectSchema, _ c: inout ChangesetWriter) {
        c.name(schema.name)
        // Flags: 1 embedded, 2 asymmetric.
        c.w.byte((schema.isEmbedded ? 1 : 0) | (schema.isAsymmetric ? 2 : 0))
        c.w.varint(UInt64(schema.properties.count))
        for p in schema.properties { encode(p, &c) }
    }

    private static func encode(_ p: Property, _ c: inout ChangesetWriter) {
        c.name(p.name)
        c.name(p.type.rawValue)
        c.name(p.collection.rawValue)
        c.w.byte((p.isOptional ? 1 : 0) | (p.isPrimaryKey ? 2 : 0) | (p.isIndexed ? 4 : 0))
        c.name(p.objectType ?? "")
    }

    static func encode(_ instruction: Instruction, into c: inout ChangesetWriter) {
        switch instruction {
        case .addTable(let schema): c.w.byte(Op.addTable.rawValue); encode(schema, &c)
        case .addColumn(let type, let p): c.w.byte(Op.addColumn.rawValue); c.name(type); encode(p, &c)
        case .createObject(let o): c.w.byte(Op.createObject.rawValue); c.object(o)
        case .eraseObject(let o): c.w.byte(Op.eraseObject.rawValue); c.object(o)
        case .set(let o, let path, let value):
            c.w.byte(Op.set.rawValue); c.object(o); encode(path, &c); value.encode(into: &c.w)
        case .addInteger(let o, let path, let d): c.w.byte(Op.addInteger.rawValue); c.object(o); encode(path, &c); c.w.int(d)
        case .listInsert(let o, let path, let i, let v):
            c.w.byte(Op.listInsert.rawValue); c.object(o); encode(path, &c); c.w.int(Int64(i)); v.encode(into: &c.w)
        case .listErase(let o, let path, let i): c.w.byte(Op.listErase.rawValue); c.object(o); encode(path, &c); c.w.int(Int64(i))
        case .listMove(let o, let path, let from, let to):
            c.w.byte(Op.listMove.rawValue); c.object(o); encode(path, &c); c.w.int(Int64(from)); c.w.int(Int64(to))
        case .clear(let o, let path): c.w.byte(Op.clear.rawValue); c.object(o); encode(path, &c)
        case .setInsert(let o, let path, let v): c.w.byte(Op.setInsert.rawValue); c.object(o); encode(path, &c); v.encode(into: &c.w)
        case .setErase(let o, let path, let v): c.w.byte(Op.setErase.rawValue); c.object(o); encode(path, &c); v.encode(into: &c.w)
        case .mapErase(let o, let path, let k): c.w.byte(Op.mapErase.rawValue); c.object(o); encode(path, &c); c.w.string(k)
        }
    }

    private static func decodePath(_ c: inout ChangesetReader) throws(DecodingFailure) -> [PathElement] {
        let n = try c.r.count()
        var path: [PathElement] = []
        for _ in 0..<n {
            switch try c.r.byte() {
            case 0: path.append(.property(try c.name()))
            case 1: path.append(.index(Int(try c.r.int())))
            case 2: path.append(.key(try c.r.string()))
            case let other: throw DecodingFailure("unknown path element \(other) at byte \(c.r.offset - 1)")
            }
        }
        return path
    }

    private static func decodeProperty(_ c: inout ChangesetReader) throws(DecodingFailure) -> Property {
        let name = try c.name()
        let typeName = try c.name()
        let collectionName = try c.name()
        guard let type = PropertyType(storedName: typeName) else { throw DecodingFailure("unknown property type '\(typeName)'") }
        guard let collection = CollectionKind(rawValue: collectionName) else { throw DecodingFailure("unknown collection kind '\(collectionName)'") }
        let flags = try c.r.byte()
        let target = try c.name()
        return Property(name: name, type: type, collection: collection, isOptional: flags & 1 != 0,
                        objectType: target.isEmpty ? nil : target, isPrimaryKey: flags & 2 != 0, isIndexed: flags & 4 != 0)
    }

    static func decodeInstruction(_ c: inout ChangesetReader) throws(DecodingFailure) -> Instruction {
        try c.r.spendElement()
        let raw = try c.r.byte()
        guard let op = Op(rawValue: raw) else { throw DecodingFailure("unknown instruction \(raw) at byte \(c.r.offset - 1)") }
        switch op {
        case .addTable:
            let name = try c.name()
            let flags = try c.r.byte()
            guard flags & ~3 == 0, flags != 3 else { throw DecodingFailure("bad type flags \(flags) of \(name)") }
            let n = try c.r.count()
            var properties: [Property] = []
            for _ in 0..<n { properties.append(try decodeProperty(&c)) }
            return .addTable(ObjectSchema(name: name, properties: properties, isEmbedded: flags & 1 != 0, isAsymmetric: flags & 2 != 0))
        case .addColumn:
            let type = try c.name()
            return .addColumn(type: type, try decodeProperty(&c))
        case .createObject: return .createObject(try c.object())
        case .eraseObject: return .eraseObject(try c.object())
        case .set:
            let o = try c.object(); let path = try decodePath(&c)
            return .set(o, path: path, value: try Value.decode(from: &c.r))
        case .addInteger:
            let o = try c.object(); let path = try decodePath(&c)
            return .addInteger(o, path: path, delta: try c.r.int())
        case .listInsert:
            let o = try c.object(); let path = try decodePath(&c); let i = Int(try c.r.int())
            return .listInsert(o, path: path, index: i, value: try Value.decode(from: &c.r))
        case .listErase:
            let o = try c.object(); let path = try decodePath(&c)
            return .listErase(o, path: path, index: Int(try c.r.int()))
        case .listMove:
            let o = try c.object(); let path = try decodePath(&c); let from = Int(try c.r.int())
            return .listMove(o, path: path, from: from, to: Int(try c.r.int()))
        case .clear:
            let o = try c.object()
            return .clear(o, path: try decodePath(&c))
        case .setInsert:
            let o = try c.object(); let path = try decodePath(&c)
            return .setInsert(o, path: path, value: try Value.decode(from: &c.r))
        case .setErase:
            let o = try c.object(); let path = try decodePath(&c)
            return .setErase(o, path: path, value: try Value.decode(from: &c.r))
        case .mapErase:
            let o = try c.object(); let path = try decodePath(&c)
            return .mapErase(o, path: path, key: try c.r.string())
        }
    }
}
