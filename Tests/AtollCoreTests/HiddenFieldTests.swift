@testable import AtollCore
import Testing

/// What a session gets of a field its role may not read (`FlexibleSync.hiding`): never the value;
/// a change of the field becomes the reset to its default, once per object and field, so a device
/// whose write to it the server reverted returns to the default instead of keeping its own value.
@Suite struct HiddenFieldTests {
    static let schema = ["Entry": ObjectSchema(name: "Entry", properties: [
        Property(name: "_id", type: .string, isPrimaryKey: true),
        Property(name: "name", type: .string),
        Property(name: "salary", type: .int),
        Property(name: "bonus", type: .double, isOptional: true),
        Property(name: "notes", type: .string, collection: .list),
        Property(name: "tags", type: .string, collection: .set),
    ])]
    static let ann = ObjectID(type: "Entry", primaryKey: .string("ann"))
    static let ben = ObjectID(type: "Entry", primaryKey: .string("ben"))
    static let hidden = ["Entry": Set(["salary", "bonus", "notes", "tags"])]

    @Test func aHiddenFieldsChangeBecomesItsResetAndNeverCarriesTheValue() {
        let instructions: [Instruction] = [
            .createObject(Self.ann),
            .set(Self.ann, path: [.property("name")], value: .string("Ann")),
            .set(Self.ann, path: [.property("salary")], value: .int(5_000)),
            .addInteger(Self.ann, path: [.property("salary")], delta: 500),
            .set(Self.ann, path: [.property("bonus")], value: .double(1.5)),
            .listInsert(Self.ann, path: [.property("notes")], index: 0, value: .string("raise due")),
            .set(Self.ann, path: [.property("notes"), .index(0)], value: .string("raise given")),
            .setInsert(Self.ann, path: [.property("tags")], value: .string("manager")),
            .set(Self.ben, path: [.property("salary")], value: .int(6_000)),
            .eraseObject(Self.ben),
        ]
        let shown = FlexibleSync.hiding(Self.hidden, in: instructions, schema: Self.schema)
        #expect(shown == [
            .createObject(Self.ann),
            .set(Self.ann, path: [.property("name")], value: .string("Ann")),
            .set(Self.ann, path: [.property("salary")], value: .int(0)),
            .set(Self.ann, path: [.property("bonus")], value: .null),
            .clear(Self.ann, path: [.property("notes")]),
            .clear(Self.ann, path: [.property("tags")]),
            .set(Self.ben, path: [.property("salary")], value: .int(0)),
            .eraseObject(Self.ben),
        ])
        // No hidden value survives anywhere in what is sent.
        let secrets: [Value] = [.int(5_000), .double(1.5), .string("raise due"), .string("raise given"), .string("manager"), .int(6_000)]
        #expect(!"\(shown)".contains("5000") && !"\(shown)".contains("raise"))
        for instruction in shown {
            if case .set(_, _, let value) = instruction { #expect(!secrets.contains(value)) }
        }
    }

    @Test func withNothingHiddenTheInstructionsAreUnchanged() {
        let instructions: [Instruction] = [.createObject(Self.ann), .set(Self.ann, path: [.property("salary")], value: .int(1))]
        #expect(FlexibleSync.hiding([:], in: instructions, schema: Self.schema) == instructions)
        #expect(FlexibleSync.hiding(["Other": ["salary"]], in: instructions, schema: Self.schema) == instructions)
    }

    /// A field the schema does not know (yet) cannot be reset to a typed default: nothing of it is sent.
    @Test func anUnknownHiddenFieldIsDropped() {
        let instructions: [Instruction] = [.set(Self.ann, path: [.property("secret")], value: .string("x"))]
        #expect(FlexibleSync.hiding(["Entry": ["secret"]], in: instructions, schema: Self.schema).isEmpty)
    }
}
