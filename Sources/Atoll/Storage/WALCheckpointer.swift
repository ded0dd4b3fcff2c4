import Foundation
import GRDB

/// Checkpoints a realm file's write-ahead log in the background.
///
/// Every open `Realm` keeps a read transaction (its snapshot), so SQLite can rarely start the log
/// over, and with its automatic checkpoint every commit past 1,000 log pages would copy pages back
/// and sync the file inside the commit. Realm connections turn that off; instead, a short while
/// after commits, this checkpoints on a utility queue through a connection of its own: commits
/// cost a log append, the syncs happen off their path. A PASSIVE checkpoint never waits for
/// readers or writers; what a reader's snapshot still needs stays in the log for the next round.
final class WALCheckpointer: @unchecked Sendable {
    private let path: String
    private let key: EncryptionKey?
    private let queue = DispatchQueue(label: "atoll.wal-checkpoint", qos: .utility)
    private let lock = NSLock()
    private var isScheduled = false
    private var connection: DatabaseQueue?
    /// Called after a checkpoint that copied the whole log into the file.
    private let completed: @Sendable () -> Void
    /// How long after a commit the checkpoint runs; commits meanwhile share it.
    static let delay: DispatchTimeInterval = .milliseconds(50)

    init(path: String, key: EncryptionKey?, completed: @escaping @Sendable () -> Void) {
        self.path = path
        self.key = key
        self.completed = completed
    }

    /// A transaction committed: checkpoint soon.
    func committed() {
        let schedule = lock.withLock {
            defer { isScheduled = true }
            return !isScheduled
        }
        guard schedule else { return }
        queue.asyncAfter(deadline: .now() + Self.delay) { [weak self] in self?.checkpoint() }
    }

    /// Runs a passive checkpoint now (on the caller's thread).
    func checkpoint() {
        lock.withLock { isScheduled = false }
        // A checkpoint takes SQLite's checkpoint lock: not while the app is suspended
        // (Realm.suspendFileAccess()); resuming schedules one.
        guard !FileAccess.isSuspended(path) else { return }
        do {
            if connection == nil {
                connection = try Connection.databaseQueue(path: path, key: key) { config in
                    config.label = "atoll.checkpoint"
                    config.busyMode = .immediateError
                    // A checkpoint syncs the file before the log may start over: to the medium.
                    config.prepareDatabase(Connection.syncToTheMedium)
                }
            }
            // (busy, frames in the log, frames copied): everything copied means readers that pin a
            // snapshot now read the file alone (through the memory map), not the log.
            let result = try connection?.writeWithoutTransaction { try Row.fetchOne($0, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
            if let result, let log: Int = result[1], let copied: Int = result[2], log > 0, log == copied { completed() }
        } catch {
            // A busy or vanished file: the next commit schedules another try.
        }
    }

    /// Stops: a last checkpoint that also truncates the log when no reader needs it any more.
    func close() {
        queue.sync {
            try? connection?.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try? connection?.close()
            connection = nil
        }
    }
}
