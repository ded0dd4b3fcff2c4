import AtollCore
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix

/// A bare sync protocol client over a real WebSocket: sends `ClientMessage`s (framed with
/// `MessageFramer`) or raw frames, and collects the server's messages (reassembled and decoded).
///
/// ```swift
/// let client = try await SyncTestClient.connect(to: server)
/// try await client.hello()
/// await client.send(.bind(…))
/// let answer = try await client.next()
/// ```
final class SyncTestClient: Sendable {
    enum Outgoing: Sendable {
        case frame([UInt8])
        case text(String)
        case close
    }

    /// What the client saw arrive.
    enum Incoming: Sendable {
        case message(ServerMessage)
        /// A frame or message the client could not read.
        case unreadable(ProtocolError)
        /// The WebSocket closed.
        case closed

        var isClosed: Bool { if case .closed = self { true } else { false } }
    }

    struct Timeout: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting for \(what)" }
    }

    private let outgoing: AsyncStream<Outgoing>.Continuation
    private let mailbox: Mailbox
    private let task: Task<Void, Never>
    private let framer: Framer

    /// The frame limit the client announces (and the largest frame it accepts).
    static let maxFrameSize = 1 << 20

    private init(outgoing: AsyncStream<Outgoing>.Continuation, mailbox: Mailbox, task: Task<Void, Never>, frameBytes: Int) {
        self.outgoing = outgoing
        self.mailbox = mailbox
        self.task = task
        framer = Framer(frameBytes: frameBytes)
    }

    /// Opens a WebSocket to the server's sync endpoint of `app`; messages are sent in frames of at most
    /// `frameBytes`.
    static func connect(
        to server: TestServer, app: String = "tasks", frameBytes: Int = 16 * 1024, maxFrameSize: Int = maxFrameSize
    ) async throws -> SyncTestClient {
        try await connect(to: server.endpoint, app: app, frameBytes: frameBytes, maxFrameSize: maxFrameSize)
    }

    /// The same, on a server of any kind (one in a child process, say); `eventLoopGroup` runs the
    /// socket (a group of its own keeps a load-generating client off the other clients' threads).
    static func connect(
        to server: SyncEndpoint, app: String = "tasks", frameBytes: Int = 16 * 1024, maxFrameSize: Int = maxFrameSize,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> SyncTestClient {
        let url = "ws://127.0.0.1:\(server.port)/api/client/v1/app/\(app)/sync"
        let (stream, continuation) = AsyncStream<Outgoing>.makeStream()
        let mailbox = Mailbox()
        var logger = Logger(label: "sync-test-client")
        logger.logLevel = .error
        let task = Task {
            do {
                let maxFrameSize = maxFrameSize
                try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: maxFrameSize), eventLoopGroup: eventLoopGroup, logger: logger
                ) { inbound, outbound, _ in
                    await mailbox.connected()
                    // true when the writer ended because a write failed: the server closed the
                    // connection, and what it sent before (its error, say) is still read.
                    try await withThrowingTaskGroup(of: Bool.self) { group in
                        group.addTask {
                            for await item in stream {
                                do {
                                    switch item {
                                    case .frame(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                                    case .text(let text): try await outbound.write(.text(text))
                                    case .close: return false
                                    }
                                } catch {
                                    return true
                                }
                            }
                            return false
                        }
                        group.addTask {
                            var reassembler = MessageReassembler()
                            for try await message in inbound.messages(maxSize: maxFrameSize) {
                                guard case .binary(let buffer) = message else { continue }
                                let incoming: Incoming?
                                do throws(ProtocolError) {
                                    if let bytes = try reassembler.receive(Array(buffer.readableBytesView)) {
                                        incoming = .message(try ServerMessage(decoding: bytes))
                                    } else {
                                        incoming = nil
                                    }
                                } catch {
                                    incoming = .unreadable(error)
                                }
                                if let incoming { await mailbox.push(incoming) }
                                await mailbox.waitWhilePaused()
                            }
                            return false
                        }
                        if try await group.next() == true { _ = try await group.next() }
                        group.cancelAll()
                    }
                }
            } catch {
                await mailbox.failed(error)
            }
            await mailbox.push(.closed)
        }
        let client = SyncTestClient(outgoing: continuation, mailbox: mailbox, task: task, frameBytes: frameBytes)
        try await mailbox.waitUntilConnected()
        return client
    }

    /// Sends one message, chunked into frames.
    func send(_ message: ClientMessage) {
        for frame in framer.frames(for: message.encoded()) { outgoing.yield(.frame(frame)) }
    }

    /// Sends bytes as one WebSocket frame, as they are.
    func sendRaw(_ frame: [UInt8]) { outgoing.yield(.frame(frame)) }

    func sendText(_ text: String) { outgoing.yield(.text(text)) }

    /// Frames `bytes` as the next message (with the right message id) without checking them.
    func sendMessageBytes(_ bytes: [UInt8]) {
        for frame in framer.frames(for: bytes) { outgoing.yield(.frame(frame)) }
    }

    /// Sends only the first frame of `message` framed as the next message, as a client that
    /// stops (or is stopped) after it does.
    func sendFirstFrame(of message: ClientMessage) {
        sendFirstFrames(1, of: message)
    }

    /// Sends the first `count` frames of `message` framed as the next message, and never the rest.
    func sendFirstFrames(_ count: Int, of message: ClientMessage) {
        for frame in framer.frames(for: message.encoded()).prefix(count) { outgoing.yield(.frame(frame)) }
    }

    /// Sends the first `chunks` chunks (of `chunkBytes` each) of a message announcing
    /// `totalBytes`, and never the rest, as a client that stalls mid-message does.
    func sendPartialMessage(totalBytes: Int, chunkBytes: Int, chunks: Int) {
        let frames = Self.partialMessageFrames(messageID: framer.takeMessageID(), totalBytes: totalBytes, chunkBytes: chunkBytes, chunks: chunks)
        for frame in frames { outgoing.yield(.frame(frame)) }
    }

    /// The first `chunks` frames of message `messageID` announcing `totalBytes`, `chunkBytes` each.
    static func partialMessageFrames(messageID: UInt64, totalBytes: Int, chunkBytes: Int, chunks: Int) -> [[UInt8]] {
        let count = (totalBytes + chunkBytes - 1) / chunkBytes
        let payload = [UInt8](repeating: 0x2A, count: chunkBytes)
        return (0..<min(chunks, count)).map { index in
            var w = BinaryWriter()
            w.varint(messageID); w.varint(UInt64(index)); w.varint(UInt64(count)); w.varint(UInt64(totalBytes))
            return w.bytes + payload
        }
    }

    /// Stops reading the socket (after at most one more message), as a client that hangs does:
    /// what the server sends piles up in the socket buffers.
    func stopReading() async { await mailbox.pause() }

    /// Reads again after ``stopReading()``.
    func resumeReading() async { await mailbox.resume() }

    /// Closes the WebSocket and waits (bounded) until it is closed.
    func close() async {
        outgoing.yield(.close)
        outgoing.finish()
        _ = try? await mailbox.waitForClose(timeout: .seconds(10))
    }

    /// The next thing that arrives, within `timeout`.
    func nextIncoming(timeout: Duration = .seconds(60)) async throws -> Incoming {
        try await mailbox.next(timeout: timeout)
    }

    /// The next server message, within `timeout`; a close or unreadable frame is an error.
    func next(timeout: Duration = .seconds(60)) async throws -> ServerMessage {
        switch try await nextIncoming(timeout: timeout) {
        case .message(let message): return message
        case .unreadable(let error): throw error
        case .closed: throw Timeout(what: "a message (the connection closed)")
        }
    }

    /// Skips messages until one matches, within `timeout` overall.
    func next<T>(timeout: Duration = .seconds(60), _ match: (ServerMessage) -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw Timeout(what: "a matching message") }
            if let found = match(try await next(timeout: left)) { return found }
        }
    }

    /// Whether nothing arrives before the answer to a ping sent now ("not sent twice" checks).
    /// The server handles a connection's frames and the history fanned out to it in order, so
    /// whatever it would send for what happened before arrives ahead of the pong: no waiting for time.
    func staysQuiet() async -> Bool {
        do { return try await pingRoundTrip { _ in false } } catch { return false }
    }

    /// Sends a ping and hands everything that arrives before its pong to `handle`; returns false
    /// as soon as `handle` does (true once the pong arrived).
    func pingRoundTrip(_ handle: (ServerMessage) throws -> Bool) async throws -> Bool {
        let stamp = Int64.random(in: 1...Int64.max)
        send(.ping(Ping(timestamp: stamp)))
        while true {
            let message = try await next(timeout: .seconds(30))
            if case .pong(let pong) = message, pong.timestamp == stamp { return true }
            guard try handle(message) else { return false }
        }
    }

    // MARK: Protocol steps

    /// hello with `versions`; returns the server's answer.
    func hello(versions: ClosedRange<UInt32> = ProtocolVersion.supported) async throws -> ServerMessage {
        send(.hello(ClientHello(versions: versions, userAgent: "AtollServerTests")))
        return try await next()
    }

    /// bind + ident of a partition; returns the answer to the ident (or the bind's error).
    func bind(
        _ session: SessionID, partition: PartitionValue, token: String, file: FileIdent = .unassigned,
        serverVersion: Int64 = 0, epoch: SyncEpoch = .none
    ) async throws -> ServerMessage {
        send(.bind(Bind(session: session, target: .partition(partition), accessToken: token)))
        send(.ident(Ident(session: session, fileIdent: file, lastServerVersion: serverVersion, epoch: epoch)))
        return try await next()
    }

    /// Every changeset of the downloads that arrive until the session reaches `serverVersion`.
    func downloads(_ session: SessionID, through serverVersion: Int64, timeout: Duration = .seconds(60)) async throws
        -> [DownloadChangeset]
    {
        var changesets: [DownloadChangeset] = []
        var reached: Int64 = -1
        while reached < serverVersion {
            let download = try await next(timeout: timeout) { message -> Download? in
                if case .download(let d) = message, d.session == session { return d }
                return nil
            }
            changesets += download.changesets
            reached = download.progress.serverVersion
        }
        return changesets
    }

    /// Frames messages with consecutive ids.
    private final class Framer: @unchecked Sendable {
        private let lock = NSLock()
        private var framer: MessageFramer

        init(frameBytes: Int) { framer = MessageFramer(maxFrameBytes: frameBytes) }

        /// The id of the next message, which the caller frames itself.
        func takeMessageID() -> UInt64 {
            lock.lock()
            defer { lock.unlock() }
            let id = framer.nextMessageID
            _ = framer.frames(for: [0])
            return id
        }

        func frames(for message: [UInt8]) -> [[UInt8]] {
            lock.lock()
            defer { lock.unlock() }
            return framer.frames(for: message)
        }
    }
}

