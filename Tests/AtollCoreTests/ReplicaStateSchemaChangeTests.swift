@testable import AtollCore
import Foundation
import Testing

/// Breaking schema changes the server applies to a realm's data before it starts the history over.
@Suite struct ReplicaStateSchemaChangeTests {
    static let a = MergeFixture.id("a"), b = MergeFixture.id("b")

    @Test func removingAPropertyDropsItFromTheSchemaAndEveryObject() throws {
        let state = MergeFixture.baseState()
        let removed = try state.removingProperty(type: "Item", name: "count")
        #expect(removed.schema["Item"]?[property: "count"] == nil)
        #expect(removed.object(Self.a)?["count"] == nil)
        #expect(removed.object(Self.a)?["title"] == .string("A"))
        #expect(removed.objects["Item"]?.count == state.objects["Item"]?.count)
    }

    @Test func removingAPropertyOfAnEmbeddedTypeReachesNestedObjects() throws {
        let state = MergeFixture.baseState()
        let removed = try state.removingProperty(type: "Address", name: "zip")
        #expect(removed.value(Self.a, [.property("address")]) == .object(["city": .string("Oslo")]))
        #expect(removed.schema["Address"]?[property: "zip"] == nil)
    }

    @Test func theSnapshotOfARewrittenStateRebuildsIt() throws {
        let removed = try MergeFixture.baseState().removingProperty(type: "Item", name: "names")
        var rebuilt = ReplicaState()
        rebuilt.apply(Changeset(version: 0, timestamp: 0, instructions: ReplicaState().instructions(becoming: removed)))
        #expect(rebuilt.canonicalDump() == removed.canonicalDump())
    }

    @Test func changingATypeConvertsWhatConvertsAndDropsTheRest() throws {
        var state = MergeFixture.baseState()
        state.apply(.set(Self.b, path: [.property("title")], value: .string("not a number")))
        state.apply(.set(Self.a, path: [.property("title")], value: .string("42")))
        let retyped = try state.changingPropertyType(type: "Item", name: "title", to: .int)
        #expect(retyped.schema["Item"]?[property: "title"]?.type == .int)
        #expect(retyped.value(Self.a, [.property("title")]) == .int(42))
        // Not convertible: the new type's default.
        #expect(retyped.object(Self.b)?["title"] == nil)
        #expect(retyped.value(Self.b, [.property("title")]) == .int(0))

        let toString = try state.changingPropertyType(type: "Item", name: "count", to: .string, isOptional: true)
        #expect(toString.value(Self.a, [.property("count")]) == .string("5"))
        #expect(toString.schema["Item"]?[property: "count"]?.isOptional == true)
    }

    @Test func changingTheElementTypeOfACollectionConvertsEachElement() throws {
        var state = MergeFixture.baseState()
        state.apply(.listInsert(Self.b, path: [.property("names")], index: 0, value: .string("7")))
        state.apply(.listInsert(Self.b, path: [.property("names")], index: 1, value: .string("seven")))
        let retyped = try state.changingPropertyType(type: "Item", name: "names", to: .int)
        #expect(retyped.value(Self.b, [.property("names")]) == .list([.int(7)]))
    }

    @Test func badChangesAreRefusedWithTheTypeAndPropertyAtFault() {
        let state = MergeFixture.baseState()
        #expect { try state.removingProperty(type: "Nope", name: "x") } throws: { ($0 as? SchemaError)?.code == .unknownType }
        #expect { try state.removingProperty(type: "Item", name: "nope") } throws: {
            ($0 as? SchemaError)?.code == .unknownProperty && ($0 as? SchemaError)?.property == "nope"
        }
        #expect { try state.removingProperty(type: "Item", name: "id") } throws: { ($0 as? SchemaError)?.code == .invalidPrimaryKey }
        #expect { try state.changingPropertyType(type: "Item", name: "owner", to: .string) } throws: {
            ($0 as? SchemaError)?.code == .unsupportedType
        }
    }
}
