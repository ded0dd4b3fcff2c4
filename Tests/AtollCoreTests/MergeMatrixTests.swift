@testable import AtollCore
import Foundation
import Testing

/// Every pair of instruction kinds, in both orders, on the same target and on different targets:
/// both application orders converge, and the documented winner wins.
@Suite struct MergeMatrixTests {
    enum Kind: String, CaseIterable, Sendable {
        case addTable, addColumn, createObject, eraseObject
        case setField, setListElement, setMapValue, setEmbedded, setInsideEmbedded, addInteger
        case listInsert, listErase, listMove, clearList, setInsert, setErase, mapErase

        /// The instruction of this kind on object `key`; `side` (0 or 1) varies the values.
        func instruction(on key: String, side: Int) -> Instruction {
            let o = MergeFixture.id(key)
            let names: [PathElement] = [.property("names")]
            switch self {
            case .addTable:
                return .addTable(ObjectSchema(name: "Item", properties: [Property(name: "extra\(side)", type: .int)]))
            case .addColumn: return .addColumn(type: "Item", Property(name: "column\(side)", type: .string))
            case .createObject: return .createObject(o)
            case .eraseObject: return .eraseObject(o)
            case .setField: return .set(o, path: [.property("count")], value: .int(100 + Int64(side)))
            case .setListElement: return .set(o, path: names + [.index(1)], value: .string("set\(side)"))
            case .setMapValue: return .set(o, path: [.property("scores"), .key("k")], value: .int(50 + Int64(side)))
            case .setEmbedded:
                return .set(o, path: [.property("address")], value: .object(["city": .string("Whole\(side)")]))
            case .setInsideEmbedded: return .set(o, path: [.property("address"), .property("city")], value: .string("Inner\(side)"))
            case .addInteger: return .addInteger(o, path: [.property("count")], delta: 10 + Int64(side))
            case .listInsert: return .listInsert(o, path: names, index: 1, value: .string("ins\(side)"))
            case .listErase: return .listErase(o, path: names, index: 1)
            case .listMove: return side == 0 ? .listMove(o, path: names, from: 1, to: 2) : .listMove(o, path: names, from: 1, to: 0)
            case .clearList: return .clear(o, path: names)
            case .setInsert: return .setInsert(o, path: [.property("tags")], value: .string("v"))
            case .setErase: return .setErase(o, path: [.property("tags")], value: .string("v"))
            case .mapErase: return .mapErase(o, path: [.property("scores")], key: "k")
            }
        }

        var isSchema: Bool { self == .addTable || self == .addColumn }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var first: Kind
        var second: Kind
        var sameTarget: Bool
        var testDescription: String { "\(first.rawValue) × \(second.rawValue) on \(sameTarget ? "the same" : "different") targets" }
    }

    static let cases: [Case] = Kind.allCases.flatMap { a in
        Kind.allCases.flatMap { b in [true, false].map { Case(first: a, second: b, sameTarget: $0) } }
    }

