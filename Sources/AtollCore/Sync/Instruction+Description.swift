/// A readable one-line rendering of an instruction, for logs and for the archive of changes a
/// client reset discarded: `set Task("abc").owner = "frodo"`, `insert Task("abc").tags[2] = "x"`.
extension Instruction: CustomStringConvertible {
    package var description: String {
        func at(_ id: ObjectID, _ path: [PathElement]) -> String {
            "\(id.type)(\(id.primaryKey))" + path.map { element in
                switch element {
                case .property(let name): "." + name
                case .index(let i): "[\(i)]"
                case .key(let key): "[\"\(key)\"]"
                }
            }.joined()
        }
        return switch self {
        case .addTable(let schema): "add type \(schema.name) (\(schema.properties.map(\.name).joined(separator: ", ")))"
        case .addColumn(let type, let property): "add property \(type).\(property.name): \(property.type.rawValue)"
        case .createObject(let id): "create \(at(id, []))"
        case .eraseObject(let id): "delete \(at(id, []))"
        case .set(let id, let path, let value): "set \(at(id, path)) = \(value)"
        case .addInteger(let id, let path, let delta): "add \(delta) to \(at(id, path))"
        case .listInsert(let id, let path, let index, let value): "insert \(at(id, path))[\(index)] = \(value)"
        case .listErase(let id, let path, let index): "remove \(at(id, path))[\(index)]"
        case .listMove(let id, let path, let from, let to): "move \(at(id, path))[\(from)] to [\(to)]"
        case .clear(let id, let path): "clear \(at(id, path))"
        case .setInsert(let id, let path, let value): "add \(value) to set \(at(id, path))"
        case .setErase(let id, let path, let value): "remove \(value) from set \(at(id, path))"
        case .mapErase(let id, let path, let key): "remove key \"\(key)\" from \(at(id, path))"
        }
    }
}
