import AtollCore
import Foundation

/// An app's sync machinery: one connection to the server, one session per synced realm file.
final class SyncClient: @unchecked Sendable {
    let connection: SyncConnection
    private let lock = NSLock()
    private var sessionsByPath: [String: SyncSession] = [:]
    private var nextSessionID: UInt64 = 1

    init(baseURL: String, appId: String, trustedRootCertificates: [String] = [], timeouts: SyncTimeouts = SyncTimeouts(),
         settings: RequestSettings = RequestSettings(), clock: WallClock = .system) {
        connection = SyncConnection(
            baseURL: baseURL, appId: appId, trustedRootCertificates: trustedRootCertificates, timeouts: timeouts,
            settings: settings, clock: clock)
        // New custom headers go out with a new upgrade request: the connection reconnects.
        let connection = connection
        settings.headersChanged.withLock { $0 = { _Concurrency.Task { await connection.reconnectForNewHeaders() } } }
    }

    /// The session of a synced realm's file, made and started on first use.
    func session(for configuration: Realm.Configuration) -> SyncSession? {
        guard let sync = configuration.syncConfiguration else { return nil }
        let path = configuration.storageKey
        let (session, isNew): (SyncSession, Bool) = lock.withLock {
            if let existing = sessionsByPath[path] {
                if !existing.engine.isStopped.load(ordering: .acquiring) { return (existing, false) }
                // Stopped for a client reset or a refused realm: it stays stopped (opening the
                // file again must not sync it) until the pending action removed the file.
                if existing.engine.stopReason.load(ordering: .acquiring) == SessionEngine.StopReason.fileActionPending.rawValue,
                   !Self.takeCompletedFileAction(configuration.fileURL?.standardizedFileURL.path) {
                    return (existing, false)
                }
            }
            let id = SessionID(nextSessionID)
            nextSessionID += 1
            let engine = SessionEngine(id: id, configuration: configuration, sync: sync, connection: connection)
            let session = SyncSession(engine: engine)
            engine.publicSession = session
            sessionsByPath[path] = session
            return (session, true)
        }
        // A logged-out user's session stays inactive (it starts when the user logs in again).
        if isNew && sync.user.state == .loggedIn {
            session.enqueue { await $0.start() }
        }
        return session
    }

    /// Files whose pending action (client reset backup, deletion) has run since their session
    /// stopped: the next open of the file starts a new session.
    private static let completedFileActions = Locked<Set<String>>([])

    static func fileActionCompleted(path: String) {
        completedFileActions.withLock { _ = $0.insert(path) }
    }

    private static func takeCompletedFileAction(_ path: String?) -> Bool {
        guard let path else { return false }
        return completedFileActions.withLock { $0.remove(path) != nil }
    }

    /// Stops the sessions of a user who logged out or was removed; they restart when the user
    /// logs in again and opens the realm.
    func stopSessions(of user: User) {
        let stopped: [SyncSession] = lock.withLock {
            let matching = sessionsByPath.filter { $0.value.engine.sync.user == user }
            for key in matching.keys { sessionsByPath.removeValue(forKey: key) }
            return Array(matching.values)
        }
        for session in stopped {
            // Stopped at once, so that nothing under way starts it again; then torn down in order.
            session.engine.isStopped.store(true, ordering: .releasing)
            session.update(state: .invalid, connection: .disconnected)
            session.enqueue { await $0.stop() }
        }
    }

    func sessions(of user: User) -> [SyncSession] {
        lock.withLock { sessionsByPath.values.filter { $0.engine.sync.user == user } }
    }

    /// Tells the session of a file that a local write committed. In order with the session's
    /// commands: a write made after `suspend()` must not go up before the suspension took effect.
    func localCommit(path: String) {
        guard let session = lock.withLock({ sessionsByPath[path] }) else { return }
        session.enqueue { await $0.localCommitted() }
    }

    /// Tells the session of a file that a new subscription set committed.
    func subscriptionsChanged(path: String) {
        guard let session = lock.withLock({ sessionsByPath[path] }) else { return }
        session.enqueue { await $0.subscriptionsChanged() }
    }
}
