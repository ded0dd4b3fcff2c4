@testable import AtollCore
import Foundation

/// A small, seedable generator (SplitMix64) so every fuzz schedule replays exactly from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The schema merge tests use: one top-level type with a field of every kind, and an embedded type.
enum MergeFixture {
    static let address = ObjectSchema(name: "Address", properties: [
        Property(name: "city", type: .string),
        Property(name: "zip", type: .int),
        Property(name: "lines", type: .string, collection: .list),
    ], isEmbedded: true)

    static let item = ObjectSchema(name: "Item", properties: [
        Property(name: "id", type: .string, isPrimaryKey: true),
        Property(name: "title", type: .string),
        Property(name: "count", type: .int),
        Property(name: "flag", type: .bool, isOptional: true),
        Property(name: "owner", type: .object, isOptional: true, objectType: "Item"),
        Property(name: "address", type: .object, isOptional: true, objectType: "Address"),
        Property(name: "names", type: .string, collection: .list),
        Property(name: "links", type: .object, collection: .list, objectType: "Item"),
        Property(name: "addresses", type: .object, collection: .list, objectType: "Address"),
        Property(name: "tags", type: .string, collection: .set),
        Property(name: "scores", type: .int, collection: .map),
    ])

    static let schemaInstructions: [Instruction] = [.addTable(address), .addTable(item)]

    static func id(_ key: String) -> ObjectID { ObjectID(type: "Item", primaryKey: .string(key)) }
    static func link(_ key: String) -> Value { .link(ObjectLink(objectType: "Item", primaryKey: .string(key))) }

    static func changeset(_ instructions: [Instruction], version: Int64 = 1, timestamp: Int64 = 0, file: Int64 = 0) -> Changeset {
        Changeset(version: version, timestamp: timestamp, fileIdent: file, instructions: instructions)
    }

    /// A state with the schema, object `a` holding something in every field, and an object `b`.
    static func baseState() -> ReplicaState {
        var s = ReplicaState()
        let a = id("a"), b = id("b")
        s.apply(changeset(schemaInstructions + [
            .createObject(a), .createObject(b),
            .set(a, path: [.property("title")], value: .string("A")),
            .set(a, path: [.property("count")], value: .int(5)),
            .set(a, path: [.property("address")], value: .object(["city": .string("Oslo"), "zip": .int(1)])),
            .listInsert(a, path: [.property("names")], index: 0, value: .string("x")),
            .listInsert(a, path: [.property("names")], index: 1, value: .string("y")),
            .listInsert(a, path: [.property("names")], index: 2, value: .string("z")),
            .setInsert(a, path: [.property("tags")], value: .string("t")),
            .setInsert(a, path: [.property("tags")], value: .string("u")),
            .set(a, path: [.property("scores"), .key("k")], value: .int(1)),
            .set(a, path: [.property("scores"), .key("j")], value: .int(2)),
            .set(b, path: [.property("count")], value: .int(7)),
            .listInsert(b, path: [.property("names")], index: 0, value: .string("bx")),
            .listInsert(b, path: [.property("names")], index: 1, value: .string("by")),
            .listInsert(b, path: [.property("names")], index: 2, value: .string("bz")),
            .setInsert(b, path: [.property("tags")], value: .string("t")),
            .set(b, path: [.property("scores"), .key("k")], value: .int(1)),
            .set(b, path: [.property("address")], value: .object(["city": .string("Rome")])),
        ]))
        return s
    }
}

extension ReplicaState {
    func applying(_ changesets: [Changeset]) -> ReplicaState {
        var copy = self
        copy.apply(changesets)
        return copy
    }
}
