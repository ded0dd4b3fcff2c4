import AtollCore
import Foundation
import Logging
import NIOCore
import NIOSSL

/// The one WebSocket an app keeps to its server, shared by every sync session of the app
/// (docs/protocol.md §2): frames are reassembled into messages and routed to sessions by id.
actor SyncConnection {
    enum Status: Sendable { case closed, opening, open }

    /// Where the connection goes; `move(toBaseURL:)` changes it.
    var url: String
    let appId: String
    /// PEM certificates trusted for `wss://` besides the system's roots.
    private let trustedRootCertificates: [String]
    private let logger: Logging.Logger
    private(set) var status: Status = .closed
    /// When ``status`` last changed, for diagnostics.
    private var statusSince = Date()
    private var writer: WebSocketWriter?
    private var task: _Concurrency.Task<Void, Never>?
    private var sessions: [SessionID: SessionEngine] = [:]
    private var framer = MessageFramer(maxFrameBytes: SyncConnection.maxFrameBytes)
    /// Frames waiting to be written, in order, and the attempt whose connection a send is writing
    /// them to (a write stuck on a dead connection must not hold up the next one's).
    private var outbound: [[UInt8]] = []
    private var flushing: UInt64?
    static let maxFrameBytes = 256 * 1024
    /// The connect timeout (connecting and the WebSocket upgrade together: a server that never
    /// answers the upgrade fails the attempt when it passes, and the sessions retry) and the
    /// keep-alive's ping interval and pong timeout.
    private var timeouts: SyncTimeouts
    /// Custom headers and user agent of the app (`app.syncManager`), sent with the upgrade request.
    private let settings: RequestSettings
    /// Closes the connection once no session used it for `connectionLingerTime`.
    private var lingerTask: _Concurrency.Task<Void, Never>?
    /// Which drops of an open connection reconnect at once (`fastReconnectLimit`).
    private var fastReconnect = FastReconnectPolicy()
    /// Whether attempt `attempt`'s connection got open (a drop, not a failed attempt, when it closes).
    private var attemptOpened = false
    /// Pings on the open connection. A connection that stopped carrying data (a peer gone without
    /// a word, a black hole in the network) is dropped when no pong comes in time; a message lost
    /// on the way shows when the server sees the next ping's message id.
    private var keepAlive = ConnectionKeepAlive()
    private var keepAliveTask: _Concurrency.Task<Void, Never>?
    /// Counts attempts to open: what a stale attempt reports once a newer one started is ignored.
    private var attempt: UInt64 = 0

    /// What the open timeout is measured on.
    private let clock: WallClock

    init(baseURL: String, appId: String, trustedRootCertificates: [String] = [], timeouts: SyncTimeouts = SyncTimeouts(),
         settings: RequestSettings = RequestSettings(), clock: WallClock = .system) {
        self.trustedRootCertificates = trustedRootCertificates
        self.timeouts = timeouts
        self.settings = settings
        self.clock = clock
        self.appId = appId
        url = Self.syncURL(baseURL: baseURL, appId: appId)
        var logger = Logging.Logger(label: "atoll.sync", factory: SharedLoggerHandler.init)
        logger.logLevel = .warning
        self.logger = logger
    }

    /// The status, the attempt and how long it has been so (diagnostics: `SyncSession.diagnosticDescription()`).
    var statusDescription: String {
        "\(status) for \(Int(clock.now().timeIntervalSince(statusSince))) s (attempt \(attempt))"
    }

    func register(_ engine: SessionEngine, id: SessionID) {
        sessions[id] = engine
        // A session within the linger time reuses the open connection.
        if lingerTask != nil { logger.debug("sync connection to \(url): reused by a new session within the linger time") }
        lingerTask?.cancel()
        lingerTask = nil
    }

    func unregister(_ id: SessionID) {
        sessions[id] = nil
        if sessions.isEmpty, status != .closed { startLinger() }
    }

    /// New timeouts (`syncManager.timeoutOptions`): the next connection and keep-alive use them.
    func setTimeouts(_ timeouts: SyncTimeouts) { self.timeouts = timeouts }

    /// The last session left: the connection stays open for the linger time, then closes.
    private func startLinger() {
        lingerTask?.cancel()
        let attempt = attempt
        let clock = clock
        let linger = TimeInterval(timeouts.lingerMilliseconds) / 1000
        logger.debug("sync connection to \(url): no session uses it; closing in \(linger) s unless one does")
        lingerTask = _Concurrency.Task { [weak self] in
            do { try await clock.sleep(for: linger) } catch { return }
            await self?.lingerEnded(attempt: attempt)
        }
    }

    private func lingerEnded(attempt: UInt64) {
        guard attempt == self.attempt, sessions.isEmpty, status != .closed, lingerTask != nil else { return }
        lingerTask = nil
        logger.debug("sync connection to \(url): closed after the linger time")
        close()
    }

    /// `customRequestHeaders` changed: an open connection closes, and the sessions reconnect
    /// (at once) with the new headers in their upgrade request.
    func reconnectForNewHeaders() {
        guard status != .closed else { return }
        logger.debug("sync connection to \(url): reconnecting to send new custom headers")
        close()
    }

    /// Tests only: the status and how many connection attempts were made.
    var statusForTesting: (status: Status, attempts: UInt64) { (status, attempt) }

    var registeredSessions: [SessionEngine] { Array(sessions.values) }

    /// Opens the connection if needed; sessions hear `connectionOpened` when it is up.
    func open() {
        guard status == .closed else {
            if status == .open { notifyOpened() }
            return
        }
        status = .opening
        statusSince = clock.now()
        attempt += 1
        let attempt = attempt
        let url = url
        let logger = logger
        let tlsConfiguration: TLSConfiguration?
        do {
            tlsConfiguration = try url.hasPrefix("wss://") ? Self.clientTLSConfiguration(trusting: trustedRootCertificates) : nil
        } catch {
            closed(failure: ConnectionFailure(code: .tlsHandshakeFailed, message: (error as? SyncError)?.message ?? "\(error)", underlying: error), attempt: attempt)
            return
        }
        let openTimeout = TimeInterval(timeouts.connectMilliseconds) / 1000
        let tcpConnectTimeout = TimeAmount.milliseconds(Int64(clamping: max(1, timeouts.connectMilliseconds)))
        let clock = clock
        var headers = RequestSettings.sendable(settings.headers).filter { $0.0.lowercased() != "user-agent" }.map { (name: $0.0, value: $0.1) }
        headers.append(("User-Agent", settings.userAgentHeader))
        attemptOpened = false
        logger.debug("sync connection to \(url): connecting (attempt \(attempt))")
        task = _Concurrency.Task { [weak self] in
            var failure: ConnectionFailure?
            let opened = OpenedFlag()
            let watchdog = _Concurrency.Task { [weak self] in
                try? await clock.sleep(for: openTimeout)
                guard !_Concurrency.Task.isCancelled, !opened.isSet else { return }
                await self?.closed(failure: ConnectionFailure(
                    code: .connectionFailed, message: "connecting to \(url) timed out after \(openTimeout) s (no WebSocket upgrade answer)",
                    underlying: nil), attempt: attempt)
            }
            defer { watchdog.cancel() }
            do {
                try await WebSocketTransport.connect(
                    url: url, headers: headers, maxFrameSize: SyncConnection.maxFrameBytes + 64, tlsConfiguration: tlsConfiguration,
                    connectTimeout: tcpConnectTimeout
                ) { [weak self] inbound, writer in
                    guard let self else { return }
                    opened.set()
                    // An attempt the watchdog gave up on must not take over the connection.
                    guard await self.opened(writer, attempt: attempt) else { return }
                    var reassembler = MessageReassembler(maxMessageBytes: 256 << 20)
                    for try await frame in inbound {
                        let bytes = Array(frame.readableBytesView)
                        do {
                            if let message = try reassembler.receive(bytes) { await self.received(message) }
                        } catch {
                            await self.protocolFailure("\(error)")
                            return
                        }
                    }
                }
            } catch {
                failure = ConnectionFailure(error, url: url, opened: opened.isSet)
            }
            await self?.closed(failure: failure, attempt: attempt)
        }
    }

    /// The TLS settings of a `wss://` connection: the system's trust roots plus the app's own.
    static func clientTLSConfiguration(trusting pemCertificates: [String]) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        var roots: [NIOSSLCertificate] = []
        for (index, pem) in pemCertificates.enumerated() {
            let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            guard let certificates, !certificates.isEmpty else {
                throw SyncError(.tlsHandshakeFailed, "AppConfiguration.trustedRootCertificates[\(index)] is not a PEM certificate")
            }
            roots += certificates
        }
        if !roots.isEmpty { configuration.additionalTrustRoots = [.certificates(roots)] }
        return configuration
    }

    func close() {
        task?.cancel()
        keepAliveTask?.cancel()
        if let writer { _Concurrency.Task { try? await writer.close(.normalClosure, reason: nil) } }
    }

    private func opened(_ writer: WebSocketWriter, attempt: UInt64) async -> Bool {
        guard attempt == self.attempt, status == .opening else { return false }
        // Message ids count from 0 on every connection (docs/protocol.md §2.1).
        framer = MessageFramer(maxFrameBytes: SyncConnection.maxFrameBytes)
        outbound = []
        self.writer = writer
        status = .open
        statusSince = clock.now()
        attemptOpened = true
        logger.debug("sync connection to \(url): open (attempt \(attempt))")
        await send(.hello(ClientHello(versions: ProtocolVersion.supported, userAgent: String(settings.userAgentHeader.prefix(200)))))
        startKeepAlive(attempt: attempt)
        notifyOpened()
        return true
    }

    /// Pings from now on, the first at once (it measures the round trip).
    private func startKeepAlive(attempt: UInt64) {
        keepAlive = ConnectionKeepAlive(
            intervalMilliseconds: timeouts.pingIntervalMilliseconds, timeoutMilliseconds: timeouts.pongTimeoutMilliseconds)
        keepAliveTask?.cancel()
        let clock = clock
        keepAliveTask = _Concurrency.Task { [weak self] in
            while !_Concurrency.Task.isCancelled {
                guard let deadline = await self?.keepAliveTick(attempt: attempt) else { return }
                do { try await clock.sleep(Date(timeIntervalSince1970: TimeInterval(deadline) / 1000)) } catch { return }
            }
        }
    }

    /// Sends the ping that is due or drops a connection whose pong is late; returns when to look
    /// again (milliseconds since 1970), nil once attempt `attempt`'s connection is gone.
    private func keepAliveTick(attempt: UInt64) async -> Int64? {
        guard attempt == self.attempt, status == .open else { return nil }
        let now = Self.milliseconds(clock.now())
        switch keepAlive.tick(now: now) {
        case .idle: break
        case .sendPing(let ping): await send(.ping(ping))
        case .timedOut:
            let seconds = Double(timeouts.pongTimeoutMilliseconds) / 1000
            logger.warning("sync connection: no pong within \(seconds) s; reconnecting")
            closed(failure: ConnectionFailure(code: .connectionFailed, message: "the server did not answer a ping within \(seconds) s"),
                   attempt: attempt)
            return nil
        }
        return keepAlive.nextDeadline ?? now + timeouts.pingIntervalMilliseconds
    }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    private func notifyOpened() {
        for engine in sessions.values { _Concurrency.Task { await engine.connectionOpened() } }
    }

    /// Attempt `attempt` ended (or timed out); nothing happens if a newer one started since.
    private func closed(failure: ConnectionFailure?, attempt: UInt64) {
        guard attempt == self.attempt, status != .closed else { return }
        task?.cancel()  // an attempt stuck in its upgrade (the watchdog's case) is abandoned
        keepAliveTask?.cancel()
        keepAliveTask = nil
        let wasOpen = status == .open && attemptOpened
        status = .closed
        statusSince = clock.now()
        writer = nil
        task = nil
        lingerTask?.cancel()
        lingerTask = nil
        // A drop of an open connection reconnects at once, once per `fastReconnectLimit`; failed
        // attempts and further drops within the limit wait out the backoff.
        let atOnce = wasOpen && fastReconnect.dropped(at: clock.now(), limitMilliseconds: timeouts.fastReconnectLimitMilliseconds)
        if let failure {
            logger.debug("sync connection to \(url): \(wasOpen ? "lost" : "failed") (attempt \(attempt)): \(failure.message)")
        } else {
            logger.debug("sync connection to \(url): closed (attempt \(attempt))")
        }
        for engine in sessions.values { _Concurrency.Task { await engine.connectionClosed(failure: failure, reconnectAtOnce: atOnce) } }
    }

    /// Ends the current attempt as lost (see `move(toBaseURL:)`).
    func dropped(reason: String) {
        closed(failure: ConnectionFailure(code: .connectionFailed, message: reason), attempt: attempt)
    }

    private func protocolFailure(_ message: String) async {
        logger.error("sync connection: \(message)")
        try? await writer?.close(.protocolError, reason: String(message.prefix(100)))
    }

    private func received(_ bytes: [UInt8]) async {
        let message: ServerMessage
        do {
            message = try ServerMessage(decoding: bytes)
        } catch {
            await protocolFailure("undecodable server message: \(error)")
            return
        }
        if Logger.shared.accepts(.trace, Category.Sync.Client.changeset) {
            Logger.log(.trace, Category.Sync.Client.changeset, "sync connection to \(url): received \(Self.describe(message)) (\(bytes.count) bytes)")
        }
        if case .pong(let pong) = message {
            keepAlive.receivedPong(pong, now: Self.milliseconds(clock.now()))
        } else if let id = message.session, let engine = sessions[id] {
            await engine.received(message)
        } else if case .error = message {
            for engine in sessions.values { await engine.received(message) }
        }
    }

    /// Sends one message, split into frames below the frame limit.
    func send(_ message: ClientMessage) async {
        guard writer != nil else { return }
        // A message's frames go out together and messages in the order sent: frames are queued
        // at once and one caller at a time writes the queue (the actor may run other sends while
        // a write waits).
        let encoded = message.encoded()
        if Logger.shared.accepts(.trace, Category.Sync.Client.changeset) {
            Logger.log(.trace, Category.Sync.Client.changeset, "sync connection to \(url): sending \(Self.describe(message)) (\(encoded.count) bytes)")
        }
        outbound.append(contentsOf: framer.frames(for: encoded))
        let current = attempt
        guard flushing != current else { return }
        flushing = current
        defer { if flushing == current { flushing = nil } }
        while attempt == current, !outbound.isEmpty, let writer {
            let frame = outbound.removeFirst()
            do {
                try await writer.write(frame)
            } catch {
                logger.warning("sync connection: send failed: \(error)")
                if attempt == current { outbound = [] }
                return
            }
        }
    }
}

