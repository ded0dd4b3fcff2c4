import AtollCore
import CAtollCipher
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// The files of a realm on disk, handled whole: the SQLite file and its log and shared-memory
/// files beside it. `Realm+Files.swift` has the public API built on these.
enum RealmFiles {
    /// What SQLite keeps next to a realm file, by suffix of its path.
    static let suffixes = ["", "-wal", "-shm", "-journal"]

    /// Whether any file of the realm at `path` exists.
    static func exist(_ path: String) -> Bool {
        suffixes.contains { FileManager.default.fileExists(atPath: path + $0) }
    }

    /// What else may sit beside a realm that Realm wrote before Atoll converted it: the original
    /// (``RealmFormatConversion/backupPath(for:)``) and Realm's own lock, notification and
    /// management files, which `Realm.deleteFiles(for:)` removes in Realm too.
    static let formerRealmSuffixes = [".before-atoll", ".lock", ".note", ".management"]

    /// Removes the files of the realm at `path`; returns whether there were any.
    static func delete(_ path: String) throws -> Bool {
        var existed = false
        for suffix in suffixes + formerRealmSuffixes where FileManager.default.fileExists(atPath: path + suffix) {
            existed = true
            do {
                try FileManager.default.removeItem(atPath: path + suffix)
            } catch {
                throw Realm.Error(.fileAccess, "cannot delete \(path + suffix): \(error.localizedDescription)", path: path)
            }
        }
        return existed
    }

