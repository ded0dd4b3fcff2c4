import AtollCore
import Foundation

/// Where a subscription set stands with the server.
public enum SyncSubscriptionState: Equatable, Sendable {
    /// The server sent every object the set's queries matched when it was committed; changes now
    /// stream in as they happen.
    case complete
    /// The server rejected the set (a query it cannot run, say); the error says why.
    case error(Error)
    /// Committed locally; the server has not sent its data yet.
    case pending
    /// A newer set replaced this one; read `realm.subscriptions` again for the current set.
    case superseded

    public static func == (lhs: SyncSubscriptionState, rhs: SyncSubscriptionState) -> Bool {
        switch (lhs, rhs) {
        case (.complete, .complete), (.pending, .pending), (.superseded, .superseded): true
        case (.error(let a), .error(let b)): Self.same(a, b)
        default: false
        }
    }

    private static func same(_ a: any Error, _ b: any Error) -> Bool {
        if let a = a as? SyncError, let b = b as? SyncError { return a.code == b.code && a.message == b.message }
        if let a = a as? Realm.Error, let b = b as? Realm.Error { return a == b }
        return type(of: a) == type(of: b) && String(describing: a) == String(describing: b)
    }
}

/// The subscriptions of a flexible-sync realm: the queries whose objects the server sends.
/// Change them inside ``update(_:onComplete:)``; each update commits a new version of the set.
///
/// ```swift
/// let subscriptions = realm.subscriptions
/// try await subscriptions.update {
///     subscriptions.append(QuerySubscription<Task>(name: "mine") { $0.owner == "Frodo" })
///     subscriptions.remove(named: "old")
/// }
/// ```
public struct SyncSubscriptionSet {
    let box: SubscriptionSetBox

    init(realm: Realm) { box = SubscriptionSetBox(realm: realm) }

    /// The number of subscriptions in the set.
    public var count: Int { box.current.count }

    /// Changes the set in `block` and commits it as a new version at once (it is stored in the
    /// realm file and sent when the session is connected). `onComplete` hears, on an arbitrary
    /// thread, `nil` when the server has sent the new set's data or the error that stopped it; it
    /// may come much later (offline, it waits for a connection).
    ///
    /// ```swift
    /// subscriptions.update({
    ///     subscriptions.append(QuerySubscription<Task>(name: "open") { !$0.done })
    /// }, onComplete: { error in print(error ?? "synced") })
    /// ```
    /// - Precondition: not inside a write transaction of the realm, nor inside another update.
    ///   Without `onComplete`, a set that cannot be stored (a full disk, say) stops the program.
    public func update(_ block: () -> Void, onComplete: (@Sendable (Error?) -> Void)? = nil) {
        let version: Int64
        do {
            version = try box.commit(block)
        } catch {
            guard let onComplete else { preconditionFailure("the subscriptions could not be updated: \(error)") }
            onComplete(error)
            return
        }
        guard let onComplete else { return }
        let wait = box.wait(for: version)
        _Concurrency.Task {
            do {
                try await wait.run(timeout: nil)
                onComplete(nil)
            } catch {
                onComplete(error)
            }
        }
    }

    /// Changes the set in `block`, commits it, then waits until the server has sent the new set's
    /// data. Throws the server's `SyncError` (code `.invalidFlexibleSyncSubscriptions`) when it
    /// rejects the set, and `CancellationError` when the task is cancelled (the set stays committed).
    ///
    /// ```swift
    /// try await subscriptions.update {
    ///     subscriptions.removeAll(ofType: Task.self)
    /// }
    /// ```
    public func update(_ block: () -> Void, _ isolation: isolated (any Actor)? = #isolation) async throws {
        let version = try box.commit(block)
        try await box.wait(for: version).run(timeout: nil)
        // As Realm does: once it returns, the realm shows the set's data (back on the caller's
        // actor, which the realm is confined to, it may be refreshed).
        if isolation != nil, !box.realm.isFrozen, !box.realm.isInWriteTransaction { box.realm.refresh() }
    }

