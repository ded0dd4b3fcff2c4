import AtollCore

/// What one generated write is: a new `LoadWrite` object whose fields say who wrote it and when it
/// was due, so whichever session downloads it measures its latency from the schedule.
///
/// ```swift
/// let changeset = LoadWrite(writer: 7, ordinal: 3, due: t).changeset(version: 4, isFirst: false, padding: 64)
/// LoadWrite(decoding: changeset)   // the same write back
/// ```
package struct LoadWrite: Hashable, Sendable {
    /// The writing session's index in the run.
    package var writer: Int
    /// Which of the writer's writes this is (from 0, across phases).
    package var ordinal: Int
    /// When the schedule said it was due (nanoseconds of the generator's monotonic clock).
    package var due: UInt64

    package init(writer: Int, ordinal: Int, due: UInt64) {
        self.writer = writer
        self.ordinal = ordinal
        self.due = due
    }

    /// The object type every write creates.
    package static let schema = ObjectSchema(name: "LoadWrite", properties: [
        Property(name: "_id", type: .string, isPrimaryKey: true),
        Property(name: "writer", type: .int),
        Property(name: "due", type: .int),
        Property(name: "payload", type: .string),
    ])

    /// The write as the changeset of client version `version`; a session's first changeset also
    /// adds the type, as an SDK's first commit does. `padding` bytes of payload make it larger.
    package func changeset(version: Int64, isFirst: Bool, padding: Int, timestamp: Int64) -> Changeset {
        let id = ObjectID(type: Self.schema.name, primaryKey: .string("\(writer)-\(ordinal)"))
        var instructions: [Instruction] = isFirst ? [.addTable(Self.schema)] : []
        instructions.append(.createObject(id))
        instructions.append(.set(id, path: [.property("writer")], value: .int(Int64(writer))))
        instructions.append(.set(id, path: [.property("due")], value: .int(Int64(bitPattern: due))))
        if padding > 0 {
            instructions.append(.set(id, path: [.property("payload")], value: .string(String(repeating: "x", count: padding))))
        }
        return Changeset(version: version, timestamp: timestamp, instructions: instructions)
    }

    /// The write a downloaded changeset carries, nil when it is not one (another client's data).
    package init?(decoding changeset: Changeset) {
        var writer: Int64?, due: Int64?, ordinal: Int?
        for instruction in changeset.instructions {
            switch instruction {
            case .createObject(let id) where id.type == Self.schema.name:
                guard case .string(let key) = id.primaryKey, let dash = key.lastIndex(of: "-") else { return nil }
                ordinal = Int(key[key.index(after: dash)...])
            case .set(let id, let path, .int(let value)) where id.type == Self.schema.name:
                if path == [.property("writer")] { writer = value } else if path == [.property("due")] { due = value }
            default:
                continue
            }
        }
        guard let writer, let due, let ordinal, writer >= 0, writer <= Int64(Int.max) else { return nil }
        self.init(writer: Int(writer), ordinal: ordinal, due: UInt64(bitPattern: due))
    }
}
