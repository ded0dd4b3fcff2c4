import AtollCore
import Foundation
import Logging

/// One client's WebSocket: reassembles frames into messages, checks their order, runs the sessions
/// bound on it and frames what the server answers (docs/protocol.md §2).
///
/// Everything a connection does happens on one task, one event at a time: frames from the client and
/// history fanned out by the ``SyncCoordinator`` arrive as ``Event``s on one stream, so a session's
/// downloads, acknowledgements and mark answers leave in a well-defined order.
final class SyncConnection {
    enum Event: Sendable {
        /// A binary WebSocket message: one frame of the sync protocol.
        case frame([UInt8])
        /// A text WebSocket message, which the protocol does not use.
        case textFrame
        /// New history of the realm a session is bound to.
        case history(SessionID, HistoryAdvance)
        /// An operator ended the session (sync terminated, user disabled).
        case end(ErrorMessage)
        /// An operator replaced the history of the session's realm (restore, breaking schema change).
        case reset(ResetRequired)
        /// The access token a session was bound (or last refreshed) with may have expired.
        case tokenExpiry(SessionID)
        /// The next chunk of a partly received message may be late (``partialMessage``).
        case chunkOverdue
    }

    /// What the server holds for one bound session besides its protocol record (the
    /// ``ServerSession`` in ``logic``): the realm, the user and the rules that apply, a timer.
    struct Session {
        var realm: StoredRealm
        var userID: String
        /// The device (login) of the access token: logging out there ends the session.
        var deviceID: String?
        /// Wakes the connection when the access token expires (``ServerSession/tokenExpires``).
        var expiryTimer: _Concurrency.Task<Void, Never>?
        /// The user as the app's permission rules see them (id, custom data, e-mail), at bind.
        var ruleUser: RuleUser
        /// The app's rules that apply to the user, one per type (``ServerConfiguration/App/rules(for:)``).
        var rules: [ServerConfiguration.PermissionRule]
        /// The generation of the app's settings the rules came from (``AppRegistry/Entry/generation``):
        /// once the app is replaced, the session's uploads are no longer integrated.
        var appGeneration: UInt64 = 0
        /// Flexible sync: what the client holds and subscribes to; nil for partition sync.
        var flexible: FlexibleView?
    }

    /// What stops a connection: a connection-level error sent, or the socket gone.
    struct Close: Error {}

    static let serverName = "atoll-server"
    /// Changeset bytes per download message (more when a single changeset is bigger).
    static let downloadMessageBytes = 1 << 20

    let id: UInt64
    let appID: String
    /// The app's settings as they are now (an app replaced through the admin API ends its
    /// sessions; new binds get the new settings).
    var app: ServerConfiguration.App { auth.apps.settings(forApp: appID) }
    let coordinator: SyncCoordinator
    let auth: AuthService
    let metrics: ServerMetrics
    let logger: Logger
    /// Writes frames to the socket, in order, and returns once they are written (its wait is the
    /// connection's backpressure: a client that stops reading stops the connection here).
    let writeFrames: @Sendable ([[UInt8]]) async throws -> Void
    let events: AsyncStream<Event>.Continuation
    /// Connection limits shared by the server's connections.
    let admission: SyncAdmission
    /// Frames received but not handled (the socket reader waits past its budget).
    let gate: InboundGate
    /// History notifications queued for this connection.
    let backlog: OutboundBacklog
    /// Since when the next chunk of a partly received message is awaited.
    let partialMessage: StallWatch
    /// The user whose budget of message bytes in flight this connection's messages count against
    /// (partly received, or received and being handled): the first one bound on it.
    var messageOwner: String?
    /// What this connection holds against `messageOwner`'s budget now (the shared count is only
    /// touched when this changes).
    private var heldBytes = 0
    /// Whether a session was ever bound here: until then only hello, bind and the like are decoded.
    var isAuthenticated = false
    /// Set when the connection ends with unread input it must not drain (a refused message's
    /// megabytes still to come): its socket is closed at once, not after a WebSocket close handshake.
    private(set) var closesWithoutDraining = false
    /// The most bytes of a message refused from its first chunk that are still read (and dropped)
    /// to keep the connection; a longer rest ends it.
    static let largestDrainedRest = 1 << 20
    /// When the start of a partly received message is read for a claim past its limits.
    var claimCheck = PartialClaimCheck()

