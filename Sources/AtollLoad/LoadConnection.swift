import AtollCore
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore

/// One WebSocket of the generator and the sessions it multiplexes, as the SDK's connection does
/// (docs/protocol.md §2.2): hello, then every session's bind and ident at once; afterwards a
/// writer sends the uploads the phase's schedule makes due and a reader takes the server's
/// messages. The sessions' state is behind one lock both share.
final class LoadConnection: Sendable {
    struct Phase: Sendable {
        var schedule: OpenLoopSchedule
        /// Writes of this phase the connection sends (those due before the phase's end).
        var total: Int
    }

    struct State: Sendable {
        var sessions: [LoadSession]
        var phase: Phase?
        /// The next write of the phase's schedule to send.
        var next = 0
        var open = false
        var closed = false
        var stopping = false
        var failure: String?
    }

    let index: Int
    let url: String
    let accessToken: String
    private let state: Locked<State>
    private let recorder: LoadRecorder

    init(index: Int, url: String, accessToken: String, sessions: [LoadSession], recorder: LoadRecorder) {
        self.index = index
        self.url = url
        self.accessToken = accessToken
        state = Locked(State(sessions: sessions))
        self.recorder = recorder
    }

    var sessionCount: Int { state.withLock { $0.sessions.count } }
    var activeSessions: Int { state.withLock { $0.sessions.count { $0.isActive } } }
    var settledSessions: Int { state.withLock { s in s.closed ? s.sessions.count : s.sessions.count { $0.state != .binding && $0.state != .idle } } }
    var failedSessions: Int { state.withLock { $0.sessions.count { if case .failed = $0.state { true } else { false } } } }
    var isOpen: Bool { state.withLock { $0.open && !$0.closed } }
    var failure: String? { state.withLock { $0.failure } }
    /// Whether the phase's writes are all sent.
    var phaseSent: Bool { state.withLock { $0.phase == nil || $0.closed } }
    /// Active sessions of each realm group (session index / sessions per realm).
    func activeMembers(into counts: inout [Int], sessionsPerRealm: Int) {
        state.withLock { s in
            for session in s.sessions where session.isActive { counts[session.index / sessionsPerRealm] += 1 }
        }
    }

    func start(phase: Phase) { state.withLock { $0.phase = phase; $0.next = 0 } }
    func stop() { state.withLock { $0.stopping = true } }

    static let quiet: Logger = {
        var logger = Logger(label: "atoll.load")
        logger.logLevel = .critical
        return logger
    }()

    /// Connects and runs until ``stop()`` or the connection ends; never throws (a failure is
    /// recorded and ends the connection's sessions).
    func run() async {
        do {
            try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: Self.quiet) { inbound, outbound, _ in
                var framer = MessageFramer(maxFrameBytes: 16 << 10)
                var frames: [[UInt8]] = []
                func queue(_ message: ClientMessage) { frames += framer.frames(for: message.encoded()) }
                queue(.hello(ClientHello(userAgent: "atoll-bench load")))
                let token = self.accessToken
                let binds = self.state.withLock { s -> [ClientMessage] in
                    s.open = true
                    return s.sessions.indices.flatMap { s.sessions[$0].bind(accessToken: token) }
                }
                binds.forEach(queue)
                for frame in frames { try await outbound.write(.binary(ByteBuffer(bytes: frame))) }
                frames = []
                let reader = Task { await self.read(inbound) }
                defer { reader.cancel() }
                var lastPing = ProcessFacts.now()
                while true {
                    let (messages, wake, done) = self.due()
                    if done { break }
                    messages.forEach(queue)
                    let now = ProcessFacts.now()
                    if now - lastPing > 20_000_000_000 {
                        queue(.ping(Ping(timestamp: Int64(now / 1_000_000))))
                        lastPing = now
                    }
                    for frame in frames { try await outbound.write(.binary(ByteBuffer(bytes: frame))) }
                    frames = []
                    let after = ProcessFacts.now()
                    // At most 50 ms, so a stop or a new phase (which starts 100 ms ahead) is seen in time.
                    if wake > after { try await Task.sleep(nanoseconds: min(wake - after, 50_000_000)) }
                }
            }
            closed(nil)
        } catch {
            closed("connection \(index): \(error)")
        }
    }

    /// The uploads due now, when to look again, and whether to stop.
    private func due() -> (messages: [ClientMessage], wake: UInt64, done: Bool) {
        let now = ProcessFacts.now()
        // Between phases a connection looks again every 50 ms: thousands of idle sessions cost
        // the generator next to nothing.
        let idle = now + 50_000_000
        var written: [(session: Int, due: UInt64, sent: Bool)] = []
        let result = state.withLock { s -> (messages: [ClientMessage], wake: UInt64, done: Bool) in
            if s.stopping || s.closed { return ([], 0, true) }
            guard let phase = s.phase else { return ([], idle, false) }
            let due = min(phase.total, phase.schedule.due(at: now))
            var messages: [ClientMessage] = []
            while s.next < due {
                let write = phase.schedule.write(s.next)
                let message = s.sessions[write.session].write(due: write.due)
                if let message { messages.append(message) }
                written.append((s.sessions[write.session].index, write.due, message != nil))
                s.next += 1
            }
            if s.next >= phase.total {
                s.phase = nil
                return (messages, idle, false)
            }
            return (messages, phase.schedule.time(of: s.next), false)
        }
        for w in written { recorder.wrote(session: w.session, due: w.due, sent: w.sent) }
        return result
    }

    private func read(_ inbound: WebSocketInboundStream) async {
        var reassembler = MessageReassembler(maxMessageBytes: 64 << 20)
        do {
            for try await frame in inbound {
                guard let bytes = try reassembler.receive(frame.data.readableBytesView) else { continue }
                handle(try ServerMessage(decoding: bytes))
            }
            // The server ended the connection: the writer stops too.
            state.withLock { $0.closed = true }
        } catch {
            state.withLock { s in
                if s.failure == nil, !s.stopping { s.failure = "connection \(index): \(error)" }
                s.closed = true
            }
        }
    }

    private func handle(_ message: ServerMessage) {
        let now = ProcessFacts.now()
        guard let session = message.session else {
            if case .error(let error) = message, error.action != .warning {
                state.withLock { s in
                    s.failure = "connection \(index): error \(error.code.rawValue): \(error.message)"
                    for i in s.sessions.indices { s.sessions[i].connectionLost("connection error \(error.code.rawValue)") }
                }
                recorder.failed("connection \(index): error \(error.code.rawValue): \(error.message)")
            }
            return
        }
        // Session ids are 1…n on each connection: the position in the array plus one.
        let outcome = state.withLock { s -> LoadSession.Outcome? in
            let position = Int(session.rawValue) - 1
            guard s.sessions.indices.contains(position) else { return nil }
            return s.sessions[position].receive(message)
        }
        if let outcome { recorder.record(outcome, now: now) }
    }

    private func closed(_ failure: String?) {
        let stopping = state.withLock { s -> Bool in
            s.closed = true
            s.phase = nil
            if s.failure == nil { s.failure = failure }
            if !s.stopping {
                for i in s.sessions.indices { s.sessions[i].connectionLost(s.failure ?? "the server closed connection \(index)") }
            }
            return s.stopping
        }
        if !stopping { recorder.failed(failure ?? "the server closed connection \(index)") }
    }
}
