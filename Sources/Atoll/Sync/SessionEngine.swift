import AtollCore
import Atomics
import Foundation
import Logging

/// Drives one synced realm: runs the client's sync state machine (`ClientSession`, which holds
/// the session's sync state and makes its decisions: suspension, retries, resets), carries out
/// its actions over the app's connection and writes downloads, acknowledgements and resets to
/// the realm file. What it keeps besides is I/O: the realm, timers and waits in flight, what was
/// last written to the file, and the app's suspension request as it arrives (``suspensionRequested``).
/// Split by concern: `+Actions` (carrying out actions, downloads), `+Upload` (local commits,
/// waits), `+ClientReset`, `+FreshCopy`, `+ManualReset`.
actor SessionEngine {
    let id: SessionID
    let configuration: Realm.Configuration
    nonisolated let sync: SyncConfiguration
    let connection: SyncConnection
    nonisolated(unsafe) weak var publicSession: SyncSession?
    /// The state machine; nil until the session starts (and again once it stopped).
    var session: ClientSession?
    /// The `pendingGeneration` of the session's pending list as last written to the file.
    var savedPendingGeneration: UInt64?
    /// The pending reset as last written to the file.
    var savedPendingReset: PendingReset?
    var realm: Realm?
    var waits: [ClientSession.WaitID: CheckedContinuation<Void, Swift.Error>] = [:]
    var timers: [ClientSession.Timer: _Concurrency.Task<Void, Never>] = [:]
    var logger = Logging.Logger(label: "atoll.sync.session", factory: SharedLoggerHandler.init)
    /// Set when the user logged out or was removed: the engine never starts again.
    nonisolated let isStopped = ManagedAtomic<Bool>(false)
    /// The app's suspension request, recorded by `SyncSession.suspend()`/`resume()` at once, in
    /// the same step as the command is queued; the state machine takes the command in turn
    /// (`ClientSession.isSuspended`). Until then no upload leaves (``perform(_:)`` withholds it
    /// and tells the machine), and a session not created yet is not started.
    nonisolated let suspensionRequested = ManagedAtomic<Bool>(false)
    /// The last download progress the session reported (the upload progress is the session's own).
    var downloadProgress = ClientSession.TransferProgress(direction: .download, transferredBytes: 0, transferrableBytes: 0)
    /// The file's record of an automatic client reset the server has not confirmed yet (what it
    /// did and when, for the next reset's plan); the machine decides when it is confirmed.
    var pendingReset: PendingReset?
    /// What the last automatic client reset did (`SyncSession.lastClientReset`).
    nonisolated let resetOutcome = Locked<ClientResetOutcome?>(nil)
    /// Why the connection closed last: the NIO error a connection error reports as `underlying`.
    var lastConnectionFailure: ConnectionFailure?

    init(id: SessionID, configuration: Realm.Configuration, sync: SyncConfiguration, connection: SyncConnection) {
        self.id = id
        self.configuration = configuration
        self.sync = sync
        self.connection = connection
        logger.logLevel = .warning
    }

    // MARK: Life cycle

    func start(resuming: Bool = false) async {
        guard !isStopped.load(ordering: .acquiring), !suspensionRequested.load(ordering: .sequentiallyConsistent) else { return }
        do {
            if realm == nil {
                let realm = try Realm(configuration: configuration, confinement: .actor(self))
                realm.autorefresh = false
                self.realm = realm
                pendingReset = try realm.loadPendingReset()
                savedPendingReset = pendingReset
            }
            if session == nil {
                let token: String
                do {
                    token = try await sync.user.validAccessToken()
                } catch {
                    // Offline with an expired token: start anyway; the session binds with the stale
                    // token once connected, and the server's refusal makes it refresh the token.
                    guard sync.user.state == .loggedIn else { throw error }
                    token = sync.user.accessToken ?? ""
                }
                // The user may have logged out (or suspended) while the token was fetched.
                guard !isStopped.load(ordering: .acquiring), session == nil, !suspensionRequested.load(ordering: .sequentiallyConsistent),
                      let realm else { return }
                // The token was awaited: the app may have committed meanwhile (a newer
                // subscription set too). What the file saved plus what was committed after it.
                realm.refresh()
                let saved = try realm.loadSyncState()
                let unqueued = try realm.localChangesets(after: saved.queuedClientVersion)
                let session = ClientSession(
                    id: id, target: sync.target, accessToken: token, saved: saved, unqueued: unqueued,
                    unconfirmedReset: pendingReset.map { ClientSession.UnconfirmedReset(recoveredVersion: $0.recoveredVersion) },
                    configuration: ClientSession.Configuration(backoff: ReconnectBackoff(seed: UInt64.random(in: 0...UInt64.max))))
                self.session = session
                // The file holds the pending list unless commits were added to it here.
                savedPendingGeneration = unqueued.isEmpty ? session.pendingGeneration : nil
                if sync.enableFlexibleSync, let set = try realm.latestSubscriptionSet() {
                    _ = self.session?.changeQuerySet(version: set.version, queries: set.queries, after: set.clientVersion)
                }
                await connection.register(self, id: id)
                reportProgress(session.uploadProgress)
            }
            let isOpen = await connection.status == .open
            await run { resuming ? $0.resume(connectionIsOpen: isOpen) : $0.start(connectionIsOpen: isOpen) }
        } catch {
            // A logged-out user's session just does not start.
            guard sync.user.state == .loggedIn, !isStopped.load(ordering: .acquiring) else { return }
            report(SyncError(.clientInternalError, "the sync session of \(configuration.storageKey) could not start: \(error)",
                             underlying: error as? any Swift.Error & Sendable))
        }
    }

    /// `SyncSession.suspend()`: unbinds and stays inactive until `resume()`.
    func suspend() async {
        await run { $0.suspend() }
        publish()
    }

    /// `SyncSession.resume()`.
    func resume() async {
        await start(resuming: true)
        publish()
    }

    /// Why a session stopped: a logged-out user's sessions start again when it logs in; a file
    /// waiting for its reset or deletion action keeps its stopped session until the action ran.
    enum StopReason: UInt8, Sendable {
        case loggedOut
        case fileActionPending
    }

    /// Set with ``isStopped``.
    nonisolated let stopReason = ManagedAtomic<UInt8>(StopReason.loggedOut.rawValue)

    /// Ends the session for good: unbinds, cancels timers, fails waits.
    func stop(_ reason: StopReason = .loggedOut) async {
        stopReason.store(reason.rawValue, ordering: .releasing)
        isStopped.store(true, ordering: .releasing)
        await run { $0.suspend() }
        for timer in timers.values { timer.cancel() }
        timers = [:]
        let why = switch reason {
        case .loggedOut: "the user logged out"
        case .fileActionPending: "the session stopped: the realm needs a client reset or was refused (see the error handler)"
        }
        for (_, wait) in waits { wait.resume(throwing: SyncError(reason == .loggedOut ? .clientUserError : .clientResetError, why)) }
        waits = [:]
        await connection.unregister(id)
        session = nil
        realm = nil
        publicSession?.update(state: .inactive, connection: .disconnected)
    }

    /// `SyncSession.reconnect()`: a session waiting out a reconnect delay tries at once.
    func reconnect() async {
        await run { $0.reconnectNow() }
    }

    /// For a `.forCurrentlyOutstandingWork` progress notification: what is outstanding now.
    func snapshotProgress(_ direction: ClientSession.Direction) async {
        if direction == .upload { await localCommitted() }
        let progress = direction == .upload ? (session?.uploadProgress ?? ClientSession.TransferProgress(direction: .upload, transferredBytes: 0, transferrableBytes: 0)) : downloadProgress
        publicSession?.progressSnapshot(direction == .upload ? .upload : .download, SyncSession.Progress(progress))
    }

    func reportProgress(_ progress: ClientSession.TransferProgress) {
        if progress.direction == .download { downloadProgress = progress }
        publicSession?.reportProgress(progress.direction == .upload ? .upload : .download, SyncSession.Progress(progress))
    }

    // MARK: Connection

    func connectionOpened() async { await run { $0.connectionOpened() } }

    /// `reconnectAtOnce`: a drop of the open connection that reconnects without the backoff delay.
    func connectionClosed(failure: ConnectionFailure?, reconnectAtOnce: Bool = false) async {
        lastConnectionFailure = failure
        await run { $0.connectionClosed(error: failure?.message, code: failure?.code ?? .connectionFailed, reconnectAtOnce: reconnectAtOnce) }
    }

    func received(_ message: ServerMessage) async { await run { $0.received(message) } }

    // MARK: Reporting

    func report(_ error: SyncError) {
        // Connection failures are retried with backoff: logged, not alarming.
        guard error.code != .connectionFailed else {
            logger.info("\(error)")
            publicSession?.connectionFailed(error)
            return
        }
        if error.code == .tlsHandshakeFailed {
            // Retried with backoff too, but reported (as Realm does): retrying will not make the
            // certificate trusted. An asynchronous open that must not wait fails with it.
            publicSession?.connectionFailed(error)
        }
        // Reported to the app's handler too. Errors at error, as Realm logs them; a server warning
        // and a compensating write (the session goes on, the app decides) at warn.
        switch error.code {
        case .serverWarning, .writeRejected: logger.warning("\(error)")
        default: logger.error("\(error)")
        }
        sync.user.core.syncManager.report(error, session: publicSession)
    }

    func publish() {
        guard let session, !isStopped.load(ordering: .acquiring) else { return }
        let status = session.status
        let connection: SyncSession.ConnectionState = switch status.connection {
        case .disconnected: .disconnected
        case .connecting: .connecting
        case .connected: .connected
        }
        // A suspension the app asked for is shown at once (SyncSession.suspend()) and applied to
        // the session in order, after commands queued before it: until then the session still
        // reads active, and publishing that would flip the app's state back for a moment.
        let suspended = suspensionRequested.load(ordering: .sequentiallyConsistent)
        publicSession?.update(state: status.isActive && !suspended ? .active : .inactive, connection: connection)
    }
}

extension SyncSession.Progress {
    init(_ progress: ClientSession.TransferProgress) {
        self.init(transferredBytes: Int(clamping: progress.transferredBytes), transferrableBytes: Int(clamping: progress.transferrableBytes))
    }
}
