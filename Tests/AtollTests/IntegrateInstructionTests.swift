@_spi(Testing) @_spi(Sync) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// Each instruction kind from the server, applied to a realm: what users then see, and that the
/// realm agrees with the merge model byte for byte.
@Suite struct IntegrateInstructionTests {
    static let types: [ObjectBase.Type] = [FzNode.self, FzSpot.self, FzTag.self]

    static func node(_ id: Int) -> ObjectID { ObjectID(type: "FzNode", primaryKey: .int(Int64(id))) }
    static func link(_ id: Int) -> Value { .link(ObjectLink(objectType: "FzNode", primaryKey: .int(Int64(id)))) }
    static let children: [PathElement] = [.property("children")]

    /// Nodes 1, 2, 3; node 1 has children [2, 3], numbers [1, 2, 3], weights {a: 1}, a spot and a list of one spot.
    static func base(_ schema: [ObjectSchema]) -> [Instruction] {
        schema.map { .addTable($0) } + [
            .createObject(node(1)), .createObject(node(2)), .createObject(node(3)),
            .listInsert(node(1), path: children, index: 0, value: link(2)),
            .listInsert(node(1), path: children, index: 1, value: link(3)),
            .set(node(1), path: [.property("numbers")], value: .list([.int(1), .int(2), .int(3)])),
            .set(node(1), path: [.property("weights"), .key("a")], value: .int(1)),
            .set(node(1), path: [.property("spot")], value: .object(["label": .string("home"), "marks": .list([.int(7)])])),
            .listInsert(node(1), path: [.property("spots")], index: 0, value: .object(["label": .string("s0")])),
        ]
    }

    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let instructions: [Instruction]
        let check: @Sendable (Realm) throws -> Void
    }

    static func n(_ realm: Realm, _ id: Int) -> FzNode? { realm.object(ofType: FzNode.self, forPrimaryKey: id) }

    static let cases: [Case] = [
        Case(description: "createObject makes an object with defaults", instructions: [.createObject(node(9))]) { r in
            let made = try #require(n(r, 9))
            #expect(made.name == "" && made.count == 0 && made.score == nil && made.children.isEmpty)
        },
        Case(description: "createObject of an existing object changes nothing",
             instructions: [.set(node(2), path: [.property("name")], value: .string("two")), .createObject(node(2))]) { r in
            #expect(n(r, 2)?.name == "two")
        },
        // The insert itself finds the existing key (no lookup before it): the sets that came with
        // the create then apply to the existing object, which keeps its row and its links.
        Case(description: "createObject of an existing object with sets updates it",
             instructions: [.createObject(node(2)), .set(node(2), path: [.property("name")], value: .string("again")),
                            .set(node(2), path: [.property("count")], value: .int(4))]) { r in
            #expect(n(r, 2)?.name == "again" && n(r, 2)?.count == 4)
            #expect(n(r, 1)?.children.map(\._id) == [2, 3])
            #expect(r.objects(FzNode.self).count == 3)
        },
        Case(description: "createObject twice in one changeset with sets between",
             instructions: [.createObject(node(8)), .set(node(8), path: [.property("name")], value: .string("first")),
                            .createObject(node(8)), .set(node(8), path: [.property("count")], value: .int(2))]) { r in
            #expect(n(r, 8)?.name == "first" && n(r, 8)?.count == 2)
            #expect(r.objects(FzNode.self).count == 4)
        },
        Case(description: "eraseObject removes it and hides it from lists", instructions: [.eraseObject(node(2))]) { r in
            #expect(n(r, 2) == nil)
            #expect(n(r, 1)?.children.map(\._id) == [3])
        },
        Case(description: "eraseObject then createObject resolves links again",
             instructions: [.set(node(3), path: [.property("next")], value: link(2)), .eraseObject(node(2)), .createObject(node(2))]) { r in
            #expect(n(r, 1)?.children.map(\._id) == [2, 3])
            #expect(n(r, 3)?.next?._id == 2)
        },
        Case(description: "set of a scalar", instructions: [.set(node(1), path: [.property("name")], value: .string("one"))]) { r in
            #expect(n(r, 1)?.name == "one")
        },
        Case(description: "set of an optional to nil",
             instructions: [.set(node(1), path: [.property("score")], value: .double(2)), .set(node(1), path: [.property("score")], value: .null)]) { r in
            #expect(n(r, 1)?.score == nil)
        },
        Case(description: "set of a link by primary key", instructions: [.set(node(1), path: [.property("next")], value: link(3))]) { r in
            #expect(n(r, 1)?.next?._id == 3)
        },
        Case(description: "set of a link to a missing object reads nil until it is created",
             instructions: [.set(node(1), path: [.property("next")], value: link(7))]) { r in
            #expect(n(r, 1)?.next == nil)
            try r.integrateRemote([Changeset(version: 1, timestamp: 0, instructions: [.createObject(node(7))])])
            #expect(n(r, 1)?.next?._id == 7)
        },
        Case(description: "set of an embedded object given whole",
             instructions: [.set(node(2), path: [.property("spot")], value: .object(["label": .string("new"), "near": link(1), "junk": .int(1)]))]) { r in
            #expect(n(r, 2)?.spot?.label == "new")
            #expect(n(r, 2)?.spot?.near?._id == 1)
        },
        Case(description: "set inside an embedded object", instructions: [.set(node(1), path: [.property("spot"), .property("label")], value: .string("away"))]) { r in
            #expect(n(r, 1)?.spot?.label == "away")
        },
        Case(description: "set of a whole list", instructions: [.set(node(1), path: children, value: .list([link(3), link(1), link(3)]))]) { r in
            #expect(n(r, 1)?.children.map(\._id) == [3, 1, 3])
        },
        Case(description: "set of a list element", instructions: [.set(node(1), path: children + [.index(0)], value: link(1))]) { r in
            #expect(n(r, 1)?.children.map(\._id) == [1, 3])
        },
        Case(description: "set of a map value", instructions: [.set(node(1), path: [.property("weights"), .key("b")], value: .int(5))]) { r in
            #expect(n(r, 1)?.weights["b"] == 5)
        },
        Case(description: "set of a map value to a link", instructions: [.set(node(1), path: [.property("named"), .key("x")], value: link(2))]) { r in
            #expect(n(r, 1)?.named["x"]??._id == 2)
        },
        Case(description: "addInteger of a field, a map value and a list element", instructions: [
            .addInteger(node(1), path: [.property("count")], delta: 4),
            .addInteger(node(1), path: [.property("weights"), .key("a")], delta: 2),
            .addInteger(node(1), path: [.property("numbers"), .index(2)], delta: -3),
        ]) { r in
            #expect(n(r, 1)?.count == 4)
            #expect(n(r, 1)?.weights["a"] == 3)
            #expect(n(r, 1).map { Array($0.numbers) } == [1, 2, 0])
        },
        Case(description: "addInteger wraps", instructions: [
            .set(node(1), path: [.property("count")], value: .int(.max)), .addInteger(node(1), path: [.property("count")], delta: 1),
        ]) { r in
            #expect(n(r, 1)?.count == Int.min)
        },
        Case(description: "listInsert, listErase, listMove", instructions: [
            .listInsert(node(1), path: [.property("numbers")], index: 3, value: .int(4)),
            .listErase(node(1), path: [.property("numbers")], index: 0),
            .listMove(node(1), path: [.property("numbers")], from: 0, to: 2),
        ]) { r in
            #expect(n(r, 1).map { Array($0.numbers) } == [3, 4, 2])
        },
        Case(description: "list positions count unresolved links", instructions: [
            .eraseObject(node(2)),
            .listInsert(node(1), path: children, index: 1, value: link(1)),
            .listMove(node(1), path: children, from: 2, to: 0),
        ]) { r in
            // stored [2(gone), 3] → [2, 1, 3] → [3, 2, 1]
            #expect(n(r, 1)?.children.map(\._id) == [3, 1])
        },
        Case(description: "clear of a list, a set and a map", instructions: [
            .setInsert(node(1), path: [.property("labels")], value: .string("x")),
            .clear(node(1), path: children), .clear(node(1), path: [.property("labels")]), .clear(node(1), path: [.property("weights")]),
        ]) { r in
            #expect(n(r, 1)?.children.isEmpty == true && n(r, 1)?.labels.isEmpty == true && n(r, 1)?.weights.isEmpty == true)
        },
        Case(description: "setInsert and setErase, of values and links", instructions: [
            .setInsert(node(1), path: [.property("labels")], value: .string("x")),
            .setInsert(node(1), path: [.property("labels")], value: .string("y")),
            .setInsert(node(1), path: [.property("labels")], value: .string("x")),
            .setErase(node(1), path: [.property("labels")], value: .string("y")),
            .setInsert(node(1), path: [.property("friends")], value: link(2)),
            .setInsert(node(1), path: [.property("friends")], value: link(8)),
        ]) { r in
            #expect(n(r, 1).map { Array($0.labels) } == ["x"])
            #expect(n(r, 1)?.friends.map(\._id) == [2])
        },
        Case(description: "mapErase", instructions: [.mapErase(node(1), path: [.property("weights")], key: "a")]) { r in
            #expect(n(r, 1)?.weights.isEmpty == true)
        },
        Case(description: "paths into a list of embedded objects", instructions: [
            .listInsert(node(1), path: [.property("spots"), .index(0), .property("marks")], index: 0, value: .int(5)),
            .set(node(1), path: [.property("spots"), .index(0), .property("label")], value: .string("first")),
            .listInsert(node(1), path: [.property("spot"), .property("marks")], index: 1, value: .int(8)),
        ]) { r in
            #expect(n(r, 1)?.spots.first?.label == "first")
            #expect(n(r, 1)?.spots.first.map { Array($0.marks) } == [5])
            #expect(n(r, 1)?.spot.map { Array($0.marks) } == [7, 8])
        },
        Case(description: "eraseObject takes embedded objects with it", instructions: [.eraseObject(node(1))]) { r in
            #expect(r.objects(FzNode.self).count == 2)
        },
        Case(description: "addTable and addColumn of a type with no class", instructions: [
            .addTable(ObjectSchema(name: "Ghost", properties: [
                Property(name: "_id", type: .string, isPrimaryKey: true), Property(name: "level", type: .int),
                Property(name: "haunts", type: .object, collection: .list, objectType: "FzNode"),
            ])),
            .addColumn(type: "Ghost", Property(name: "mood", type: .string, isOptional: true)),
            .createObject(ObjectID(type: "Ghost", primaryKey: .string("boo"))),
            .set(ObjectID(type: "Ghost", primaryKey: .string("boo")), path: [.property("mood")], value: .string("grim")),
            .listInsert(ObjectID(type: "Ghost", primaryKey: .string("boo")), path: [.property("haunts")], index: 0, value: link(3)),
        ]) { r in
            let ghost = try #require(r.schema["Ghost"])
            #expect(ghost.properties.map(\.name) == ["_id", "level", "haunts", "mood"])
        },
    ]

    @Test(arguments: cases)
    func instructionFromTheServer(_ c: Case) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration(objectTypes: Self.types))
        let schema = realm.schema.objectSchemas
        let changesets = [Changeset(version: 1, timestamp: 0, instructions: Self.base(schema)),
                          Changeset(version: 2, timestamp: 0, instructions: c.instructions)]
        try realm.integrateRemote(changesets)
        var model = ReplicaState()
        model.apply(changesets)
        let text = try realm.replicaState().canonicalDescription()
        #expect(try realm.canonicalDump() == model.canonicalDump(), "realm:\n\(text)\nmodel:\n\(model.canonicalDescription())")
        try c.check(realm)
    }

    @Test func integratedChangesAreNotLocalHistoryButAdvanceTheVersion() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var configuration = folder.configuration(objectTypes: Self.types)
        configuration.recordsHistoryForTesting = true
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(FzNode()) }
        let before = try realm.historyChangesets()
        try realm.integrateRemote([Changeset(version: 1, timestamp: 0, instructions: [.createObject(Self.node(5))])])
        #expect(try realm.historyChangesets() == before)
        let other = try Realm(configuration: folder.configuration(objectTypes: Self.types))
        #expect(Self.n(other, 5) != nil, "another realm sees the commit")
        try realm.write { Self.n(realm, 5)?.name = "local" }
        #expect(try realm.historyChangesets().count == before.count + 1)
    }

    @Test func notificationsReportRemoteChangesAtTheirIndices() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration(objectTypes: Self.types))
        try realm.integrateRemote([Changeset(version: 1, timestamp: 0, instructions: Self.base(realm.schema.objectSchemas))])
        let nodes = realm.objects(FzNode.self).sorted(byKeyPath: "_id")
        let children = try #require(Self.n(realm, 1)).children
        let seenNodes = Recorder<SeenChange>(), seenChildren = Recorder<SeenChange>()
        let t1 = nodes.observe { seenNodes.append(SeenChange($0)) }
        let t2 = children.observe { seenChildren.append(SeenChange($0)) }
        try realm.integrateRemote([Changeset(version: 2, timestamp: 0, instructions: [
            .eraseObject(Self.node(2)), .createObject(Self.node(5)),
            .set(Self.node(3), path: [.property("name")], value: .string("three")),
        ])])
        // nodes 1 2 3 → 1 3 5: node 1 changed (its list), node 3 changed (name); new indices.
        #expect(seenNodes.all.last == .update(deletions: [1], insertions: [2], modifications: [0, 1]))
        // children 2 3 → 3 (renamed)
        #expect(seenChildren.all.last == .update(deletions: [0], insertions: [], modifications: [0]))
        try realm.integrateRemote([Changeset(version: 3, timestamp: 0, instructions: [.createObject(Self.node(2))])])
        #expect(seenChildren.all.last == .update(deletions: [], insertions: [0], modifications: []), "a re-created object comes back")
        t1.invalidate()
        t2.invalidate()
    }

    @Test func garbageNeverTraps() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration(objectTypes: Self.types))
        try realm.integrateRemote([Changeset(version: 1, timestamp: 0, instructions: Self.base(realm.schema.objectSchemas))])
        var rng = SeededGenerator(seed: 42)
        let types = ["FzNode", "FzSpot", "FzTag", "Nope", ""]
        let names = ["name", "count", "score", "next", "children", "friends", "named", "numbers", "labels", "weights", "spot",
                     "spots", "label", "near", "marks", "_id", "nodes", "when", "code", "zzz"]
        let indices = [-1, 0, 1, 2, 3, 1000, Int.max, Int.min]
        func value(_ depth: Int = 0) -> Value {
            let kinds: [Value] = [.null, .bool(true), .int(1), .int(.max), .double(.nan), .float(1), .string("s"), .data(Data([1])),
                                  .date(Date(timeIntervalSince1970: 5)), .objectId(ObjectId.generate()), .uuid(UUID()),
                                  .decimal(Decimal128(3)), Self.link(Int.random(in: 0...4, using: &rng)),
                                  .link(ObjectLink(objectType: "Nope", primaryKey: .string("x"))),
                                  .link(ObjectLink(objectType: "FzNode", primaryKey: .string("wrong")))]
            guard depth < 2, Bool.random(using: &rng) else { return kinds.randomElement(using: &rng)! }
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: return .list([value(depth + 1), value(depth + 1)])
            case 1: return .set([value(depth + 1)])
            case 2: return .map(["a": value(depth + 1)])
            default: return .object(["label": value(depth + 1), "marks": value(depth + 1), "near": value(depth + 1)])
            }
        }
        func path() -> [PathElement] {
            (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: .property(names.randomElement(using: &rng)!)
                case 1: .index(indices.randomElement(using: &rng)!)
                default: .key(["a", "b", "x"].randomElement(using: &rng)!)
                }
            }
        }
        func object() -> ObjectID {
            ObjectID(type: types.randomElement(using: &rng)!, primaryKey: Bool.random(using: &rng) ? .int(Int64(Int.random(in: 0...4, using: &rng))) : value())
        }
        for round in 0..<40 {
            var instructions: [Instruction] = []
            for _ in 0..<50 {
                let o = object(), p = path(), i = indices.randomElement(using: &rng)!, j = indices.randomElement(using: &rng)!
                let all: [Instruction] = [
                    .createObject(o), .eraseObject(o), .set(o, path: p, value: value()), .addInteger(o, path: p, delta: .max),
                    .listInsert(o, path: p, index: i, value: value()), .listErase(o, path: p, index: i), .listMove(o, path: p, from: i, to: j),
                    .clear(o, path: p), .setInsert(o, path: p, value: value()), .setErase(o, path: p, value: value()),
                    .mapErase(o, path: p, key: "a"),
                    .addTable(ObjectSchema(name: types.randomElement(using: &rng)!, properties: [Property(name: names.randomElement(using: &rng)!, type: .int)])),
                    .addColumn(type: types.randomElement(using: &rng)!, Property(name: names.randomElement(using: &rng)!, type: .object, collection: .list, objectType: "FzNode")),
                ]
                instructions.append(all.randomElement(using: &rng)!)
            }
            try realm.integrateRemote([Changeset(version: Int64(round), timestamp: 0, instructions: instructions)])
            // Everything stays readable through the public API.
            for node in realm.objects(FzNode.self) {
                _ = (node.name, node.count, node.score, node.next?._id, node.children.map(\._id), node.friends.map(\._id),
                     node.named.map(\.key), Array(node.numbers), Array(node.labels), node.weights.map(\.value),
                     node.spot?.label, node.spots.map(\.label), node.children.where { $0.count > 0 }.count)
            }
            _ = try realm.canonicalDump()
        }
        #expect(realm.schema["FzNode"] != nil)
    }
}
