@testable import AtollCore
import Foundation

/// Random, valid local writes for the convergence fuzzer: each instruction is chosen from what
/// the writing replica holds right now, as the real store would record it.
struct MergeFuzzGenerator {
    static let keys = ["a", "b", "c", "d"]
    static let words = ["x", "y", "z", "w", "v"]
    static let cities = ["Oslo", "Rome", "Lima", "Kyiv"]

    var rng: SplitMix64

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// One local transaction: 1–4 instructions, applied to `state` as they are made.
    mutating func transaction(on state: inout ReplicaState) -> [Instruction] {
        var out: [Instruction] = []
        let key = pick(Self.keys)
        for _ in 0..<int(1...4) {
            for instruction in step(state, key) {
                state.apply(instruction)
                out.append(instruction)
            }
        }
        return out
    }

    private mutating func address() -> Value {
        var fields: [String: Value] = ["city": .string(pick(Self.cities)), "zip": .int(Int64(int(0...9)))]
        if chance(0.5) { fields["lines"] = .list((0..<int(0...2)).map { _ in .string(pick(Self.words)) }) }
        return .object(fields)
    }

    private mutating func step(_ s: ReplicaState, _ key: String) -> [Instruction] {
        let o = MergeFixture.id(key)
        guard let fields = s.object(o) else {
            if chance(0.15) { return [.addColumn(type: "Item", Property(name: "extra", type: .int))] }
            return [.createObject(o), .set(o, path: [.property("title")], value: .string(pick(Self.words)))]
        }
        _ = fields
        func list(_ path: [PathElement]) -> [Value] {
            if case .list(let items)? = s.value(o, path) { return items }
            return []
        }
        let p = { (name: String) -> [PathElement] in [.property(name)] }
        switch int(0...19) {
        case 0: return [.set(o, path: p("title"), value: .string(pick(Self.words)))]
        case 1: return [.set(o, path: p("count"), value: .int(Int64(int(0...20))))]
        case 2, 3: return [.addInteger(o, path: p("count"), delta: Int64(int(-3...5)))]
        case 4: return [.set(o, path: p("flag"), value: chance(0.3) ? .null : .bool(chance(0.5)))]
        case 5: return [.set(o, path: p("owner"), value: chance(0.2) ? .null : MergeFixture.link(pick(Self.keys)))]
        case 6: return [.set(o, path: p("address"), value: chance(0.2) ? .null : address())]
        case 7:
            guard case .object? = s.value(o, p("address")) else { return [] }
            switch int(0...3) {
            case 0: return [.set(o, path: p("address") + p("city"), value: .string(pick(Self.cities)))]
            case 1: return [.addInteger(o, path: p("address") + p("zip"), delta: Int64(int(1...3)))]
            default:
                let lines = list(p("address") + p("lines"))
                return listStep(o, p("address") + p("lines"), lines.count, .string(pick(Self.words)))
            }
        case 8, 9, 10:
            return listStep(o, p("names"), list(p("names")).count, .string(pick(Self.words)))
        case 11, 12:
            return listStep(o, p("links"), list(p("links")).count, MergeFixture.link(pick(Self.keys)))
        case 13, 14:
            let items = list(p("addresses"))
            if !items.isEmpty && chance(0.5) {
                let i = int(0...(items.count - 1))
                let element = p("addresses") + [.index(i)]
                switch int(0...2) {
                case 0: return [.set(o, path: element + p("city"), value: .string(pick(Self.cities)))]
                case 1: return [.addInteger(o, path: element + p("zip"), delta: Int64(int(1...3)))]
                default:
                    return listStep(o, element + p("lines"), list(element + p("lines")).count, .string(pick(Self.words)))
                }
            }
            return listStep(o, p("addresses"), items.count, address())
        case 15, 16:
            let word = Value.string(pick(Self.words))
            switch int(0...5) {
            case 0: return [.clear(o, path: p("tags"))]
            case 1, 2: return [.setErase(o, path: p("tags"), value: word)]
            default: return [.setInsert(o, path: p("tags"), value: word)]
            }
        case 17, 18:
            let k = pick(Self.words)
            switch int(0...6) {
            case 0: return [.clear(o, path: p("scores"))]
            case 1, 2: return [.mapErase(o, path: p("scores"), key: k)]
            case 3:
                guard case .int? = s.value(o, p("scores") + [.key(k)]) else { return [] }
                return [.addInteger(o, path: p("scores") + [.key(k)], delta: Int64(int(1...3)))]
            default: return [.set(o, path: p("scores") + [.key(k)], value: .int(Int64(int(0...9))))]
            }
        default:
            if chance(0.5) { return [.eraseObject(o)] }
            return [.set(o, path: p("title"), value: .string(pick(Self.words)))]
        }
    }

