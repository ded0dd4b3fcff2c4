import AtollCore
import Foundation

/// A realm's files: whether they exist, deleting them, and writing copies.
extension Realm {
    /// Whether the file of `config` exists on disk (for a synced configuration, the file its
    /// user and partition use). An in-memory configuration has no file: `false`.
    ///
    /// ```swift
    /// if !Realm.fileExists(for: config) { showOnboarding() }
    /// ```
    public static func fileExists(for config: Configuration) -> Bool {
        guard config.inMemoryIdentifier == nil, let url = config.fileURL else { return false }
        return FileManager.default.fileExists(atPath: url.standardizedFileURL.path)
    }

    /// Deletes the realm file of `config` and the files SQLite keeps beside it; returns whether
    /// there was anything to delete.
    ///
    /// ```swift
    /// try Realm.deleteFiles(for: config)
    /// ```
    ///
    /// - Throws: `Realm.Error.alreadyOpen` while a `Realm` of the file is open in this process (a
    ///   frozen one, or the realm a sync session keeps, included) or the file is open in another
    ///   process; `.fileAccess` when a file cannot be removed.
    @discardableResult
    public static func deleteFiles(for config: Configuration) throws -> Bool {
        guard config.inMemoryIdentifier == nil, let url = config.fileURL else { return false }
        let path = url.standardizedFileURL.path
        guard !RealmCoordinator.isOpen(config) else {
            throw Error(.alreadyOpen, "Cannot delete files of an open Realm: '\(path)' is still in use", path: path)
        }
        guard !RealmFiles.isInUse(path) else {
            throw Error(.alreadyOpen, "Cannot delete files of an open Realm: '\(path)' is open in another process", path: path)
        }
        return try RealmFiles.delete(path)
    }

