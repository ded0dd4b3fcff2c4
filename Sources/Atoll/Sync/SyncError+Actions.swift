import AtollCore
import Foundation

extension SyncError {
    /// What some errors leave to do with the realm's file: back it up and delete it (a client
    /// reset) or delete it (permission denied). The app's metadata store keeps the action; the next
    /// `App` start carries it out, or `SyncSession.immediatelyHandleError(_:syncManager:)` does it now.
    ///
    /// ```swift
    /// if let (backupPath, token) = syncError.clientResetInfo() {
    ///     // close every Realm of the file first
    ///     SyncSession.immediatelyHandleError(token, syncManager: app.syncManager)
    /// }
    /// ```
    public struct ActionToken: Sendable, Hashable, CustomStringConvertible {
        let action: FileAction

        /// The realm file the action is about.
        public var realmPath: String { action.realmPath }

        public var description: String {
            switch action.kind {
            case .backUpThenDelete: "ActionToken(back up \(action.realmPath) to \(action.backupPath ?? "?") and delete it)"
            case .delete: "ActionToken(delete \(action.realmPath))"
            }
        }
    }

    /// For a client reset error: where the realm's file will be copied to when the reset runs, and
    /// the token that runs it now. The copy does not exist before then.
    ///
    /// Close every `Realm` of the file before passing the token to
    /// `SyncSession.immediatelyHandleError(_:syncManager:)`; without that call the reset runs at
    /// the next `App` start.
    public func clientResetInfo() -> (String, SyncError.ActionToken)? {
        guard code == .clientResetError, let actionToken, let backupPath = actionToken.action.backupPath else { return nil }
        return (backupPath, actionToken)
    }

    /// For a permission denied error: the token that deletes the realm's local file now (after
    /// every `Realm` of it is closed) instead of at the next `App` start.
    public func deleteRealmUserInfo() -> SyncError.ActionToken? {
        actionToken
    }
}

// MARK: Running file actions

extension FileAction {
    /// Carries the action out unless a `Realm` of the file is open in this process; returns
    /// whether it ran. A file already gone counts as done (there is nothing to back up).
    func run() throws -> Bool {
        let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: realmPath))
        guard !RealmCoordinator.isOpen(configuration) else { return false }
        if kind == .backUpThenDelete, let backupPath, FileManager.default.fileExists(atPath: realmPath),
           !FileManager.default.fileExists(atPath: backupPath) {
            try Self.backUp(realmPath, to: backupPath)
        }
        try Realm.deleteFiles(for: configuration)
        return true
    }

    /// Copies the realm at `path` (with what its log holds) to `backupPath` as a local realm:
    /// built next to it and linked into place, so no half-written backup is ever seen.
    private static func backUp(_ path: String, to backupPath: String) throws {
        let destination = URL(fileURLWithPath: backupPath)
        let folder = destination.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let partial = folder.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).partial").path
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: partial + suffix) } }
        if CipherVFS.isEncryptedFile(atPath: path) { return try backUpEncrypted(path, to: backupPath, partial: partial) }
        let source = try Connection(path: path, readOnly: false)
        defer { try? source.queue.close() }
        try source.copy(toPath: partial)
        // The server forgot this file's place in its history: the copy is a local realm.
        try Realm.adoptSyncState(atPath: partial, keep: false)
        guard link(partial, backupPath) == 0 else {
            throw Realm.Error(.fileAccess, "cannot create the backup \(backupPath): \(String(cString: strerror(errno)))")
        }
    }

    /// The backup of an encrypted realm: its files as they are, log included, since the key is
    /// not at hand (the app gives it to each `Realm` and Atoll never stores it). The backup opens
    /// with the realm's key and keeps its sync bookkeeping, as realm-core's backup (a rename) does.
    private static func backUpEncrypted(_ path: String, to backupPath: String, partial: String) throws {
        let files = FileManager.default
        let log = files.fileExists(atPath: path + "-wal")
        do {
            try files.copyItem(atPath: path, toPath: partial)
            if log { try files.copyItem(atPath: path + "-wal", toPath: partial + "-wal") }
        } catch {
            throw Realm.Error(.fileAccess, "cannot copy \(path) to \(backupPath): \(error.localizedDescription)")
        }
        // The log first: a backup file that appears must find its log beside it.
        guard !log || link(partial + "-wal", backupPath + "-wal") == 0, link(partial, backupPath) == 0 else {
            throw Realm.Error(.fileAccess, "cannot create the backup \(backupPath): \(String(cString: strerror(errno)))")
        }
    }

    /// `<app folder>/recovered-realms/<file name>-<UTC timestamp>.realm` for the realm at `path`.
    static func backupPath(for path: String, appFolder: URL, date: Date = Date()) -> String {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        return appFolder.appendingPathComponent("recovered-realms", isDirectory: true)
            .appendingPathComponent("\(name)-\(formatter.string(from: date)).realm").path
    }
}

extension SyncManager {
    /// One file action at a time in the process (an `App` start and a call of
    /// `immediatelyHandleError` may meet on the same file).
    private static let runningActions = Locked<Void>(())

    /// Records `action` in the app's metadata store and returns its token.
    func record(_ action: FileAction) -> SyncError.ActionToken {
        do {
            try metadata?.record(action)
        } catch {
            Logger.log(.error, "cannot record the pending action for \(action.realmPath) (\(action.kind.rawValue)): \(error)")
        }
        return SyncError.ActionToken(action: action)
    }

    /// Runs the action pending for the token's file (the token's own when the app has no metadata
    /// store). Returns whether nothing is left to do.
    func runFileAction(for token: SyncError.ActionToken) -> Bool {
        Self.runningActions.withLock { _ in
            let action: FileAction
            if let metadata {
                // Only what is still recorded runs: a token kept past its action must not delete
                // the fresh copy downloaded since.
                guard let pending = metadata.fileAction(forPath: token.realmPath) else { return true }
                action = pending
            } else {
                action = token.action
            }
            return run(action)
        }
    }

    /// Runs every pending action whose file is not open (at `App` start).
    func runPendingFileActions() {
        guard let metadata else { return }
        Self.runningActions.withLock { _ in
            for action in metadata.fileActions() { _ = run(action) }
        }
    }

    private func run(_ action: FileAction) -> Bool {
        do {
            guard try action.run() else {
                Logger.log(.warn, "\(action.realmPath) is still open in this process: its pending action (\(action.kind.rawValue)) "
                    + "waits until every Realm of it is closed and immediatelyHandleError is called again, or until the next App start")
                return false
            }
        } catch {
            Logger.log(.error, "the pending action for \(action.realmPath) (\(action.kind.rawValue)) failed: \(error); it is tried again at the next App start")
            return false
        }
        metadata?.removeFileAction(forPath: action.realmPath)
        SyncClient.fileActionCompleted(path: action.realmPath)
        switch action.kind {
        case .backUpThenDelete: Logger.log(.info, "backed up \(action.realmPath) to \(action.backupPath ?? "?") and deleted it")
        case .delete: Logger.log(.info, "deleted \(action.realmPath)")
        }
        return true
    }
}
