import AtollCore
import Foundation

/// The state of an open write transaction: the instructions it recorded and the rows it touched.
final class WriteTransaction {
    var instructions: [Instruction] = []
    var summary = ChangeSummary()
    /// The first error raised by a non-throwing call inside the transaction (`add` of a duplicate
    /// primary key, say); it makes the transaction fail when committed.
    var error: Realm.Error?
    /// Objects added in this transaction, by table, so a repeated add is a no-op.
    let startedAt = Date()

    /// Set while an embedded object given whole is stored: the instruction that sets or inserts
    /// it carries its content, so the steps inside it are not recorded.
    var muted = false

    /// The update policy of the `add(_:update:)` or `create` under way: objects it links to that
    /// are not managed yet are added with it too, as Realm does (so a decoded document with
    /// nested objects that exist updates them). `.error` otherwise.
    var linkedAddPolicy: UpdatePolicy = .error

    /// Whether the transaction keeps a history record of what it does: a synced realm's changes
    /// are uploaded from it; a local realm has nothing to upload and keeps none (see
    /// docs/storage.md "History").
    let recordsHistory: Bool

    init(recordsHistory: Bool = true) {
        self.recordsHistory = recordsHistory
    }

    /// Whether `_atoll_unresolved` may hold a target (nil: not asked yet in this transaction).
    /// Every link noted unresolved in the transaction sets it, so an object created in a file
    /// that never had an unresolved link costs no lookup (see `Realm.resolveLinks`).
    var unresolvedMayExist: Bool?

    /// Whether an instruction recorded now is kept: callers skip building instructions otherwise.
    var isRecording: Bool { recordsHistory && !muted }

    func record(_ instruction: Instruction) {
        if isRecording { instructions.append(instruction) }
    }

    func fail(_ error: Realm.Error) {
        if self.error == nil { self.error = error }
    }
}