    /// Makes every commit of the realm at `path` durable: syncs its write-ahead log (the commits
    /// since the last checkpoint; a checkpoint syncs the file itself) to the medium, with
    /// F_FULLFSYNC on Apple platforms, and the folder too the first time a log is seen (its entry
    /// must last as well). Commits run with `synchronous = NORMAL` and survive a crash of the
    /// process, not a power loss; a synced realm calls this before an upload or an ident leaves,
    /// so the server never holds a commit (or a version the client says it integrated) that the
    /// device could lose (docs/storage.md, "Durability").
    static func syncLog(_ path: String) throws {
        logSyncs.withLock { $0[path, default: 0] += 1 }
        if failingLogSyncs.withLock({ failing in
            guard let left = failing[path] else { return false }
            failing[path] = left > 1 ? left - 1 : nil
            return true
        }) {
            throw Realm.Error(.fileAccess, "cannot sync \(path)-wal to disk: an I/O error (simulated)", path: path)
        }
        let log = path + "-wal"
        let fd = open(log, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return }  // no log: every commit is in the file, synced by its checkpoint
            throw syncError(log)
        }
        defer { close(fd) }
        try syncToTheMedium(fd, log)
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw syncError(log) }
        let inode = UInt64(status.st_ino)
        let logs = syncedLogs.withLock { synced in
            defer { synced[path] = inode }
            return synced[path]
        }
        if logs != inode {
            let folder = (path as NSString).deletingLastPathComponent
            let folderFD = open(folder, O_RDONLY | O_CLOEXEC)
            guard folderFD >= 0 else { throw syncError(folder) }
            defer { close(folderFD) }
            do { try syncToTheMedium(folderFD, folder) } catch {
                syncedLogs.withLock { _ = $0.removeValue(forKey: path) }
                throw error
            }
        }
    }

    /// Syncs the file or folder at `target` to the medium.
    static func sync(_ target: String) throws {
        let fd = open(target, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw syncError(target) }
        defer { close(fd) }
        try syncToTheMedium(fd, target)
    }

    private static func syncToTheMedium(_ fd: Int32, _ target: String) throws {
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == 0 { return }  // else a file system without it: fsync
        #endif
        guard fsync(fd) == 0 else { throw syncError(target) }
    }

    private static func syncError(_ target: String) -> Realm.Error {
        Realm.Error(.fileAccess, "cannot sync \(target) to disk: \(String(cString: strerror(errno)))", path: target)
    }

    /// The log (by inode) whose folder entry was last synced, by realm path; and how many times
    /// `syncLog` ran (tests).
    private static let syncedLogs = Locked<[String: UInt64]>([:])
    private static let logSyncs = Locked<[String: Int]>([:])

    static func logSyncCount(_ path: String) -> Int { logSyncs.withLock { $0[path] ?? 0 } }

    /// Tests: how many of the next syncs of a realm's log fail, by realm path.
    private static let failingLogSyncs = Locked<[String: Int]>([:])
    static func failLogSyncs(_ path: String, count: Int) { failingLogSyncs.withLock { $0[path] = count > 0 ? count : nil } }

    /// Whether a connection of another process (or one outside Atoll's bookkeeping) has the
    /// realm at `path` open. A WAL-mode connection keeps a lock on the file for as long as it is
    /// open, so an exclusive lock taken without waiting fails exactly then. An encrypted file
    /// is tested on its locks alone, with SQLite's VFS and without reading it, so no key is
    /// needed (an app deleting a realm whose key it lost, say).
    static func isInUse(_ path: String) -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        if CipherVFS.isEncryptedFile(atPath: path) {
            return atoll_cipher_is_locked(path) == 1
        }
        func isLock(_ error: any Error) -> Bool {
            guard let error = error as? DatabaseError else { return false }
            return error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
        }
        do {
            // Opening reads the file already (GRDB checks it is a database): that read may be
            // the one refused.
            var config = GRDB.Configuration()
            config.busyMode = .immediateError
            config.prepareDatabase { db in try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE") }
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            try queue.inDatabase { db in
                try db.execute(sql: "BEGIN EXCLUSIVE")
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                try db.execute(sql: "COMMIT")
            }
            return false
        } catch {
            // Anything but a lock: not an SQLite file, which no one can have open as a realm.
            return isLock(error)
        }
    }

    /// Copies the seed realm at `seed` to `path` when no realm is there yet. The copy is made
    /// beside `path` and linked into place, so a concurrent opener sees the whole seed or none.
    /// An encrypted seed is copied as it is: it must have the configuration's key.
    static func copySeed(_ seed: URL, to path: String, key: EncryptionKey? = nil) throws {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let seedPath = seed.standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: seedPath) else {
            throw Realm.Error(.fileNotFound, "The seed file \(seedPath) does not exist", path: seedPath)
        }
        let folder = (path as NSString).deletingLastPathComponent
        let partial = partialPath(for: path)
        defer { for suffix in suffixes { try? FileManager.default.removeItem(atPath: partial + suffix) } }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: seedPath, toPath: partial)
            // A seed copied while it was open may keep recent commits in its log.
            if FileManager.default.fileExists(atPath: seedPath + "-wal") {
                try FileManager.default.copyItem(atPath: seedPath + "-wal", toPath: partial + "-wal")
            }
        } catch {
            throw Realm.Error(.fileAccess, "cannot copy the seed file \(seedPath) to \(path): \(error.localizedDescription)", path: path)
        }
        if FileManager.default.fileExists(atPath: partial + "-wal") {
            // Fold the log into the copy, so only one file needs to move.
            do {
                let queue = try Connection.databaseQueue(path: partial, key: key)
                try queue.inDatabase { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                try queue.close()
            } catch let error as Realm.Error {
                throw error
            } catch {
                throw Realm.Error(.invalidDatabase, "The seed file \(seedPath) is not a realm file: \(error)", path: seedPath,
                                  underlying: error as? any Error & Sendable)
            }
        }
        do {
            try publish(partial, at: path)
        } catch let error as Realm.Error where error.code == .fileExists {
            return  // another opener copied the seed first
        }
    }

    /// A name beside `path` for a file being written, hidden and unique.
    static func partialPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).partial").path
    }

    /// Gives the finished file at `partial` the name `path`; link(2) never replaces a file, so
    /// one that appeared meanwhile is reported as `.fileExists`.
    static func publish(_ partial: String, at path: String) throws {
        guard link(partial, path) == 0 else {
            let code = errno
            if code == EEXIST { throw Realm.Error(.fileExists, "File at path '\(path)' already exists", path: path) }
            if code == ENOENT { throw Realm.Error(.fileNotFound, "The folder of '\(path)' does not exist", path: path) }
            throw Realm.Error(.fileAccess, "cannot write \(path): \(String(cString: strerror(code)))", path: path)
        }
    }

    // MARK: Compaction

    /// The size of the realm's data with its free space, and the bytes its data uses, as
    /// `shouldCompactOnLaunch` receives them.
    static func sizes(_ db: Database) throws -> (total: Int, used: Int) {
        let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        return (pages * pageSize, (pages - free) * pageSize)
    }

    /// Rewrites the file of `connection` without its free space. VACUUM keeps every `_row` (an
    /// INTEGER PRIMARY KEY) and the order of other rows; the checkpoint moves the smaller file
    /// out of the log and truncates the log.
    static func compact(_ connection: Connection) throws {
        try connection.run { db in
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Asks `shouldCompact` with the file's sizes and compacts it when it answers `true`; returns
    /// whether it compacted. Runs before the file's first realm of the process opens.
    @discardableResult
    static func compactIfAsked(_ path: String, key: EncryptionKey? = nil, _ shouldCompact: (Int, Int) -> Bool) throws -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        let connection = try Connection(path: path, readOnly: false, key: key)
        defer { try? connection.queue.close() }
        return try connection.run { db in
            let sizes: (total: Int, used: Int)
            do {
                sizes = try Self.sizes(db)
            } catch {
                throw Connection.openError(error, path: path, readOnly: false)
            }
            guard shouldCompact(sizes.total, sizes.used) else { return false }
            do {
                try compact(connection)
            } catch {
                throw Realm.Error(.fileAccess, "cannot compact \(path): \(error)", path: path, underlying: error as? any Error & Sendable)
            }
            return true
        }
    }
}