/// Where the client's reading task leaves what arrives.
private actor Mailbox {
    private var items: [SyncTestClient.Incoming] = []
    private var isConnected = false
    private var failure: (any Error)?
    private var isClosed = false

    private var isPaused = false

    func connected() { isConnected = true }
    func pause() { isPaused = true }
    func resume() { isPaused = false }

    /// Returns once reading may go on: never after ``pause()`` (until the task is cancelled).
    func waitWhilePaused() async {
        while isPaused, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
    }
    func failed(_ error: any Error) { failure = error }

    func push(_ item: SyncTestClient.Incoming) {
        if case .closed = item {
            guard !isClosed else { return }
            isClosed = true
        }
        items.append(item)
        wakeAll()
    }

    /// Callers of `next` and `waitForClose` waiting for something to arrive. They are woken at
    /// once, not polled: the load tests measure latencies of a few milliseconds with this client.
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0

    private func wakeAll() {
        let woken = waiters
        waiters = [:]
        for waiter in woken.values { waiter.resume() }
    }

    private func wake(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume()
    }

    /// Returns once something arrived, or at `deadline`.
    private func waitForArrival(until deadline: ContinuousClock.Instant) async {
        nextWaiter += 1
        let id = nextWaiter
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline)
            await self?.wake(id)
        }
        await withCheckedContinuation { waiters[id] = $0 }
        timer.cancel()
    }

    func waitUntilConnected() async throws {
        for _ in 0..<1000 {
            if isConnected { return }
            if let failure { throw failure }
            if isClosed { throw SyncTestClient.Timeout(what: "the WebSocket (it closed)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw SyncTestClient.Timeout(what: "the WebSocket to open")
    }

    func next(timeout: Duration) async throws -> SyncTestClient.Incoming {
        let deadline = ContinuousClock.now + timeout
        while true {
            if !items.isEmpty { return items.removeFirst() }
            guard ContinuousClock.now < deadline else { throw SyncTestClient.Timeout(what: "a message") }
            await waitForArrival(until: deadline)
        }
    }

    func waitForClose(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !isClosed {
            guard ContinuousClock.now < deadline else { throw SyncTestClient.Timeout(what: "the close") }
            await waitForArrival(until: deadline)
        }
    }
}
