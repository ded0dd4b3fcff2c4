@testable import AtollCore
import Testing

/// The server's write check: refused objects' instructions are left out, the rest integrates, and
/// the compensating write puts the client's copy of the refused objects back as the server has it.
@Suite struct WriteCheckTests {
    static let a = MergeFixture.id("a"), b = MergeFixture.id("b"), c = MergeFixture.id("c")

    /// a (title "server", names [x]) and b (title "mine").
    static func state() -> ReplicaState {
        var state = ReplicaState()
        for instruction in MergeFixture.schemaInstructions { state.apply(instruction) }
        for instruction: Instruction in [
            .createObject(a), .set(a, path: [.property("title")], value: .string("server")),
            .listInsert(a, path: [.property("names")], index: 0, value: .string("x")),
            .createObject(b), .set(b, path: [.property("title")], value: .string("mine")),
        ] { state.apply(instruction) }
        return state
    }

    /// Only objects titled "mine" may be written (before and after the change).
    static func onlyMine(_ id: ObjectID, _ before: [String: Value]?, _ after: [String: Value]?, _ state: ReplicaState) -> String? {
        for fields in [before, after].compactMap({ $0 }) where fields["title"] != .string("mine") {
            return "\(id.type) \(id.primaryKey) is not yours"
        }
        return nil
    }

    static func check(_ instructions: [Instruction]) -> WriteCheck.Outcome {
        WriteCheck.check([Changeset(version: 7, timestamp: 5, fileIdent: 3, instructions: instructions)], over: state(), rule: onlyMine)
    }

    /// The state the client ends with: the server's, its own upload, then the compensating write.
    static func clientAfterCompensation(_ instructions: [Instruction], _ outcome: WriteCheck.Outcome) -> ReplicaState {
        var client = state()
        for instruction in instructions + outcome.compensation { client.apply(instruction) }
        return client
    }

    static func serverAfter(_ outcome: WriteCheck.Outcome) -> ReplicaState {
        var server = state()
        server.apply(outcome.allowed)
        for instruction in outcome.compensation { server.apply(instruction) }
        return server
    }

    @Test func allowedWritesPassUnchanged() {
        let upload: [Instruction] = [.set(Self.b, path: [.property("count")], value: .int(3))]
        let outcome = Self.check(upload)
        #expect(outcome.allowed.map(\.instructions) == [upload])
        #expect(outcome.allowed.first?.version == 7)
        #expect(outcome.rejected.isEmpty && outcome.compensation.isEmpty)
    }

    @Test func aRefusedUpdateIsRevertedOnTheClient() {
        let upload: [Instruction] = [
            .set(Self.a, path: [.property("title")], value: .string("stolen")),
            .listInsert(Self.a, path: [.property("names")], index: 1, value: .string("y")),
            .set(Self.b, path: [.property("count")], value: .int(3)),
        ]
        let outcome = Self.check(upload)
        #expect(outcome.allowed.map(\.instructions) == [[upload[2]]])
        #expect(outcome.rejected == [CompensatingWrite(objectType: "Item", primaryKey: .string("a"), reason: "Item \"a\" is not yours")])
        #expect(Self.clientAfterCompensation(upload, outcome).canonicalDump() == Self.serverAfter(outcome).canonicalDump())
    }

    @Test func aRefusedCreateIsErasedOnTheClient() {
        let upload: [Instruction] = [.createObject(Self.c), .set(Self.c, path: [.property("title")], value: .string("theirs"))]
        let outcome = Self.check(upload)
        #expect(outcome.allowed.map(\.instructions) == [[]])
        #expect(outcome.rejected.map(\.primaryKey) == [.string("c")])
        #expect(outcome.compensation == [.eraseObject(Self.c)])
        #expect(Self.clientAfterCompensation(upload, outcome).object(Self.c) == nil)
    }

    @Test func aRefusedDeleteIsUndoneOnTheClient() {
        let upload: [Instruction] = [.eraseObject(Self.a)]
        let outcome = Self.check(upload)
        #expect(outcome.rejected.map(\.primaryKey) == [.string("a")])
        let client = Self.clientAfterCompensation(upload, outcome)
        #expect(client.object(Self.a) == Self.state().object(Self.a))
        #expect(client.canonicalDump() == Self.state().canonicalDump())
    }

    /// A change that would take an object out of what the user may write is refused too.
    @Test func writingAnObjectAwayFromTheUserIsRefused() {
        let upload: [Instruction] = [.set(Self.b, path: [.property("title")], value: .string("given away"))]
        let outcome = Self.check(upload)
        #expect(outcome.rejected.map(\.primaryKey) == [.string("b")])
        #expect(Self.clientAfterCompensation(upload, outcome).value(Self.b, [.property("title")]) == .string("mine"))
    }

    /// Over several changesets each refused object is listed once and later changesets see the
    /// server's copy, not the refused one.
    @Test func severalChangesetsListEachRefusedObjectOnce() {
        let first: [Instruction] = [.set(Self.a, path: [.property("title")], value: .string("stolen"))]
        let second: [Instruction] = [.set(Self.a, path: [.property("count")], value: .int(9)), .createObject(Self.c)]
        let outcome = WriteCheck.check([Changeset(version: 1, timestamp: 1, instructions: first),
                                        Changeset(version: 2, timestamp: 2, instructions: second)],
                                       over: Self.state(), rule: Self.onlyMine)
        #expect(outcome.allowed.map(\.version) == [1, 2])
        #expect(outcome.rejected.map(\.primaryKey) == [.string("a"), .string("c")])
        var client = Self.state()
        for instruction in first + second + outcome.compensation { client.apply(instruction) }
        #expect(client.canonicalDump() == Self.serverAfter(outcome).canonicalDump())
    }

    @Test func schemaInstructionsAreNeverRefused() {
        let upload: [Instruction] = [.addColumn(type: "Item", Property(name: "extra", type: .int))]
        #expect(Self.check(upload).allowed.map(\.instructions) == [upload])
    }
}