    /// `update(_:onComplete:)` with the set handed to the block:
    /// `subscriptions.update({ $0.append(QuerySubscription<Task>(name: "all")) })`.
    public func update(_ block: (SyncSubscriptionSet) -> Void, onComplete: (@Sendable (Error?) -> Void)? = nil) {
        update({ block(self) }, onComplete: onComplete)
    }

    /// `update(_:) async` with the set handed to the block:
    /// `try await realm.subscriptions.update { $0.append(QuerySubscription<Task>(name: "all")) }`.
    public func update(_ block: (SyncSubscriptionSet) -> Void, _ isolation: isolated (any Actor)? = #isolation) async throws {
        try await update({ block(self) })
    }

    /// The state of this version of the set, read afresh from the file.
    public var state: SyncSubscriptionState {
        switch box.state {
        case .pending: .pending
        case .complete: .complete
        case .superseded: .superseded
        case .error(let message): .error(SyncError(.invalidFlexibleSyncSubscriptions, message))
        }
    }

    // MARK: Finding subscriptions

    /// The subscription with this name.
    public func first(named name: String) -> SyncSubscription? {
        box.current.first { $0.name == name }.map { SyncSubscription(box: box, stored: $0) }
    }

    /// The first subscription of `type` with this query (named or not).
    ///
    /// ```swift
    /// let open = subscriptions.first(ofType: Task.self) { !$0.done }
    /// ```
    public func first<T: Object>(ofType type: T.Type, where query: (Query<T>) -> Query<Bool>) -> SyncSubscription? {
        first(objectType: T.className(), query: SubscriptionQuery.text(query))
    }

    /// The first subscription of `type` with this query text (named or not).
    public func first<T: Object>(ofType type: T.Type, where predicateFormat: String, _ args: Any...) -> SyncSubscription? {
        first(objectType: T.className(), query: SubscriptionQuery.text(predicateFormat, args, type: T.self))
    }

    private func first(objectType: String, query: String) -> SyncSubscription? {
        box.current.first { $0.objectType == objectType && $0.query == query }.map { SyncSubscription(box: box, stored: $0) }
    }

    /// The subscription at `position`, or `nil` past the end.
    public subscript(position: Int) -> SyncSubscription? {
        precondition(position >= 0, "Cannot pass a negative value to subscript")
        let current = box.current
        return position < current.count ? SyncSubscription(box: box, stored: current[position]) : nil
    }

    /// The first subscription, or `nil` when the set is empty.
    public var first: SyncSubscription? { self[0] }

    /// The last subscription, or `nil` when the set is empty.
    public var last: SyncSubscription? { box.current.last.map { SyncSubscription(box: box, stored: $0) } }

    // MARK: Changing the set (inside update)

    /// Adds subscriptions. An unnamed subscription whose type and query are already subscribed
    /// unnamed is not added again; a named one replaces the type and query of the subscription
    /// with its name (nothing changes when they are the same).
    ///
    /// - Precondition: inside ``update(_:onComplete:)``.
    public func append<T: Object>(_ subscriptions: QuerySubscription<T>...) {
        for subscription in subscriptions {
            box.insertOrAssign(name: subscription.name, objectType: subscription.objectType, query: subscription.query)
        }
    }

    /// Removes the subscription of `type` with this query.
    public func remove<T: Object>(ofType type: T.Type, _ query: (Query<T>) -> Query<Bool>) {
        let text = SubscriptionQuery.text(query)
        box.removeFirst { $0.objectType == T.className() && $0.query == text }
    }

    /// Removes the subscription of `type` with this query text.
    public func remove<T: Object>(ofType type: T.Type, where predicateFormat: String, _ args: Any...) {
        let text = SubscriptionQuery.text(predicateFormat, args, type: T.self)
        box.removeFirst { $0.objectType == T.className() && $0.query == text }
    }

    /// Removes these subscriptions.
    public func remove(_ subscriptions: SyncSubscription...) {
        let ids = Set(subscriptions.map(\.id))
        box.removeAll { ids.contains($0.id) }
    }

    /// Removes the subscriptions with these names (names not in the set are ignored).
    public func remove(named names: String...) {
        box.removeAll { $0.name.map(names.contains) ?? false }
    }

