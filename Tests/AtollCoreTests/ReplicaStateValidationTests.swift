@testable import AtollCore
import Foundation
import Testing

/// `ReplicaState.validate(_:limits:)`: what the server checks on rebased changesets before they
/// enter history. Each rule is accepted at its boundary and refused one past it.
@Suite struct ReplicaStateValidationTests {
    static let a = MergeFixture.id("a")
    static let names: [PathElement] = [.property("names")]   // ["x", "y", "z"] in the base state
    static let state = MergeFixture.baseState()

    /// The error validating `instructions` (one changeset, client version 7) throws, or nil.
    static func error(_ instructions: [Instruction], limits: ChangesetLimits = ChangesetLimits(),
                      on state: ReplicaState = state) -> MergeError? {
        do {
            try state.validate([MergeFixture.changeset(instructions, version: 7)], limits: limits)
            return nil
        } catch {
            return error
        }
    }

    static func accepts(_ instructions: [Instruction], limits: ChangesetLimits = ChangesetLimits(),
                        sourceLocation: SourceLocation = #_sourceLocation) {
        let error = error(instructions, limits: limits)
        #expect(error == nil, "\(instructions)", sourceLocation: sourceLocation)
    }

    static func refuses(_ instructions: [Instruction], _ message: String, limits: ChangesetLimits = ChangesetLimits(),
                        sourceLocation: SourceLocation = #_sourceLocation) {
        let error = error(instructions, limits: limits)
        #expect(error?.code == .invalidInstruction, "\(instructions)", sourceLocation: sourceLocation)
        #expect(error?.message == message, sourceLocation: sourceLocation)
    }

    @Test func listInsertPositionsRunFromZeroToTheCount() {
        Self.accepts([.listInsert(Self.a, path: Self.names, index: 0, value: .string("n"))])
        Self.accepts([.listInsert(Self.a, path: Self.names, index: 3, value: .string("n"))])
        Self.refuses([.listInsert(Self.a, path: Self.names, index: 4, value: .string("n"))],
                     "instruction 0 of client version 7 cannot apply to the realm: list insert at index 4 of names, a list of 3; valid: 0...3")
        for index in [-1, Int.min, Int.max] {
            #expect(Self.error([.listInsert(Self.a, path: Self.names, index: index, value: .string("n"))])?.code == .invalidInstruction)
        }
    }

    @Test func listErasePositionsRunBelowTheCount() {
        Self.accepts([.listErase(Self.a, path: Self.names, index: 2)])
        Self.refuses([.listErase(Self.a, path: Self.names, index: 3)],
                     "instruction 0 of client version 7 cannot apply to the realm: list erase at index 3 of names, a list of 3; valid: 0..<3")
        Self.refuses([.listErase(Self.a, path: Self.names, index: -1)],
                     "instruction 0 of client version 7 cannot apply to the realm: list erase at index -1 of names, a list of 3; valid: 0..<3")
        Self.refuses([.listErase(Self.a, path: [.property("addresses")], index: 0)],
                     "instruction 0 of client version 7 cannot apply to the realm: list erase at index 0 of addresses, a list of 0; valid: none (the list is empty)")
    }

    @Test func listMoveEndsBothRunBelowTheCount() {
        Self.accepts([.listMove(Self.a, path: Self.names, from: 2, to: 0)])
        Self.accepts([.listMove(Self.a, path: Self.names, from: 1, to: 1)])   // a no-op, but a legitimate one
        Self.refuses([.listMove(Self.a, path: Self.names, from: 3, to: 0)],
                     "instruction 0 of client version 7 cannot apply to the realm: list move at index 3 of names, a list of 3; valid: 0..<3")
        Self.refuses([.listMove(Self.a, path: Self.names, from: 0, to: 3)],
                     "instruction 0 of client version 7 cannot apply to the realm: list move at index 3 of names, a list of 3; valid: 0..<3")
        #expect(Self.error([.listMove(Self.a, path: Self.names, from: Int.min, to: Int.max)])?.code == .invalidInstruction)
    }

