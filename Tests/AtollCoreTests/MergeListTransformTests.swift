@testable import AtollCore
import Testing

/// Exhaustive check of the list rules: every pair of concurrent list instructions (insert, erase,
/// move, element set) on lists of 0–4 elements, both stamp orders, converges.
@Suite struct MergeListTransformTests {
    static func instructions(count n: Int, side: Int) -> [Instruction] {
        let o = MergeFixture.id("a"), path: [PathElement] = [.property("names")]
        var out: [Instruction] = (0...n).map { .listInsert(o, path: path, index: $0, value: .string("n\(side)")) }
        for i in 0..<n {
            out.append(.listErase(o, path: path, index: i))
            out.append(.set(o, path: path + [.index(i)], value: .string("s\(side)")))
            for j in 0..<n { out.append(.listMove(o, path: path, from: i, to: j)) }
        }
        return out
    }

    @Test(arguments: 0...4)
    func everyPairOfListChangesConverges(count n: Int) {
        var base = ReplicaState()
        let o = MergeFixture.id("a")
        base.apply(MergeFixture.changeset(MergeFixture.schemaInstructions + [.createObject(o)]
            + (0..<n).map { .listInsert(o, path: [.property("names")], index: $0, value: .string("e\($0)")) }))
        var pairs = 0
        for a in Self.instructions(count: n, side: 0) {
            for b in Self.instructions(count: n, side: 1) {
                for (ta, tb) in [(Int64(1), Int64(2)), (2, 1)] {
                    let l = MergeFixture.changeset([a], timestamp: ta, file: 1)
                    let r = MergeFixture.changeset([b], timestamp: tb, file: 2)
                    let (l2, r2) = Merge.transform(local: [l], remote: [r])
                    let one = base.applying([r] + l2).value(o, [.property("names")])
                    let two = base.applying([l] + r2).value(o, [.property("names")])
                    #expect(one == two, "\(a) (t\(ta)) × \(b) (t\(tb)): \(String(describing: one)) vs \(String(describing: two))")
                    pairs += 1
                }
            }
        }
        #expect(pairs > 0)
    }

    @Test func anEraseOfAnElementTakesConcurrentChangesInsideIt() {
        let o = MergeFixture.id("a")
        let inner = Instruction.set(o, path: [.property("addresses"), .index(1), .property("city")], value: .string("Oslo"))
        let erase = Instruction.listErase(o, path: [.property("addresses")], index: 1)
        let insert = Instruction.listInsert(o, path: [.property("addresses")], index: 0, value: .object([:]))
        let (dropped, _) = Merge.transform(local: [MergeFixture.changeset([inner])], remote: [MergeFixture.changeset([erase])])
        #expect(dropped[0].instructions.isEmpty)
        let (shifted, _) = Merge.transform(local: [MergeFixture.changeset([inner])], remote: [MergeFixture.changeset([insert])])
        #expect(shifted[0].instructions == [.set(o, path: [.property("addresses"), .index(2), .property("city")], value: .string("Oslo"))])
    }
}
