@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// Deleted objects leave unresolved links behind (docs/merge.md): users never see them, list
/// indices skip them, recorded instructions count them, and a re-created object resolves them.
@Suite struct UnresolvedLinkTests {
    static let types: [ObjectBase.Type] = [FzNode.self, FzSpot.self, FzTag.self]

    /// A shadow of the stored list: (id, whether the object exists); users see the live ones.
    @Test func listOperationsByVisibleIndexMatchAnArrayAndRecordStoredPositions() throws {
        for seed in UInt64(1)...40 {
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            var configuration = folder.configuration(objectTypes: Self.types)
            configuration.recordsHistoryForTesting = true  // the history is checked against the merge model
            let realm = try Realm(configuration: configuration)
            var rng = SeededGenerator(seed: seed)
            var slots: [(id: Int, live: Bool)] = []
            var visible: [Int] { slots.filter(\.live).map(\.id) }
            func storedIndex(_ i: Int) -> Int {
                let live = slots.indices.filter { slots[$0].live }
                return i < live.count ? live[i] : slots.count
            }
            try realm.write {
                let owner = FzNode()
                owner._id = 100
                realm.add(owner)
                for id in 0..<6 { let n = FzNode(); n._id = id; realm.add(n) }
            }
            let owner = try #require(realm.object(ofType: FzNode.self, forPrimaryKey: 100))
            for _ in 0..<30 {
                let existing = Set(realm.objects(FzNode.self).map(\._id)).subtracting([100])
                let target = Int.random(in: 0..<6, using: &rng)
                let count = visible.count
                try realm.write {
                    switch Int.random(in: 0..<7, using: &rng) {
                    case 0, 1:
                        guard existing.contains(target) else { return }
                        let i = Int.random(in: 0...count, using: &rng)
                        slots.insert((target, true), at: storedIndex(i))
                        owner.children.insert(realm.object(ofType: FzNode.self, forPrimaryKey: target)!, at: i)
                    case 2:
                        guard count > 0 else { return }
                        let i = Int.random(in: 0..<count, using: &rng)
                        slots.remove(at: storedIndex(i))
                        owner.children.remove(at: i)
                    case 3:
                        guard count > 0 else { return }
                        let from = Int.random(in: 0..<count, using: &rng), to = Int.random(in: 0..<count, using: &rng)
                        var v = visible
                        v.insert(v.remove(at: from), at: to)
                        owner.children.move(from: from, to: to)
                        #expect(owner.children.map(\._id) == v, "move \(from) → \(to), seed \(seed)")
                        // The store puts the element just before the visible one that follows it.
                        guard from != to else { return }
                        let moving = slots[storedIndex(from)]
                        slots.remove(at: storedIndex(from))
                        let destination = to < count - 1 ? storedIndex(to) : slots.count
                        slots.insert(moving, at: destination)
                    case 4:
                        guard count > 0, existing.contains(target) else { return }
                        let i = Int.random(in: 0..<count, using: &rng)
                        slots[storedIndex(i)] = (target, true)
                        owner.children[i] = realm.object(ofType: FzNode.self, forPrimaryKey: target)!
                    case 5:
                        guard let gone = realm.object(ofType: FzNode.self, forPrimaryKey: target) else { return }
                        realm.delete(gone)
                        for k in slots.indices where slots[k].id == target { slots[k].live = false }
                    default:
                        guard !existing.contains(target) else { return }
                        let n = FzNode()
                        n._id = target
                        realm.add(n)
                        for k in slots.indices where slots[k].id == target { slots[k].live = true }
                    }
                }
                #expect(owner.children.map(\._id) == visible, "seed \(seed)")
                #expect(owner.children.count == visible.count)
                #expect(realm.objects(FzNode.self).filter("children.@count == %@", visible.count).contains { $0._id == 100 })
            }
            var model = ReplicaState()
            model.apply(Changeset(version: 0, timestamp: 0, instructions: realm.schema.objectSchemas.map { .addTable($0) }))
            model.apply(try realm.historyChangesets())
            #expect(try realm.canonicalDump() == model.canonicalDump(), "seed \(seed)")
            #expect(model.value(ObjectID(type: "FzNode", primaryKey: .int(100)), [.property("children")])
                    == .list(slots.map { .link(ObjectLink(objectType: "FzNode", primaryKey: .int(Int64($0.id)))) }), "stored slots, seed \(seed)")
        }
    }

    @Test func aDeletedObjectLeavesSetsAndBecomesNilInMapsAndLinks() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration(objectTypes: Self.types))
        let a = FzNode(), b = FzNode()
        a._id = 1
        b._id = 2
        try realm.write {
            realm.add(a)
            realm.add(b)
            a.friends.insert(b)
            a.named["x"] = b
            a.next = b
        }
        try realm.write { realm.delete(b) }
        #expect(a.friends.isEmpty && a.friends.count == 0)
        #expect(a.named.count == 1 && a.named["x"] == .some(nil))
        #expect(a.next == nil)
        #expect(realm.objects(FzNode.self).filter("next == nil").count == 1)
        #expect(realm.objects(FzNode.self).filter("friends.@count == 0").count == 1)
        try realm.write {
            let again = FzNode()
            again._id = 2
            realm.add(again)
        }
        #expect(a.friends.map(\._id) == [2] && a.named["x"]??._id == 2 && a.next?._id == 2, "links resolve again")
    }
}
