/// The canonical byte form of a ``ReplicaState``: two replicas hold the same data exactly when
/// their dumps are equal.
///
/// Layout (binary, as ``BinaryWriter`` writes): the magic `ATOLLDUMP1`; then each type sorted by
/// name: its name, embedded flag and properties sorted by name (name, type, collection,
/// optional, target type, primary key); then its objects sorted by the encoded primary key, each
/// with every property's value in property-name order — defaults filled in, embedded objects
/// reduced to their schema's fields, set elements sorted by their encoding.
extension ReplicaState {
    package func canonicalDump() -> [UInt8] {
        var w = BinaryWriter()
        for b in "ATOLLDUMP1".utf8 { w.byte(b) }
        let types = schema.values.sorted { $0.name < $1.name }
        w.varint(UInt64(types.count))
        for type in types {
            let properties = type.properties.sorted { $0.name < $1.name }
            w.string(type.name)
            w.byte(type.isEmbedded ? 1 : 0)
            w.varint(UInt64(properties.count))
            for p in properties {
                w.string(p.name)
                w.string(p.type.rawValue)
                w.string(p.collection.rawValue)
                w.byte(p.isOptional ? 1 : 0)
                w.string(p.objectType ?? "")
                w.byte(p.isPrimaryKey ? 1 : 0)
            }
            let keys = primaryKeys(of: type.name)
            w.varint(UInt64(keys.count))
            for key in keys {
                key.encode(into: &w)
                canonical(.object(objects[type.name]![key]!), .embedded(type.name)).encode(into: &w)
            }
        }
        return w.bytes
    }

    /// A readable rendering of the canonical state, for failure messages.
    package func canonicalDescription() -> String {
        var lines: [String] = []
        for type in schema.keys.sorted() {
            for key in primaryKeys(of: type) {
                lines.append("\(type)(\(key)) \(canonical(.object(objects[type]![key]!), .embedded(type)))")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `value` with defaults filled in and sets sorted, so equal data encodes to equal bytes.
    func canonical(_ value: Value, _ kind: SlotKind) -> Value {
        if case .field(let p) = kind, p.collection != .single {
            switch value {
            case .list(let items): return .list(items.map { canonical($0, .element(p)) })
            case .set(let items):
                let sorted = items.map { canonical($0, .element(p)) }
                    .sorted { $0.canonicalBytes.lexicographicallyPrecedes($1.canonicalBytes) }
                return .set(sorted)
            case .map(let entries): return .map(entries.mapValues { canonical($0, .element(p)) })
            default: return value
            }
        }
        guard let type = embeddedType(kind), let s = schema[type], case .object(let fields) = value else { return value }
        var out: [String: Value] = [:]
        for p in s.properties {
            out[p.name] = canonical(fields[p.name] ?? defaultValue(p), .field(p))
        }
        return .object(out)
    }
}
