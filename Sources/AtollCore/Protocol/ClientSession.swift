/// The client side of one synced realm's session, as a pure state machine: every input returns the
/// actions the shell (WebSocket, store, timers) must carry out, in order. No I/O, no clock.
///
/// It is the one place that holds the client's sync state: its place in the server's history,
/// the local changesets the server has not sent back yet (rebased over every download, in
/// ``merger``), what was acknowledged, what was uploaded on the current bind, the decision to
/// reset and whether an applied reset is confirmed yet, whether the app suspended the session,
/// the reconnect and token-refresh retries, and what the session reports as its state
/// (``status``). The shell saves ``savedState`` with the data it describes, and keeps no sync
/// state of its own.
///
/// ```swift
/// var session = ClientSession(id: 1, target: .partition(.string("tasks")), accessToken: token,
///                             saved: stateFromTheFile, unqueued: commitsAfterIt)
/// perform(session.start(connectionIsOpen: false))        // [.requestConnection]
/// perform(session.connectionOpened())                    // [.send(.bind), .send(.ident)]
/// perform(session.received(message))                    // [.integrate(batch), .completeWait(id)…]
/// // .integrate(batch), inside the shell's write transaction, on a copy kept if it commits:
/// let toApply = copy.integrate(batch, raced: commitsTheWriteFound)
/// perform(copy.downloadApplied())                        // [.send(.upload(…))…]
/// ```
///
/// Every upload carries all pending changesets on one base (docs/merge.md). Within one bind the
/// server takes each client version once, so while a changeset uploaded on this bind has not come
/// back in a download, the next upload waits for it. A new bind uploads again from the pending
/// list; the server skips what it integrated already.
package struct ClientSession: Sendable {
    package let id: SessionID
    package let target: SyncTarget
    package internal(set) var state: State = .inactive
    /// The place in the server's history the file holds (advanced when a download is applied).
    package internal(set) var checkpoint: Checkpoint
    package internal(set) var accessToken: String
    package internal(set) var configuration: Configuration
    /// Whether the shell's connection is open (as told by connectionOpened/Closed).
    package internal(set) var connectionIsOpen = false
    /// The app suspended the session (``suspend()``) and has not resumed it: nothing binds,
    /// nothing is uploaded, until ``resume(connectionIsOpen:)``.
    package internal(set) var isSuspended = false
    /// A client reset applied to the file that the server has not confirmed yet (it survives a
    /// restart in the file; the shell hands it over at init). See ``UnconfirmedReset``.
    package internal(set) var unconfirmedReset: UnconfirmedReset?

    // Upload bookkeeping.
    /// The local changesets the server has not sent back yet, on top of its server version.
    package internal(set) var merger: ClientMerger
    /// Every client version up to this one is acknowledged.
    package internal(set) var acknowledgedClientVersion: Int64
    /// The newest local client version handed to the session.
    package internal(set) var queuedClientVersion: Int64
    /// The newest client version uploaded on the current bind.
    package internal(set) var uploadedOnBind: Int64 = 0
    /// The newest of the client's own versions a download brought back: the server has it.
    var echoedClientVersion: Int64 = 0
    /// The encoded size of each pending changeset not yet acknowledged, by client version.
    var unacknowledgedSizes: [Int64: Int] = [:]
    var uploadedBytes: UInt64 = 0
    /// Counts the changes of the pending list, so a shell saves it only when it changed.
    package internal(set) var pendingGeneration: UInt64 = 0

    // Download bookkeeping.
    var downloadedBytes: UInt64 = 0
    /// The server version the last complete download reached (ahead of ``checkpoint`` until applied).
    var receivedServerVersion: Int64
    /// Messages of a download batch not yet complete (`isLastInBatch == false`).
    var partialBatch: [DownloadChangeset] = []
    /// The newest query set (flexible sync), sent after ident and on every change.
    package internal(set) var querySet: QueryChange?
    var querySetSent = false
    /// Local changesets before this client version were written under the previous query set:
    /// until the set is sent they go first, and none after it does (the server checks a write
    /// against the set the session has when the write arrives).
    var querySetBoundary: Int64 = 0

    // Waits.
    var nextWaitID: UInt64 = 1
    var nextMarkID: UInt64 = 1
    /// Upload waits: complete when nothing up to the target client version is unacknowledged.
    var uploadWaits: [(id: WaitID, target: Int64)] = []
    /// Download waits, by mark request id.
    var downloadWaits: [UInt64: WaitID] = [:]

    // Reconnect and token refresh.
    /// The generation of the reconnect timer scheduled last: a timer of an older one is stale.
    package internal(set) var timerGeneration: UInt64 = 0
    var accessTokenRetryGeneration: UInt64 = 0
    /// Refreshes of the access token that failed since the last success, for the retry delay.
    package internal(set) var accessTokenRefreshFailures = 0
    /// The delay a retry-later error asked for, used at the next disconnect.
    var requestedRetryDelay: Int64 = 0

    /// A session starting from what the file saved, plus the local changesets committed after
    /// `saved.queuedClientVersion` (in client version order).
    package init(id: SessionID, target: SyncTarget, accessToken: String, saved: ClientSyncState = ClientSyncState(),
                unqueued: [Changeset] = [], querySetVersion: Int64 = 0, unconfirmedReset: UnconfirmedReset? = nil,
                configuration: Configuration = Configuration())
    {
        self.id = id
        self.unconfirmedReset = unconfirmedReset
        self.target = target
        self.accessToken = accessToken
        self.configuration = configuration
        checkpoint = Checkpoint(fileIdent: saved.fileIdent, serverVersion: saved.serverVersion, epoch: saved.epoch,
                                querySetVersion: querySetVersion)
        receivedServerVersion = saved.serverVersion
        merger = ClientMerger(fileIdent: saved.fileIdent.ident, serverVersion: saved.serverVersion, isFlexible: target == .flexible)
        acknowledgedClientVersion = 0
        queuedClientVersion = 0
        adopt(saved)
        for changeset in unqueued where changeset.version > queuedClientVersion { record(changeset) }
        // A flexible session always sends a query set after ident: the server catches the client
        // up only once it knows what the client subscribes to (an empty set: nothing).
        if target == .flexible {
            querySet = QueryChange(session: id, querySetVersion: checkpoint.querySetVersion, queries: [])
        }
    }

    /// What the file must hold for the session to start again from here.
    package var savedState: ClientSyncState {
        ClientSyncState(fileIdent: checkpoint.fileIdent, serverVersion: checkpoint.serverVersion, epoch: checkpoint.epoch,
                        acknowledgedClientVersion: acknowledgedClientVersion, queuedClientVersion: queuedClientVersion,
                        pending: merger.pending)
    }

    /// The pending changesets the server has not acknowledged (what a client reset recovers).
    package var unacknowledged: [Changeset] { merger.pending.filter { $0.version > acknowledgedClientVersion } }

    /// Takes over a saved state: the place in the history and the pending changesets.
    mutating func adopt(_ saved: ClientSyncState) {
        checkpoint.fileIdent = saved.fileIdent
        checkpoint.serverVersion = saved.serverVersion
        checkpoint.epoch = saved.epoch
        receivedServerVersion = saved.serverVersion
        merger = ClientMerger(fileIdent: saved.fileIdent.ident, serverVersion: saved.serverVersion, pending: saved.pending,
                              isFlexible: target == .flexible)
        acknowledgedClientVersion = saved.acknowledgedClientVersion
        queuedClientVersion = max(saved.queuedClientVersion, saved.pending.last?.version ?? 0, saved.acknowledgedClientVersion)
        uploadedOnBind = 0
        echoedClientVersion = 0
        unacknowledgedSizes = [:]
        for changeset in saved.pending where changeset.version > acknowledgedClientVersion {
            unacknowledgedSizes[changeset.version] = changeset.encoded().count
        }
        pendingGeneration &+= 1
    }

    /// What the session reports to the app (`SyncSession.state` and `connectionState`).
    package var status: Status {
        let connection: Status.Connection = switch state {
        case .inactive, .failed: .disconnected
        case .waitingForConnection, .binding, .waitingForAccessToken: .connecting
        case .active, .waitingForReset, .dying: .connected
        }
        let isActive = switch state {
        case .waitingForConnection, .binding, .active, .waitingForAccessToken, .dying: !isSuspended
        case .inactive, .waitingForReset, .failed: false
        }
        return Status(isActive: isActive, connection: connection)
    }

    /// The delays the session hands out between reconnect attempts.
    package var backoff: ReconnectBackoff { configuration.backoff }

    // MARK: - Life cycle

    /// Starts syncing (nothing while the app keeps the session suspended).
    package mutating func start(connectionIsOpen: Bool) -> [Action] {
        self.connectionIsOpen = connectionIsOpen
        guard !isSuspended else { return [] }
        switch state {
        case .inactive, .failed:
            return connect()
        case .dying:
            // The unbind is on its way; bind again once the server answered it.
            state = .dying
            restartAfterUnbind = true
            return []
        case .waitingForConnection, .binding, .active, .waitingForAccessToken, .waitingForReset:
            return []
        }
    }

    /// The app suspends the session: it unbinds if bound and stays inactive, whatever happens
    /// meanwhile (a reset completing, a download failing, a token arriving), until
    /// ``resume(connectionIsOpen:)``. Waits stay pending.
    package mutating func suspend() -> [Action] {
        isSuspended = true
        return stop()
    }

    /// The app resumes a suspended session: it binds again (the pending list is uploaded again
    /// on the new bind).
    package mutating func resume(connectionIsOpen: Bool) -> [Action] {
        isSuspended = false
        return start(connectionIsOpen: connectionIsOpen)
    }

    /// The shell withheld an upload this session asked it to send, and every upload or query
    /// set after it in the same actions (the app suspended the session on another thread after
    /// the upload was decided): the session takes them as never sent, so that the next upload on
    /// this bind starts with them (or a new bind sends them), no version skipped.
    package mutating func withheld(uploadFrom clientVersion: Int64, querySet: Bool) {
        uploadedOnBind = min(uploadedOnBind, clientVersion - 1)
        if querySet { querySetSent = false }
    }

    /// Stops syncing until ``start(connectionIsOpen:)``: unbinds if bound. Waits stay pending.
    mutating func stop() -> [Action] {
        restartAfterUnbind = false
        switch state {
        case .binding, .active:
            state = .dying
            return [.send(.unbind(id))]
        case .waitingForConnection, .waitingForAccessToken:
            state = .inactive
            return [.cancelTimer(.reconnect)]
        case .inactive, .dying, .failed, .waitingForReset:
            return []
        }
    }

    /// The connection is open and its hello answered.
    package mutating func connectionOpened() -> [Action] {
        connectionIsOpen = true
        guard state == .waitingForConnection else { return [] }
        return [.cancelTimer(.reconnect)] + bind()
    }

    /// The connection closed, or an attempt to open it failed (`error` says why; `nil` for a clean close).
    /// `code` is how the error is reported: ``SyncErrorCode/connectionFailed`` (only logged by the SDK)
    /// or ``SyncErrorCode/tlsHandshakeFailed`` (shown to the app); either way the session retries with backoff.
    ///
    /// With `reconnectAtOnce` (a drop of an open connection the shell allows a fast reconnect
    /// for) the first attempt is made at once, without a backoff delay.
    package mutating func connectionClosed(error: String?, code: SyncErrorCode = .connectionFailed,
                                          reconnectAtOnce: Bool = false) -> [Action] {
        connectionIsOpen = false
        partialBatch = []
        querySetSent = false
        switch state {
        case .binding, .active, .waitingForConnection:
            var actions: [Action] = []
            if let error {
                actions.append(.reportError(SessionError(code: code, message: error, action: .retryLater, isFatal: false)))
            }
            if reconnectAtOnce && requestedRetryDelay == 0 {
                state = .waitingForConnection
                timerGeneration += 1
                return actions + [.scheduleTimer(.reconnect, generation: timerGeneration, afterMilliseconds: 0)]
            }
            return actions + scheduleReconnect()
        case .dying:
            state = .inactive
            return restartIfRequested()
        case .inactive, .waitingForAccessToken, .waitingForReset, .failed:
            return []
        }
    }

    /// A timer the session scheduled fired; stale generations are ignored.
    package mutating func timerFired(_ timer: Timer, generation: UInt64) -> [Action] {
        switch timer {
        case .reconnect:
            guard generation == timerGeneration, state == .waitingForConnection else { return [] }
            return connectionIsOpen ? bind() : [.requestConnection]
        case .accessTokenRetry:
            guard generation == accessTokenRetryGeneration, state == .waitingForAccessToken else { return [] }
            return [.refreshAccessToken]
        }
    }

    /// The app asks to reconnect now (`SyncSession.reconnect()`): a session waiting out a
    /// reconnect delay tries at once; any other state stays as it is.
    package mutating func reconnectNow() -> [Action] {
        guard state == .waitingForConnection else { return [] }
        timerGeneration += 1  // a timer already firing is stale
        return [.cancelTimer(.reconnect)] + (connectionIsOpen ? bind() : [.requestConnection])
    }

    /// The shell could not get a new access token (the auth server is unreachable, say) while
    /// the user stays logged in: ask again after a delay that doubles per failure (1 s … 30 s).
    package mutating func accessTokenRefreshFailed() -> [Action] {
        guard state == .waitingForAccessToken else { return [] }
        accessTokenRefreshFailures += 1
        accessTokenRetryGeneration += 1
        let seconds = min(30, 1 << (min(accessTokenRefreshFailures, 6) - 1))
        return [.scheduleTimer(.accessTokenRetry, generation: accessTokenRetryGeneration, afterMilliseconds: Int64(seconds) * 1000)]
    }

    /// A new access token: sent at once when bound, else used by the next bind.
    package mutating func accessTokenRefreshed(_ token: String) -> [Action] {
        accessToken = token
        accessTokenRefreshFailures = 0
        switch state {
        case .binding, .active:
            return [.send(.refreshAccessToken(RefreshAccessToken(session: id, accessToken: token)))]
        case .waitingForAccessToken:
            return connect()
        default:
            return []
        }
    }

    /// The shell could not write a download (the transaction failed): the session stays at its
    /// ``checkpoint``, what the file holds, and binds again so the server sends what follows it
    /// again. Nothing the download held is taken as integrated.
    package mutating func downloadNotApplied() -> [Action] {
        receivedServerVersion = checkpoint.serverVersion
        partialBatch = []
        switch state {
        case .binding, .active:
            state = .dying
            restartAfterUnbind = true
            return [.send(.unbind(id))]
        case .dying:
            restartAfterUnbind = true
            return []
        case .inactive, .waitingForConnection, .waitingForAccessToken, .waitingForReset, .failed:
            return []
        }
    }

    /// The shell ran the client reset and saved `saved` (and `reset`, what confirms it, in the
    /// same transaction): continue from there, uploading the recovered changes (committed after
    /// `saved.queuedClientVersion`, handed over as commits).
    package mutating func resetCompleted(_ saved: ClientSyncState, unconfirmed reset: UnconfirmedReset? = nil) -> [Action] {
        guard case .waitingForReset = state else { return [] }
        unconfirmedReset = reset
        adopt(saved)
        checkpoint.querySetVersion = 0
        state = .inactive
        return completeUploadWaits() + connect()
    }

    /// Replaces the flexible-sync query set, committed locally as client version `clientVersion`:
    /// sent when active, once every local changeset before that version was sent (they were
    /// written under the previous set); the changesets after it follow the set.
    package mutating func changeQuerySet(version: Int64, queries: [TypeQuery], after clientVersion: Int64 = 0) -> [Action] {
        // Versions only grow: an older set read from a stale snapshot (a session starting while
        // the app commits a new set) must not follow the newer one to the server.
        if let current = querySet, current.querySetVersion > version { return [] }
        querySet = QueryChange(session: id, querySetVersion: version, queries: queries)
        querySetBoundary = clientVersion
        querySetSent = false
        return uploadsAndQuerySet()
    }

    // MARK: - Internal transitions

    var restartAfterUnbind = false

    mutating func connect() -> [Action] {
        guard !isSuspended else {
            state = .inactive
            return []
        }
        if connectionIsOpen { return bind() }
        state = .waitingForConnection
        return [.requestConnection]
    }

    mutating func bind() -> [Action] {
        state = .binding
        partialBatch = []
        receivedServerVersion = checkpoint.serverVersion
        // A new bind uploads the pending list again after ident (the server drops a dead bind's
        // uploads and skips what it integrated), and sends the query set again. A session stopped
        // by an error and started again on the open connection has seen no close that would have
        // reset this.
        uploadedOnBind = 0
        querySetSent = false
        return [
            .send(.bind(Bind(session: id, target: target, accessToken: accessToken))),
            .send(.ident(Ident(session: id, fileIdent: checkpoint.fileIdent, lastServerVersion: checkpoint.serverVersion,
                               epoch: checkpoint.epoch, querySetVersion: checkpoint.querySetVersion))),
        ]
    }

    mutating func scheduleReconnect() -> [Action] {
        state = .waitingForConnection
        let delay = max(configuration.backoff.nextDelay(), requestedRetryDelay)
        requestedRetryDelay = 0
        timerGeneration += 1
        return [.scheduleTimer(.reconnect, generation: timerGeneration, afterMilliseconds: delay)]
    }

    mutating func restartIfRequested() -> [Action] {
        guard restartAfterUnbind else { return [] }
        restartAfterUnbind = false
        return connect()
    }

    /// Stops the session for good: reports the error and fails every wait.
    mutating func fail(_ error: SessionError, unbind: Bool) -> [Action] {
        state = .failed(error)
        var actions: [Action] = [.cancelTimer(.reconnect)]
        if unbind && connectionIsOpen { actions.append(.send(.unbind(id))) }
        actions.append(.reportError(error))
        for wait in uploadWaits { actions.append(.failWait(wait.id, error)) }
        for (_, wait) in downloadWaits.sorted(by: { $0.key < $1.key }) { actions.append(.failWait(wait, error)) }
        uploadWaits = []
        downloadWaits = [:]
        return actions
    }
}
