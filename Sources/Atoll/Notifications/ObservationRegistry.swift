import AtollCore
import Observation

/// The registrar of one row as a realm reads it: the `ObservationRegistrar` every accessor of the
/// row calls `access` on when a property is read, and the contents registrars of the row's lists,
/// sets and maps. One per row and realm, shared by the row's accessors, so an accessor made again
/// for a row read shortly before costs no new registrar.
final class RowObservation {
    let registrar = Registrar()
    /// The contents of the row's list, set and map properties, by property index.
    var collections: [Int: ContentsObservation] = [:]
    /// Results anchored on the row (a list's or set's query, linking objects): they change with
    /// property `property` of the row (`nil`: only when the row is deleted).
    var anchored: [(property: Int?, contents: ContentsObservation)] = []
}

/// The registrar of a collection's contents (a `Results`, a `List`, `MutableSet` or `Map`): every
/// read calls `access` with one key path, ``contents``, that stands for all of them.
final class ContentsObservation {
    let registrar = Registrar()
    /// For the objects of a list, set or map: only a modification or deletion in the tables it is
    /// registered under concerns it. For results, any insertion, deletion or modification does.
    let isElements: Bool
    /// What reads through this registrar (a results' core, the row of a list): once it is gone,
    /// nothing can read the contents again and the registry drops the entry.
    weak var holder: AnyObject?
    /// The last delivery that fired it, so that one delivery fires it once.
    var delivery = 0

    init(isElements: Bool, holder: AnyObject) {
        self.isElements = isElements
        self.holder = holder
    }

    /// What a read of the collection registers: a key path for the whole contents.
    var contents: Void { () }

    /// Made once: a key path literal is looked up in the runtime at each use. (Key paths are
    /// immutable; the standard library only leaves them unmarked as `Sendable`.)
    nonisolated(unsafe) private static let contentsKeyPath: KeyPath<ContentsObservation, Void> = \.contents

    func access() {
        if #available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *) { registrar.base.access(self, keyPath: Self.contentsKeyPath) }
    }

    func fire() {
        if #available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *) {
            registrar.base.willSet(self, keyPath: Self.contentsKeyPath)
            registrar.base.didSet(self, keyPath: Self.contentsKeyPath)
        }
    }

    func concerns(_ changes: ChangeSummary.TableChanges) -> Bool {
        isElements ? !changes.modified.isEmpty || !changes.deleted.isEmpty : !changes.isEmpty
    }
}

/// Swift Observation's `ObservationRegistrar` where the system has one (macOS 14, iOS 17, tvOS 17,
/// watchOS 10, visionOS 1; always on Linux), nothing on older systems: there Atoll's types exist
/// and work, and only take no part in Observation. Stored untyped because a stored property cannot
/// be of a type newer than the deployment target; every use sits in an `if #available`.
struct Registrar {
    #if canImport(Darwin)
    private let storage: Any

    init() {
        if #available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *) {
            storage = ObservationRegistrar()
        } else {
            storage = ()
        }
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
    var base: ObservationRegistrar { storage as! ObservationRegistrar }
    #else
    /// Typed where Observation always exists: every managed read goes through it, and the cast
    /// from `Any` cost a dynamic cast each time.
    let base = ObservationRegistrar()
    #endif
}

@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension ContentsObservation: Observable {}

/// Calls `willSet` and `didSet` for one `@Persisted` property on a registrar, with the property's
/// typed key path (made where the getter ran, in its generic context). The object is any instance
/// of the class: a registrar tells its observers apart by key path.
typealias PropertyFirer = @Sendable (Registrar, ObjectBase) -> Void

