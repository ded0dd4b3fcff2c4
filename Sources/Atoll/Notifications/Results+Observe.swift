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
        let realm = core.realm
        realm.verifyThread()
        let deliver: (RealmCollectionChange<Results<Element>>) -> Void
        if let queue {
            let box = UncheckedBlock(block: block)
            deliver = { change in
                let frozen = UncheckedChange(change: change.frozen())
                queue.async { box.block(frozen.change) }
            }
        } else {
            deliver = block
        }
        let token = NotificationToken { [weak realm] in _ = realm }
        let notifier = ResultsNotifier(results: self, keyPaths: keyPaths, block: deliver, token: token)
        realm.notifiers.add(notifier)
        notifier.deliverInitial(in: realm)
        return token
    }

    /// The changes of the results as an asynchronous sequence of frozen snapshots.
    public var changesets: AsyncStream<RealmCollectionChange<Results<Element>>> {
        AsyncStream { continuation in
            let token = observe { change in continuation.yield(change.frozen()) }
            let box = UncheckedToken(token: token)
            continuation.onTermination = { _ in box.token.invalidate() }
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

struct UncheckedBlock<T>: @unchecked Sendable { let block: (T) -> Void }
struct UncheckedChange<T>: @unchecked Sendable { let change: T }
struct UncheckedToken: @unchecked Sendable { let token: NotificationToken }

final class ResultsNotifier<Element: ObjectBase>: Notifier {
    let results: Results<Element>
    let keyPaths: [String]?
    let block: (RealmCollectionChange<Results<Element>>) -> Void
    private var rows: [Int64] = []

    init(results: Results<Element>, keyPaths: [String]?, block: @escaping (RealmCollectionChange<Results<Element>>) -> Void,
         token: NotificationToken) {
        self.results = results
        self.keyPaths = keyPaths
        self.block = block
        super.init(token: token)
    }

    override func deliverInitial(in realm: Realm) {
        rows = results.core.rows().map(\.row)
        block(.initial(results))
    }

    override func resync(in realm: Realm) {
        rows = results.core.rows().map(\.row)
    }

    override func deliver(_ summary: ChangeSummary, in realm: Realm) {
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
        let direct = Set(keyPaths?.map { String($0.split(separator: ".").first ?? "") } ?? [])
        if let changes = summary.changes(for: table.name) {
            for (row, properties) in changes.modified where keyPaths == nil || !properties.isDisjoint(with: direct) {
                result.insert(row)
            }
        }
        // One level through links: a change of the linked object modifies the linking one.
        for index in table.columns where table.property(index).type == .object {
            let property = table.property(index)
            if let keyPaths, !keyPaths.contains(where: { $0.hasPrefix(property.name + ".") }) { continue }
            guard let changed = summary.changes(for: property.objectType ?? "")?.modified, !changed.isEmpty else { continue }
            let targets = changed.keys.map { SQLValue.integer($0) }
            let placeholders = targets.map { _ in "?" }.joined(separator: ", ")
            let owners = (try? realm.connection.fetchAll("SELECT _row FROM \(table.table) WHERE \(table.column(index)) IN (\(placeholders))", targets)) ?? []
            for case .integer(let row) in owners.map({ $0[0] }) { result.insert(row) }
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