    @Test func elementSetsAndPathsThroughElementsNeedAnExistingElement() {
        Self.accepts([.set(Self.a, path: Self.names + [.index(2)], value: .string("n"))])
        Self.refuses([.set(Self.a, path: Self.names + [.index(3)], value: .string("n"))],
                     "instruction 0 of client version 7 cannot apply to the realm: list set at index 3 of names[3], a list of 3; valid: 0..<3")
        let address = Value.object(["city": .string("Oslo")])
        Self.accepts([.listInsert(Self.a, path: [.property("addresses")], index: 0, value: address),
                      .set(Self.a, path: [.property("addresses"), .index(0), .property("city")], value: .string("Rome"))])
        Self.refuses([.listInsert(Self.a, path: [.property("addresses")], index: 0, value: address),
                      .set(Self.a, path: [.property("addresses"), .index(1), .property("city")], value: .string("Rome"))],
                     "instruction 1 of client version 7 cannot apply to the realm: the path goes through index 1 of Item.addresses, out of range 0..<1")
    }

    @Test func laterInstructionsAreCheckedAgainstWhatEarlierOnesDid() {
        // Each insert makes room for the next; across changesets too.
        Self.accepts((3..<10).map { .listInsert(Self.a, path: Self.names, index: $0, value: .string("n")) })
        let first = MergeFixture.changeset([.listInsert(Self.a, path: Self.names, index: 3, value: .string("n"))], version: 1)
        let second = MergeFixture.changeset([.listErase(Self.a, path: Self.names, index: 3)], version: 2)
        #expect(throws: Never.self) { try Self.state.validate([first, second]) }
        #expect(throws: MergeError.self) { try Self.state.validate([second]) }
        // A created object can be written at once; an erased one cannot.
        let c = MergeFixture.id("c")
        Self.accepts([.createObject(c), .set(c, path: [.property("title")], value: .string("C"))])
        Self.refuses([.eraseObject(Self.a), .set(Self.a, path: [.property("title")], value: .string("A"))],
                     "instruction 1 of client version 7 cannot apply to the realm: the Item object it changes does not exist")
    }

    @Test func objectsMustExistExceptForIdempotentCreatesAndErases() {
        let missing = MergeFixture.id("missing")
        Self.accepts([.createObject(Self.a)])     // already there: concurrent creates are one object
        Self.accepts([.eraseObject(missing)])     // already gone: concurrent erases are one erase
        for instruction: Instruction in [
            .set(missing, path: [.property("title")], value: .string("t")),
            .addInteger(missing, path: [.property("count")], delta: 1),
            .listInsert(missing, path: Self.names, index: 0, value: .string("n")),
            .clear(missing, path: Self.names),
            .setInsert(missing, path: [.property("tags")], value: .string("t")),
            .mapErase(missing, path: [.property("scores")], key: "k"),
        ] {
            Self.refuses([instruction],
                         "instruction 0 of client version 7 cannot apply to the realm: the Item object it changes does not exist")
        }
    }

    @Test func pathsMustLeadToAContainerOfTheRightKind() {
        let b = MergeFixture.id("b")
        // `a.address` is an embedded object; b has no address lines yet but an address, and c none at all.
        Self.accepts([.set(Self.a, path: [.property("address"), .property("city")], value: .string("Lima"))])
        Self.accepts([.listInsert(b, path: [.property("address"), .property("lines")], index: 0, value: .string("l"))])
        Self.refuses([.createObject(MergeFixture.id("c")),
                      .set(MergeFixture.id("c"), path: [.property("address"), .property("city")], value: .string("Lima"))],
                     "instruction 1 of client version 7 cannot apply to the realm: Item.address is not an object")
        Self.refuses([.set(Self.a, path: [.property("title"), .property("x"), .property("y")], value: .int(1))],
                     "instruction 0 of client version 7 cannot apply to the realm: the path goes through Item.title, which is not an object")
        Self.refuses([.set(Self.a, path: [.property("scores"), .key("missing"), .property("x")], value: .int(1))],
                     "instruction 0 of client version 7 cannot apply to the realm: the path goes through a key Item.scores does not have")
        // addInteger: an int, or null (an add that won over a concurrent set to null); not a string.
        Self.accepts([.addInteger(Self.a, path: [.property("scores"), .key("k")], delta: 1)])
        Self.refuses([.addInteger(Self.a, path: [.property("address"), .property("city")], delta: 1)],
                     "instruction 0 of client version 7 cannot apply to the realm: Item.address.city is not an int or null")
        Self.refuses([.clear(Self.a, path: [.property("address"), .property("city")])],
                     "instruction 0 of client version 7 cannot apply to the realm: Item.address.city is not a list, set or map")
    }