extension SyncConnection {
    /// A message's kind and size in one phrase for a log line: never its content (no token, no value).
    static func describe(_ message: ClientMessage) -> String {
        let session = message.session.map { " of session \($0.rawValue)" } ?? ""
        return switch message {
        case .hello: "hello"
        case .bind: "bind\(session)"
        case .ident: "ident\(session)"
        case .upload(let upload): "upload of \(upload.changesets.count) changeset(s)\(session)"
        case .mark: "mark\(session)"
        case .queryChange(let change): "query set version \(change.querySetVersion)\(session)"
        case .refreshAccessToken: "access token refresh\(session)"
        case .unbind: "unbind\(session)"
        case .ping: "ping"
        case .heldObjects(let held): "held objects (\(held.objects.count))\(session)"
        }
    }

    static func describe(_ message: ServerMessage) -> String {
        let session = message.session.map { " for session \($0.rawValue)" } ?? ""
        return switch message {
        case .hello: "hello"
        case .identAnswer: "ident answer\(session)"
        case .resetRequired: "client reset request\(session)"
        case .uploadAck: "upload acknowledgement\(session)"
        case .download(let download): "download of \(download.changesets.count) changeset(s)\(session)"
        case .markAnswer: "mark answer\(session)"
        case .queryError: "query set error\(session)"
        case .unbound: "unbound\(session)"
        case .pong: "pong"
        case .error: "error\(session)"
        }
    }
}