extension Realm {
    /// Runs `block` in a write transaction and commits it; if `block` throws, nothing is kept.
    ///
    /// ```swift
    /// try realm.write {
    ///     realm.add(dog)
    ///     dog.age += 1
    /// }
    /// ```
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken] = [], _ block: () throws -> Result) throws -> Result {
        try beginWriteTransaction()
        let result: Result
        do {
            result = try connection.run { _ in try block() }
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite(withoutNotifying: tokens) }
        return result
    }

    /// Starts a write transaction, which `commitWrite()` or `cancelWrite()` ends; the realm moves
    /// to the newest version first, delivering notifications for what changed.
    ///
    /// ```swift
    /// realm.beginWrite()
    /// realm.add(dog)
    /// try realm.commitWrite()
    /// ```
    ///
    /// As in realm-swift this does not throw: misuse (a transaction already open, a read-only or
    /// frozen realm, another thread) stops the program with a message saying what was wrong.
    /// `write(_:)` throws instead.
    public func beginWrite() {
        do {
            try beginWriteTransaction()
        } catch let error as Error {
            preconditionFailure(error.message)
        } catch {
            preconditionFailure("cannot begin a write transaction on \(coordinator.path): \(error)")
        }
    }

    /// `beginWrite()` that throws: `.wrongThread`, `.readOnly`, `.alreadyInWriteTransaction`, or
    /// `.fileAccess` when SQLite's write lock cannot be taken.
    func beginWriteTransaction() throws {
        try checkThread()
        guard !isFrozen else { throw Error(.readOnly, "Can't perform transactions on a frozen Realm") }
        guard !configuration.readOnly else { throw Error(.readOnly, "Can't perform transactions on a read-only Realm") }
        guard transaction == nil else {
            throw Error(.alreadyInWriteTransaction, "The Realm is already in a write transaction")
        }
        let old = snapshotVersion
        try advanceForWrite()
        deliverNotifications(from: old)
        transaction = WriteTransaction(recordsHistory: try recordsHistory())
    }

    /// Whether this realm's next commit is recorded in the file's history: a synced realm's are
    /// (they are uploaded from it), and so are those on a file whose history holds records
    /// already (a synced realm's file opened without sync, a local file from before local
    /// realms stopped recording), so that its history stays whole. Asked inside the write lock.
    private func recordsHistory() throws -> Bool {
        if configuration.syncConfiguration != nil || configuration.recordsHistoryForTesting { return true }
        do {
            return try history.hasRecords()
        } catch {
            try? connection.rollback()
            coordinator.writerFinished()
            throw Error(.fileAccess, "cannot start a write transaction on \(coordinator.path): \(error)", underlying: error as? any Swift.Error & Sendable)
        }
    }

    /// Commits the open write transaction: data and its history record land together or not at all.
    public func commitWrite(withoutNotifying tokens: [NotificationToken] = []) throws {
        try commitWrite(withoutNotifying: tokens, recordingHistory: true)
    }

    /// Commits; without `recordingHistory` (changes from the server) the new version is kept in
    /// `_atoll_meta` instead of a history record.
    func commitWrite(withoutNotifying tokens: [NotificationToken] = [], recordingHistory: Bool) throws {
        try checkThread()
        guard let transaction else {
            throw Error(.notInWriteTransaction, "Can't commit a non-existing write transaction")
        }
        if let error = transaction.error {
            cancelWrite()
            throw error
        }
        let old = snapshotVersion
        let version = old + 1
        if let limit = configuration.maximumNumberOfActiveVersions, limit > 0 {
            // The committing realm moves to the new version: what the others hold stays.
            let held = coordinator.activeVersions(besides: self).union([version])
            if held.count > Int(limit) {
                cancelWrite()
                throw Error(.fail, "Number of active versions (\(held.count)) in the Realm exceeded the limit of \(limit)")
            }
        }
        coordinator.willCommit(version: version, summary: transaction.summary)
        do {
            try connection.run { _ in
                // Every recorded commit, even an empty one, appends its record: the newest record
                // is the version. Other commits keep the version in `_atoll_meta`.
                if recordingHistory && transaction.recordsHistory {
                    let changeset = Changeset(version: version, timestamp: Int64(Date().timeIntervalSince1970 * 1000),
                                              instructions: transaction.instructions)
                    try history.append(changeset)
                } else {
                    try history.setVersion(version)
                    if recordingHistory { try history.noteUnrecordedCommit() }
                }
                try connection.commit()
            }
        } catch {
            coordinator.commitFailed(version: version)
            cancelWrite()
            throw Error(.fileAccess, "the write transaction could not be committed: \(error)", underlying: error as? any Swift.Error & Sendable)
        }
        self.transaction = nil
        defer { coordinator.writerFinished() }  // after didCommit published the version
        try finishWrite(version: version)
        coordinator.didCommit(version: version, by: self)
        if let sync = configuration.syncConfiguration, !transaction.instructions.isEmpty {
            sync.user.core.syncClient.localCommit(path: configuration.storageKey)
        }
        notifiers.skip(tokens)
        deliverNotifications(from: old)
        asyncWritesMayContinue()
    }

    /// Discards every change of the open write transaction.
    public func cancelWrite() {
        verifyThread()
        guard transaction != nil else { return }
        try? connection.rollback()
        transaction = nil
        coordinator.writerFinished()
        try? finishWrite(version: nil)
        asyncWritesMayContinue()
    }

    // MARK: Plumbing

    private func advanceForWrite() throws {
        // Announce the write, then let a realm that is re-pinning its snapshot finish first.
        coordinator.writerStarted()
        // After announcing the writer: a suspension either sees it and waits for it, or is seen here.
        if FileAccess.isSuspended(coordinator.path) {
            coordinator.writerFinished()
            throw FileAccess.suspendedError(path: coordinator.path)
        }
        while coordinator.repinning.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
        do {
            try connection.run { _ in
                try? connection.commit()
                try connection.beginWrite()
            }
        } catch {
            coordinator.writerFinished()
            throw Error(.fileAccess, "cannot start a write transaction on \(coordinator.path): \(error)", underlying: error as? any Swift.Error & Sendable)
        }
        do {
            try reloadVersion()
        } catch {
            try? connection.rollback()
            coordinator.writerFinished()
            throw error
        }
    }

    /// Checks that a change may happen now; records a failure in the transaction otherwise.
    func requireWrite(_ what: @autoclosure () -> String = "modify objects") -> WriteTransaction? {
        verifyThread()
        guard let transaction else {
            preconditionFailure("Cannot \(what()) outside of a write transaction: call it inside realm.write { }")
        }
        guard transaction.error == nil else { return nil }
        return transaction
    }

    /// Runs one storage step of a write; an SQLite failure fails the transaction.
    func perform(_ transaction: WriteTransaction, _ step: () throws -> Void) {
        do {
            try step()
        } catch let error as Error {
            transaction.fail(error)
        } catch {
            transaction.fail(Error(.fileAccess, "a write failed: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
        bumpStamp()
    }
}
