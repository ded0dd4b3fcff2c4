import AtollCore
import Atomics
import Foundation

/// Process-wide state of one realm file: its tables, the newest committed version, recent change
/// summaries (for notifications) and the open `Realm` instances to notify.
final class RealmCoordinator: @unchecked Sendable {
    let key: String
    let path: String
    let isInMemory: Bool
    let readOnly: Bool
    /// The key every connection to the file uses (`nil`: not encrypted).
    let encryptionKey: EncryptionKey?

    private let lock = NSLock()
    private var tables: [String: TableInfo] = [:]
    private var _latestVersion: Int64 = 0
    private var log: [(version: Int64, summary: ChangeSummary)] = []
    private var realms: [WeakRealm] = []
    private var frozen: [Int64: WeakRealm] = [:]

    private struct WeakRealm { weak var realm: Realm? }

    private static let registry = Locked<[String: WeakCoordinator]>([:])
    private struct WeakCoordinator { weak var coordinator: RealmCoordinator? }

    private init(key: String, path: String, isInMemory: Bool, readOnly: Bool, encryptionKey: EncryptionKey?) {
        self.key = key
        self.path = path
        self.isInMemory = isInMemory
        self.readOnly = readOnly
        self.encryptionKey = encryptionKey
    }

    /// Checkpoints the file's log after commits (not for read-only files).
    private lazy var checkpointer: WALCheckpointer? = readOnly ? nil : WALCheckpointer(path: path, key: encryptionKey) { [weak self] in
        self?.checkpointEpoch.add(1, ordering: .sequentiallyConsistent)
    }

    /// Realms of this process between starting a write and finishing it (see `Realm.repinSnapshot`).
    /// Changed only through `writerStarted()` and `writerFinished()`.
    let writers = ManagedAtomic<Int>(0)
    /// Asynchronous writes waiting for this process's writers to finish (see `Realm+AsyncWrite`).
    private var idleWaiters: [@Sendable () -> Void] = []
    /// Realms re-pinning their snapshot right now; a writer waits for them before it starts.
    let repinning = ManagedAtomic<Int>(0)
    /// Counts checkpoints that copied the whole log into the file: a realm whose snapshot is
    /// older than the newest such checkpoint reads through the log until it pins again.
    let checkpointEpoch = ManagedAtomic<UInt64>(0)

    func writerStarted() { writers.add(1, ordering: .sequentiallyConsistent) }

    /// A writer of this process committed or cancelled: when it was the last, the asynchronous
    /// writes that waited for the write lock are scheduled again.
    func writerFinished() {
        guard writers.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 else { return }
        let waiters = lock.withLock { () -> [@Sendable () -> Void] in
            defer { idleWaiters = [] }
            return idleWaiters
        }
        for waiter in waiters { waiter() }
    }

    /// Calls `waiter` (on the caller's thread, now) when no writer of this process is under way,
    /// otherwise once the last one finished (on that writer's thread).
    func whenWritersIdle(_ waiter: @escaping @Sendable () -> Void) {
        let now = lock.withLock { () -> Bool in
            if writers.load(ordering: .sequentiallyConsistent) == 0 { return true }
            idleWaiters.append(waiter)
            return false
        }
        // A writer lowers the count before it takes the list under the lock, so a waiter added
        // while the count was above zero is always taken by the writer that brings it to zero.
        if now { waiter() }
    }

