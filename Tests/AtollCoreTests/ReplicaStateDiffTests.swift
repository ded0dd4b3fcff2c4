@testable import AtollCore
import Testing

/// A client reset makes the live data equal to the fresh copy's with `instructions(becoming:)`.
@Suite struct ReplicaStateDiffTests {
    /// Two states that share a history and then go their own ways.
    static func diverged(seed: UInt64) -> (ReplicaState, ReplicaState) {
        var generator = MergeFuzzGenerator(rng: SplitMix64(seed: seed))
        var base = ReplicaState()
        for instruction in MergeFixture.schemaInstructions { base.apply(instruction) }
        for _ in 0..<generator.int(0...15) { _ = generator.transaction(on: &base) }
        var a = base, b = base
        for _ in 0..<generator.int(0...15) { _ = generator.transaction(on: &a) }
        for _ in 0..<generator.int(0...15) { _ = generator.transaction(on: &b) }
        return (a, b)
    }

    @Test func applyingTheDifferenceGivesTheTarget() {
        for seed in 0..<300 as Range<UInt64> {
            let (a, b) = Self.diverged(seed: seed)
            var result = a
            result.apply(Changeset(version: 0, timestamp: 0, instructions: a.instructions(becoming: b)))
            // Schemas merge additively: a column only `a` has stays (empty in every object).
            var expected = b
            for type in a.schema.keys.sorted() { expected.apply(.addTable(a.schema[type]!)) }
            #expect(result.canonicalDump() == expected.canonicalDump(), "seed \(seed)")
        }
    }

    @Test func equalStatesNeedNoChangeToTheirObjects() {
        for seed in 0..<50 as Range<UInt64> {
            let (a, _) = Self.diverged(seed: seed)
            #expect(a.instructions(becoming: a).allSatisfy { if case .addTable = $0 { true } else { false } }, "seed \(seed)")
        }
    }

    @Test func objectsBothHoldKeepTheirIdentity() {
        var a = ReplicaState()
        for instruction in MergeFixture.schemaInstructions { a.apply(instruction) }
        let id = MergeFixture.id("a")
        a.apply(.createObject(id))
        a.apply(.set(id, path: [.property("title")], value: .string("old")))
        var b = a
        b.apply(.set(id, path: [.property("title")], value: .string("new")))
        let change = a.instructions(becoming: b).filter { if case .addTable = $0 { false } else { true } }
        #expect(change == [.set(id, path: [.property("title")], value: .string("new"))])
    }
}

/// The recovery rules of a client reset (SPEC R-RESET-3), each on its own.
@Suite struct ClientResetRecoveryTests {
    static let a = MergeFixture.id("a"), b = MergeFixture.id("b"), c = MergeFixture.id("c")

    /// The server's fresh copy: a (title "server", names [x]) and b.
    static func fresh() -> ReplicaState {
        var state = ReplicaState()
        for instruction in MergeFixture.schemaInstructions { state.apply(instruction) }
        for instruction: Instruction in [
            .createObject(a), .set(a, path: [.property("title")], value: .string("server")),
            .listInsert(a, path: [.property("names")], index: 0, value: .string("x")), .createObject(b),
        ] { state.apply(instruction) }
        return state
    }

    static func recover(_ instructions: [Instruction]) -> [Instruction] {
        ClientResetRecovery.recover([Changeset(version: 5, timestamp: 1, instructions: instructions)], onto: fresh())
    }

    @Test func objectsCreatedLocallyAreKeptWithTheirFields() {
        let local: [Instruction] = [.createObject(Self.c), .set(Self.c, path: [.property("title")], value: .string("mine"))]
        #expect(Self.recover(local) == local)
    }

    @Test func aServerDeleteBeatsALocalUpdate() {
        let gone = MergeFixture.id("deleted on the server")
        #expect(Self.recover([.set(gone, path: [.property("title")], value: .string("x")), .addInteger(gone, path: [.property("count")], delta: 1)]).isEmpty)
    }

    @Test func aLocalDeleteOfAnObjectTheServerHasIsApplied() {
        #expect(Self.recover([.eraseObject(Self.b)]) == [.eraseObject(Self.b)])
    }

    @Test func theLocalUpdateOfAFieldWins() {
        let update = Instruction.set(Self.a, path: [.property("title")], value: .string("local"))
        #expect(Self.recover([update]) == [update])
    }

    @Test func listElementsInsertedOfflineAreKept() {
        // Inserted at 3 on a list that had 3 elements locally; the server's has 1: kept, at the end.
        let recovered = Self.recover([.listInsert(Self.a, path: [.property("names")], index: 3, value: .string("offline"))])
        #expect(recovered == [.listInsert(Self.a, path: [.property("names")], index: 1, value: .string("offline"))])
        // An erase at a position the server's list does not have is dropped.
        #expect(Self.recover([.listErase(Self.a, path: [.property("names")], index: 4)]).isEmpty)
    }
}

extension ClientResetRecoveryTests {
    /// What recovery drops is accounted for, in order, as it was made (for the discard archive).
    @Test func theOutcomeListsWhatWasDropped() {
        let gone = MergeFixture.id("deleted on the server")
        let local: [Instruction] = [
            .set(gone, path: [.property("title")], value: .string("lost")),
            .set(Self.a, path: [.property("title")], value: .string("kept")),
            .listErase(Self.a, path: [.property("names")], index: 4),
        ]
        let outcome = ClientResetRecovery.recovery(of: [Changeset(version: 5, timestamp: 1, instructions: local)], onto: Self.fresh())
        #expect(outcome.kept == [local[1]])
        #expect(outcome.dropped == [local[0], local[2]])
    }

    @Test func instructionsReadAsSentences() {
        #expect(Instruction.set(Self.a, path: [.property("names"), .index(2)], value: .string("x")).description
            == "set \(Self.a.type)(\(Self.a.primaryKey)).names[2] = \"x\"")
        #expect(Instruction.eraseObject(Self.b).description == "delete \(Self.b.type)(\(Self.b.primaryKey))")
    }
}
