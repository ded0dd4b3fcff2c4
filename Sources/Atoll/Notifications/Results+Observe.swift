import AtollCore
import Foundation

extension Results {
    /// Calls `block` with `.initial` and then with `.update` whenever the results change.
    ///
    /// ```swift
    /// let token = results.observe { change in
    ///     if case let .update(_, deletions, insertions, modifications) = change { … }
    /// }
    /// ```
    /// Only changes of the named `keyPaths` count as modifications when they are given.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        core.realm.addNotifier(on: queue, block, frozen: { $0.frozen() }) {
            ResultsNotifier(results: self, keyPaths: keyPaths, block: $0)
        }
    }

    /// The changes of the results as an asynchronous sequence of frozen snapshots: `.initial`
    /// first, then one `.update` per change. Iteration registers the observer; it ends when the
    /// iterating task is cancelled or the iterator is released.
    ///
    /// ```swift
    /// for await change in realm.objects(Dog.self).changesets {
    ///     if case .update(let dogs, _, let insertions, _) = change { print(dogs.count, insertions) }
    /// }
    /// ```
    public var changesets: NotificationSequence<RealmCollectionChange<Results<Element>>> {
        NotificationSequence { continuation in
            observe { change in continuation.yield(change.frozen()) }
        }
    }
}

extension RealmCollectionChange: @unchecked Sendable {}

extension RealmCollectionChange {
    func frozen<E>() -> RealmCollectionChange<Results<E>> where CollectionType == Results<E> {
        switch self {
        case .initial(let results): .initial(results.freeze())
        case .update(let results, let d, let i, let m): .update(results.freeze(), deletions: d, insertions: i, modifications: m)
        case .error(let error): .error(error)
        }
    }
}

final class ResultsNotifier<Element: RealmCollectionValue>: Notifier {
    /// What the results are; the realm comes with each delivery, so the notifier does not keep
    /// it open.
    private let template: ResultsDescriptor
    let keyPaths: [String]?
    let block: (RealmCollectionChange<Results<Element>>) -> Void
    private var rows: [Int64] = []

    init(results: Results<Element>, keyPaths: [String]?, block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) {
        template = results.core.descriptor
        // Key paths name properties as the app does; changes are tracked by stored names.
        self.keyPaths = keyPaths.map { $0.map { results.core.storedKeyPath($0).description } }
        self.block = block
    }

    private func results(in realm: Realm) -> Results<Element> {
        Results(core: template.core(in: realm))
    }

    override func deliverInitial(in realm: Realm) {
        let results = results(in: realm)
        rows = results.core.rows().map(\.row)
        block(.initial(results))
    }

    override func resync(in realm: Realm) {
        rows = results(in: realm).core.rows().map(\.row)
    }

    override func deliver(_ summary: ChangeSummary, in realm: Realm) {
        let results = results(in: realm)
        guard !summary.isEmpty, let table = results.core.table else { return }
        let new = results.core.rows().map(\.row)
        let modified = modifiedRows(summary, table, realm)
        let diff = CollectionDiff(old: rows, new: new, modified: modified)
        rows = new
        guard !diff.isEmpty else { return }
        block(.update(results, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications))
    }

    /// Rows whose observed properties changed, directly or through a to-one link.
    private func modifiedRows(_ summary: ChangeSummary, _ table: TableInfo, _ realm: Realm) -> Set<Int64> {
        var result: Set<Int64> = []
        let paths = keyPaths?.map { $0.split(separator: ".").map(String.init) }
        let direct = Set(paths?.compactMap(\.first) ?? [])
        if let changes = summary.changes(for: table.name) {
            for (row, properties) in changes.modified where paths == nil || !properties.isDisjoint(with: direct) {
                result.insert(row)
            }
        }
        // One level through links: a change of the linked object modifies the linking one. With
        // key paths, only a change of a named property of the linked object counts.
        for index in table.columns where table.property(index).type == .object {
            let property = table.property(index)
            let watched: Set<String>? = paths.map { paths in
                Set(paths.filter { $0.count > 1 && $0[0] == property.name }.map { $0[1] })
            }
            if let watched, watched.isEmpty { continue }
            guard let changed = summary.changes(for: property.objectType ?? "")?.modified else { continue }
            let targets = changed.compactMap { row, properties -> SQLValue? in
                guard let watched else { return .integer(row) }
                return properties.isDisjoint(with: watched) ? nil : .integer(row)
            }
            guard !targets.isEmpty else { continue }
            for row in (try? realm.store.rows(table, where: index, in: targets)) ?? [] { result.insert(row) }
        }
        return result
    }
}

/// The index changes between two orderings of row ids.
struct CollectionDiff: Equatable {
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []

    var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

    /// Rows present in both versions keep their identity; those that changed relative order are
    /// reported as a deletion plus an insertion (the fewest such moves, via a longest increasing
    /// subsequence). Modifications are new indices of modified rows that did not move.
    init(old: [Int64], new: [Int64], modified: Set<Int64>) {
        let newIndex = Dictionary(new.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let oldSet = Set(old)
        var common: [(oldIndex: Int, newIndex: Int)] = []
        for (i, row) in old.enumerated() {
            if let j = newIndex[row] { common.append((i, j)) } else { deletions.append(i) }
        }
        for (j, row) in new.enumerated() where !oldSet.contains(row) { insertions.append(j) }
        let keep = Self.longestIncreasing(common.map(\.newIndex))
        for (position, pair) in common.enumerated() {
            if keep.contains(position) {
                if modified.contains(new[pair.newIndex]) { modifications.append(pair.newIndex) }
            } else {
                deletions.append(pair.oldIndex)
                insertions.append(pair.newIndex)
            }
        }
        deletions.sort()
        insertions.sort()
        modifications.sort()
    }

    /// Positions in `values` of one longest strictly increasing subsequence.
    static func longestIncreasing(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []        // positions
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var result: Set<Int> = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(cursor)
            cursor = previous[cursor]
        }
        return result
    }
}
