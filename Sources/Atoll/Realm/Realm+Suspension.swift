import AtollCore
import Atomics
import Foundation

/// Keeping the process's realm files unlocked while an iOS app is suspended.
///
/// iOS ends a suspended app that holds a lock on a file in a shared (App Group) container
/// (exception `0xdead10cc`). SQLite holds its write lock for a write transaction and a
/// checkpoint; readers in WAL mode take only shared marks, which are not the locks that get an app
/// ended. Realm has no answer to this (its apps keep the lock file and are ended); Atoll lets the
/// app say when it is about to be suspended, as GRDB does with its suspension notification:
///
/// ```swift
/// func applicationDidEnterBackground(_ application: UIApplication) {
///     Realm.suspendFileAccess()      // or in a background task's expiration handler
/// }
/// func applicationWillEnterForeground(_ application: UIApplication) {
///     Realm.resumeFileAccess()
/// }
/// ```
///
/// While suspended, no realm of the process takes the write lock: `write` and `beginWrite` fail
/// with `Realm.Error.fail` (so does a sync session's download, which it retries after resuming);
/// `writeAsync`, `beginAsyncWrite` and `asyncWrite` wait and run once resumed; no checkpoint runs;
/// idle connections are closed. Reads go on.
extension Realm {
    /// Stops every realm of the process from taking SQLite's write lock, and waits up to `timeout`
    /// seconds for the writes under way to finish.
    ///
    /// - Returns: Whether no write transaction of the process is open when it returns (`false`
    ///   when one outlasted `timeout`: its lock is held until it ends).
    @discardableResult
    public static func suspendFileAccess(timeout: TimeInterval = 1) -> Bool {
        suspendFileAccess(timeout: timeout, files: nil)
    }

    /// Lets realms write again after `suspendFileAccess()`: asynchronous writes that waited run,
    /// and the logs written before the suspension are checkpointed.
    public static func resumeFileAccess() {
        resumeFileAccess(files: nil)
    }

    /// Whether `suspendFileAccess()` is in effect.
    public static var isFileAccessSuspended: Bool { FileAccess.isSuspendedEverywhere }

    /// `suspendFileAccess` for the files at `files` only (`nil`: every file), so tests of it can
    /// run beside others in one process.
    static func suspendFileAccess(timeout: TimeInterval, files: Set<String>?) -> Bool {
        FileAccess.suspend(files)
        let deadline = Date().addingTimeInterval(max(0, timeout))
        while true {
            let coordinators = RealmCoordinator.open.filter { FileAccess.isSuspended($0.path) }
            for coordinator in coordinators { coordinator.closeIdleConnections() }
            let writing = coordinators.contains { $0.writers.load(ordering: .sequentiallyConsistent) > 0 }
            if !writing { return true }
            if Date() >= deadline { return false }
            usleep(1_000)
        }
    }

    static func resumeFileAccess(files: Set<String>?) {
        let resumed = RealmCoordinator.open.filter { FileAccess.isSuspended($0.path) }
        FileAccess.resume(files)
        for coordinator in resumed { coordinator.fileAccessResumed() }
    }
}

/// The process-wide suspension behind `Realm.suspendFileAccess()`: of every file, or (tests) of
/// some files.
enum FileAccess {
    private struct State {
        var everywhere = false
        var files: Set<String> = []
        var waiters: [(path: String, run: @Sendable () -> Void)] = []

        func isSuspended(_ path: String) -> Bool { everywhere || files.contains(path) }
    }

    private static let state = Locked(State())
    /// Whether any file is suspended: read on every write's path without the lock.
    private static let anySuspended = ManagedAtomic<Bool>(false)

    static func isSuspended(_ path: String) -> Bool {
        guard anySuspended.load(ordering: .sequentiallyConsistent) else { return false }
        return state.withLock { $0.isSuspended(path) }
    }

    static var isSuspendedEverywhere: Bool { state.withLock { $0.everywhere } }

    static func suspend(_ files: Set<String>?) {
        state.withLock { state in
            if let files { state.files.formUnion(files) } else { state.everywhere = true }
            anySuspended.store(true, ordering: .sequentiallyConsistent)
        }
    }

    static func resume(_ files: Set<String>?) {
        let due = state.withLock { state -> [@Sendable () -> Void] in
            if let files { state.files.subtract(files) } else { state.everywhere = false; state.files = [] }
            anySuspended.store(state.everywhere || !state.files.isEmpty, ordering: .sequentiallyConsistent)
            let snapshot = state
            let (due, waiting) = (state.waiters.filter { !snapshot.isSuspended($0.path) },
                                  state.waiters.filter { snapshot.isSuspended($0.path) })
            state.waiters = waiting
            return due.map(\.run)
        }
        for waiter in due { waiter() }
    }

    /// Calls `waiter` now (on the caller's thread) when the file at `path` is not suspended,
    /// otherwise once it is resumed (on the resuming thread).
    static func whenResumed(_ path: String, _ waiter: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.isSuspended(path) else { return true }
            state.waiters.append((path, waiter))
            return false
        }
        if now { waiter() }
    }

    /// The error of a write started while suspended.
    static func suspendedError(path: String) -> Realm.Error {
        Realm.Error(.fail, "cannot write to \(path): file access is suspended (Realm.suspendFileAccess()) until Realm.resumeFileAccess()",
                    path: path)
    }
}
