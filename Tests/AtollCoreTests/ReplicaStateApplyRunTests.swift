@testable import AtollCore
import AtollTesting
import Foundation
import Testing

/// `ReplicaState.apply(_: Changeset)` applies a run of instructions on one object to its fields
/// taken out once: the result must be the instructions applied one at a time, whatever they are.
@Suite struct ReplicaStateApplyRunTests {
    @Test func aChangesetAppliesAsItsInstructionsOneByOne() {
        for seed in UInt64(1)...60 {
            var generator = MergeFuzzGenerator(rng: SplitMix64(seed: seed))
            var oneByOne = ReplicaState()
            for instruction in MergeFixture.schemaInstructions { oneByOne.apply(instruction) }
            var whole = oneByOne
            for version in Int64(1)...30 {
                var instructions = generator.transaction(on: &oneByOne)
                if generator.chance(0.3) {
                    let hostile = generator.hostileTransaction(on: oneByOne)
                    for instruction in hostile { oneByOne.apply(instruction) }
                    instructions += hostile
                }
                whole.apply(Changeset(version: version, timestamp: version, instructions: instructions))
                #expect(whole == oneByOne, "seed \(seed), version \(version)")
            }
        }
    }

    @Test func anImportBatchAppliesAsItsInstructionsOneByOne() throws {
        let typing = DocumentTypingBytesTests.typing
        let schema = DocumentTypingBytesTests.schema.values.sorted { $0.name < $1.name }.map(Instruction.addTable)
        var oneByOne = ReplicaState()
        for instruction in schema { oneByOne.apply(instruction) }
        var whole = oneByOne
        // Twice: the second batch overwrites objects that exist, lists included.
        for round in 0..<2 {
            let documents = DocumentTypingBytesTests.scannable.map { round == 0 ? $0 : $0.replacingOccurrences(of: "\"a\"", with: "\"z\"") }
            let instructions = try documents.flatMap { try typing.type(bytes: Array($0.utf8), as: "Task").instructions }
            for instruction in instructions { oneByOne.apply(instruction) }
            whole.apply(Changeset(version: 1, timestamp: 1, instructions: instructions))
            // Compared as dumps: a NaN field is not equal to itself.
            #expect(whole.canonicalDump() == oneByOne.canonicalDump(), "round \(round)")
            #expect(whole.objects["Task"]?.count == 3)
        }
    }
}
