import AtollCore
import Foundation

/// What `SectionedResults` and `ResultsSection` share.
public protocol RealmSectionedResult: RandomAccessCollection, Equatable where Index == Int {
    var realm: Realm? { get }
    var isInvalidated: Bool { get }
    var isFrozen: Bool { get }
    func freeze() -> Self
    func thaw() -> Self?
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken
}

extension RealmSectionedResult {
    public func observe(_ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: nil, on: nil, block)
    }
}

/// A change of sectioned results: index paths of objects and indices of whole sections.
/// Deletions are in the previous version; insertions and modifications in the new one. Objects of
/// a deleted or inserted section are not listed one by one.
public enum SectionedResultsChange<Collection> {
    case initial(Collection)
    case update(Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath],
                sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
}

@available(*, deprecated, renamed: "SectionedResultsChange")
public typealias RealmSectionedResultsChange = SectionedResultsChange

extension SectionedResultsChange: @unchecked Sendable {}

/// Results grouped into sections by a key: each section holds the objects with one key, in the
/// results' order, and sections come in the order their first object does.
///
/// ```swift
/// let byLetter = realm.objects(Contact.self).sectioned(by: \.firstLetter, ascending: true)
/// for section in byLetter { print(section.key, section.count) }
/// ```
/// Live like the results: sections are computed again once the realm advanced.
public struct SectionedResults<Key: _Persistable & Hashable, SectionElement: ObjectBase>: RealmSectionedResult {
    public typealias Element = ResultsSection<Key, SectionElement>

    let results: Results<SectionElement>
    let keyOf: (SectionElement) -> Key
    private let cache: SectionCache<Key>

    init(results: Results<SectionElement>, key: @escaping (SectionElement) -> Key) {
        self.results = results
        keyOf = key
        cache = SectionCache()
    }

    /// The sections of the results as they are now: keys, and each section's row positions.
    var sections: [(key: Key, positions: [Int])] {
        // Cached sections read no rows: register the read of the results here.
        results.core.observeContents()
        return cache.sections(stamp: results.core.realm.stamp, isFrozen: results.isFrozen) {
            Self.group(results.map(keyOf))
        }
    }

    static func group(_ keys: [Key]) -> [(key: Key, positions: [Int])] {
        var order: [Key] = []
        var positions: [Key: [Int]] = [:]
        for (position, key) in keys.enumerated() {
            if positions[key] == nil { order.append(key) }
            positions[key, default: []].append(position)
        }
        return order.map { ($0, positions[$0]!) }
    }

    public var realm: Realm? { results.realm }
    public var isInvalidated: Bool { results.isInvalidated }
    public var isFrozen: Bool { results.isFrozen }

    public var startIndex: Int { 0 }
    public var endIndex: Int { sections.count }

    /// Every section's key, in order.
    public var allKeys: [Key] { sections.map(\.key) }

    public subscript(_ index: Int) -> ResultsSection<Key, SectionElement> {
        let sections = sections
        precondition(index >= 0 && index < sections.count, "Section index \(index) is out of bounds (must be less than \(sections.count)).")
        return ResultsSection(parent: self, key: sections[index].key)
    }

    /// The object at `indexPath` (section, item).
    public subscript(_ indexPath: IndexPath) -> SectionElement { self[indexPath.sectionIndex][indexPath.itemIndex] }

    /// The section of `key`, if any object has it.
    public subscript(key key: Key) -> ResultsSection<Key, SectionElement>? {
        sections.contains { $0.key == key } ? ResultsSection(parent: self, key: key) : nil
    }

    public func freeze() -> SectionedResults { SectionedResults(results: results.freeze(), key: keyOf) }
    public func thaw() -> SectionedResults? { results.thaw().map { SectionedResults(results: $0, key: keyOf) } }

    public static func == (lhs: SectionedResults, rhs: SectionedResults) -> Bool { lhs.cache === rhs.cache }