    /// The order of messages, each bound session's protocol record, and the sessions the server
    /// ended (their late messages are dropped until the client binds the id again or unbinds it).
    var logic: ServerConnectionLogic
    var reassembler: MessageReassembler
    var framer: MessageFramer
    var sessions: [SessionID: Session] = [:]
    /// Frames of messages sent while handling events, written together (``flush()``): the downloads
    /// of one fan-out to this connection's sessions leave in one socket write, not one each.
    var outbox = Outbox()

    init(
        id: UInt64, appID: String, coordinator: SyncCoordinator, auth: AuthService,
        metrics: ServerMetrics, logger: Logger, limits: SyncLimits, admission: SyncAdmission, gate: InboundGate,
        partialMessage: StallWatch = StallWatch(),
        events: AsyncStream<Event>.Continuation, writeFrames: @escaping @Sendable ([[UInt8]]) async throws -> Void
    ) {
        self.admission = admission
        self.gate = gate
        self.partialMessage = partialMessage
        logic = ServerConnectionLogic(maxEndedSessions: admission.limits.sessionsPerConnection)
        backlog = OutboundBacklog(limit: admission.limits.outboundBacklog)
        self.id = id
        self.appID = appID
        self.coordinator = coordinator
        self.auth = auth
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "sync.connection"] = "\(id)"
        self.logger = logger
        self.events = events
        self.writeFrames = writeFrames
        // Small until a session is bound: an unauthenticated client cannot make the server hold much.
        reassembler = MessageReassembler(maxMessageBytes: admission.limits.unauthenticatedMessageBytes)
        framer = MessageFramer(maxFrameBytes: limits.outgoingFrameBytes)
    }

    /// Handles events until the client leaves or a connection-level error closes the connection.
    func run(_ stream: AsyncStream<Event>) async {
        do {
            for await event in stream {
                try await handle(event)
                // Written once nothing more is due at once: more history notifications queued
                // (the rest of a fan-out) add their downloads to the same write.
                if !backlog.hasQueued || outbox.isFull { try await flush() }
            }
        } catch {
            logger.debug("sync connection closed", metadata: ["reason": "\(error)"])
        }
        for id in Array(sessions.keys) { await removeSession(id, file: sessionRecord(id)?.file ?? .unassigned) }
    }

    /// Lets go of what the server holds for a session (its client file `file`): no more history
    /// for it, its client file seen now. Returns what it was.
    @discardableResult
    func removeSession(_ id: SessionID, file: FileIdent) async -> Session? {
        guard let session = sessions.removeValue(forKey: id) else { return nil }
        admission.releaseSession(id, connection: self.id)
        session.expiryTimer?.cancel()
        metrics.activeSessions.decrement()
        await coordinator.leave(realmID: session.realm.id, connection: self.id, session: id, fileIdent: file)
        return session
    }

    /// Session `id`'s protocol record.
    func sessionRecord(_ id: SessionID) -> ServerSession? { logic.sessions[id] }

    /// Whether session `id` identified (the connection's order logic is the one record of it).
    func isIdentified(_ id: SessionID) -> Bool { logic.sessions[id]?.state == .identified }

    /// Ends session `id` with "access token expired" when its token expired (at `expires`) and
    /// was not refreshed: the client refreshes it and binds again (docs/protocol.md §2.6).
    func scheduleTokenExpiry(_ id: SessionID) {
        guard sessions[id] != nil, let expires = sessionRecord(id)?.tokenExpires else { return }
        sessions[id]?.expiryTimer?.cancel()
        let events = self.events
        let clock = coordinator.clock
        let now = clock.now()
        // At least a tick (a clock that does not move must not make this spin), at most ten
        // seconds (the system clock may be set forward meanwhile).
        let deadline = now.addingTimeInterval(min(10, max(0.05, expires.timeIntervalSince(now))))
        sessions[id]?.expiryTimer = _Concurrency.Task {
            try? await clock.sleep(deadline)
            guard !_Concurrency.Task.isCancelled else { return }
            events.yield(.tokenExpiry(id))
        }
    }

    func handle(_ event: Event) async throws {
        switch event {
        case .textFrame:
            try await closeConnection(ProtocolError(.badFrame, "a text frame: the sync protocol uses binary frames only"))
        case .frame(let frame):
            defer { gate.leave(frame.count) }
            let bytes: [UInt8]?
            do { bytes = try reassembler.receive(frame) } catch { try await closeConnection(error) }
            try await holdPartialMessage()
            guard var bytes else {
                // The counts come first: a claim past its limits is refused from its first chunk,
                // and the rest of it is dropped as it arrives instead of being held.
                if isAuthenticated, claimCheck.isDue(reassembler), let refusal = flexibleClaimLimits.excess(in: reassembler.partialMessage) {
                    // Megabytes still to come are not read only to be dropped: the connection ends
                    // (the client retries later) and the socket closes without draining them.
                    if reassembler.remainingBytes > Self.largestDrainedRest {
                        metrics.countRefusal(limit: refusal.excess.limitName)
                        closesWithoutDraining = true
                        try await closeConnection(ProtocolError(.tryAgainLater, """
                            session \(refusal.session.rawValue): \(refusal.excess) (limits.\(refusal.excess.limitName)); \
                            the rest of message \(reassembler.expectedMessageID) was not read
                            """))
                    }
                    reassembler.discardRest()
                    try await holdPartialMessage()
                    try await refuseClaim(refusal)
                }
                return
            }
            if isAuthenticated, let refusal = flexibleClaimLimits.excess(in: bytes) {
                try await refuseClaim(refusal)
                return
            }
            guard isAuthenticated || ClientMessage.isAllowedBeforeBind(bytes) else {
                try await closeConnection(ProtocolError(.messageOutOfOrder, "no session is bound: only hello, bind, ident, mark and ping are read before one is"))
            }
            // A whole message counts against its owner's budget until it is handled (an upload may
            // wait for the store meanwhile): finished messages of many connections add up too.
            try await holdInFlight(bytes.count, what: "received messages")
            let message: ClientMessage
            do { message = try ClientMessage(decoding: bytes, maxElements: admission.limits.maxDecodedElements) } catch {
                try await closeConnection(error)
            }
            bytes = []
            try await handle(message)
            try await holdInFlight(0, what: "")
        case .history(let id, let advance):
            backlog.handled()
            if backlog.hasOverflowed {
                metrics.countRefusal(limit: "outboundBacklog")
                try await closeConnection(ProtocolError(.tryAgainLater, """
                    the client fell more than \(backlog.limit) history notifications behind: reconnect to resume \
                    from the last version it integrated
                    """))
            }
            try await historyAdvanced(id, advance)
        case .end(let error):
            guard let id = error.session, sessions[id] != nil else { return }
            try await endSession(error)
        case .chunkOverdue:
            let timeout = TimeInterval(admission.limits.messageChunkTimeoutSeconds)
            guard reassembler.isMidMessage, partialMessage.hasWaited(timeout, now: coordinator.now()) else { return }
            metrics.countRefusal(limit: "messageChunkTimeoutSeconds")
            try await closeConnection(ProtocolError(.tryAgainLater, """
                message \(reassembler.expectedMessageID) stalled: no chunk of it for \(Int(timeout)) s \
                (limits.messageChunkTimeoutSeconds)
                """))
        case .tokenExpiry(let id):
            guard sessions[id] != nil else { return }
            if try await endSessionIfTokenExpired(id) { return }
            scheduleTokenExpiry(id)
        case .reset(let reset):
            guard sessions[reset.session] != nil else { return }
            logger.info("client reset required", metadata: ["reason": "\(reset.reason)"])
            try await endSession(reset.session, answer: .resetRequired(reset))
        }
    }

    /// Ends session `id` with "access token expired" (201, the client refreshes and binds again)
    /// when its token expired and was not refreshed; returns whether it did.
    func endSessionIfTokenExpired(_ id: SessionID) async throws -> Bool {
        guard let session = sessions[id], sessionRecord(id)?.isTokenExpired(now: coordinator.now()) == true else { return false }
        logger.info("sync session's access token expired", metadata: ["user": "\(session.userID)"])
        try await endSession(ErrorMessage(
            code: .accessTokenExpired, message: "the access token expired and was not refreshed", session: id,
            epoch: session.realm.epoch))
        return true
    }

    func handle(_ message: ClientMessage) async throws {
        switch logic.receive(message) {
        case .handle:
            break
        case .drop:
            return  // the rest of what the client sent before it saw the error
        case .answerUnbound(let epoch):
            try await send(.unbound(Unbound(session: message.session!, epoch: epoch)))
            return
        case .unbound(let record):
            let session = await removeSession(record.id, file: record.file)
            try await send(.unbound(Unbound(session: record.id, epoch: session?.realm.epoch ?? .none)))
            return
        case .refuse(let error):
            if error.session == nil { try await closeConnection(error) }
            try await endSession(ErrorMessage(error, epoch: error.session.flatMap { sessions[$0]?.realm.epoch } ?? .none))
            return
        }
        // A session whose token expired takes nothing more but a new token (or its unbind).
        switch message {
        case .refreshAccessToken, .unbind: break
        default: if let id = message.session, try await endSessionIfTokenExpired(id) { return }
        }
        switch message {
        case .hello:
            try await send(.hello(ServerHello(version: logic.version ?? ProtocolVersion.current, serverName: Self.serverName)))
        case .ping(let ping):
            try await send(.pong(Pong(timestamp: ping.timestamp)))
        case .bind(let bind):
            try await self.bind(bind)
        case .ident(let ident):
            try await self.ident(ident)
        case .upload(let upload):
            try await self.upload(upload)
        case .mark(let mark):
            try await self.mark(mark)
        case .refreshAccessToken(let refresh):
            try await refreshAccessToken(refresh)
        case .unbind:
            break  // answered above (`.unbound`): an unbind of an unbound id is refused there
        case .heldObjects(let held):
            try await heldObjects(held)
        case .queryChange(let change):
            try await queryChange(change)
        }
    }

    // MARK: Sending

    /// Queues `message`'s frames for the next ``flush()`` (at once when the outbox is full). The
    /// event loop flushes after each event unless more history is queued.
    func send(_ message: ServerMessage) async throws {
        outbox.append(framer.frames(for: message.encoded()))
        if outbox.isFull { try await flush() }
    }

    /// Writes what ``send(_:)`` queued.
    func flush() async throws {
        guard !outbox.isEmpty else { return }
        try await writeFrames(outbox.take())
    }

    /// Sends a connection-level error and stops the connection.
    func closeConnection(_ error: ProtocolError) async throws -> Never {
        logger.info("closing sync connection", metadata: ["code": "\(error.code.rawValue)", "error": "\(error.message)"])
        try? await send(.error(ErrorMessage(code: error.code, message: error.message, action: error.action)))
        try? await flush()
        throw Close()
    }

    /// Counts what a partly received message holds against its owner's budget (and restarts the
    /// wait for its next chunk); closes the connection when the budget is spent.
    func holdPartialMessage() async throws {
        if reassembler.isMidMessage { partialMessage.begin(at: coordinator.now()) } else { partialMessage.end() }
        try await holdInFlight(reassembler.bufferedBytes, what: "partly received messages")
    }

    /// Records that this connection holds `bytes` of messages against its owner's budget (0:
    /// none); closes the connection when the user's connections would hold more than
    /// ``ServerConfiguration/Limits/messageBytesInFlightPerUser`` together.
    func holdInFlight(_ bytes: Int, what: String) async throws {
        guard let owner = messageOwner, bytes != heldBytes else { return }
        if let limit = admission.holdInFlight(bytes, user: owner, connection: id) {
            metrics.countRefusal(limit: limit)
            logger.notice("sync message refused: too many bytes in flight", metadata: ["user": "\(owner)", "limit": "\(limit)"])
            let whose = limit == "messageBytesInFlightPerUser" ? "of user \(owner) across its connections" : "from this client address"
            try await closeConnection(ProtocolError(.tryAgainLater, """
                too many bytes of \(what) \(whose) (limits.\(limit))
                """))
        }
        heldBytes = bytes
    }

    /// Sends a session error (or a reset) and ends the session on the server.
    func endSession(_ error: ErrorMessage) async throws {
        guard let id = error.session else {
            try await closeConnection(ProtocolError(error.code, error.message))
        }
        try await endSession(id, answer: .error(error))
    }

    func endSession(_ id: SessionID, answer: ServerMessage) async throws {
        let epoch = await removeSession(id, file: sessionRecord(id)?.file ?? .unassigned)?.realm.epoch ?? .none
        // Only ids the client bound: an error about an unknown id leaves nothing behind.
        logic.endSession(id, epoch: epoch)
        try await send(answer)
    }
}