    @Test func erasingWhatIsNotThereIsAllowed() {
        Self.accepts([.setErase(Self.a, path: [.property("tags")], value: .string("absent"))])
        Self.accepts([.mapErase(Self.a, path: [.property("scores")], key: "absent")])
        Self.accepts([.set(Self.a, path: [.property("owner")], value: MergeFixture.link("missing"))])   // links may dangle
    }

    @Test func schemaViolationsComeFromHistorySchema() {
        let error = Self.error([.set(Self.a, path: [.property("nope")], value: .int(1))])
        #expect(error == MergeError(.schemaViolation,
            "instruction 0 of client version 7 breaks the realm's schema: Item has no property nope (the realm's history never added it)"))
        #expect(Self.error([.createObject(ObjectID(type: "Nope", primaryKey: .int(1)))])?.code == .schemaViolation)
        // Schema instructions earlier in the batch count.
        Self.accepts([.addColumn(type: "Item", Property(name: "extra", type: .int)),
                      .set(Self.a, path: [.property("extra")], value: .int(1))])
    }

    @Test func stringsDataAndKeysAreAtMostTheValueSize() {
        let limits = ChangesetLimits(maximumValueSize: 8)
        let title: [PathElement] = [.property("title")]
        Self.accepts([.set(Self.a, path: title, value: .string("12345678"))], limits: limits)
        Self.refuses([.set(Self.a, path: title, value: .string("123456789"))],
                     "instruction 0 of client version 7 cannot apply to the realm: a string value of 9 bytes, more than 8", limits: limits)
        // Bytes of UTF-8, not characters: "éééé" is 4 characters, 8 bytes; "ééé€" is 4 characters, 9 bytes.
        Self.accepts([.set(Self.a, path: title, value: .string("éééé"))], limits: limits)
        Self.refuses([.set(Self.a, path: title, value: .string("ééé€"))],
                     "instruction 0 of client version 7 cannot apply to the realm: a string value of 9 bytes, more than 8", limits: limits)
        Self.accepts([.set(Self.a, path: [.property("title")], value: .string("x")),
                      .set(Self.a, path: [.property("owner")], value: .null)], limits: limits)
        Self.refuses([.set(Self.a, path: [.property("scores"), .key("123456789")], value: .int(1))],
                     "instruction 0 of client version 7 cannot apply to the realm: a map key of 9 bytes, more than 8", limits: limits)
        Self.refuses([.listInsert(Self.a, path: Self.names, index: 0, value: .string("123456789"))],
                     "instruction 0 of client version 7 cannot apply to the realm: a string value of 9 bytes, more than 8", limits: limits)
        Self.refuses([.createObject(MergeFixture.id("123456789"))],
                     "instruction 0 of client version 7 cannot apply to the realm: a string value of 9 bytes, more than 8", limits: limits)
        Self.refuses([.set(Self.a, path: [.property("address")], value: .object(["city": .string("123456789")]))],
                     "instruction 0 of client version 7 cannot apply to the realm: a string value of 9 bytes, more than 8", limits: limits)
        #expect(Self.state.problem(with: .set(Self.a, path: title, value: .data(Data(count: 9))), limits: limits)
            == "a data value of 9 bytes, more than 8")
        #expect(Self.state.problem(with: .set(Self.a, path: title, value: .data(Data(count: 8))), limits: limits)
            == nil)
        #expect(ChangesetLimits().maximumValueSize == 16 * 1024 * 1024)
    }

    @Test func collectionsHoldAtMostTheCollectionCount() {
        let limits = ChangesetLimits(maximumCollectionCount: 4)
        let insert = Instruction.listInsert(Self.a, path: Self.names, index: 0, value: .string("n"))
        Self.accepts([insert], limits: limits)                 // 3 → 4
        Self.refuses([insert, insert], "instruction 1 of client version 7 cannot apply to the realm: Item.names would hold more than 4 elements",
                     limits: limits)
        let four = Value.list((0..<4).map { .string("\($0)") }), five = Value.list((0..<5).map { .string("\($0)") })
        Self.accepts([.set(Self.a, path: Self.names, value: four)], limits: limits)
        Self.refuses([.set(Self.a, path: Self.names, value: five)],
                     "instruction 0 of client version 7 cannot apply to the realm: a collection value of 5 elements, more than 4", limits: limits)
        let tag = { (t: String) in Instruction.setInsert(Self.a, path: [.property("tags")], value: .string(t)) }
        Self.accepts([tag("v"), tag("w"), tag("w")], limits: limits)   // 2 → 4; inserting a present value adds nothing
        Self.refuses([tag("v"), tag("w"), tag("x")],
                     "instruction 2 of client version 7 cannot apply to the realm: Item.tags would hold more than 4 elements", limits: limits)
        let score = { (k: String) in Instruction.set(Self.a, path: [.property("scores"), .key(k)], value: .int(1)) }
        Self.accepts([score("m"), score("n"), score("k")], limits: limits)
        Self.refuses([score("m"), score("n"), score("o")],
                     "instruction 2 of client version 7 cannot apply to the realm: Item.scores would hold more than 4 elements", limits: limits)
    }

    @Test func validationDoesNotChangeTheState() throws {
        let state = Self.state
        try state.validate([MergeFixture.changeset([.eraseObject(Self.a)])])
        #expect(state == Self.state)
    }
}