    deinit {
        for connection in idleConnections { try? connection.queue.close() }
        lock.withLock { checkpointer }?.close()
        if isInMemory {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    /// The coordinator for `configuration`'s storage, opening and migrating the file on first use
    /// (after copying the seed file and compacting, when the configuration asks for them).
    ///
    /// - Throws: `.invalidInput` for an encryption key that is not 64 bytes; `.invalidDatabase` when
    ///   the file is open in the process with another key (or without one).
    static func coordinator(for configuration: Realm.Configuration) throws -> RealmCoordinator {
        let key = configuration.storageKey
        let encryptionKey = try EncryptionKey.make(configuration.encryptionKey)
        // Opening is serialized so two threads never migrate the same file at once.
        return try registry.withLock { registry in
            if let existing = registry[key]?.coordinator {
                guard EncryptionKey.same(existing.encryptionKey, encryptionKey) else {
                    let message = if existing.encryptionKey == nil {
                        "'\(existing.path)' is not encrypted: it is already open without an encryption key"
                    } else if encryptionKey == nil {
                        "'\(existing.path)' is encrypted: open it with its encryption key"
                    } else {
                        "Realm file decryption failed: '\(existing.path)' is already open with a different encryption key"
                    }
                    // As when the file itself is checked (Connection+Encryption), and as realm-core reports a key
                    // that does not open a file: `.invalidDatabase`.
                    throw Realm.Error(.invalidDatabase, message, path: existing.path)
                }
                return existing
            }
            let coordinator = try open(configuration, key: key, encryptionKey: encryptionKey)
            registry[key] = WeakCoordinator(coordinator: coordinator)
            return coordinator
        }
    }

    /// The coordinators of every file open in the process.
    static var open: [RealmCoordinator] {
        registry.withLock { $0.values.compactMap(\.coordinator) }
    }

    /// Whether any `Realm` of this storage is open in the process.
    static func isOpen(_ configuration: Realm.Configuration) -> Bool {
        registry.withLock { $0[configuration.storageKey]?.coordinator != nil }
    }

    private static func open(_ configuration: Realm.Configuration, key: String, encryptionKey: EncryptionKey?) throws -> RealmCoordinator {
        var path: String
        let inMemory = configuration.inMemoryIdentifier != nil
        if let id = configuration.inMemoryIdentifier {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-memory", isDirectory: true)
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let name = "\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)-" +
                String(id.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) }.prefix(40))
            path = folder.appendingPathComponent(name).path
        } else {
            guard let url = configuration.fileURL else {
                throw Realm.Error(.fileAccess, "the configuration has neither a fileURL nor an inMemoryIdentifier")
            }
            path = url.standardizedFileURL.path
            let folder = url.deletingLastPathComponent()
            if let seed = configuration.seedFilePath {
                try RealmFiles.copySeed(seed, to: path, key: encryptionKey)
            }
            if !configuration.readOnly {
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                } catch {
                    throw Realm.Error(.fileAccess, "cannot create the folder \(folder.path): \(error.localizedDescription)", path: path)
                }
            } else if !FileManager.default.fileExists(atPath: path) {
                throw Realm.Error(.fileNotFound, "cannot open \(path) read-only: the file does not exist", path: path)
            }
            // A file Realm wrote (the app's data from before Atoll, or a bundled seed) becomes an
            // Atoll file first; the declared schema and the migration block then apply as usual.
            if !configuration.readOnly {
                // A synced configuration uploads the file's objects as the device's writes.
                try RealmFormatConversion.convertIfNeeded(at: path, encryptionKey: configuration.encryptionKey, key: encryptionKey,
                                                          uploads: configuration.syncConfiguration != nil,
                                                          subscriptions: configuration.syncConfiguration?.enableFlexibleSync == true)
            } else if RealmFormatConversion.isRealmFormat(path: path, encryptionKey: configuration.encryptionKey) {
                path = try RealmFormatConversion.convertedCopy(of: path, encryptionKey: configuration.encryptionKey, key: encryptionKey)
            }
            if !configuration.readOnly, let shouldCompact = configuration.shouldCompactOnLaunch {
                try RealmFiles.compactIfAsked(path, key: encryptionKey, shouldCompact)
            }
        }
        let coordinator = RealmCoordinator(key: key, path: path, isInMemory: inMemory, readOnly: configuration.readOnly,
                                           encryptionKey: encryptionKey)
        try SchemaInstaller(coordinator: coordinator, configuration: configuration).run()
        return coordinator
    }

    // MARK: Connections

    /// Connections closed realms of the file left, for the next live realm to open on any thread
    /// instead of opening SQLite again (and mapping the file again): the schema installer's
    /// serves the first realm, a realm closed on a background queue the next one. At most
    /// `idleConnectionLimit` per mode (read-only or not); none while file access is suspended.
    /// An idle connection holds no transaction.
    private var idleConnections: [Connection] = []
    static let idleConnectionLimit = 2
    /// How many connections `takeConnection` had to open (tests count what reuse saves).
    let connectionsOpened = ManagedAtomic<Int>(0)

    /// A connection to the file for a live realm: an idle one, or a new one.
    func takeConnection(readOnly: Bool) throws -> Connection {
        let idle = lock.withLock { () -> Connection? in
            guard let index = idleConnections.lastIndex(where: { $0.readOnly == readOnly }) else { return nil }
            return idleConnections.remove(at: index)
        }
        if let idle { return idle }
        connectionsOpened.add(1, ordering: .relaxed)
        return try Connection(path: path, readOnly: readOnly, key: encryptionKey)
    }

    /// Takes back the connection of a realm that closed: kept idle, or closed.
    func recycle(_ connection: Connection) {
        var keep = connection.sharedLock == nil && !FileAccess.isSuspended(path) && connection.resetForReuse()
        if keep {
            keep = lock.withLock {
                guard idleConnections.count(where: { $0.readOnly == connection.readOnly }) < Self.idleConnectionLimit else { return false }
                idleConnections.append(connection)
                return true
            }
        }
        if !keep { try? connection.queue.close() }
    }

    /// Closes the idle connections (file access is being suspended).
    func closeIdleConnections() {
        let closing = lock.withLock {
            defer { idleConnections = [] }
            return idleConnections
        }
        for connection in closing { try? connection.queue.close() }
    }

    /// How many idle connections the file has (tests).
    var idleConnectionCount: Int { lock.withLock { idleConnections.count } }

    /// File access resumed: checkpoint what was committed before the suspension.
    func fileAccessResumed() {
        lock.withLock { checkpointer }?.committed()
    }

    // MARK: Tables

    private var initialSubscriptionsClaimed = false

    /// True once per coordinator (the first open of the file in this process): when a flexible-sync
    /// configuration's initial subscriptions run.
    func claimInitialSubscriptions() -> Bool {
        lock.withLock {
            defer { initialSubscriptionsClaimed = true }
            return !initialSubscriptionsClaimed
        }
    }

    func table(named name: String) -> TableInfo? { lock.withLock { tables[name] } }

    var allTables: [TableInfo] { lock.withLock { Array(tables.values) }.sorted { $0.name < $1.name } }

    func install(_ table: TableInfo) {
        lock.withLock {
            tables[table.name] = table
            _schema = nil
            plans.removeAll()
        }
    }

    private var _schema: Schema?
    private var plans: [QueryPlan.Key: QueryPlan] = [:]

    func plan(for key: QueryPlan.Key) -> QueryPlan? { lock.withLock { plans[key] } }

    func store(_ plan: QueryPlan, for key: QueryPlan.Key) {
        lock.withLock {
            if plans.count >= 512 { plans.removeAll(keepingCapacity: true) }
            plans[key] = plan
        }
    }

    /// The schema of every installed table (cached until a table is added).
    var schema: Schema {
        lock.withLock {
            if let _schema { return _schema }
            let schema = (try? Schema(tables.values.map(\.schema).sorted { $0.name < $1.name })) ?? .empty
            _schema = schema
            return schema
        }
    }

    /// Tables and properties that link to `type`, for cleaning up after a delete.
    func incomingLinks(to type: String) -> [(TableInfo, Int)] {
        allTables.flatMap { table in
            table.schema.properties.indices.compactMap { index in
                table.schema.properties[index].objectType == type ? (table, index) : nil
            }
        }
    }

    // MARK: Versions and notifications

    var latestVersion: Int64 { lock.withLock { _latestVersion } }

    func setLatestVersion(_ version: Int64) { lock.withLock { _latestVersion = max(_latestVersion, version) } }

    // Reading a weak reference makes a strong one for a moment; if that one is the last, the
    // realm is freed right there, and its deinit unregisters it, taking `lock`. So code holding
    // the lock first keeps every live realm in an array (`alive`) released after the lock.

    func register(_ realm: Realm) {
        var alive: [Realm] = []
        lock.withLock {
            alive = realms.compactMap(\.realm)
            realms.removeAll { $0.realm == nil }
            realms.append(WeakRealm(realm: realm))
        }
        withExtendedLifetime(alive) {}
    }

    func unregister(_ realm: Realm) {
        var alive: [Realm] = []
        lock.withLock {
            alive = realms.compactMap(\.realm)
            realms.removeAll { $0.realm == nil || $0.realm === realm }
        }
        withExtendedLifetime(alive) {}
    }

    /// A live realm of the file with `confinement` (the same thread, actor or queue) opened with a
    /// configuration like `configuration` (same object types, schema version and read-only-ness):
    /// the instance realm-swift's per-thread cache hands out. When several match (opened before
    /// with configurations that differ elsewhere), the one in a write transaction, else the newest.
    func openRealm(like configuration: Realm.Configuration, confinedTo confinement: Realm.Confinement) -> Realm? {
        var alive: [Realm] = []
        lock.withLock { alive = realms.compactMap(\.realm) }
        let candidates = alive.filter { realm in
            realm.confinement.isSame(as: confinement)
                && realm.configuration.readOnly == configuration.readOnly
                && realm.configuration.schemaVersion == configuration.schemaVersion
                && realm.configuration.objectTypes.map { $0.map(ObjectIdentifier.init) } == configuration.objectTypes.map { $0.map(ObjectIdentifier.init) }
        }
        // Only the confinement's own thread reads these: no other can end their transactions now.
        return candidates.first { $0.isInWriteTransaction } ?? candidates.last
    }

    /// Records what the transaction of `version` changed. Called before its SQLite commit, while
    /// the write lock is held, so a realm that can see the version can also find its changes.
    func willCommit(version: Int64, summary: ChangeSummary) {
        var alive: [Realm] = []
        lock.withLock {
            log.removeAll { $0.version >= version }
            log.append((version, summary))
            alive = realms.compactMap(\.realm)
            trimLog(alive)
        }
        withExtendedLifetime(alive) {}
    }

    /// Forgets the record of a transaction whose commit failed.
    func commitFailed(version: Int64) {
        lock.withLock { log.removeAll { $0.version == version } }
    }

    /// Tells every other open realm of this file that it can advance to `version`.
    func didCommit(version: Int64, by committer: Realm) {
        let others: [Realm] = lock.withLock {
            _latestVersion = max(_latestVersion, version)
            return realms.compactMap(\.realm).filter { $0 !== committer }
        }
        for realm in others { realm.scheduleRefresh(committer: committer.confinement) }
        lock.withLock { checkpointer }?.committed()
    }

    /// The changes between two versions, or a wholesale marker when the log no longer covers them.
    func changes(from old: Int64, to new: Int64) -> ChangeSummary {
        lock.withLock {
            var summary = ChangeSummary()
            guard old < new else { return summary }
            let entries = log.filter { $0.version > old && $0.version <= new }
            // Every version in between must be there; a gap (a trimmed or foreign commit) means
            // the change can only be described wholesale.
            guard entries.count == Int(new - old),
                  zip(entries, (old + 1)...new).allSatisfy({ $0.version == $1 }) else {
                summary.isWholesale = true
                return summary
            }
            for entry in entries { summary.append(entry.summary) }
            return summary
        }
    }

    /// The versions the open realms of the file hold, frozen ones included, but for `realm`.
    func activeVersions(besides realm: Realm) -> Set<Int64> {
        var alive: [Realm] = []
        lock.withLock { alive = realms.compactMap(\.realm) + frozen.values.compactMap(\.realm) }
        let versions = Set(alive.filter { $0 !== realm }.map(\.snapshotVersion))
        withExtendedLifetime(alive) {}
        return versions
    }

    // MARK: Frozen realms

    /// A frozen realm of `version` someone still holds, to share instead of opening another.
    func frozenRealm(at version: Int64) -> Realm? {
        lock.withLock { frozen[version]?.realm }
    }

    func keepFrozen(_ realm: Realm) {
        var alive: [Realm] = []
        lock.withLock {
            alive = frozen.values.compactMap(\.realm)
            frozen = frozen.filter { $0.value.realm != nil }
            frozen[realm.snapshotVersion] = WeakRealm(realm: realm)
        }
        withExtendedLifetime(alive) {}
    }

    private func trimLog(_ alive: [Realm]) {
        // Keep what the slowest open realm still needs to compute its notifications.
        let oldest = alive.map(\.notifiedVersion).min() ?? _latestVersion
        log.removeAll { $0.version <= oldest }
        if log.count > 10_000 { log.removeFirst(log.count - 10_000) }
    }
}
