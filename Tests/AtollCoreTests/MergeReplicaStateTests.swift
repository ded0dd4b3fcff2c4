@testable import AtollCore
import Foundation
import Testing

/// The canonical replica model: what each instruction does, and a deterministic dump.
@Suite struct MergeReplicaStateTests {
    let a = MergeFixture.id("a")

    @Test func theSameDataDumpsToTheSameBytesWhateverTheHistory() {
        var one = ReplicaState(), two = ReplicaState()
        one.apply(MergeFixture.changeset(MergeFixture.schemaInstructions + [
            .createObject(a), .setInsert(a, path: [.property("tags")], value: .string("p")),
            .setInsert(a, path: [.property("tags")], value: .string("q")),
            .set(a, path: [.property("scores"), .key("x")], value: .int(1)),
            .set(a, path: [.property("scores"), .key("y")], value: .int(2)),
            .set(a, path: [.property("count")], value: .int(0)),
        ]))
        two.apply(MergeFixture.changeset(MergeFixture.schemaInstructions.reversed() + [
            .createObject(a), .setInsert(a, path: [.property("tags")], value: .string("q")),
            .setInsert(a, path: [.property("tags")], value: .string("p")),
            .set(a, path: [.property("scores"), .key("y")], value: .int(2)),
            .set(a, path: [.property("scores"), .key("x")], value: .int(1)),
        ]))
        #expect(one.canonicalDump() == two.canonicalDump(), "set order, map order and written defaults do not show")
        two.apply(.set(a, path: [.property("count")], value: .int(1)))
        #expect(one.canonicalDump() != two.canonicalDump())
    }

    @Test func instructionsOnMissingTargetsChangeNothing() {
        let base = MergeFixture.baseState()
        let ghost = MergeFixture.id("ghost")
        let noOps: [Instruction] = [
            .set(ghost, path: [.property("count")], value: .int(1)),
            .set(a, path: [.property("nope")], value: .int(1)),
            .set(a, path: [], value: .int(1)),
            .set(a, path: [.property("id")], value: .string("renamed")),
            .set(a, path: [.property("names"), .index(9)], value: .string("q")),
            .set(a, path: [.property("names")], value: .int(3)),
            .addInteger(a, path: [.property("title")], delta: 1),
            .addInteger(a, path: [.property("scores"), .key("none")], delta: 1),
            .listInsert(a, path: [.property("names")], index: 7, value: .string("q")),
            .listInsert(a, path: [.property("names")], index: -1, value: .string("q")),
            .listErase(a, path: [.property("names")], index: 3),
            .listMove(a, path: [.property("names")], from: 0, to: 3),
            .listInsert(a, path: [.property("tags")], index: 0, value: .string("q")),
            .setInsert(a, path: [.property("names")], value: .string("q")),
            .setErase(a, path: [.property("tags")], value: .string("absent")),
            .mapErase(a, path: [.property("scores")], key: "absent"),
            .clear(a, path: [.property("title")]),
            .set(a, path: [.property("owner"), .property("title")], value: .string("q")),
            .createObject(ObjectID(type: "Address", primaryKey: .int(1))),
            .createObject(ObjectID(type: "Unknown", primaryKey: .int(1))),
            .eraseObject(ghost),
            .addColumn(type: "Unknown", Property(name: "x", type: .int)),
        ]
        for instruction in noOps {
            var s = base
            s.apply(instruction)
            #expect(s.canonicalDump() == base.canonicalDump(), "\(instruction)")
        }
    }

    @Test func randomInstructionsNeverTrap() {
        var rng = SplitMix64(seed: 42)
        var state = MergeFixture.baseState()
        let paths: [[PathElement]] = [
            [], [.property("names")], [.property("names"), .index(0)], [.property("address"), .property("lines")],
            [.property("scores"), .key("k")], [.index(-3)], [.key("x"), .property("y")], [.property("addresses"), .index(0), .property("zip")],
        ]
        let values: [Value] = [.null, .int(1), .string("s"), .list([.int(1)]), .set([.null]), .map(["k": .int(1)]), .object(["city": .int(1)])]
        for _ in 0..<5_000 {
            let o = MergeFixture.id(["a", "b", "zz"].randomElement(using: &rng)!)
            let p = paths.randomElement(using: &rng)!, v = values.randomElement(using: &rng)!
            let i = Int.random(in: -2...5, using: &rng), j = Int.random(in: -2...5, using: &rng)
            let all: [Instruction] = [
                .set(o, path: p, value: v), .addInteger(o, path: p, delta: .max), .listInsert(o, path: p, index: i, value: v),
                .listErase(o, path: p, index: i), .listMove(o, path: p, from: i, to: j), .clear(o, path: p),
                .setInsert(o, path: p, value: v), .setErase(o, path: p, value: v), .mapErase(o, path: p, key: "k"),
                .createObject(o), .eraseObject(o),
            ]
            state.apply(all.randomElement(using: &rng)!)
        }
        #expect(!state.canonicalDump().isEmpty)
    }

    @Test func additiveSchemaChangesMerge() {
        var s = ReplicaState()
        s.apply(.addTable(ObjectSchema(name: "T", properties: [Property(name: "id", type: .int, isPrimaryKey: true)])))
        s.apply(.addTable(ObjectSchema(name: "T", properties: [Property(name: "b", type: .int)])))
        s.apply(.addColumn(type: "T", Property(name: "c", type: .string)))
        s.apply(.addColumn(type: "T", Property(name: "c", type: .string)))
        #expect(s.schema["T"]?.properties.map(\.name).sorted() == ["b", "c", "id"])
        s.apply(.createObject(ObjectID(type: "T", primaryKey: .int(1))))
        #expect(s.value(ObjectID(type: "T", primaryKey: .int(1)), [.property("c")]) == .string(""), "a new column reads as its default")
    }

    @Test func linksToErasedObjectsKeepTheirPlace() {
        var s = MergeFixture.baseState()
        s.apply(.listInsert(a, path: [.property("links")], index: 0, value: MergeFixture.link("b")))
        s.apply(.eraseObject(MergeFixture.id("b")))
        #expect(s.value(a, [.property("links")]) == .list([MergeFixture.link("b")]))
    }
}
