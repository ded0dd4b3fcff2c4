import AtollCore
import Foundation
import Logging
import NIOCore
import NIOSSL

/// The one WebSocket an app keeps to its server, shared by every sync session of the app
/// (docs/protocol.md §2): frames are reassembled into messages and routed to sessions by id.
///
/// Its life — attempts, keep-alive, fast reconnect, linger — is decided by the pure
/// `ClientConnection` machine (``machine``); this actor carries out the machine's actions with
/// the WebSocket and timer tasks, and holds only I/O.
actor SyncConnection {
    typealias Status = ClientConnection.Status

    /// Where the connection goes; `move(toBaseURL:)` changes it.
    var url: String
    let appId: String
    /// PEM certificates trusted for `wss://` besides the system's roots.
    private let trustedRootCertificates: [String]
    private let logger: Logging.Logger
    /// The connection's life: status, attempts, keep-alive, fast reconnect, linger.
    private var machine: ClientConnection
    var status: Status { machine.status }
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
    /// answers the upgrade fails the attempt when it passes, and the sessions retry), the
    /// keep-alive's ping interval and pong timeout, the linger and the fast reconnect limit.
    private var timeouts: SyncTimeouts
    /// Custom headers and user agent of the app (`app.syncManager`), sent with the upgrade request.
    private let settings: RequestSettings
    /// The machine's timers, running.
    private var timers: [ClientConnection.Timer: _Concurrency.Task<Void, Never>] = [:]
    private var attempt: UInt64 { machine.attempt }

    /// What the open timeout is measured on.
    private let clock: WallClock

    init(baseURL: String, appId: String, trustedRootCertificates: [String] = [], timeouts: SyncTimeouts = SyncTimeouts(),
         settings: RequestSettings = RequestSettings(), clock: WallClock = .system) {
        self.trustedRootCertificates = trustedRootCertificates
        self.timeouts = timeouts
        self.settings = settings
        self.clock = clock
        self.appId = appId
        machine = ClientConnection(settings: timeouts.machineSettings)
        url = Self.syncURL(baseURL: baseURL, appId: appId)
        var logger = Logging.Logger(label: "atoll.sync", factory: SharedLoggerHandler.init)
        logger.logLevel = .warning
        self.logger = logger
    }

    /// The status, the attempt and how long it has been so (diagnostics: `SyncSession.diagnosticDescription()`).
    var statusDescription: String {
        "\(status) for \((now - machine.statusSince) / 1000) s (attempt \(attempt))"
    }

    func register(_ engine: SessionEngine, id: SessionID) {
        sessions[id] = engine
        perform(machine.sessionsChanged(to: sessions.count))
    }

    func unregister(_ id: SessionID) {
        sessions[id] = nil
        perform(machine.sessionsChanged(to: sessions.count))
    }

    /// New timeouts (`syncManager.timeoutOptions`): the next connection and keep-alive use them.
    func setTimeouts(_ timeouts: SyncTimeouts) {
        self.timeouts = timeouts
        machine.settings = timeouts.machineSettings
    }

    /// `customRequestHeaders` changed: an open connection closes, and the sessions reconnect
    /// (at once) with the new headers in their upgrade request.
    func reconnectForNewHeaders() {
        if status != .closed { logger.debug("sync connection to \(url): reconnecting to send new custom headers") }
        perform(machine.closeRequested())
    }

    /// The time the machine is told, in milliseconds since 1970.
    private var now: Int64 { Self.milliseconds(clock.now()) }

    /// Carries out the machine's actions. `failure` is what the sessions hear if the actions
    /// close the connection (a timeout among them supplies its own).
    private func perform(_ actions: [ClientConnection.Action], failure: ConnectionFailure? = nil) {
        var failure = failure
        for action in actions {
            switch action {
            case .connect(let attempt):
                connect(attempt: attempt)
            case .sendHello:
                // Message ids count from 0 on every connection (docs/protocol.md §2.1).
                framer = MessageFramer(maxFrameBytes: SyncConnection.maxFrameBytes)
                outbound = []
                // Queued here, before the sessions hear the connection is open and send binds.
                if enqueue(.hello(ClientHello(versions: ProtocolVersion.supported, userAgent: String(settings.userAgentHeader.prefix(200))))) {
                    _Concurrency.Task { await self.flush() }
                }
            case .sendPing(let ping):
                if enqueue(.ping(ping)) { _Concurrency.Task { await self.flush() } }
            case .scheduleTimer(let timer, let attempt, let delay):
                timers[timer]?.cancel()
                let clock = clock
                timers[timer] = _Concurrency.Task { [weak self] in
                    do { try await clock.sleep(for: TimeInterval(max(0, delay)) / 1000) } catch { return }
                    await self?.timerFired(timer, attempt: attempt)
                }
                if timer == .linger { logger.debug("sync connection to \(url): no session uses it; closing in \(delay / 1000) s unless one does") }
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .timedOut(let timeout):
                switch timeout {
                case .connect(let ms):
                    failure = ConnectionFailure(code: .connectionFailed,
                                                message: "connecting to \(url) timed out after \(Double(ms) / 1000) s (no WebSocket upgrade answer)")
                case .pong(let ms):
                    logger.warning("sync connection: no pong within \(Double(ms) / 1000) s; reconnecting")
                    failure = ConnectionFailure(code: .connectionFailed, message: "the server did not answer a ping within \(Double(ms) / 1000) s")
                }
            case .abandon:
                task?.cancel()  // an attempt stuck in its upgrade (the open timeout's case) is abandoned
                task = nil
                writer = nil
            case .close:
                close()
            case .notifyOpened:
                for engine in sessions.values { _Concurrency.Task { await engine.connectionOpened() } }
            case .notifyClosed(let atOnce):
                let heard = failure
                for engine in sessions.values { _Concurrency.Task { await engine.connectionClosed(failure: heard, reconnectAtOnce: atOnce) } }
            }
        }
    }

    private func timerFired(_ timer: ClientConnection.Timer, attempt: UInt64) {
        if timer == .linger, attempt == self.attempt { logger.debug("sync connection to \(url): linger time over") }
        perform(machine.timerFired(timer, attempt: attempt, now: now))
    }

    /// Tests only: the status and how many connection attempts were made.
    var statusForTesting: (status: Status, attempts: UInt64) { (status, attempt) }

    var registeredSessions: [SessionEngine] { Array(sessions.values) }

    /// Opens the connection if needed; sessions hear `connectionOpened` when it is up.
    func open() {
        perform(machine.open(now: now))
    }

    /// Starts attempt `attempt` (the machine's `.connect`): its end, or the machine's open
    /// timeout, whichever comes first, closes it.
    private func connect(attempt: UInt64) {
        let url = url
        let tlsConfiguration: TLSConfiguration?
        do {
            tlsConfiguration = try url.hasPrefix("wss://") ? Self.clientTLSConfiguration(trusting: trustedRootCertificates) : nil
        } catch {
            closed(failure: ConnectionFailure(code: .tlsHandshakeFailed, message: (error as? SyncError)?.message ?? "\(error)", underlying: error), attempt: attempt)
            return
        }
        let tcpConnectTimeout = TimeAmount.milliseconds(Int64(clamping: max(1, timeouts.connectMilliseconds)))
        var headers = RequestSettings.sendable(settings.headers).filter { $0.0.lowercased() != "user-agent" }.map { (name: $0.0, value: $0.1) }
        headers.append(("User-Agent", settings.userAgentHeader))
        logger.debug("sync connection to \(url): connecting (attempt \(attempt))")
        task = _Concurrency.Task { [weak self] in
            var failure: ConnectionFailure?
            let opened = OpenedFlag()
            do {
                try await WebSocketTransport.connect(
                    url: url, headers: headers, maxFrameSize: SyncConnection.maxFrameBytes + 64, tlsConfiguration: tlsConfiguration,
                    connectTimeout: tcpConnectTimeout
                ) { [weak self] inbound, writer in
                    guard let self else { return }
                    opened.set()
                    // An attempt the open timeout gave up on must not take over the connection.
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

    /// Closes the WebSocket (or gives up the attempt opening it); the sessions hear of it when
    /// the attempt ends.
    func close() {
        task?.cancel()
        if let writer { _Concurrency.Task { try? await writer.close(.normalClosure, reason: nil) } }
    }

    /// Attempt `attempt`'s WebSocket is up: it becomes the connection unless the machine gave the
    /// attempt up meanwhile (false: the caller lets it go).
    private func opened(_ writer: WebSocketWriter, attempt: UInt64) -> Bool {
        guard machine.isOpening(attempt) else { return false }
        self.writer = writer
        logger.debug("sync connection to \(url): open (attempt \(attempt))")
        perform(machine.opened(attempt: attempt, now: now))
        return true
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Attempt `attempt` ended; nothing happens if a newer one started since.
    private func closed(failure: ConnectionFailure?, attempt: UInt64) {
        guard attempt == self.attempt, status != .closed else { return }
        let wasOpen = status == .open
        if let failure {
            logger.debug("sync connection to \(url): \(wasOpen ? "lost" : "failed") (attempt \(attempt)): \(failure.message)")
        } else {
            logger.debug("sync connection to \(url): closed (attempt \(attempt))")
        }
        perform(machine.ended(attempt: attempt, now: now), failure: failure)
    }

    /// Ends the current attempt as lost (see `move(toBaseURL:)`).
    func dropped(reason: String) {
        perform(machine.drop(now: now), failure: ConnectionFailure(code: .connectionFailed, message: reason))
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
            machine.receivedPong(pong, now: now)
        } else if let id = message.session, let engine = sessions[id] {
            await engine.received(message)
        } else if case .error = message {
            for engine in sessions.values { await engine.received(message) }
        }
    }

    /// Sends one message, split into frames below the frame limit.
    func send(_ message: ClientMessage) async {
        guard enqueue(message) else { return }
        await flush()
    }

    /// Queues a message's frames (false without an open connection). A message's frames go out
    /// together and messages in the order queued: frames are queued at once and one caller at a
    /// time writes the queue (the actor may run other sends while a write waits).
    private func enqueue(_ message: ClientMessage) -> Bool {
        guard writer != nil else { return false }
        let encoded = message.encoded()
        if Logger.shared.accepts(.trace, Category.Sync.Client.changeset) {
            Logger.log(.trace, Category.Sync.Client.changeset, "sync connection to \(url): sending \(Self.describe(message)) (\(encoded.count) bytes)")
        }
        outbound.append(contentsOf: framer.frames(for: encoded))
        return true
    }

    /// Writes the queued frames, unless another caller is writing them already.
    private func flush() async {
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
