@testable import AtollCore
import Testing

/// `Merge.transform(_:_:)` skips the pass over every pair of instructions when no object is
/// addressed on both sides: it must give exactly what that pass gives.
@Suite struct MergeShortcutTests {
    @Test func theShortcutGivesWhatEveryPairGives() {
        var disjoint = 0, overlapping = 0
        for seed in UInt64(1)...400 {
            var generator = MergeFuzzGenerator(rng: SplitMix64(seed: seed))
            var localState = MergeFixture.baseState(), remoteState = localState
            var local: [Instruction] = generator.chance(0.3) ? MergeFixture.schemaInstructions : []
            if local.isEmpty || generator.chance(0.5) {
                for _ in 0..<generator.int(1...2) { local += generator.transaction(on: &localState) }
            }
            var remote: [Instruction] = []
            for _ in 0..<generator.int(1...3) { remote += generator.transaction(on: &remoteState) }
            var fastLocal = MergeFixture.changeset(local, version: 2, timestamp: 2, file: 1)
            var fastRemote = MergeFixture.changeset(remote, version: 2, timestamp: 1, file: 2)
            var slowLocal = fastLocal, slowRemote = fastRemote
            Merge.transform(&fastLocal, &fastRemote)
            Merge.transformEveryPair(&slowLocal, &slowRemote)
            #expect(fastLocal == slowLocal, "seed \(seed)")
            #expect(fastRemote == slowRemote, "seed \(seed)")
            let localObjects = Set(local.compactMap(\.object))
            if remote.contains(where: { $0.object.map(localObjects.contains) ?? false }) { overlapping += 1 } else { disjoint += 1 }
        }
        // Both branches ran often enough to mean something.
        #expect(disjoint > 50 && overlapping > 50, "disjoint \(disjoint), overlapping \(overlapping)")
    }

    @Test func aSchemaChangesetLetsEveryDownloadedInstructionThrough() {
        var local = MergeFixture.changeset(MergeFixture.schemaInstructions, version: 1, file: 1)
        let objects = (0..<50).flatMap { i -> [Instruction] in
            let id = ObjectID(type: "Item", primaryKey: .string("k\(i)"))
            return [.createObject(id), .set(id, path: [.property("title")], value: .string("t\(i)"))]
        }
        var remote = MergeFixture.changeset(MergeFixture.schemaInstructions + objects, version: 1, file: 2)
        let (before, beforeRemote) = (local, remote)
        Merge.transform(&local, &remote)
        #expect(local == before && remote == beforeRemote)
    }
}
