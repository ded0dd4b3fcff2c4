/// The client side of one synced realm's session, as a pure state machine: every input returns the
/// actions the shell (WebSocket, store, timers) must carry out, in order. No I/O, no clock.
///
/// ```swift
/// var session = ClientSession(id: 1, target: .partition(.string("tasks")), accessToken: token,
///                             checkpoint: saved, pending: unsynced)
/// perform(session.start(connectionIsOpen: false))        // [.requestConnection]
/// perform(session.connectionOpened())                    // [.send(.bind), .send(.ident)]
/// perform(session.received(message))                    // [.integrate(batch), .completeWait(id)…]
/// ```
///
/// Uploads are resent from the last acknowledged client version after every reconnect; the server
/// acknowledges by client version, so a resend is never applied twice.
public struct ClientSession: Sendable {
    public let id: SessionID
    public let target: SyncTarget
    public internal(set) var state: State = .inactive
    public internal(set) var checkpoint: Checkpoint
    public internal(set) var accessToken: String
    public internal(set) var configuration: Configuration
    /// Whether the shell's connection is open (as told by connectionOpened/Closed).
    public internal(set) var connectionIsOpen = false

    // Upload bookkeeping.
    /// Local changesets not yet acknowledged, in client version order.
    public internal(set) var pending: [UploadChangeset]
    var pendingSizes: [Int]
    /// Every client version up to this one is acknowledged.
    public internal(set) var acknowledgedClientVersion: Int64
    /// The newest local client version the session knows.
    public internal(set) var latestClientVersion: Int64
    /// The highest client version sent on the current connection.
    var sentClientVersion: Int64
    var uploadedBytes: UInt64 = 0

    // Download bookkeeping.
    var downloadedBytes: UInt64 = 0
    /// Messages of a download batch not yet complete (`isLastInBatch == false`).
    var partialBatch: [DownloadChangeset] = []
    /// The newest query set (flexible sync), sent after ident and on every change.
    public internal(set) var querySet: QueryChange?
    var querySetSent = false

    // Waits.
    var nextWaitID: UInt64 = 1
    var nextMarkID: UInt64 = 1
    /// Upload waits: complete when nothing up to the target client version is pending.
    var uploadWaits: [(id: WaitID, target: Int64)] = []
    /// Download waits, by mark request id.
    var downloadWaits: [UInt64: WaitID] = [:]

    // Reconnect.
    var timerGeneration: UInt64 = 0
    /// The delay a retry-later error asked for, used at the next disconnect.
    var requestedRetryDelay: Int64 = 0

    public init(id: SessionID, target: SyncTarget, accessToken: String, checkpoint: Checkpoint = .fresh,
                pending: [UploadChangeset] = [], configuration: Configuration = Configuration())
    {
        self.id = id
        self.target = target
        self.accessToken = accessToken
        self.checkpoint = checkpoint
        self.configuration = configuration
        let sorted = pending.sorted { $0.clientVersion < $1.clientVersion }
        self.pending = sorted
        pendingSizes = sorted.map { $0.changeset.encoded().count }
        let firstPending = sorted.first?.clientVersion ?? Int64.max
        latestClientVersion = sorted.last?.clientVersion ?? 0
        acknowledgedClientVersion = firstPending == Int64.max ? latestClientVersion : firstPending - 1
        sentClientVersion = acknowledgedClientVersion
        // A flexible session always sends a query set after ident: the server catches the client
        // up only once it knows what the client subscribes to (an empty set: nothing).
        if target == .flexible {
            querySet = QueryChange(session: id, querySetVersion: checkpoint.querySetVersion, queries: [])
        }
    }

    /// The delays the session hands out between reconnect attempts.
    public var backoff: ReconnectBackoff { configuration.backoff }

    // MARK: - Life cycle