    /// Both orders of application agree, for both stamp orders; returns the converged state.
    static func merge(_ a: Instruction, stampA: Int64, _ b: Instruction, stampB: Int64) -> ReplicaState {
        var base = MergeFixture.baseState()
        // `v` is in the set for erase to act on, but not for insert (which then adds it).
        if case .setErase = a { base.apply(.setInsert(MergeFixture.id("a"), path: [.property("tags")], value: .string("v"))) }
        if case .setErase = b { base.apply(.setInsert(MergeFixture.id("a"), path: [.property("tags")], value: .string("v"))) }
        let local = MergeFixture.changeset([a], timestamp: stampA, file: 1)
        let remote = MergeFixture.changeset([b], timestamp: stampB, file: 2)
        let (local2, remote2) = Merge.transform(local: [local], remote: [remote])
        let serverOrder = base.applying([remote] + local2)
        let clientOrder = base.applying([local] + remote2)
        #expect(serverOrder.canonicalDump() == clientOrder.canonicalDump(),
                "diverged:\n\(serverOrder.canonicalDescription())\n---\n\(clientOrder.canonicalDescription())")
        return serverOrder
    }

    @Test(arguments: cases)
    func concurrentPairConverges(_ c: Case) {
        let a = c.first.instruction(on: "a", side: 0)
        let b = c.second.instruction(on: c.sameTarget ? "a" : "b", side: 1)
        for (ta, tb) in [(Int64(10), Int64(20)), (20, 10), (10, 10)] {
            let state = Self.merge(a, stampA: ta, b, stampB: tb)
            if !c.sameTarget || c.first.isSchema || c.second.isSchema {
                // Independent instructions pass each other unchanged.
                let (l, r) = Merge.transform(local: [MergeFixture.changeset([a], timestamp: ta, file: 1)],
                                             remote: [MergeFixture.changeset([b], timestamp: tb, file: 2)])
                #expect(l[0].instructions == [a] && r[0].instructions == [b])
                continue
            }
            // `a` wins when its stamp is later; at equal stamps the higher file ident (b's) wins.
            checkWinner(c.first, a, c.second, b, aIsLater: ta > tb, state)
        }
    }

    /// The documented outcome for conflicting pairs on object `a`.
    func checkWinner(_ ka: Kind, _ a: Instruction, _ kb: Kind, _ b: Instruction, aIsLater: Bool, _ s: ReplicaState) {
        let o = MergeFixture.id("a")
        let later = aIsLater ? a : b
        func value(_ path: [PathElement]) -> Value? { s.value(o, path) }
        let pair = Set([ka, kb])
        if pair.contains(.eraseObject) {
            #expect(s.object(o) == nil, "erase beats every concurrent change")
            return
        }
        switch (ka, kb) {
        case (.setField, .setField), (.setMapValue, .setMapValue), (.setListElement, .setListElement),
             (.setEmbedded, .setEmbedded), (.setInsideEmbedded, .setInsideEmbedded):
            let alone = MergeFixture.baseState().applying([MergeFixture.changeset([later])])
            #expect(s.canonicalDump() == alone.canonicalDump(), "the later set wins")
        case (.addInteger, .addInteger):
            #expect(value([.property("count")]) == .int(5 + 10 + 11), "concurrent adds both count")
        case (.setField, .addInteger), (.addInteger, .setField):
            let set: Int64 = ka == .setField ? 100 : 101, delta: Int64 = ka == .addInteger ? 10 : 11
            let setIsLater = (ka == .setField) == aIsLater
            #expect(value([.property("count")]) == .int(setIsLater ? set : set + delta), "a set beats earlier adds; later adds count on top")
        case (.listInsert, .listInsert):
            #expect(value([.property("names")]) == .list(["x", "ins0", "ins1", "y", "z"].map(Value.string))
                    || value([.property("names")]) == .list(["x", "ins1", "ins0", "y", "z"].map(Value.string)))
            guard case .list(let items)? = value([.property("names")]) else { return }
            let earlierFirst = aIsLater ? items[1] == .string("ins1") : items[1] == .string("ins0")
            #expect(earlierFirst, "at one index, the earlier insert comes first")
        case (.listErase, .setListElement), (.setListElement, .listErase), (.listErase, .listErase):
            #expect(value([.property("names")]) == .list(["x", "z"].map(Value.string)), "erase of an element beats sets of it")
        case (.clearList, .listInsert), (.listInsert, .clearList), (.clearList, .listErase), (.listErase, .clearList),
             (.clearList, .listMove), (.listMove, .clearList), (.clearList, .setListElement), (.setListElement, .clearList):
            #expect(value([.property("names")]) == .list([]), "clear beats concurrent changes to the list")
        case (.listMove, .listMove):
            let expected = aIsLater ? ["x", "z", "y"] : ["y", "x", "z"]
            #expect(value([.property("names")]) == .list(expected.map(Value.string)), "of two moves of one element the later wins")
        case (.setInsert, .setErase), (.setErase, .setInsert):
            guard case .set(let tags)? = value([.property("tags")]) else { Issue.record("tags missing"); return }
            #expect(tags.contains(.string("v")) == (later == Kind.setInsert.instruction(on: "a", side: 0) || later == Kind.setInsert.instruction(on: "a", side: 1)),
                    "insert and erase of one value: the later wins")
        case (.setMapValue, .mapErase), (.mapErase, .setMapValue):
            let setIsLater = (ka == .setMapValue) == aIsLater
            #expect((value([.property("scores"), .key("k")]) != nil) == setIsLater, "map set and erase of one key: the later wins")
        case (.setEmbedded, .setInsideEmbedded), (.setInsideEmbedded, .setEmbedded):
            let whole = ka == .setEmbedded ? "Whole0" : "Whole1"
            #expect(value([.property("address"), .property("city")]) == .string(whole), "replacing an embedded object beats changes inside it")
        case (.createObject, _), (_, .createObject):
            #expect(s.object(o) != nil)
        default:
            break
        }
    }
}