    /// Calls `block` with the sections at once, then with what changed after every write that
    /// changed the results (see `Results.observe` for `keyPaths`).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void) -> NotificationToken {
        let keyOf = keyOf
        var previous: [(key: Key, rows: [Int64])] = []
        return results.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let results):
                let sectioned = SectionedResults(results: results, key: keyOf)
                previous = sectioned.rowSections()
                block(.initial(sectioned))
            case .update(let results, _, _, let modifications):
                let sectioned = SectionedResults(results: results, key: keyOf)
                let rows = results.core.rows().map(\.row)
                let current = sectioned.rowSections()
                let modified = Set(modifications.map { rows[$0] })
                block(Self.change(sectioned, from: previous, to: current, modified: modified))
                previous = current
            case .error:
                break
            }
        }
    }

    /// Sections as row ids, for diffing.
    func rowSections() -> [(key: Key, rows: [Int64])] {
        let rows = results.core.rows().map(\.row)
        return sections.map { ($0.key, $0.positions.map { rows[$0] }) }
    }

    static func change(_ collection: SectionedResults, from old: [(key: Key, rows: [Int64])], to new: [(key: Key, rows: [Int64])],
                       modified: Set<Int64>) -> SectionedResultsChange<SectionedResults> {
        let oldIndex = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1.key, $0) })
        let newIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1.key, $0) })
        var deletions: [IndexPath] = [], insertions: [IndexPath] = [], modifications: [IndexPath] = []
        let sectionsToDelete = IndexSet(old.indices.filter { newIndex[old[$0].key] == nil })
        let sectionsToInsert = IndexSet(new.indices.filter { oldIndex[new[$0].key] == nil })
        for (n, section) in new.enumerated() {
            guard let o = oldIndex[section.key] else { continue }
            let diff = CollectionDiff(old: old[o].rows, new: section.rows, modified: modified)
            deletions += diff.deletions.map { IndexPath($0, inSection: o) }
            insertions += diff.insertions.map { IndexPath($0, inSection: n) }
            modifications += diff.modifications.map { IndexPath($0, inSection: n) }
        }
        return .update(collection, deletions: deletions.sorted(), insertions: insertions.sorted(), modifications: modifications.sorted(),
                       sectionsToInsert: sectionsToInsert, sectionsToDelete: sectionsToDelete)
    }
}

/// The objects of one section of `SectionedResults`: those whose key is ``key``.
public struct ResultsSection<Key: _Persistable & Hashable, Element: ObjectBase>: RealmSectionedResult, Identifiable {
    let parent: SectionedResults<Key, Element>
    /// The key every object of the section has.
    public let key: Key
    public var id: Key { key }

    private var positions: [Int] { parent.sections.first { $0.key == key }?.positions ?? [] }

    public var realm: Realm? { parent.realm }
    public var isInvalidated: Bool { parent.isInvalidated }
    public var isFrozen: Bool { parent.isFrozen }

    public var startIndex: Int { 0 }
    public var endIndex: Int { positions.count }

    public subscript(_ index: Int) -> Element {
        let positions = positions
        precondition(index >= 0 && index < positions.count, "Index \(index) is out of bounds (must be less than \(positions.count)).")
        return parent.results[positions[index]]
    }

    public func freeze() -> ResultsSection { ResultsSection(parent: parent.freeze(), key: key) }
    public func thaw() -> ResultsSection? { parent.thaw().map { ResultsSection(parent: $0, key: key) } }

    public static func == (lhs: ResultsSection, rhs: ResultsSection) -> Bool { lhs.parent == rhs.parent && lhs.key == rhs.key }

    /// Calls `block` with the section at once, then with what changed in it (its objects' index
    /// paths all have section 0).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<ResultsSection>) -> Void) -> NotificationToken {
        let key = key
        var previous: [Int64] = []
        return parent.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let sectioned):
                previous = sectioned.rowSections().first { $0.key == key }?.rows ?? []
                block(.initial(ResultsSection(parent: sectioned, key: key)))
            case .update(let sectioned, _, _, let modifications, _, _):
                let sections = sectioned.rowSections()
                let rows = sections.first { $0.key == key }?.rows ?? []
                let modified = Set(modifications.compactMap { path in
                    path.sectionIndex < sections.count && sections[path.sectionIndex].key == key ? sections[path.sectionIndex].rows[path.itemIndex] : nil
                })
                let diff = CollectionDiff(old: previous, new: rows, modified: modified)
                previous = rows
                guard !diff.isEmpty else { return }
                block(.update(ResultsSection(parent: sectioned, key: key),
                              deletions: diff.deletions.map { IndexPath($0, inSection: 0) },
                              insertions: diff.insertions.map { IndexPath($0, inSection: 0) },
                              modifications: diff.modifications.map { IndexPath($0, inSection: 0) },
                              sectionsToInsert: [], sectionsToDelete: []))
            }
        }
    }
}

/// The sections computed for one snapshot of the realm, shared by copies of a `SectionedResults`.
final class SectionCache<Key: Hashable> {
    private var stamp = -1
    private var cached: [(key: Key, positions: [Int])] = []

    func sections(stamp: Int, isFrozen: Bool, _ compute: () -> [(key: Key, positions: [Int])]) -> [(key: Key, positions: [Int])] {
        if stamp != self.stamp || (self.stamp == -1) {
            cached = compute()
            self.stamp = stamp
        }
        return cached
    }
}

extension RealmCollection {
    /// The collection sorted by `keyPath` and grouped into one section per value of it.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element> {
        sectioned(by: keyPath, sortDescriptors: [SortDescriptor(keyPath: KeyPathNames.name(keyPath), ascending: ascending)])
    }

    /// The collection sorted by `sortDescriptors`, grouped by `keyPath`.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element> {
        SectionedResults(results: sorted(by: sortDescriptors), key: { $0[keyPath: keyPath] })
    }

    /// The collection sorted by `sortDescriptors`, grouped by the key `block` gives each object
    /// (the first letter of a name, say). Sort by what the key derives from, so each section's
    /// objects are together.
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element> {
        SectionedResults(results: sorted(by: sortDescriptors), key: block)
    }
}