    /// Writes a compacted copy of the realm — the version this realm reads — to `fileURL`, a
    /// local realm that any configuration with that `fileURL` (and `encryptionKey`) opens. The
    /// copy is encrypted with `encryptionKey`, whatever this realm's key: `nil` writes a
    /// plaintext copy, another key re-keys. A synced realm's copy leaves sync behind: use
    /// `writeCopy(configuration:)` to keep it.
    ///
    /// ```swift
    /// try realm.writeCopy(toFile: backupURL, encryptionKey: newKey)
    /// ```
    ///
    /// - Throws: `.fileExists` when a file is at `fileURL`; `.fileNotFound` when its folder does
    ///   not exist; `.alreadyInWriteTransaction` inside a write transaction (realm-swift copies
    ///   the uncommitted data there; Atoll copies committed versions only); `.invalidInput` for
    ///   a key that is not 64 bytes.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        try checkThread()
        let key = try EncryptionKey.make(encryptionKey)
        try writeCopy(to: fileURL.standardizedFileURL.path, key: key, keepingSyncState: false, creatingFolder: false)
    }

    /// Writes a compacted copy of the realm — the version this realm reads — to
    /// `configuration`'s file, which must not exist. To a synced configuration of the same
    /// partition (another user's, say) the copy keeps its place in the server's history and its
    /// unsynced changes; to a local configuration it leaves sync behind.
    ///
    /// ```swift
    /// try realm.writeCopy(configuration: Realm.Configuration(fileURL: backupURL))
    /// ```
    ///
    /// The copy is encrypted with the configuration's `encryptionKey` (plaintext without one).
    ///
    /// - Throws: as `writeCopy(toFile:)`; `.invalidConfiguration` for a configuration without a
    ///   file, across sync kinds or partitions, or from a local realm to a synced one.
    public func writeCopy(configuration: Configuration) throws {
        try checkThread()
        guard let url = configuration.fileURL, configuration.inMemoryIdentifier == nil else {
            throw Error(.invalidConfiguration, "writeCopy(configuration:) needs a configuration with a fileURL")
        }
        let key = try EncryptionKey.make(configuration.encryptionKey)
        if self.configuration.syncConfiguration == nil, configuration.syncConfiguration != nil {
            return try writeSyncedCopy(to: url.standardizedFileURL.path, key: key)
        }
        let keepsSyncState = try Self.copyKeepsSyncState(from: self.configuration.syncConfiguration, to: configuration.syncConfiguration)
        // A synced destination's folder is the user's, made on demand as opening the realm would.
        try writeCopy(to: url.standardizedFileURL.path, key: key, keepingSyncState: keepsSyncState,
                      creatingFolder: configuration.syncConfiguration != nil)
    }

    private func writeCopy(to destination: String, key: EncryptionKey?, keepingSyncState: Bool, creatingFolder: Bool,
                           adjusting adjust: ((Connection) throws -> Void)? = nil) throws {
        guard transaction == nil else {
            throw Error(.alreadyInWriteTransaction, "Cannot write a copy of a Realm while it is in a write transaction")
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw Error(.fileExists, "File at path '\(destination)' already exists", path: destination)
        }
        let folder = (destination as NSString).deletingLastPathComponent
        if creatingFolder {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw Error(.fileAccess, "cannot create the folder \(folder): \(error.localizedDescription)", path: destination)
            }
        } else {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw Error(.fileNotFound, "The folder of '\(destination)' does not exist", path: destination)
            }
        }
        // The copy is built next to the destination and moved into place, so a failed copy leaves
        // no half-written realm behind.
        let partial = RealmFiles.partialPath(for: destination)
        defer { for suffix in RealmFiles.suffixes { try? FileManager.default.removeItem(atPath: partial + suffix) } }
        do {
            try connection.copy(toPath: partial, key: key)
            try Self.adoptSyncState(atPath: partial, keep: keepingSyncState, key: key, adjusting: adjust)
        } catch {
            throw Error(.fileAccess, "cannot write a copy to \(destination): \(error)", path: destination,
                        underlying: error as? any Swift.Error & Sendable)
        }
        try RealmFiles.publish(partial, at: destination)
    }

    /// Whether a copy from a realm synced as `source` to one synced as `destination` carries on
    /// from the same place in the server's history (same kind of sync, same partition). A copy
    /// to a local configuration leaves sync behind.
    ///
    /// - Throws: `.invalidConfiguration` across sync kinds or partitions, or from a local realm to
    ///   a synced one.
    static func copyKeepsSyncState(from source: SyncConfiguration?, to destination: SyncConfiguration?) throws -> Bool {
        guard let destination else { return false }
        guard let source else { return false }
        guard source.enableFlexibleSync == destination.enableFlexibleSync else {
            throw Error(.invalidConfiguration, source.enableFlexibleSync
                ? "writeCopy(configuration:) cannot copy a flexible-sync realm to a partition-based sync configuration"
                : "writeCopy(configuration:) cannot copy a partition-based sync realm to a flexible-sync configuration")
        }
        guard source.partition == destination.partition else {
            throw Error(.invalidConfiguration, "writeCopy(configuration:) copies a synced realm only to a configuration of the same partition (\(source.partition?.path ?? "") → \(destination.partition?.path ?? ""))")
        }
        return true
    }

    /// Makes a fresh copy's sync state fit its new owner — another user's copy of the same realm
    /// keeps its place in the history and its unsynced changes but gets a file ident of its own
    /// on first sync; a local copy has no sync state — and compacts it.
    /// A local realm's copy for a synced configuration (realm-swift: "convert a local realm to a
    /// synced realm"): the copy holds the objects, and its history is replaced by changesets that
    /// create them, so that they are the device's first uploads once the synced realm opens. Every
    /// class must have a primary key (sync names objects by it); embedded objects travel inside
    /// their owners. The server merges them with what it has by primary key.
    private func writeSyncedCopy(to destination: String, key: EncryptionKey?) throws {
        for table in coordinator.allTables where !table.schema.isEmbedded && table.schema.primaryKey == nil {
            throw Error(.invalidConfiguration,
                        "writeCopy(configuration:) cannot make a synced realm of this one: '\(table.name)' has no primary key, and sync needs one on every class")
        }
        let state = try replicaState()
        let base = try history.currentVersion()
        try writeCopy(to: destination, key: key, keepingSyncState: false, creatingFolder: true) { copy in
            try copy.execute("DELETE FROM _atoll_history")
            try copy.execute("DELETE FROM _atoll_meta WHERE key = 'unrecorded_commits'")
            var uploads = RealmFormatConversion.UploadHistory(connection: copy, after: base)
            try uploads.add(state.schema.keys.sorted().map { .addTable(state.schema[$0]!) })
            for type in state.objects.keys.sorted() where state.schema[type]?.isEmbedded != true {
                for key in state.primaryKeys(of: type) {
                    try uploads.add(FlexibleSync.instructions(creating: ObjectID(type: type, primaryKey: key), in: state))
                }
            }
            try uploads.flush()
        }
    }

    static func adoptSyncState(atPath path: String, keep: Bool, key: EncryptionKey? = nil,
                               adjusting adjust: ((Connection) throws -> Void)? = nil) throws {
        let copy = try Connection(path: path, readOnly: false, key: key)
        defer { try? copy.queue.close() }
        try SyncStateStore(connection: copy, path: path).adoptCopy(keep: keep)
        if let adjust {
            try copy.run { _ in
                try copy.beginWrite()
                do {
                    try adjust(copy)
                    try copy.commit()
                } catch {
                    try? copy.rollback()
                    throw error
                }
            }
        }
        try RealmFiles.compact(copy)
    }
}

extension Realm {
    /// Rewrites the realm's file without its free space, now (where `shouldCompactOnLaunch`
    /// waits for the first open). Objects, links and the order of collections are kept, and
    /// other realms of the file read on. Returns whether the file was compacted: `false` for a
    /// frozen, read-only or in-memory realm, or one inside a write transaction.
    ///
    /// ```swift
    /// try realm.write { realm.delete(realm.objects(LogEntry.self)) }
    /// try realm.compact()
    /// ```
    @discardableResult
    public func compact() throws -> Bool {
        try checkThread()
        guard !isFrozen, !configuration.readOnly, !coordinator.isInMemory, transaction == nil else { return false }
        // Counted as a writer so that no realm of the process re-pins its snapshot meanwhile.
        coordinator.writerStarted()
        defer { coordinator.writerFinished() }
        let old = snapshotVersion
        do {
            try connection.run { _ in try? connection.commit() }
            try RealmFiles.compact(connection)
            try finishWrite(version: nil)
        } catch {
            try? finishWrite(version: nil)
            throw Error(.fileAccess, "cannot compact \(coordinator.path): \(error)", path: coordinator.path,
                        underlying: error as? any Swift.Error & Sendable)
        }
        bumpStamp()
        deliverNotifications(from: old)
        return true
    }
}