    /// Removes every subscription, or only the unnamed ones.
    public func removeAll(unnamedOnly: Bool = false) {
        box.removeAll { !unnamedOnly || $0.name == nil }
    }

    /// Removes every subscription of `type`.
    public func removeAll<T: Object>(ofType type: T.Type) {
        box.removeAll { $0.objectType == T.className() }
    }
}

extension SyncSubscriptionSet: Sequence {
    public func makeIterator() -> SyncSubscriptionSetIterator {
        SyncSubscriptionSetIterator(box: box, subscriptions: box.current)
    }
}

/// Iterates the subscriptions of a set as they were when iteration started.
public struct SyncSubscriptionSetIterator: IteratorProtocol {
    let box: SubscriptionSetBox
    let subscriptions: [StoredSubscription]
    private var position = 0

    init(box: SubscriptionSetBox, subscriptions: [StoredSubscription]) {
        self.box = box
        self.subscriptions = subscriptions
    }

    public mutating func next() -> SyncSubscription? {
        guard position < subscriptions.count else { return nil }
        defer { position += 1 }
        return SyncSubscription(box: box, stored: subscriptions[position])
    }
}

extension Realm {
    /// The subscriptions of a flexible-sync realm: the newest set committed.
    ///
    /// ```swift
    /// let realm = try await Realm(configuration: user.flexibleSyncConfiguration(), downloadBeforeOpen: .never)
    /// try await realm.subscriptions.update {
    ///     realm.subscriptions.append(QuerySubscription<Task>(name: "all"))
    /// }
    /// ```
    /// - Precondition: the realm is configured for flexible sync.
    public var subscriptions: SyncSubscriptionSet {
        precondition(configuration.syncConfiguration?.enableFlexibleSync == true,
                     "This Realm was not configured with flexible sync")
        verifyThread()
        return SyncSubscriptionSet(realm: self)
    }
}

// MARK: - The state behind a set

/// One version of the set as a realm sees it, plus the draft an update is building.
final class SubscriptionSetBox {
    let realm: Realm
    private(set) var record: StoredSubscriptionSet
    /// The subscriptions being built while an update's block runs.
    private var draft: [StoredSubscription]?
    private var reader: Connection?

    static let outsideUpdateMessage = "Can only add, remove, or update subscriptions within a write subscription block."

    init(realm: Realm) {
        self.realm = realm
        do {
            record = try realm.subscriptionSetInSnapshot()
        } catch {
            preconditionFailure("the subscriptions of \(realm.coordinator.path) cannot be read: \(error)")
        }
    }

    /// The subscriptions as the caller sees them: the draft inside an update, else the version's.
    var current: [StoredSubscription] {
        realm.verifyThread()
        return draft ?? record.subscriptions
    }

    /// The version's state, read through a connection of its own (the realm's snapshot may be older).
    var state: StoredSubscriptionState {
        realm.verifyThread()
        do {
            if reader == nil {
                reader = try Connection(path: realm.coordinator.path, readOnly: realm.configuration.readOnly,
                                        key: realm.coordinator.encryptionKey)
            }
            return try SubscriptionStorage.state(of: record.version, reader!)
        } catch {
            preconditionFailure("the subscription state of \(realm.coordinator.path) cannot be read: \(error)")
        }
    }

    func wait(for version: Int64) -> SubscriptionWait {
        SubscriptionWait(storageKey: realm.configuration.storageKey, databasePath: realm.coordinator.path,
                         readOnly: realm.configuration.readOnly, encryptionKey: realm.coordinator.encryptionKey, version: version)
    }

    // MARK: Committing

    /// Runs `block` on a copy of the newest set and commits the result as the next version, in
    /// one write transaction that records no history; returns the new version.
    @discardableResult
    func commit(_ block: () -> Void) throws -> Int64 {
        try commit(onlyIf: nil, block)!
    }

