@_spi(Testing) @_spi(Sync) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// The key property of the download half of sync: a realm's recorded history, integrated into an
/// empty realm and applied to the merge model's `ReplicaState`, gives three equal canonical dumps.
@Suite struct IntegratePropertyTests {
    static let types: [ObjectBase.Type] = [FzNode.self, FzSpot.self, FzTag.self]

    @Test func historyIntegratedElsewhereEqualsTheRealmAndTheMergeModel() throws {
        let seeds = ProcessInfo.processInfo.environment["ATOLL_INTEGRATE_SEED"].flatMap(UInt64.init).map { [$0] }
            ?? Array(1...200)
        var unresolved = 0
        for seed in seeds {
            unresolved += try check(seed: seed)
        }
        // The histories must exercise what is hard: links left behind by deletes.
        #expect(seeds.count < 50 || unresolved > seeds.count / 4, "only \(unresolved) unresolved links in \(seeds.count) histories")
    }

    /// Checks one seed; returns how many unresolved links the final state holds.
    @discardableResult
    private func check(seed: UInt64) throws -> Int {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var rng = SeededGenerator(seed: seed)
        var configuration = folder.configuration("a.realm", objectTypes: Self.types)
        configuration.recordsHistoryForTesting = true
        let a = try Realm(configuration: configuration)
        for _ in 0..<Int.random(in: 2...6, using: &rng) {
            try a.write {
                for _ in 0..<Int.random(in: 1...8, using: &rng) { randomWrite(a, &rng) }
            }
        }
        let schema = Changeset(version: 0, timestamp: 0, instructions: a.schema.objectSchemas.map { .addTable($0) })
        let history = [schema] + (try a.historyChangesets())

        var model = ReplicaState()
        model.apply(history)

        let b = try Realm(configuration: folder.configuration("b.realm", objectTypes: Self.types))
        // In random batches, each its own transaction.
        var rest = history[...]
        while !rest.isEmpty {
            let n = Int.random(in: 1...max(1, rest.count), using: &rng)
            try b.integrateRemote(Array(rest.prefix(n)))
            rest = rest.dropFirst(n)
        }
        let dumpA = try a.canonicalDump(), dumpB = try b.canonicalDump(), dumpModel = model.canonicalDump()
        let replay = "ATOLL_INTEGRATE_SEED=\(seed) swift test --filter IntegratePropertyTests"
        let textA = try a.replicaState().canonicalDescription(), textB = try b.replicaState().canonicalDescription()
        let steps = history.flatMap(\.instructions).map { "\($0)" }.joined(separator: "\n")
        #expect(dumpA == dumpModel, "the realm differs from the merge model (\(replay))\nrealm:\n\(textA)\nmodel:\n\(model.canonicalDescription())\nhistory:\n\(steps)")
        #expect(dumpB == dumpModel, "the integrated realm differs from the merge model (\(replay))\nrealm:\n\(textB)\nmodel:\n\(model.canonicalDescription())")
        // What users see agrees too: unresolved slots are hidden the same way on both.
        #expect(view(a) == view(b), "the public view differs (\(replay))")
        #expect(try b.historyChangesets().allSatisfy(\.instructions.isEmpty), "integrated changes are not local history")
        return Self.unresolvedLinks(in: model)
    }

    /// Links in `state` whose target does not exist.
    static func unresolvedLinks(in state: ReplicaState) -> Int {
        func count(_ value: Value) -> Int {
            switch value {
            case .link(let link):
                state.object(ObjectID(type: link.objectType, primaryKey: link.primaryKey)) == nil ? 1 : 0
            case .object(let fields), .map(let fields): fields.values.reduce(0) { $0 + count($1) }
            case .list(let items), .set(let items): items.reduce(0) { $0 + count($1) }
            default: 0
            }
        }
        return state.objects.values.flatMap(\.values).reduce(0) { $0 + count(.object($1)) }
    }

    /// Every node's visible content through the public API.
    private func view(_ realm: Realm) -> [String] {
        realm.objects(FzNode.self).sorted(byKeyPath: "_id").map { n in
            "\(n._id) \(n.name) \(n.count) \(n.score.map { "\($0)" } ?? "nil") next=\(n.next?._id ?? -1) "
                + "children=\(n.children.map(\._id)) friends=\(n.friends.map(\._id).sorted()) "
                + "named=\(n.named.map { "\($0.key):\($0.value?._id ?? -1)" }) numbers=\(Array(n.numbers)) "
                + "labels=\(n.labels.sorted()) weights=\(n.weights.map { "\($0.key):\($0.value)" }) "
                + "spot=\(n.spot.map { "\($0.label)/\($0.near?._id ?? -1)/\(Array($0.marks))" } ?? "nil") "
                + "spots=\(n.spots.map { "\($0.label)/\($0.near?._id ?? -1)/\(Array($0.marks))" }) "
                + "children.count=\(n.children.count) query=\(n.children.where { $0.count >= 0 }.count)"
        } + realm.objects(FzTag.self).sorted(byKeyPath: "_id").map { "\($0._id) \($0.nodes.map(\._id))" }
    }

    // MARK: Random writes through the public API

