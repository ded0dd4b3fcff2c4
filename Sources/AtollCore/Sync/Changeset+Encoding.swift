import Foundation

extension Value {
    private enum Tag: UInt8 {
        case null = 0, bool, int, double, float, string, data, date, objectId, uuid, decimal, link, object, list, set, map
    }

    public func encode(into w: inout BinaryWriter) {
        switch self {
        case .null: w.byte(Tag.null.rawValue)
        case .bool(let b): w.byte(Tag.bool.rawValue); w.byte(b ? 1 : 0)
        case .int(let i): w.byte(Tag.int.rawValue); w.int(i)
        case .double(let d): w.byte(Tag.double.rawValue); w.fixed64(d.bitPattern)
        case .float(let f): w.byte(Tag.float.rawValue); w.varint(UInt64(f.bitPattern))
        case .string(let s): w.byte(Tag.string.rawValue); w.string(s)
        case .data(let d): w.byte(Tag.data.rawValue); w.blob(d)
        case .date(let d):
            w.byte(Tag.date.rawValue); w.fixed64(d.timeIntervalSince1970.bitPattern)
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

    public static func decode(from r: inout BinaryReader, depth: Int = 0) throws(DecodingFailure) -> Value {
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
        case .date: return .date(Date(timeIntervalSince1970: Double(bitPattern: try r.fixed64())))
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

extension Changeset {
    private enum Op: UInt8 {
        case addTable = 1, addColumn, createObject, eraseObject, set, addInteger, listInsert, listErase, listMove, clear,
             setInsert, setErase, mapErase
    }

    /// The changeset in Atoll's binary form (format 1).
    public func encoded() -> Data {
        var w = BinaryWriter()
        w.byte(1)
        w.int(version)
        w.int(timestamp)
        w.int(fileIdent)
        w.varint(UInt64(instructions.count))
        for instruction in instructions { Self.encode(instruction, into: &w) }
        return Data(w.bytes)
    }

    /// Decodes ``encoded()``; malformed input throws a ``DecodingFailure`` saying where.
    public init(decoding data: Data) throws(DecodingFailure) {
        var r = BinaryReader(data)
        let format = try r.byte()
        guard format == 1 else { throw DecodingFailure("unknown changeset format \(format)") }
        version = try r.int()
        timestamp = try r.int()
        fileIdent = try r.int()
        let n = try r.count()
        var instructions: [Instruction] = []
        instructions.reserveCapacity(n)
        for _ in 0..<n { instructions.append(try Self.decodeInstruction(&r)) }
        guard r.isAtEnd else { throw DecodingFailure("\(data.count - r.offset) trailing bytes after the changeset") }
        self.instructions = instructions
    }

    private static func encode(_ object: ObjectID, _ w: inout BinaryWriter) {
        w.string(object.type)
        object.primaryKey.encode(into: &w)
    }

    private static func encode(_ path: [PathElement], _ w: inout BinaryWriter) {
        w.varint(UInt64(path.count))
        for element in path {
            switch element {
            case .property(let p): w.byte(0); w.string(p)
            case .index(let i): w.byte(1); w.int(Int64(i))
            case .key(let k): w.byte(2); w.string(k)
            }
        }
    }

    private static func encode(_ schema: ObjectSchema, _ w: inout BinaryWriter) {
        w.string(schema.name)
        w.byte(schema.isEmbedded ? 1 : 0)
        w.varint(UInt64(schema.properties.count))
        for p in schema.properties { encode(p, &w) }
    }

    private static func encode(_ p: Property, _ w: inout BinaryWriter) {
        w.string(p.name)
        w.string(p.type.rawValue)
        w.string(p.collection.rawValue)
        w.byte((p.isOptional ? 1 : 0) | (p.isPrimaryKey ? 2 : 0) | (p.isIndexed ? 4 : 0))
        w.string(p.objectType ?? "")
    }

    static func encode(_ instruction: Instruction, into w: inout BinaryWriter) {
        switch instruction {
        case .addTable(let schema): w.byte(Op.addTable.rawValue); encode(schema, &w)
        case .addColumn(let type, let p): w.byte(Op.addColumn.rawValue); w.string(type); encode(p, &w)
        case .createObject(let o): w.byte(Op.createObject.rawValue); encode(o, &w)
        case .eraseObject(let o): w.byte(Op.eraseObject.rawValue); encode(o, &w)
        case .set(let o, let path, let value): w.byte(Op.set.rawValue); encode(o, &w); encode(path, &w); value.encode(into: &w)
        case .addInteger(let o, let path, let d): w.byte(Op.addInteger.rawValue); encode(o, &w); encode(path, &w); w.int(d)
        case .listInsert(let o, let path, let i, let v):
            w.byte(Op.listInsert.rawValue); encode(o, &w); encode(path, &w); w.int(Int64(i)); v.encode(into: &w)
        case .listErase(let o, let path, let i): w.byte(Op.listErase.rawValue); encode(o, &w); encode(path, &w); w.int(Int64(i))
        case .listMove(let o, let path, let from, let to):
            w.byte(Op.listMove.rawValue); encode(o, &w); encode(path, &w); w.int(Int64(from)); w.int(Int64(to))
        case .clear(let o, let path): w.byte(Op.clear.rawValue); encode(o, &w); encode(path, &w)
        case .setInsert(let o, let path, let v): w.byte(Op.setInsert.rawValue); encode(o, &w); encode(path, &w); v.encode(into: &w)
        case .setErase(let o, let path, let v): w.byte(Op.setErase.rawValue); encode(o, &w); encode(path, &w); v.encode(into: &w)
        case .mapErase(let o, let path, let k): w.byte(Op.mapErase.rawValue); encode(o, &w); encode(path, &w); w.string(k)
        }
    }

    private static func decodeObject(_ r: inout BinaryReader) throws(DecodingFailure) -> ObjectID {
        let type = try r.string()
        return ObjectID(type: type, primaryKey: try Value.decode(from: &r))
    }

    private static func decodePath(_ r: inout BinaryReader) throws(DecodingFailure) -> [PathElement] {
        let n = try r.count()
        var path: [PathElement] = []
        for _ in 0..<n {
            switch try r.byte() {
            case 0: path.append(.property(try r.string()))
            case 1: path.append(.index(Int(try r.int())))
            case 2: path.append(.key(try r.string()))
            case let other: throw DecodingFailure("unknown path element \(other) at byte \(r.offset - 1)")
            }
        }
        return path
    }

    private static func decodeProperty(_ r: inout BinaryReader) throws(DecodingFailure) -> Property {
        let name = try r.string()
        let typeName = try r.string()
        let collectionName = try r.string()
        guard let type = PropertyType(rawValue: typeName) else { throw DecodingFailure("unknown property type '\(typeName)'") }
        guard let collection = CollectionKind(rawValue: collectionName) else { throw DecodingFailure("unknown collection kind '\(collectionName)'") }
        let flags = try r.byte()
        let target = try r.string()
        return Property(name: name, type: type, collection: collection, isOptional: flags & 1 != 0,
                        objectType: target.isEmpty ? nil : target, isPrimaryKey: flags & 2 != 0, isIndexed: flags & 4 != 0)
    }

    static func decodeInstruction(_ r: inout BinaryReader) throws(DecodingFailure) -> Instruction {
        let raw = try r.byte()
        guard let op = Op(rawValue: raw) else { throw DecodingFailure("unknown instruction \(raw) at byte \(r.offset - 1)") }
        switch op {
        case .addTable:
            let name = try r.string()
            let embedded = try r.byte() != 0
            let n = try r.count()
            var properties: [Property] = []
            for _ in 0..<n { properties.append(try decodeProperty(&r)) }
            return .addTable(ObjectSchema(name: name, properties: properties, isEmbedded: embedded))
        case .addColumn:
            let type = try r.string()
            return .addColumn(type: type, try decodeProperty(&r))
        case .createObject: return .createObject(try decodeObject(&r))
        case .eraseObject: return .eraseObject(try decodeObject(&r))
        case .set:
            let o = try decodeObject(&r); let path = try decodePath(&r)
            return .set(o, path: path, value: try Value.decode(from: &r))
        case .addInteger:
            let o = try decodeObject(&r); let path = try decodePath(&r)
            return .addInteger(o, path: path, delta: try r.int())
        case .listInsert:
            let o = try decodeObject(&r); let path = try decodePath(&r); let i = Int(try r.int())
            return .listInsert(o, path: path, index: i, value: try Value.decode(from: &r))
        case .listErase:
            let o = try decodeObject(&r); let path = try decodePath(&r)
            return .listErase(o, path: path, index: Int(try r.int()))
        case .listMove:
            let o = try decodeObject(&r); let path = try decodePath(&r); let from = Int(try r.int())
            return .listMove(o, path: path, from: from, to: Int(try r.int()))
        case .clear:
            let o = try decodeObject(&r)
            return .clear(o, path: try decodePath(&r))
        case .setInsert:
            let o = try decodeObject(&r); let path = try decodePath(&r)
            return .setInsert(o, path: path, value: try Value.decode(from: &r))
        case .setErase:
            let o = try decodeObject(&r); let path = try decodePath(&r)
            return .setErase(o, path: path, value: try Value.decode(from: &r))
        case .mapErase:
            let o = try decodeObject(&r); let path = try decodePath(&r)
            return .mapErase(o, path: path, key: try r.string())
        }
    }
}