    /// Like ``commit(_:)``, skipped (returning `nil`) when `condition` is false for the newest version.
    @discardableResult
    func commit(onlyIf condition: ((Int64) -> Bool)?, _ block: () -> Void) throws -> Int64? {
        realm.verifyThread()
        precondition(draft == nil, "Cannot update subscriptions inside another subscription update block")
        precondition(!realm.isInWriteTransaction,
                     "Cannot update subscriptions inside a write transaction: call update outside realm.write { }")
        try realm.beginWriteTransaction()
        let committed: StoredSubscriptionSet
        do {
            let latest = try SubscriptionStorage.latest(realm.connection) ?? .empty
            if let condition, !condition(latest.version) {
                realm.cancelWrite()
                record = latest
                return nil
            }
            draft = latest.subscriptions
            block()
            let subscriptions = draft ?? []
            draft = nil
            guard let transaction = realm.transaction else {
                preconditionFailure("The write transaction of a subscription update was ended inside its block")
            }
            precondition(transaction.instructions.isEmpty,
                         "Objects cannot be changed inside a subscription update block: write them in realm.write { }")
            // This transaction commits as the next local version: every write committed before it
            // has a lower one.
            let clientVersion = realm.snapshotVersion + 1
            let version = try SubscriptionStorage.insert(subscriptions, clientVersion: clientVersion, realm.connection)
            committed = StoredSubscriptionSet(version: version, subscriptions: subscriptions, clientVersion: clientVersion)
            try realm.commitWrite(recordingHistory: false)
        } catch {
            draft = nil
            if realm.isInWriteTransaction { realm.cancelWrite() }
            throw error
        }
        record = committed
        // Waiters of the versions this one superseded settle now.
        SubscriptionEvents.stateChanged(path: realm.configuration.storageKey)
        notifySession()
        return committed.version
    }

    private func notifySession() {
        // Never starts a session: one that is not running reads the newest set when it starts.
        guard let sync = realm.configuration.syncConfiguration else { return }
        sync.user.core.syncClient.subscriptionsChanged(path: realm.configuration.storageKey)
    }

    // MARK: Editing the draft

    private func requireDraft() {
        realm.verifyThread()
        precondition(draft != nil, Self.outsideUpdateMessage)
    }

    /// Checks the query against the realm's schema when the type is known to it.
    func validate(_ query: String, of objectType: String) {
        guard realm.coordinator.table(named: objectType) != nil else { return }
        do {
            _ = try QueryExpression.parse(query).bind(to: objectType, in: realm.coordinator.schema)
        } catch {
            preconditionFailure("Invalid subscription query for '\(objectType)': \(error)")
        }
    }

    /// Adds a subscription, or updates the one with the same identity: its name, or for an
    /// unnamed one its type and query.
    func insertOrAssign(name: String?, objectType: String, query: String) {
        requireDraft()
        validate(query, of: objectType)
        let now = Date()
        if let name, let index = draft!.firstIndex(where: { $0.name == name }) {
            guard draft![index].objectType != objectType || draft![index].query != query else { return }
            draft![index].objectType = objectType
            draft![index].query = query
            draft![index].updatedAt = now
            return
        }
        if name == nil, draft!.contains(where: { $0.name == nil && $0.objectType == objectType && $0.query == query }) { return }
        draft!.append(StoredSubscription(id: .generate(), name: name, objectType: objectType, query: query,
                                         createdAt: now, updatedAt: now))
    }

    func updateQuery(of id: ObjectId, objectType: String, query: String) {
        requireDraft()
        guard let index = draft!.firstIndex(where: { $0.id == id }) else { return }
        precondition(draft![index].objectType == objectType,
                     "Updating a subscription query of a different Object Type is not allowed.")
        validate(query, of: objectType)
        guard draft![index].query != query else { return }
        draft![index].query = query
        draft![index].updatedAt = Date()
    }

    func removeAll(where shouldRemove: (StoredSubscription) -> Bool) {
        requireDraft()
        draft!.removeAll(where: shouldRemove)
    }

    func removeFirst(where matches: (StoredSubscription) -> Bool) {
        requireDraft()
        if let index = draft!.firstIndex(where: matches) { draft!.remove(at: index) }
    }

    /// The stored subscription with `id` as the caller sees it now.
    func subscription(_ id: ObjectId) -> StoredSubscription? {
        current.first { $0.id == id }
    }
}