/// What a realm's reads registered with Swift Observation (`withObservationTracking`, a SwiftUI
/// body), so that the realm fires those registrars when it advances past a change to them: rows
/// by table and row, collections by the tables their contents depend on.
///
/// Confined to its realm like the realm itself; frozen realms have none. An entry stays while an
/// accessor or collection holds it; one that nothing else holds is dropped at the next sweep,
/// which comes after as many new entries as there were live ones (so sweeping costs O(1) per
/// entry), and a row read again before then finds its registrar.
final class ObservationRegistry {
    /// The registered rows of one table, by the table's `TableInfo` (which may be replaced while
    /// the file is open: rows registered through either are found under the table's name).
    private final class TableRows {
        let info: TableInfo
        // Confined to the realm's isolation, and on the path of every read: no exclusivity checks.
        @exclusivity(unchecked) var rows: [Int64: RowObservation] = [:]
        /// Property indices by stored name (the names a `ChangeSummary` gives).
        let indexByName: [String: Int]

        init(_ info: TableInfo) {
            self.info = info
            indexByName = Dictionary(info.schema.properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private var tables: [ObjectIdentifier: TableRows] = [:]
    private var tablesByName: [String: [TableRows]] = [:]
    /// The table of the last registration: reads come in runs over one table.
    @exclusivity(unchecked) private var lastTable: TableRows?
    /// Collections by the tables they depend on.
    private var contents: [String: [ContentsObservation]] = [:]
    private var rowCount = 0
    private var deliveries = 0
    private var addedSinceSweep = 0
    private var sweepAfter = 1024

    // MARK: Registration

    /// The registrar of the row of `state`, which the accessor keeps from now on.
    func row(for state: _ManagedObjectState) -> RowObservation {
        let table: TableRows
        if let last = lastTable, last.info === state.table {
            table = last
        } else {
            table = tables[ObjectIdentifier(state.table)] ?? add(state.table)
            lastTable = table
        }
        // One hash of the row: the slot is made with a placeholder and filled when it was new.
        var made = false
        let observation = Self.fill(&table.rows[state.row, default: Self.placeholder]) {
            made = true
            return RowObservation()
        }
        state.observation = observation
        if made {
            rowCount += 1
            added()
        }
        return observation
    }

    /// What a new row's slot holds for the instant between its insertion and `fill`.
    nonisolated(unsafe) private static let placeholder = RowObservation()

    private static func fill(_ slot: inout RowObservation, _ make: () -> RowObservation) -> RowObservation {
        if slot === placeholder { slot = make() }
        return slot
    }

    private func add(_ info: TableInfo) -> TableRows {
        let table = TableRows(info)
        tables[ObjectIdentifier(info)] = table
        tablesByName[info.name, default: []].append(table)
        return table
    }

    /// The contents registrar of list, set or map property `index` of the row of `state`: fired
    /// when the row's property changes or the row is deleted, and for a collection of objects
    /// when an object of their table is modified or deleted.
    func collection(_ state: _ManagedObjectState, _ index: Int) -> ContentsObservation {
        let row = state.observation ?? self.row(for: state)
        if let existing = row.collections[index] { return existing }
        let made = ContentsObservation(isElements: true, holder: row)
        row.collections[index] = made
        let property = state.table.property(index)
        if property.type == .object, let elements = property.objectType { contents[elements, default: []].append(made) }
        added()
        return made
    }

    /// A registrar for the contents of results: any change of the tables named fires it, and so
    /// does a change of `anchor`'s property (`nil`: only its deletion).
    func results(_ core: ResultsCore, tables: [String], anchor: (state: _ManagedObjectState, property: Int?)?) -> ContentsObservation {
        let made = ContentsObservation(isElements: false, holder: core)
        for table in tables { contents[table, default: []].append(made) }
        if let anchor {
            let row = anchor.state.observation ?? self.row(for: anchor.state)
            row.anchored.append((anchor.property, made))
        }
        added()
        return made
    }

    private func added() {
        addedSinceSweep += 1
        if addedSinceSweep >= sweepAfter { sweep() }
    }

    /// Drops the entries nothing reads through any more: rows no accessor holds, collections whose
    /// holder is gone.
    private func sweep() {
        for table in tables.values {
            var gone: [Int64] = []
            var position = table.rows.values.startIndex
            while position != table.rows.values.endIndex {
                if !table.rows.values[position].anchored.isEmpty {
                    table.rows.values[position].anchored.removeAll { $0.contents.holder == nil }
                }
                // Held by the registry alone: no accessor of the row is left.
                if isKnownUniquelyReferenced(&table.rows.values[position]) { gone.append(table.rows.keys[position]) }
                table.rows.values.formIndex(after: &position)
            }
            for row in gone { table.rows[row] = nil }
            rowCount -= gone.count
        }
        var live = rowCount
        for (table, list) in contents {
            let kept = list.filter { $0.holder != nil }
            live += kept.count
            contents[table] = kept.isEmpty ? nil : kept
        }
        addedSinceSweep = 0
        sweepAfter = max(1024, live)
    }

    // MARK: Delivery

    /// Fires the registrars `summary` concerns: the changed properties of registered rows, every
    /// property of a deleted row, the collections whose contents may have changed; for a wholesale
    /// summary, everything registered. Called on the realm's isolation once per advance, so that a
    /// tracking closure hears of a commit once however many of its reads it changed. (A handler
    /// that tracks again synchronously, inside `onChange`, may hear of the same commit again
    /// through another of its reads; SwiftUI and `Observations` track again later.)
    ///
    /// - Complexity: O(changed rows + collections registered under the changed tables); O(entries)
    ///   for a wholesale summary.
    func deliver(_ summary: ChangeSummary) {
        guard !summary.isEmpty, rowCount > 0 || !contents.isEmpty else { return }
        deliveries += 1
        var rowsToFire: [(row: RowObservation, table: TableInfo, indices: Set<Int>?)] = []
        var contentsToFire: [ContentsObservation] = []
        func take(_ contents: ContentsObservation) {
            guard contents.delivery != deliveries else { return }
            contents.delivery = deliveries
            contentsToFire.append(contents)
        }
        if summary.isWholesale {
            for table in tables.values {
                for row in table.rows.values { rowsToFire.append((row, table.info, nil)) }
            }
            for list in contents.values { for entry in list { take(entry) } }
        } else {
            for (name, changes) in summary.tables where !changes.isEmpty {
                for table in tablesByName[name] ?? [] {
                    // Each changed row is looked up: never a walk over the registered ones.
                    for (row, names) in changes.modified {
                        guard let observation = table.rows[row] else { continue }
                        rowsToFire.append((observation, table.info, Set(names.compactMap { table.indexByName[$0] })))
                    }
                    for row in changes.deleted {
                        // The row is gone: its number may come back for another object.
                        guard let observation = table.rows.removeValue(forKey: row) else { continue }
                        rowCount -= 1
                        rowsToFire.append((observation, table.info, nil))
                    }
                }
                for entry in contents[name] ?? [] where entry.concerns(changes) { take(entry) }
            }
        }
        // Handlers run after the walk: one may read, and so register, again.
        for (row, table, indices) in rowsToFire {
            if let info = table.classInfo {
                let probe = info.probe
                for firer in info.firers(for: indices) { firer(row.registrar, probe) }
            }
            for (index, contents) in row.collections where indices?.contains(index) ?? true { take(contents) }
            for (property, contents) in row.anchored where indices == nil || property.map({ indices!.contains($0) }) == true {
                take(contents)
            }
        }
        for contents in contentsToFire { contents.fire() }
    }
}

extension ObservationRegistry {
    /// How many rows and collections are registered (for tests of the sweep).
    var count: Int {
        rowCount + Set(contents.values.joined().map(ObjectIdentifier.init)).count
    }
}

extension Realm {
    /// How many rows and collections this realm's reads registered with Swift Observation.
    @_spi(Testing)
    public var observationRegistrations: Int { observations?.count ?? 0 }
}