/// The merge with positions no list can have: nothing traps, and the server refuses the result.
@Suite struct MergeExtremeIndexTests {
    static let extremes = [Int.min, Int.min + 1, -1, 0, 1, 2, Int.max - 1, Int.max]

    static var changes: [ListChange] {
        extremes.flatMap { i in [ListChange.insert(i), .erase(i)] + extremes.map { ListChange.move(from: i, to: $0) } }
    }

    @Test func rebasingListChangesNeverTraps() {
        var count = 0
        for a in Self.changes {
            for b in Self.changes {
                for tie in [true, false] {
                    _ = a.rebased(over: b, selfFirstOnTie: tie, selfWinsSameSource: tie)
                    count += 1
                }
                for i in Self.extremes { _ = a.map(i) }
            }
        }
        #expect(count == Self.changes.count * Self.changes.count * 2)
    }

    @Test func anIntMaxInsertConcurrentWithANormalInsertDoesNotTrap() {
        let a = MergeFixture.id("a"), names: [PathElement] = [.property("names")]
        let state = MergeFixture.baseState()
        let honest = MergeFixture.changeset([.listInsert(a, path: names, index: 0, value: .string("n"))], version: 1, timestamp: 5, file: 2)
        for index in [Int.max, Int.min, -1] {
            for hostileInstruction: Instruction in [
                .listInsert(a, path: names, index: index, value: .string("h")),
                .listMove(a, path: names, from: index, to: 0),
                .listErase(a, path: names, index: index),
            ] {
                let hostile = MergeFixture.changeset([hostileInstruction], version: 1, timestamp: 5, file: 3)
                // Both orders, both stamps: shifted positions saturate instead of trapping, and applying
                // what comes out changes nothing it should not. (Convergence is only promised for
                // instructions valid on their common state: that is what the server's validation ensures.)
                for (x, y) in [(honest, hostile), (hostile, honest)] {
                    let (x2, y2) = Merge.transform(local: [x], remote: [y])
                    for result in [state.applying([y] + x2), state.applying([x] + y2)] {
                        #expect(result.value(MergeFixture.id("b"), names) == state.value(MergeFixture.id("b"), names))
                    }
                }
                // The server, holding the honest insert, refuses the rebased hostile upload.
                var server = state
                server.apply(honest)
                let rebased = Merge.transform(local: [hostile], remote: [honest]).local
                do {
                    try server.validate(rebased)
                    Issue.record("\(rebased) was not refused")
                } catch {
                    #expect(error.code == .invalidInstruction)
                }
            }
        }
    }
}
