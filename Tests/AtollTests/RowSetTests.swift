@testable import Atoll
import AtollTesting
import Testing

/// `RowSet` (the rows a change summary records as inserted) against `Set<Int64>`, and
/// `ChangeSummary` against a summary kept with plain sets, on seeded random operations.
@Suite struct RowSetTests {
    @Test func behavesAsASetOfRows() {
        for seed in 1...40 {
            var rng = SeededRandom(seed: UInt64(seed))
            var rows = RowSet(), reference = Set<Int64>()
            var next: Int64 = Int64.random(in: 1...5, using: &rng)
            for _ in 0..<400 {
                let row: Int64 = switch Int.random(in: 0..<10, using: &rng) {
                case 0..<6: next  // the common case: the row after the last inserted
                case 6: Int64.random(in: 0...next + 3, using: &rng)
                case 7: next + Int64.random(in: 1...4, using: &rng)
                default: Int64.random(in: -2...next, using: &rng)
                }
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    let removed = rows.remove(row), expected = reference.remove(row)
                    #expect(removed == expected, "seed \(seed): remove \(row)")
                } else {
                    let inserted = rows.insert(row), expected = reference.insert(row).inserted
                    #expect(inserted == expected, "seed \(seed): insert \(row)")
                    next = max(next, row + 1)
                }
                #expect(rows.contains(row) == reference.contains(row))
                #expect(rows.isEmpty == reference.isEmpty)
            }
            #expect(Set(rows) == reference, "seed \(seed)")
            #expect(rows.count == reference.count)
            for probe in -3...(next + 3) { #expect(rows.contains(probe) == reference.contains(probe)) }
        }
    }

    @Test func removingFromManyRunsKeepsEveryOtherRow() {
        var rows = RowSet(), reference = Set<Int64>()
        for row in Int64(1)...2_000 { rows.insert(row); reference.insert(row) }
        for row in stride(from: Int64(2), through: 2_000, by: 2) {
            let removed = rows.remove(row), expected = reference.remove(row)
            #expect(removed == expected)
        }
        #expect(Set(rows) == reference)
        let inserted = rows.insert(2_001)
        #expect(inserted && rows.contains(2_001) && !rows.contains(2_000))
    }

    @Test func extremesDoNotOverflow() {
        var rows = RowSet()
        let first = rows.insert(Int64.max), second = rows.insert(Int64.min), again = rows.insert(Int64.max)
        #expect(first && second && !again)
        #expect(rows.contains(Int64.min) && rows.contains(Int64.max) && rows.count == 2)
        let removed = rows.remove(Int64.max)
        #expect(removed == Int64.max)
        #expect(Array(rows) == [Int64.min])
    }

    /// What a summary of one table must say, kept with plain sets.
    struct Reference {
        var inserted = Set<Int64>(), deleted = Set<Int64>(), modified: [Int64: Set<String>] = [:]
        mutating func insert(_ row: Int64) { inserted.insert(row) }
        mutating func delete(_ row: Int64) {
            if inserted.remove(row) == nil { deleted.insert(row) }
            modified[row] = nil
        }
        mutating func modify(_ row: Int64, _ name: String) {
            if !inserted.contains(row) { modified[row, default: []].insert(name) }
        }
    }

    @Test func changeSummaryAgreesWithPlainSets() {
        for seed in 1...30 {
            var rng = SeededRandom(seed: UInt64(seed) &* 7919)
            var summary = ChangeSummary(), reference = Reference()
            var later = ChangeSummary(), laterReference = Reference()
            var next: Int64 = 1
            for step in 0..<300 {
                let row = Int.random(in: 0..<3, using: &rng) == 0 ? Int64.random(in: 1...max(1, next), using: &rng) : next
                let second = step >= 150
                switch Int.random(in: 0..<4, using: &rng) {
                case 0, 1:
                    if second { later.insert("T", row); laterReference.insert(row) } else { summary.insert("T", row); reference.insert(row) }
                    next = max(next, row + 1)
                case 2:
                    if second { later.delete("T", row); laterReference.delete(row) } else { summary.delete("T", row); reference.delete(row) }
                default:
                    let name = ["a", "b"].randomElement(using: &rng)!
                    if second { later.modify("T", row, name); laterReference.modify(row, name) } else { summary.modify("T", row, name); reference.modify(row, name) }
                }
            }
            func check(_ summary: ChangeSummary, _ reference: Reference, _ label: String) {
                let changes = summary.changes(for: "T") ?? .init()
                #expect(Set(changes.inserted) == reference.inserted, "seed \(seed) \(label)")
                #expect(changes.deleted == reference.deleted, "seed \(seed) \(label)")
                #expect(changes.modified == reference.modified, "seed \(seed) \(label)")
            }
            check(summary, reference, "first half")
            check(later, laterReference, "second half")
            // `append` against the same operations applied to one reference.
            var combined = reference
            for row in laterReference.inserted { combined.inserted.insert(row); combined.deleted.remove(row) }
            for (row, names) in laterReference.modified where !combined.inserted.contains(row) { combined.modified[row, default: []].formUnion(names) }
            for row in laterReference.deleted {
                if combined.inserted.remove(row) == nil { combined.deleted.insert(row) }
                combined.modified[row] = nil
            }
            summary.append(later)
            check(summary, combined, "appended")
        }
    }
}
