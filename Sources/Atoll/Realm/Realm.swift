import AtollCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Atomics

/// A local object database: a file (or a shared in-memory store) of objects, read through
/// consistent snapshots and changed in write transactions.
///
/// ```swift
/// let realm = try Realm()
/// try realm.write { realm.add(Task(value: ["name": "Buy milk"])) }
/// let open = realm.objects(Task.self).where { $0.done == false }
/// ```
///
/// A `Realm` is confined to the thread (or actor) that opened it. Open another one on another
/// thread, or pass objects across with `ThreadSafeReference`.
public final class Realm {
    /// Where a realm may be used.
    enum Confinement {
        case thread(pthread_t)
        case actor(any Actor)
        /// A serial dispatch queue, marked so that its blocks can be told apart.
        case queue(DispatchQueue, QueueMark)
        case frozen

        /// Whether a realm confined so is used from the same place as one confined to `other`.
        func isSame(as other: Confinement) -> Bool {
            switch (self, other) {
            case let (.thread(a), .thread(b)): pthread_equal(a, b) != 0
            case let (.actor(a), .actor(b)): a === b
            case let (.queue(_, a), .queue(_, b)): a === b
            default: false
            }
        }
    }

    /// Tells a realm's dispatch queue apart from others (`DispatchQueue.getSpecific`).
    final class QueueMark: @unchecked Sendable {
        nonisolated(unsafe) static let key = DispatchSpecificKey<QueueMark>()

        /// The queue's mark, set on first use.
        static func of(_ queue: DispatchQueue) -> QueueMark {
            lock.withLock {
                if let mark = queue.getSpecific(key: key) { return mark }
                let mark = QueueMark()
                queue.setSpecific(key: key, value: mark)
                return mark
            }
        }

        private static let lock = NSLock()