    private func randomWrite(_ realm: Realm, _ rng: inout SeededGenerator) {
        let nodes = Array(realm.objects(FzNode.self))
        func anyNode() -> FzNode? { nodes.randomElement(using: &rng) }
        func newSpot() -> FzSpot {
            let spot = FzSpot()
            spot.label = ["x", "y", "z"].randomElement(using: &rng)!
            if Bool.random(using: &rng) { spot.near = anyNode() }
            if Bool.random(using: &rng) { spot.marks.append(Int.random(in: 0...9, using: &rng)) }
            return spot
        }
        let key = ["a", "b", "c"].randomElement(using: &rng)!
        guard let node = anyNode(), Int.random(in: 0..<10, using: &rng) > 0 else {
            // Create (or re-create after a delete: links to the old one resolve again).
            let id = Int.random(in: 0..<8, using: &rng)
            guard realm.object(ofType: FzNode.self, forPrimaryKey: id) == nil else { return }
            let made = FzNode()
            made._id = id
            made.name = "n\(id)"
            made.count = Int.random(in: 0...5, using: &rng)
            if Bool.random(using: &rng), let other = anyNode() { made.children.append(other) }
            if Bool.random(using: &rng), let other = anyNode() { made.friends.insert(other) }
            if Bool.random(using: &rng) { made.spot = newSpot() }
            if Bool.random(using: &rng) { made.spots.append(newSpot()) }
            if Bool.random(using: &rng) { made.weights[key] = 1 }
            realm.add(made)
            return
        }
        switch Int.random(in: 0..<34, using: &rng) {
        case 0, 1: realm.delete(node)
        case 2: node.name = ["p", "q", "r"].randomElement(using: &rng)!
        case 3: node.count += Int.random(in: -3...3, using: &rng)
        case 4: node.score = Bool.random(using: &rng) ? Double(Int.random(in: 0...9, using: &rng)) / 2 : nil
        case 5: node.next = Bool.random(using: &rng) ? anyNode() : nil
        case 6, 7: if let other = anyNode() { node.children.append(other) }
        case 8:
            if let other = anyNode() { node.children.insert(other, at: Int.random(in: 0...node.children.count, using: &rng)) }
        case 9: if !node.children.isEmpty { node.children.remove(at: Int.random(in: 0..<node.children.count, using: &rng)) }
        case 10:
            if !node.children.isEmpty {
                node.children.move(from: Int.random(in: 0..<node.children.count, using: &rng), to: Int.random(in: 0..<node.children.count, using: &rng))
            }
        case 11: if !node.children.isEmpty, let other = anyNode() { node.children[Int.random(in: 0..<node.children.count, using: &rng)] = other }
        case 12: if Int.random(in: 0..<3, using: &rng) == 0 { node.children.removeAll() }
        case 13: if let other = anyNode() { node.friends.insert(other) }
        case 14: if let other = anyNode() { node.friends.remove(other) }
        case 15: node.named[key] = Bool.random(using: &rng) ? anyNode() : nil as FzNode?
        case 16: node.named.removeObject(for: key)
        case 17: node.numbers.insert(Int.random(in: 0...9, using: &rng), at: Int.random(in: 0...node.numbers.count, using: &rng))
        case 18: if !node.numbers.isEmpty { node.numbers.remove(at: Int.random(in: 0..<node.numbers.count, using: &rng)) }
        case 19:
            if !node.numbers.isEmpty {
                node.numbers.move(from: Int.random(in: 0..<node.numbers.count, using: &rng), to: Int.random(in: 0..<node.numbers.count, using: &rng))
            }
        case 20: node.labels.insert(key)
        case 21: node.labels.remove(key)
        case 22: node.weights[key] = Int.random(in: 0...9, using: &rng)
        case 23: node.weights.removeObject(for: key)
        case 24: node.spot = Bool.random(using: &rng) ? newSpot() : nil
        case 25:
            if let spot = node.spot {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: spot.label = "s\(Int.random(in: 0...3, using: &rng))"
                case 1: spot.near = anyNode()
                default: spot.marks.append(Int.random(in: 0...9, using: &rng))
                }
            }
        case 26: node.spots.insert(newSpot(), at: Int.random(in: 0...node.spots.count, using: &rng))
        case 27: if !node.spots.isEmpty { node.spots.remove(at: Int.random(in: 0..<node.spots.count, using: &rng)) }
        case 28:
            if !node.spots.isEmpty {
                let spot = node.spots[Int.random(in: 0..<node.spots.count, using: &rng)]
                if Bool.random(using: &rng) { spot.label = "t" } else { spot.marks.append(1) }
            }
        case 29:
            let tagKey = "tag\(Int.random(in: 0..<3, using: &rng))"
            if let tag = realm.object(ofType: FzTag.self, forPrimaryKey: tagKey) {
                if Bool.random(using: &rng) { realm.delete(tag) } else { tag.nodes.append(node) }
            } else {
                let tag = FzTag()
                tag._id = tagKey
                tag.nodes.append(node)
                tag.when = Date(timeIntervalSince1970: Double(Int.random(in: 0...100, using: &rng)))
                realm.add(tag)
            }
        case 30:
            realm.create(FzNode.self, value: ["_id": node._id, "name": "upd", "numbers": [1, 2]], update: .modified)
        case 31:
            let copy = FzNode()
            copy._id = node._id
            copy.name = "all"
            if let other = anyNode() { copy.children.append(other) }
            realm.add(copy, update: .all)
        case 32: if Int.random(in: 0..<4, using: &rng) == 0 { realm.delete(realm.objects(FzNode.self).filter("count > 2")) }
        default:
            node.spots.removeAll()
        }
    }
}