    /// Insert, erase, move, element set or clear on a list of `count` elements.
    private mutating func listStep(_ o: ObjectID, _ path: [PathElement], _ count: Int, _ value: Value) -> [Instruction] {
        let kind = count == 0 ? 0 : int(0...9)
        switch kind {
        case 0, 1, 2, 3: return [.listInsert(o, path: path, index: int(0...count), value: value)]
        case 4, 5: return [.listErase(o, path: path, index: int(0...(count - 1)))]
        case 6, 7: return [.listMove(o, path: path, from: int(0...(count - 1)), to: int(0...(count - 1)))]
        case 8: return [.set(o, path: path + [.index(int(0...(count - 1)))], value: value)]
        default: return [.clear(o, path: path)]
        }
    }

    // MARK: - Hostile writes

    /// Positions no list can have, or only a list of another length.
    static let hostileIndices = [Int.max, Int.min, -1, Int.max - 1, Int.min + 1, 1 << 40]

    /// A transaction a hostile client could send: instructions that are out of range, address
    /// unknown types or properties or missing objects, or write values over the simulation's
    /// limits; sometimes mixed with harmless ones. `state` is the server's, to aim at real lists.
    mutating func hostileTransaction(on state: ReplicaState) -> [Instruction] {
        var out: [Instruction] = []
        for _ in 0..<int(1...3) {
            if chance(0.3) {
                var scratch = state
                out += transaction(on: &scratch).prefix(1)
            } else {
                out.append(hostileInstruction(state))
            }
        }
        return out
    }

    private mutating func hostileInstruction(_ state: ReplicaState) -> Instruction {
        let o = MergeFixture.id(pick(Self.keys))
        let list: [PathElement] = pick([[.property("names")], [.property("links")], [.property("addresses")],
                                        [.property("address"), .property("lines")]])
        let count: Int = if case .list(let items)? = state.value(o, list) { items.count } else { 0 }
        let index = chance(0.7) ? pick(Self.hostileIndices) : count + int(1...3)
        let huge = Value.string(String(repeating: "h", count: MergeFuzzSimulation.limits.maximumValueSize + int(1...100)))
        switch int(0...12) {
        case 0: return .listInsert(o, path: list, index: index, value: .string("x"))
        case 1: return .listErase(o, path: list, index: index)
        case 2: return .listMove(o, path: list, from: index, to: chance(0.5) ? 0 : index)
        case 3: return .listMove(o, path: list, from: 0, to: index)
        case 4: return .set(o, path: list + [.index(index)], value: .string("x"))
        case 5: return .set(o, path: [.property("addresses"), .index(index), .property("city")], value: .string("x"))
        case 6: return .createObject(ObjectID(type: "Nope", primaryKey: .string("a")))
        case 7: return .set(o, path: [.property("nope")], value: .int(1))
        case 8: return .set(o, path: [.property("title")], value: huge)
        case 9: return .listInsert(o, path: [.property("names")], index: 0, value: huge)
        case 10: return .set(o, path: [.property("scores"), .key(String(repeating: "k", count: 100))], value: .int(1))
        case 11: return .set(MergeFixture.id("missing"), path: [.property("title")], value: .string("x"))
        default: return .addInteger(o, path: [.property("title")], delta: 1)
        }
    }
}