        var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) === self }
    }

    public let configuration: Configuration
    let coordinator: RealmCoordinator
    let connection: Connection
    /// The SQL of objects, history and sync bookkeeping, on `connection`.
    let store: ObjectStore
    let history: HistoryStore
    let confinement: Confinement
    let isMainThreadRealm = Thread.isMainThread
    /// The version of the snapshot this realm reads.
    private(set) var snapshotVersion: Int64 = 0
    /// Bumped whenever what the snapshot shows may have changed; object caches compare against it.
    private(set) var stamp = 0
    var transaction: WriteTransaction?
    private var hasReadTransaction = false
    private let notified = ManagedAtomic<Int64>(0)
    private let refreshPending = ManagedAtomic<Bool>(false)
    let notifiers = NotifierList()
    /// What reads registered with Swift Observation, fired as the realm advances; `nil` for a
    /// frozen realm, which never changes, and a migration's.
    let observations: ObservationRegistry?
    /// Writes asked for with `writeAsync`/`beginAsyncWrite`, and commit callbacks due.
    let asyncWrites = AsyncWrites()
    private var resolvedTables: [ObjectIdentifier: TableInfo] = [:]
    /// Whether the realm advances to the newest version on its own when another realm commits.
    public var autorefresh = true
    /// Set until the initializer returns.
    private var isOpening = true
    /// The checkpoint epoch when the read snapshot was pinned.
    private var pinnedEpoch: UInt64 = 0
    /// Which of two memory-map limits the connection has (see `repinSnapshot`).
    private var mapsOddLimit = false
    /// Set for the realm a migration block writes through: it borrows the opening's connection
    /// and transaction, and never commits or closes them (see `Migration`).
    private(set) var isMigrating = false

    var notifiedVersion: Int64 { notified.load(ordering: .relaxed) }

    /// Opens the file of `configuration` with `confinement`: the designated initializer behind the
    /// public ones (Realm+Instances.swift), which first look for the instance already open there.
    init(configuration: Configuration, confinement: Confinement) throws {
        self.configuration = configuration
        self.confinement = confinement
        if case .frozen = confinement { observations = nil } else { observations = ObservationRegistry() }
        coordinator = try RealmCoordinator.coordinator(for: configuration)
        do {
            var isFrozen = false
            if case .frozen = confinement { isFrozen = true }
            // A frozen realm's connection serves several threads at once (shared); a live one
            // reuses a connection a closed realm of the file left (RealmCoordinator.takeConnection).
            connection = isFrozen
                ? try Connection(path: coordinator.path, readOnly: configuration.readOnly, shared: true, key: coordinator.encryptionKey)
                : try coordinator.takeConnection(readOnly: configuration.readOnly)
        } catch let error as Error {
            throw error
        } catch {
            throw Error(.fileAccess, "cannot open \(coordinator.path): \(error)", underlying: error as? any Swift.Error & Sendable)
        }
        store = ObjectStore(connection: connection)
        history = HistoryStore(connection: connection)
        try checkAsymmetricTypes()
        try beginRead()
        notified.store(snapshotVersion, ordering: .relaxed)
        if !isFrozen { coordinator.register(self) }
        if !isFrozen, !configuration.readOnly, let sync = configuration.syncConfiguration {
            // A local realm's commits have no history records: its file cannot start syncing as
            // it is (its data would never be uploaded). realm-core refuses such a file too.
            if try history.hasUnrecordedCommits() {
                throw Error(.incompatibleHistories, "'\(coordinator.path)' was written as a local realm, without the history a synced realm uploads: "
                    + "copy it with writeCopy(configuration:) to the synced configuration instead", path: coordinator.path)
            }
            try announceSchemaIfNeeded()
            if sync.enableFlexibleSync, sync.initialSubscriptions != nil, coordinator.claimInitialSubscriptions() {
                try sync.applyInitialSubscriptions(self)
            }
            // Opening a synced realm starts its session (one per file; later opens share it).
            _ = syncSession
        }
        isOpening = false
    }

    /// The realm of a migration: the opening's connection, inside its transaction.
    init(migrating connection: Connection, coordinator: RealmCoordinator, configuration: Configuration) {
        self.configuration = configuration
        self.confinement = .thread(pthread_self())
        self.coordinator = coordinator
        self.connection = connection
        observations = nil
        store = ObjectStore(connection: connection)
        history = HistoryStore(connection: connection)
        isMigrating = true
        isOpening = false
        transaction = WriteTransaction()
    }

    deinit {
        if isMigrating { return }
        coordinator.unregister(self)
        if transaction != nil {
            try? connection.rollback()
            coordinator.writerFinished()
        }
        coordinator.recycle(connection)
    }

    // MARK: Confinement

    /// Fails loudly when used from the wrong thread or actor.
    func verifyThread(_ function: StaticString = #function) {
        // While the initializer runs no one else holds the realm: an actor's realm may be opened
        // (and its schema recorded) from outside the actor.
        if isOpening { return }
        switch confinement {
        case .thread(let owner):
            if pthread_equal(owner, pthread_self()) == 0 { preconditionFailure("\(Self.wrongThreadMessage) (\(function))") }
        case .actor(let actor):
            // Whether an actor's executor runs the caller can only be asserted (the main actor's
            // executor is not the main thread everywhere).
            actor.preconditionIsolated("\(Self.wrongActorMessage) (\(function))")
        case .queue(_, let mark):
            if !mark.isCurrent, !connection.isRunning(on: pthread_self()) {
                preconditionFailure("\(Self.wrongQueueMessage) (\(function))")
            }
        case .frozen:
            break
        }
    }

    /// Throws `.wrongThread` when used from another thread than its own; an actor's realm used
    /// off its actor traps.
    func checkThread() throws {
        if case .thread(let owner) = confinement, pthread_equal(owner, pthread_self()) == 0 {
            throw Error(.wrongThread, Self.wrongThreadMessage)
        }
        if case .queue(_, let mark) = confinement, !mark.isCurrent, !connection.isRunning(on: pthread_self()) {
            throw Error(.wrongThread, Self.wrongQueueMessage)
        }
        verifyThread()
    }

    static let wrongThreadMessage = "Realm accessed from incorrect thread: a Realm is confined to the thread that opened it; open another Realm on this thread or pass a ThreadSafeReference"
    static let wrongQueueMessage = "Realm accessed from incorrect queue: a Realm opened with a queue is confined to blocks running on that queue"
    static let wrongActorMessage = "Realm accessed from incorrect actor: a Realm opened with an actor is isolated to it; use it from that actor or pass a ThreadSafeReference"

    public var isFrozen: Bool {
        if case .frozen = confinement { return true }
        return false
    }

    // MARK: Snapshots

    private func beginRead() throws {
        pinnedEpoch = coordinator.checkpointEpoch.load(ordering: .sequentiallyConsistent)
        try connection.run { _ in
            try connection.beginRead()
            snapshotVersion = try history.currentVersion()
        }
        hasReadTransaction = true
        stamp &+= 1
    }

    /// Inside a fresh write transaction: reads the newest version.
    func reloadVersion() throws {
        hasReadTransaction = false
        snapshotVersion = try history.currentVersion()
        stamp &+= 1
    }

    /// Pins the read snapshot again when a checkpoint has copied the log into the file since it
    /// was pinned and no newer version exists: same data, but read through the memory map instead
    /// of looked up in the log page by page. Writers of this process wait while it happens (see
    /// `advanceForWrite`), so the version cannot move; a commit of another process in between
    /// is taken like a refresh.
    func repinSnapshot() {
        guard hasReadTransaction, transaction == nil, !isFrozen else { return }
        let epoch = coordinator.checkpointEpoch.load(ordering: .sequentiallyConsistent)
        guard epoch != pinnedEpoch else { return }
        coordinator.repinning.add(1, ordering: .sequentiallyConsistent)
        defer { coordinator.repinning.subtract(1, ordering: .sequentiallyConsistent) }
        guard coordinator.writers.load(ordering: .sequentiallyConsistent) == 0, coordinator.latestVersion == snapshotVersion else { return }
        let old = snapshotVersion
        do {
            try connection.run { _ in
                try connection.commit()
                try connection.beginRead()
                snapshotVersion = try history.currentVersion()
                // The checkpoint grew the file; SQLite maps a file again only when the log
                // changed, so a new limit (one page off every other time) makes it map the
                // whole file now instead of reading the new pages with read().
                mapsOddLimit.toggle()
                try connection.setMemoryMapLimit(Connection.mmapSize - (mapsOddLimit ? 4096 : 0))
            }
        } catch {
            preconditionFailure("cannot read \(coordinator.path): \(error)")
        }
        pinnedEpoch = epoch
        if snapshotVersion != old {
            stamp &+= 1
            deliverNotifications(from: old)
        }
    }

    /// After a commit or rollback: opens the next read snapshot.
    func finishWrite(version: Int64?) throws {
        hasReadTransaction = false
        try beginRead()
        if let version { precondition(snapshotVersion >= version, "the committed version is not visible") }
    }

    func bumpStamp() { stamp &+= 1 }

    private func endRead() throws {
        guard hasReadTransaction else { return }
        try connection.commit()
        hasReadTransaction = false
    }

    /// Moves the realm to the newest version and delivers notifications for what changed.
    /// Returns whether the version changed.
    @discardableResult
    public func refresh() -> Bool {
        verifyThread()
        guard !isFrozen, transaction == nil else { return false }
        let old = snapshotVersion
        do {
            try endRead()
            try beginRead()
        } catch {
            preconditionFailure("cannot refresh \(coordinator.path): \(error)")
        }
        deliverNotifications(from: old)
        return snapshotVersion != old
    }

    /// Called by another realm's commit, from its thread.
    func scheduleRefresh(committer: Confinement) {
        guard autorefreshEnabled, !refreshPending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let box = UncheckedRealm(realm: self)
        switch confinement {
        case .actor(let actor):
            if case .actor(let other) = committer, other === actor {
                // Another realm of this actor committed, on the actor: advance now, as a realm of
                // the same thread does.
                autoRefresh()
            } else {
                _Concurrency.Task { await runIsolated(actor) { box.realm?.autoRefresh() } }
            }
        case .thread(let owner):
            if pthread_equal(owner, pthread_self()) != 0 {
                // Another realm of this thread committed (one opened with other object types):
                // advance now, as if it were the same instance.
                autoRefresh()
            } else if isMainThreadRealm {
                DispatchQueue.main.async { box.realm?.autoRefresh() }
            }
            // Other threads have no run loop to deliver on: they advance at their next refresh()
            // or write.
        case .queue(let queue, _):
            queue.async { box.realm?.autoRefresh() }
        case .frozen:
            break
        }
    }

    private var autorefreshEnabled: Bool {
        // Read from other threads; the flag only ever gates a harmless extra refresh.
        autorefresh && !isFrozen
    }

    private func autoRefresh() {
        refreshPending.store(false, ordering: .relaxed)
        guard autorefresh, transaction == nil else { return }
        refresh()
    }

    /// After the realm advanced from version `old`: fires what Swift Observation registered, then
    /// the notification blocks, with what changed in between.
    func deliverNotifications(from old: Int64) {
        let summary = coordinator.changes(from: old, to: snapshotVersion)
        notified.store(snapshotVersion, ordering: .relaxed)
        observations?.deliver(summary)
        notifiers.deliver(summary, in: self)
    }

    // MARK: Properties

    /// The schema of the realm's tables.
    /// The realm's types as the app names them: a property its class renames with
    /// `propertiesMapping()` shows its Swift name, and the stored one as `columnName`.
    public var schema: Schema {
        coordinator.schema.mapObjectSchemas { objectSchema in
            // The class this realm uses for the type (another may share its name in the process).
            coordinator.table(named: objectSchema.name)?.classInfo?.publicSchema(objectSchema) ?? objectSchema
        }
    }

    /// Whether the realm holds no objects.
    public var isEmpty: Bool {
        verifyThread()
        for table in coordinator.allTables where !table.schema.isEmbedded {
            if (try? store.isEmpty(table)) == false { return false }
        }
        return true
    }

    public var isInWriteTransaction: Bool { transaction != nil }

    /// Ends the realm's use of its snapshot; objects read from it become invalid until `refresh()`.
    public func invalidate() {
        verifyThread()
        if transaction != nil { cancelWrite() }
        stamp &+= 1
    }

    /// The table of `type`, created on first use when the configuration lists no object types.
    func table(for type: ObjectBase.Type, create: Bool) throws -> TableInfo? {
        // Tables never change for a class once resolved, so a realm remembers them (no locks).
        if isFrozen { return try resolveTable(for: type, create: create) }  // shared across threads
        if let cached = resolvedTables[ObjectIdentifier(type)] { return cached }
        let table = try resolveTable(for: type, create: create)
        if let table, table.classInfo?.type == type { resolvedTables[ObjectIdentifier(type)] = table }
        return table
    }

    private func resolveTable(for type: ObjectBase.Type, create: Bool) throws -> TableInfo? {
        let info = ClassInfo.of(type)
        if let table = coordinator.table(named: info.schema.name) {
            if table.classInfo?.type == type { return table }
            // The table was installed for no class (a type of the file this process had not used
            // yet) or for another class with the same className(): adopt `type` if it matches.
            let changes = SchemaInstaller.diff(stored: [table.schema], declared: [info.schema])
            guard changes.allSatisfy({ if case .changeIndex = $0 { true } else { false } }) else {
                throw Error(.schemaMismatch, "The class \(type) does not match the object type '\(info.schema.name)' of \(coordinator.path):\n"
                    + changes.map { "- " + $0.explanation }.joined(separator: "\n"))
            }
            let adopted = TableInfo(schema: table.schema, classInfo: info)
            coordinator.install(adopted)
            return adopted
        }
        guard create else { return nil }
        if let types = configuration.objectTypes, !types.contains(where: { $0 == type }) {
            throw Error(.schemaMismatch, "Object type '\(info.schema.name)' is not managed by this Realm: add it to the configuration's objectTypes")
        }
        if configuration.objectTypes == nil && !type.shouldIncludeInDefaultSchema() {
            throw Error(.schemaMismatch, "Object type '\(info.schema.name)' is not managed by this Realm: it is left out of the default schema (shouldIncludeInDefaultSchema() is false); list it in the configuration's objectTypes")
        }
        guard !configuration.readOnly else {
            throw Error(.readOnly, "Object type '\(info.schema.name)' is not in the read-only realm \(coordinator.path)")
        }
        let newInfos = ClassInfo.closure(of: [type]).filter { coordinator.table(named: $0.schema.name) == nil }
        do {
            _ = try Schema(coordinator.allTables.map(\.schema) + newInfos.map(\.schema))
        } catch let error as SchemaError {
            throw Error(.invalidSchema, error.message, underlying: error)
        }
        let adopt = {
            try SchemaInstaller.addTypes(newInfos.map(\.schema), connection: self.connection, path: self.coordinator.path)
            for info in newInfos {
                self.coordinator.install(TableInfo(schema: info.schema, classInfo: info))
                self.transaction?.record(.addTable(info.schema))
            }
        }
        if transaction != nil {
            try adopt()
        } else {
            try write(withoutNotifying: []) { try adopt() }
        }
        return coordinator.table(named: info.schema.name)
    }
}

/// Runs `body` isolated to `actor`.
func runIsolated(_ actor: isolated any Actor, _ body: () -> Void) {
    body()
}


/// Lets a realm reference cross into a closure that runs on the realm's own thread or actor.
struct UncheckedRealm: @unchecked Sendable {
    weak var realm: Realm?
    /// A reference that keeps the realm alive (for handing one across a queue hop).
    var strong: Realm?

    init(realm: Realm? = nil, strong: Realm? = nil) {
        self.realm = realm
        self.strong = strong
    }
}
