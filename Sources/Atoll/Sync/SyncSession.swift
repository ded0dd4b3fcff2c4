import AtollCore
import Foundation

/// The sync session of one synced realm: its connection state, progress and controls.
///
/// ```swift
/// let session = realm.syncSession!
/// try await session.wait(for: .upload)
/// session.suspend()
/// ```
public final class SyncSession: @unchecked Sendable {
    /// Whether the session syncs.
    public enum State: Sendable, Hashable {
        case active, dying, inactive, waitingForAccessToken, paused
    }

    /// The state of the connection the session uses.
    public enum ConnectionState: Sendable, Hashable {
        case disconnected, connecting, connected
    }

    public enum ProgressDirection: Sendable { case upload, download }

    let engine: SessionEngine
    private let lock = NSLock()
    private var _state: State = .inactive
    private var _connectionState: ConnectionState = .disconnected
    private var connectionObservers: [UUID: @Sendable (ConnectionState) -> Void] = [:]

    init(engine: SessionEngine) { self.engine = engine }

    public var state: State { lock.withLock { _state } }
    public var connectionState: ConnectionState { lock.withLock { _connectionState } }

    /// The user the session syncs as.
    public var user: User? { engine.sync.user }

    /// Stops syncing until `resume()`.
    public func suspend() {
        let engine = engine
        _Concurrency.Task { await engine.suspend() }
        update(state: .paused)
    }

    /// Syncs again after `suspend()`.
    public func resume() {
        let engine = engine
        _Concurrency.Task { await engine.start() }
    }

    /// Drops the connection and connects again at once.
    public func reconnect() {
        let engine = engine
        _Concurrency.Task { await engine.reconnect() }
    }

    /// Waits until every local change up to now is uploaded, or every server change downloaded.
    public func wait(for direction: ProgressDirection) async throws {
        try await engine.wait(for: direction == .upload ? .upload : .download)
    }

    /// Calls `block` whenever the connection state changes; keep the token to keep observing.
    public func observeConnectionState(_ block: @escaping @Sendable (ConnectionState) -> Void) -> NotificationToken {
        let id = UUID()
        lock.withLock { connectionObservers[id] = block }
        return NotificationToken(realm: nil) { [weak self] in _ = self?.lock.withLock { self?.connectionObservers.removeValue(forKey: id) } }
    }

    func update(state: State? = nil, connection: ConnectionState? = nil) {
        let observers: [@Sendable (ConnectionState) -> Void] = lock.withLock {
            if let state { _state = state }
            guard let connection, connection != _connectionState else { return [] }
            _connectionState = connection
            return Array(connectionObservers.values)
        }
        if let connection { for observer in observers { observer(connection) } }
    }
}

extension Realm {
    /// The realm's sync session, for a synced realm.
    public var syncSession: SyncSession? {
        guard let sync = configuration.syncConfiguration else { return nil }
        return sync.user.core.syncClient.session(for: configuration)
    }
}

extension User {
    /// The sync sessions of the user's open synced realms.
    public var allSessions: [SyncSession] { core.syncClient.sessions(of: self) }
}