    /// Starts (or resumes) syncing.
    public mutating func start(connectionIsOpen: Bool) -> [Action] {
        self.connectionIsOpen = connectionIsOpen
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

    /// Stops syncing until ``start(connectionIsOpen:)``: unbinds if bound. Waits stay pending.
    public mutating func suspend() -> [Action] {
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
    public mutating func connectionOpened() -> [Action] {
        connectionIsOpen = true
        guard state == .waitingForConnection else { return [] }
        return [.cancelTimer(.reconnect)] + bind()
    }

    /// The connection closed, or an attempt to open it failed (`error` says why; `nil` for a clean close).
    /// `code` is how the error is reported: ``SyncErrorCode/connectionFailed`` (only logged by the SDK)
    /// or ``SyncErrorCode/tlsHandshakeFailed`` (shown to the app); either way the session retries with backoff.
    public mutating func connectionClosed(error: String?, code: SyncErrorCode = .connectionFailed) -> [Action] {
        connectionIsOpen = false
        sentClientVersion = acknowledgedClientVersion
        partialBatch = []
        querySetSent = false
        switch state {
        case .binding, .active, .waitingForConnection:
            var actions: [Action] = []
            if let error {
                actions.append(.reportError(SessionError(code: code, message: error, action: .retryLater, isFatal: false)))
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
    public mutating func timerFired(_ timer: Timer, generation: UInt64) -> [Action] {
        guard timer == .reconnect, generation == timerGeneration, state == .waitingForConnection else { return [] }
        return connectionIsOpen ? bind() : [.requestConnection]
    }

    /// A new access token: sent at once when bound, else used by the next bind.
    public mutating func accessTokenRefreshed(_ token: String) -> [Action] {
        accessToken = token
        switch state {
        case .binding, .active:
            return [.send(.refreshAccessToken(RefreshAccessToken(session: id, accessToken: token)))]
        case .waitingForAccessToken:
            return connect()
        default:
            return []
        }
    }

    /// The shell could not write a download (the transaction failed): the session goes back to
    /// `checkpoint`, what the file holds, and binds again so the server sends what follows it
    /// again. Nothing the download held is taken as integrated.
    public mutating func downloadNotApplied(restoring checkpoint: Checkpoint) -> [Action] {
        self.checkpoint = checkpoint
        partialBatch = []
        sentClientVersion = acknowledgedClientVersion
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

    /// The shell ran the client reset: continue from the fresh copy's checkpoint, uploading the
    /// recovered changes (empty when they were discarded).
    public mutating func resetCompleted(_ checkpoint: Checkpoint, pending: [UploadChangeset]) -> [Action] {
        guard case .waitingForReset = state else { return [] }
        self.checkpoint = checkpoint
        let sorted = pending.sorted { $0.clientVersion < $1.clientVersion }
        self.pending = sorted
        pendingSizes = sorted.map { $0.changeset.encoded().count }
        latestClientVersion = max(latestClientVersion, sorted.last?.clientVersion ?? 0)
        acknowledgedClientVersion = (sorted.first?.clientVersion).map { $0 - 1 } ?? latestClientVersion
        sentClientVersion = acknowledgedClientVersion
        state = .inactive
        return completeUploadWaits() + connect()
    }

    /// Replaces the flexible-sync query set; sent at once when active.
    public mutating func changeQuerySet(version: Int64, queries: [TypeQuery]) -> [Action] {
        // Versions only grow: an older set read from a stale snapshot (a session starting while
        // the app commits a new set) must not follow the newer one to the server.
        if let current = querySet, current.querySetVersion > version { return [] }
        querySet = QueryChange(session: id, querySetVersion: version, queries: queries)
        querySetSent = false
        guard state == .active else { return [] }
        querySetSent = true
        return [.send(.queryChange(querySet!))]
    }

    // MARK: - Internal transitions

    var restartAfterUnbind = false

    mutating func connect() -> [Action] {
        if connectionIsOpen { return bind() }
        state = .waitingForConnection
        return [.requestConnection]
    }

    mutating func bind() -> [Action] {
        state = .binding
        partialBatch = []
        // A new bind starts from what the server acknowledged: what an earlier bind sent but never
        // got acknowledged (the server drops a dead bind's uploads) goes again after ident, and so
        // does the query set. A session stopped by an error and started again on the open
        // connection has seen no close that would have reset this.
        sentClientVersion = acknowledgedClientVersion
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
