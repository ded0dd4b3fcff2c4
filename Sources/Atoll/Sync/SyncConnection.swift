import AtollCore
import Foundation
import HummingbirdWSClient
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
    private var writer: WebSocketOutboundWriter?
    private var task: _Concurrency.Task<Void, Never>?
    private var sessions: [SessionID: SessionEngine] = [:]
    private var framer = MessageFramer(maxFrameBytes: SyncConnection.maxFrameBytes)
    /// Frames waiting to be written, in order, and the attempt whose connection a send is writing
    /// them to (a write stuck on a dead connection must not hold up the next one's).
    private var outbound: [[UInt8]] = []
    private var flushing: UInt64?
    static let maxFrameBytes = 256 * 1024
    /// The connect timeout (connecting and the WebSocket upgrade together: a server or a
    /// middlebox that closes the socket before answering the upgrade leaves the WebSocket client
    /// waiting forever, so past it the attempt counts as failed and the sessions retry) and the
    /// keep-alive's ping interval and pong timeout.
    private let timeouts: SyncTimeouts
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
         clock: WallClock = .system) {
        self.trustedRootCertificates = trustedRootCertificates
        self.timeouts = timeouts
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

    func register(_ engine: SessionEngine, id: SessionID) { sessions[id] = engine }

    func unregister(_ id: SessionID) { sessions[id] = nil }

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
        let clock = clock
        task = _Concurrency.Task { [weak self] in
            var configuration = WebSocketClientConfiguration()
            configuration.maxFrameSize = SyncConnection.maxFrameBytes + 64
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
                try await WebSocketClient.connect(
                    url: url, configuration: configuration, tlsConfiguration: tlsConfiguration, logger: logger
                ) { [weak self] inbound, outbound, _ in
                    guard let self else { return }
                    opened.set()
                    // An attempt the watchdog gave up on must not take over the connection.
                    guard await self.opened(outbound, attempt: attempt) else { return }
                    var reassembler = MessageReassembler(maxMessageBytes: 256 << 20)
                    for try await frame in inbound {
                        guard frame.opcode == .binary || frame.opcode == .continuation else { continue }
                        let bytes = Array(frame.data.readableBytesView)
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

    private func opened(_ writer: WebSocketOutboundWriter, attempt: UInt64) async -> Bool {
        guard attempt == self.attempt, status == .opening else { return false }
        // Message ids count from 0 on every connection (docs/protocol.md §2.1).
        framer = MessageFramer(maxFrameBytes: SyncConnection.maxFrameBytes)
        outbound = []
        self.writer = writer
        status = .open
        statusSince = clock.now()
        await send(.hello(ClientHello(versions: ProtocolVersion.supported, userAgent: "atoll-swift")))
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
        status = .closed
        statusSince = clock.now()
        writer = nil
        task = nil
        for engine in sessions.values { _Concurrency.Task { await engine.connectionClosed(failure: failure) } }
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
        outbound.append(contentsOf: framer.frames(for: message.encoded()))
        let current = attempt
        guard flushing != current else { return }
        flushing = current
        defer { if flushing == current { flushing = nil } }
        while attempt == current, !outbound.isEmpty, let writer {
            let frame = outbound.removeFirst()
            do {
                try await writer.writeBinaryMessage(ByteBuffer(bytes: frame))
            } catch {
                logger.warning("sync connection: send failed: \(error)")
                if attempt == current { outbound = [] }
                return
            }
        }
    }
}
