/// A set of row numbers that stores runs of consecutive rows as ranges: the rows a write inserts
/// come one after another (SQLite numbers new rows upwards), so recording 100,000 inserted rows
/// extends one range instead of hashing 100,000 set entries. Rows out of that order are kept in
/// an ordinary set beside the runs.
///
/// - Complexity: `insert` O(1) for the row after the last run, else O(log runs) plus a set
///   insert; `contains` O(log runs); `remove` O(runs) when it splits a run, runs being at most
///   `maxRuns` (past that, once, O(rows) to move them all into the set).
struct RowSet: Sendable, Sequence, Equatable {
    /// Disjoint, ascending, never adjacent to one another's ends when built by `insert`.
    private var runs: [ClosedRange<Int64>] = []
    /// Rows not in any run.
    private var others: Set<Int64> = []
    static let maxRuns = 32

    init() {}

    init<S: Sequence>(_ rows: S) where S.Element == Int64 {
        for row in rows { insert(row) }
    }

    var isEmpty: Bool { runs.isEmpty && others.isEmpty }

    var count: Int { runs.reduce(others.count) { $0 + $1.count } }

    /// The position of the run holding `row`, if any.
    private func run(holding row: Int64) -> Int? {
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].upperBound < row { low = middle + 1 } else { high = middle }
        }
        return low < runs.count && runs[low].contains(row) ? low : nil
    }

    func contains(_ row: Int64) -> Bool {
        others.contains(row) || run(holding: row) != nil
    }

    @discardableResult
    mutating func insert(_ row: Int64) -> Bool {
        if let last = runs.last {
            if row == last.upperBound &+ 1, row > last.upperBound, !others.contains(row) {
                runs[runs.count - 1] = last.lowerBound...row
                return true
            }
        } else if others.isEmpty {
            runs.append(row...row)
            return true
        }
        if run(holding: row) != nil { return false }
        return others.insert(row).inserted
    }

    /// Removes `row`; returns it when it was there.
    @discardableResult
    mutating func remove(_ row: Int64) -> Int64? {
        if others.remove(row) != nil { return row }
        guard let position = run(holding: row) else { return nil }
        if runs.count >= Self.maxRuns {
            // Splitting runs in the middle would shift the array each time: past a few dozen runs
            // the rows go into the set, once (never worse than a set from then on).
            for run in runs { others.formUnion(run) }
            runs.removeAll()
            return others.remove(row)
        }
        let range = runs[position]
        var pieces: [ClosedRange<Int64>] = []
        if range.lowerBound < row { pieces.append(range.lowerBound...(row - 1)) }
        if row < range.upperBound { pieces.append((row + 1)...range.upperBound) }
        runs.replaceSubrange(position...position, with: pieces)
        return row
    }

    func makeIterator() -> AnyIterator<Int64> {
        var runIterator = runs.lazy.flatMap { $0 }.makeIterator()
        var otherIterator = others.makeIterator()
        return AnyIterator { runIterator.next() ?? otherIterator.next() }
    }

    static func == (lhs: RowSet, rhs: RowSet) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy(rhs.contains)
    }
}
