import AtollCore
import Foundation

/// An app's sync machinery: one connection to the server, one session per synced realm file.
final class SyncClient: @unchecked Sendable {
    let connection: SyncConnection
    private let lock = NSLock()
    private var sessionsByPath: [String: SyncSession] = [:]
    private var nextSessionID: UInt64 = 1

    init(baseURL: String, appId: String) {
        connection = SyncConnection(baseURL: baseURL, appId: appId)
    }

    /// The session of a synced realm's file, made and started on first use.
    func session(for configuration: Realm.Configuration) -> SyncSession? {
        guard let sync = configuration.syncConfiguration else { return nil }
        let path = configuration.storageKey
        let (session, isNew): (SyncSession, Bool) = lock.withLock {
            if let existing = sessionsByPath[path] { return (existing, false) }
            let id = SessionID(nextSessionID)
            nextSessionID += 1
            let engine = SessionEngine(id: id, configuration: configuration, sync: sync, connection: connection)
            let session = SyncSession(engine: engine)
            engine.publicSession = session
            sessionsByPath[path] = session
            return (session, true)
        }
        if isNew {
            let engine = session.engine
            _Concurrency.Task { await engine.start() }
        }
        return session
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
            let engine = session.engine
            _Concurrency.Task { await engine.stop() }
        }
    }

    func sessions(of user: User) -> [SyncSession] {
        lock.withLock { sessionsByPath.values.filter { $0.engine.sync.user == user } }
    }

    /// Tells the session of a file that a local write committed.
    func localCommit(path: String) {
        guard let session = lock.withLock({ sessionsByPath[path] }) else { return }
        let engine = session.engine
        _Concurrency.Task { await engine.localCommitted() }
    }
}
