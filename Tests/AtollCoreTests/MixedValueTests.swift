@testable import AtollCore
import Foundation
import Testing

/// Mixed properties (`AnyRealmValue`) in the shared core: what they may hold, how the stores
/// encode them, and the server's checks on uploads that write them.
@Suite struct MixedValueTests {
    let a = ObjectID(type: "Box", primaryKey: .string("a"))

    private var schemaInstructions: [Instruction] {
        [.addTable(ObjectSchema(name: "Box", properties: [
            Property(name: "_id", type: .string, isPrimaryKey: true),
            Property(name: "any", type: .any, isOptional: true),
            Property(name: "anys", type: .any, collection: .list, isOptional: true),
            Property(name: "bag", type: .any, collection: .set, isOptional: true),
            Property(name: "count", type: .int),
        ])), .createObject(a)]
    }

    private func refusal(_ instructions: [Instruction]) -> String? {
        var schema = HistorySchema()
        schema.absorb(MergeFixture.changeset(schemaInstructions))
        do {
            try schema.validate(MergeFixture.changeset(instructions, version: 2))
            return nil
        } catch {
            return error.message
        }
    }

    @Test func anyScalarALinkOrANestedCollectionFits() {
        for value: Value in [.null, .int(1), .bool(true), .double(1), .float(1), .string("s"), .data(Data([1])),
                             .date(Date(timeIntervalSince1970: 3)), .decimal(Decimal128(2)), .uuid(UUID()),
                             .objectId(ObjectId.generate()), .link(ObjectLink(objectType: "Box", primaryKey: .string("b"))),
                             .list([.int(1), .map(["k": .string("v")])]), .map(["k": .list([])])] {
            #expect(refusal([.set(a, path: [.property("any")], value: value)]) == nil, "\(value)")
            #expect(refusal([.listInsert(a, path: [.property("anys")], index: 0, value: value)]) == nil, "\(value)")
        }
    }

    @Test func embeddedObjectsSetsAndEditsInsideANestedValueAreRefused() {
        #expect(refusal([.set(a, path: [.property("any")], value: .object(["x": .int(1)]))]) != nil)
        #expect(refusal([.set(a, path: [.property("any")], value: .set([.int(1)]))]) != nil)
        #expect(refusal([.set(a, path: [.property("any")], value: .list([.object([:])]))]) != nil)
        let message = refusal([.set(a, path: [.property("any"), .index(0)], value: .int(1))])
        #expect(message?.contains("set whole") == true)
        #expect(refusal([.listInsert(a, path: [.property("any")], index: 0, value: .int(1))]) != nil)
        #expect(refusal([.addInteger(a, path: [.property("any")], delta: 1)]) != nil)
    }

    @Test func theReplicaNeverReachesIntoANestedValue() throws {
        var state = ReplicaState()
        state.apply(MergeFixture.changeset(schemaInstructions + [
            .set(a, path: [.property("any")], value: .list([.int(1), .int(2)])),
        ]))
        #expect(state.value(a, [.property("any")]) == .list([.int(1), .int(2)]))
        #expect(state.value(a, [.property("any"), .index(0)]) == nil)
        let edit = MergeFixture.changeset([.listErase(a, path: [.property("any")], index: 0)], version: 2)
        #expect(throws: MergeError.self) { try state.validate([edit]) }
    }

    @Test func theStoredFormKeepsTheTypeAndComparesByBytes() throws {
        let values: [Value] = [.int(1), .double(1), .float(1), .bool(true), .decimal(Decimal128(1)), .string("1"),
                               .map(["b": .int(2), "a": .int(1)]), .link(ObjectLink(objectType: "Box", primaryKey: .string("a")))]
        for value in values {
            let stored = value.mixedSQLValue
            #expect(Value(sql: stored, type: .any) == value)
            #expect(value.sqlValue(as: .any) == stored)
        }
        #expect(Set(values.map(\.mixedSQLValue)).count == values.count, "no two kinds share a stored form")
        #expect(Value.map(["a": .int(1), "b": .int(2)]).mixedSQLValue == Value.map(["b": .int(2), "a": .int(1)]).mixedSQLValue)
        #expect(Value.null.mixedSQLValue == .null)
        #expect(Value(mixedSQL: .blob(Data([0xFF, 0x00]))) == nil, "garbage is not a value")
        #expect(Value(mixedSQL: .integer(3)) == nil)
    }
}