/// Frames queued by a connection and written together: at most ``maxFrames`` frames or about
/// ``maxBytes`` bytes (one message's frames are queued whole, so a large download may exceed it).
struct Outbox {
    static let maxFrames = 64
    static let maxBytes = 256 << 10
    private(set) var frames: [[UInt8]] = []
    private(set) var bytes = 0

    var isEmpty: Bool { frames.isEmpty }
    var isFull: Bool { frames.count >= Self.maxFrames || bytes >= Self.maxBytes }

    mutating func append(_ more: [[UInt8]]) {
        frames += more
        for frame in more { bytes += frame.count }
    }

    /// The frames queued, in order; the outbox is empty after.
    mutating func take() -> [[UInt8]] {
        defer { frames = []; bytes = 0 }
        return frames
    }
}

/// Frame sizes of the sync endpoint (message sizes are in ``ServerConfiguration/Limits``).
struct SyncLimits: Sendable {
    /// The largest WebSocket frame the server accepts (hummingbird-websocket's `maxFrameSize`).
    var maxIncomingFrameBytes = 1 << 20
    /// The frames the server sends: the protocol's default frame limit, which every client accepts.
    var outgoingFrameBytes = 16 * 1024
}

/// When the start of a partly received message is read for a flexible-sync claim past its limits
/// (``FlexibleClaimLimits``): at its first chunk, and again each time what arrived of it doubled,
/// up to 64 KiB, so a message cut into tiny first chunks is found too, and the start is read
/// O(64 KiB) times in all, whatever its chunks.
struct PartialClaimCheck {
    /// The most of a message's start that is read for its counts.
    static let window = 64 << 10
    private var checkedBytes = 0

    /// Whether to read the start of `reassembler`'s partly received message now.
    mutating func isDue(_ reassembler: MessageReassembler) -> Bool {
        let size = reassembler.partialMessage.count
        if reassembler.receivedChunks == 1 { checkedBytes = 0 }
        guard size > 0, checkedBytes == 0 || (size >= 2 * checkedBytes && checkedBytes < Self.window) else { return false }
        checkedBytes = size
        return true
    }
}
