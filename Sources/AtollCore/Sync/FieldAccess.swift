/// Field-level permissions of one rule: which fields of an object the user may read and write.
/// Fields not listed follow ``otherFields``; writing a field implies reading it. The primary key
/// is always readable (it names the object) and only ever set when the object is created.
///
/// ```swift
/// let access = FieldAccess(fields: ["salary": .init(read: false, write: false)], otherFields: .init(read: true, write: true))
/// access.mayRead("salary")  // false
/// ```
public struct FieldAccess: Sendable, Hashable, Codable {
    public struct Access: Sendable, Hashable, Codable {
        public var read: Bool
        public var write: Bool

        public init(read: Bool, write: Bool) {
            self.read = read
            self.write = write
        }
    }

    /// Fields with their own access.
    public var fields: [String: Access]
    /// The access of every field not in ``fields`` (unreadable by default).
    public var otherFields: Access

    public init(fields: [String: Access] = [:], otherFields: Access = Access(read: false, write: false)) {
        self.fields = fields
        self.otherFields = otherFields
    }

    public func mayRead(_ field: String) -> Bool {
        let access = fields[field] ?? otherFields
        return access.read || access.write
    }

    public func mayWrite(_ field: String) -> Bool {
        (fields[field] ?? otherFields).write
    }

    /// The fields of `schema` the user may not read (never the primary key).
    public func hidden(in schema: ObjectSchema) -> Set<String> {
        Set(schema.properties.filter { !$0.isPrimaryKey && !mayRead($0.name) }.map(\.name))
    }

    enum CodingKeys: String, CodingKey { case fields, otherFields }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fields = try container.decodeIfPresent([String: Access].self, forKey: .fields) ?? [:]
        otherFields = try container.decodeIfPresent(Access.self, forKey: .otherFields) ?? Access(read: false, write: false)
    }
}

extension FieldAccess.Access {
    enum CodingKeys: String, CodingKey { case read, write }

    /// Absent flags are `false`: a field is readable or writable only when the rule says so.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        read = try container.decodeIfPresent(Bool.self, forKey: .read) ?? false
        write = try container.decodeIfPresent(Bool.self, forKey: .write) ?? false
    }
}

extension FlexibleSync {
    /// `instructions` with nothing that reveals a field the user may not read (`hidden` by type):
    /// a change of a hidden field becomes what puts it back to its default on the device (a set
    /// of the property's initial value, or a clear of a collection), once per object and field.
    /// Creations, erasures and other fields stay.
    ///
    /// A device only ever shows a hidden field's default. Dropping the changes would be enough
    /// for what others write, but not for a write of the device's own that the server reverted
    /// (writing implies reading, so the user may not write a hidden field): the server's
    /// compensating change must not carry the value the field really has, and without it the
    /// device would keep what it wrote. With the reset it returns to the default, as everywhere
    /// else; for devices already there the reset changes nothing.
    ///
    /// - Complexity: O(*n*) in the instructions.
    public static func hiding(_ hidden: [String: Set<String>], in instructions: [Instruction], schema: [String: ObjectSchema]) -> [Instruction] {
        guard !hidden.isEmpty else { return instructions }
        var reset: Set<FieldOfObject> = []
        var result: [Instruction] = []
        result.reserveCapacity(instructions.count)
        for instruction in instructions {
            guard let id = instruction.object, let fields = hidden[id.type], let field = instruction.field, fields.contains(field) else {
                result.append(instruction)
                continue
            }
            guard reset.insert(FieldOfObject(object: id, field: field)).inserted,
                  let property = schema[id.type]?[property: field] else { continue }
            let path: [PathElement] = [.property(field)]
            result.append(property.collection == .single ? .set(id, path: path, value: property.initialValue) : .clear(id, path: path))
        }
        return result
    }

    private struct FieldOfObject: Hashable {
        var object: ObjectID
        var field: String
    }
}

extension Instruction {
    /// The property an instruction changes (the first element of its path), if it changes one.
    public var field: String? {
        let path: [PathElement]
        switch self {
        case .addTable, .addColumn, .createObject, .eraseObject: return nil
        case .set(_, let p, _), .addInteger(_, let p, _), .listInsert(_, let p, _, _), .listErase(_, let p, _),
             .listMove(_, let p, _, _), .clear(_, let p), .setInsert(_, let p, _), .setErase(_, let p, _), .mapErase(_, let p, _):
            path = p
        }
        guard case .property(let name)? = path.first else { return nil }
        return name
    }
}
