@testable import AtollCore
import Foundation
import Testing

/// The schema a history builds, and the server's check that an upload fits it.
@Suite struct HistorySchemaTests {
    let a = MergeFixture.id("a")

    /// The fixture's schema, as history created it.
    func schema() -> HistorySchema {
        var schema = HistorySchema()
        schema.absorb(MergeFixture.changeset(MergeFixture.schemaInstructions))
        return schema
    }

    /// The message `changeset` is refused with, or nil when it fits.
    func refusal(_ instructions: [Instruction], in schema: HistorySchema? = nil) -> String? {
        var schema = schema ?? self.schema()
        do {
            try schema.validate(MergeFixture.changeset(instructions, version: 3))
            return nil
        } catch {
            #expect(error.code == .schemaViolation)
            return error.message
        }
    }

    @Test func schemaInstructionsMergeAdditivelyAsTheReplicaMergesThem() {
        var schema = schema()
        schema.absorb(MergeFixture.changeset([
            .addColumn(type: "Item", Property(name: "extra", type: .int)),
            .addTable(ObjectSchema(name: "Item", properties: [Property(name: "title", type: .string), Property(name: "note", type: .string)])),
            .addColumn(type: "Missing", Property(name: "x", type: .int)),
        ]))
        var state = ReplicaState()
        state.apply(MergeFixture.changeset(MergeFixture.schemaInstructions + [
            .addColumn(type: "Item", Property(name: "extra", type: .int)),
            .addTable(ObjectSchema(name: "Item", properties: [Property(name: "title", type: .string), Property(name: "note", type: .string)])),
            .addColumn(type: "Missing", Property(name: "x", type: .int)),
        ]))
        #expect(schema.types == state.schema)
    }

    @Test func whatTheStoreRecordsFitsTheSchema() {
        // Every write the fuzzer makes is one the real store would record: none may be refused.
        for seed in UInt64(1)...20 {
            var generator = MergeFuzzGenerator(rng: SplitMix64(seed: seed))
            var state = ReplicaState()
            state.apply(MergeFixture.changeset(MergeFixture.schemaInstructions))
            var schema = schema()
            for version in Int64(1)...40 {
                let changeset = MergeFixture.changeset(generator.transaction(on: &state), version: version)
                #expect(throws: Never.self, "seed \(seed), version \(version)") { try schema.validate(changeset) }
            }
        }
    }

    @Test func aValueOfTheWrongTypeIsRefusedNamingThePropertyAndBothTypes() throws {
        let message = try #require(refusal([.createObject(a), .set(a, path: [.property("title")], value: .int(42))]))
        #expect(message.contains("instruction 1 of client version 3"))
        #expect(message.contains("Item.title is string, the upload gives a int"))
        #expect(refusal([.set(a, path: [.property("count")], value: .string("5"))]) != nil)
        #expect(refusal([.set(a, path: [.property("title")], value: .null)]) != nil, "title is not optional")
        #expect(refusal([.set(a, path: [.property("flag")], value: .null)]) == nil, "flag is optional")
        #expect(refusal([.set(a, path: [.property("owner")], value: .null)]) == nil, "a link may be null")
        #expect(refusal([.set(a, path: [.property("owner")], value: MergeFixture.link("b"))]) == nil)
        #expect(refusal([.set(a, path: [.property("owner")], value: .link(ObjectLink(objectType: "Address", primaryKey: .string("x"))))]) != nil)
    }

    @Test func collectionsTakeElementsOfTheirType() {
        #expect(refusal([.listInsert(a, path: [.property("names")], index: 0, value: .string("x"))]) == nil)
        #expect(refusal([.listInsert(a, path: [.property("names")], index: 0, value: .int(1))]) != nil)
        #expect(refusal([.listInsert(a, path: [.property("tags")], index: 0, value: .string("x"))]) != nil, "tags is a set")
        #expect(refusal([.setInsert(a, path: [.property("tags")], value: .bool(true))]) != nil)
        #expect(refusal([.set(a, path: [.property("scores"), .key("k")], value: .double(1))]) != nil)
        #expect(refusal([.set(a, path: [.property("scores"), .key("k")], value: .int(1))]) == nil)
        #expect(refusal([.set(a, path: [.property("names")], value: .list([.string("x"), .int(2)]))]) != nil)
        #expect(refusal([.addInteger(a, path: [.property("title")], delta: 1)]) != nil)
    }

    @Test func unknownTypesAndPropertiesAreRefused() throws {
        let unknownType = try #require(refusal([.createObject(ObjectID(type: "Ghost", primaryKey: .string("g")))]))
        #expect(unknownType.contains("no type Ghost"))
        let unknownProperty = try #require(refusal([.set(a, path: [.property("colour")], value: .string("red"))]))
        #expect(unknownProperty.contains("Item has no property colour"))
        #expect(refusal([.createObject(ObjectID(type: "Address", primaryKey: .string("x")))]) != nil, "embedded objects have no identity")
        #expect(refusal([.createObject(ObjectID(type: "Item", primaryKey: .int(1)))]) != nil, "the primary key is a string")
    }

    @Test func aChangesetMayUseWhatItCreatesItself() {
        var schema = HistorySchema()
        let dog = ObjectID(type: "Dog", primaryKey: .int(1))
        #expect(refusal([
            .addTable(ObjectSchema(name: "Dog", properties: [Property(name: "_id", type: .int, isPrimaryKey: true)])),
            .addColumn(type: "Dog", Property(name: "name", type: .string)),
            .createObject(dog), .set(dog, path: [.property("name")], value: .string("Rex")),
        ], in: schema) == nil)
        #expect(refusal([.createObject(dog)], in: schema) != nil)
        // Validating takes the schema instructions in: the batch's next changeset may use them.
        try? schema.validate(MergeFixture.changeset([.addTable(ObjectSchema(name: "Dog", properties: [Property(name: "_id", type: .int, isPrimaryKey: true)]))]))
        #expect(refusal([.createObject(dog)], in: schema) == nil)
    }

    @Test func redefiningAPropertyWithAnotherTypeIsRefused() throws {
        let message = try #require(refusal([.addColumn(type: "Item", Property(name: "count", type: .string))]))
        #expect(message.contains("Item.count is int in the realm, the upload redefines it as string"))
        #expect(refusal([.addTable(ObjectSchema(name: "Item", properties: [Property(name: "names", type: .string)]))]) != nil)
        #expect(refusal([.addTable(MergeFixture.item)]) == nil, "announcing the same schema again is harmless")
        #expect(refusal([.addColumn(type: "Ghost", Property(name: "x", type: .int))]) != nil)
    }
}
