import AtollCore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The WebSocket sync endpoint, `GET /api/client/v1/app/{app}/sync` (docs/protocol.md §2).
///
/// ```swift
/// let webSocketRouter = Router(context: SyncRequestContext.self)
/// SyncRoutes(coordinator: coordinator, auth: auth, metrics: metrics, logger: logger).add(to: webSocketRouter)
/// ```
struct SyncRoutes: Sendable {
    let coordinator: SyncCoordinator
    let auth: AuthService
    let metrics: ServerMetrics
    let logger: Logger
    let admission: SyncAdmission
    /// Tests only: what upgrade requests carried.
    var requestHeads = RequestHeadRecorder()
    var limits = SyncLimits()

    static let path: RouterPath = "/api/client/v1/app/:app/sync"

    /// The WebSocket settings of the server: the frame limit it accepts, the default pings.
    var webSocketConfiguration: WebSocketServerConfiguration {
        WebSocketServerConfiguration(maxFrameSize: limits.maxIncomingFrameBytes)
    }

    func add(to router: Router<SyncRequestContext>) {
        router.ws(
            Self.path,
            shouldUpgrade: { [auth, admission, metrics, logger, requestHeads] request, context in
                requestHeads.record(request)
                // An unknown app (outside development mode) is refused before the upgrade.
                guard let appID = context.parameters.get("app") else { return .dontUpgrade }
                _ = try await auth.app(appID)
                // So is an address at its limit: HTTP 429, no WebSocket. (Connections racing past
                // this check are refused in-band by `serve`.)
                let address = auth.clientAddresses.key(request, peer: context.remoteAddress)
                guard admission.connections(from: address) < admission.limits.connectionsPerAddress else {
                    metrics.countRefusal(limit: "connectionsPerAddress")
                    logger.notice("sync connection refused: too many from its address", metadata: ["address": "\(address)"])
                    throw ServerError(
                        .tooManyRequests, "too many sync connections from \(address) (limit \(admission.limits.connectionsPerAddress))",
                        retryAfter: 5)
                }
                return .upgrade([:])
            },
            onUpgrade: { inbound, _, context in
                guard let appID = context.requestContext.parameters.get("app") else { return }
                try await serve(appID: appID, address: auth.clientAddresses.key(context.request, peer: context.requestContext.remoteAddress), channel: context.requestContext.channel,
                                inbound: inbound)
            })
    }

    func serve(
        appID: String, address: String, channel: any Channel, inbound: WebSocketInboundStream
    ) async throws {
        _ = try await auth.app(appID)
        let id = await coordinator.newConnectionID()
        let clock = coordinator.clock
        let pending = StallWatch()
        let writeFrames: @Sendable ([[UInt8]]) async throws -> Void = { frames in
            pending.begin(at: clock.now())
            defer { pending.end() }
            // The wait ends on the event loop as the socket takes the frames, not when this task
            // resumes (a clock moved meanwhile must not count that hop against the client).
            try await Self.write(frames, to: channel, whenWritten: { pending.end() })
        }
        guard admission.open(connection: id, address: address) else {
            metrics.countRefusal(limit: "connectionsPerAddress")
            logger.notice("sync connection refused: too many from its address", metadata: ["address": "\(address)"])
            var framer = MessageFramer(maxFrameBytes: limits.outgoingFrameBytes)
            let refusal = ServerMessage.error(ErrorMessage(
                code: .tryAgainLater, message: "too many sync connections from \(address) (limit \(admission.limits.connectionsPerAddress))",
                tryAgainAfterMilliseconds: 5_000))
            try? await writeFrames(framer.frames(for: refusal.encoded()))
            return
        }
        defer { admission.close(connection: id, address: address) }
        let (events, continuation) = AsyncStream<SyncConnection.Event>.makeStream()
        let gate = InboundGate(budget: admission.limits.inboundBufferBytes)
        let partialMessage = StallWatch()
        let connection = SyncConnection(
            id: id, appID: appID, coordinator: coordinator, auth: auth,
            metrics: metrics, logger: logger, limits: limits, admission: admission, gate: gate, partialMessage: partialMessage,
            events: continuation, writeFrames: writeFrames)
        let chunkTimeout = TimeInterval(admission.limits.messageChunkTimeoutSeconds)
        let maxMessage = limits.maxIncomingFrameBytes
        let writeTimeout = TimeInterval(admission.limits.writeTimeoutSeconds)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await message in inbound.messages(maxSize: maxMessage) {
                        switch message {
                        case .binary(let buffer):
                            // Waits while the connection has too much unhandled: the socket is not read meanwhile.
                            await gate.enter(buffer.readableBytes)
                            continuation.yield(.frame(Array(buffer.readableBytesView)))
                        case .text: continuation.yield(.textFrame)
                        }
                    }
                } catch {}
                continuation.finish()
            }
            // A client that stopped reading leaves a write waiting for good: closing its socket
            // fails that write, which ends the connection and its sessions.
            group.addTask { [metrics, logger] in
                guard await pending.stalled(clock: clock, timeout: writeTimeout) else { return }
                metrics.countRefusal(limit: "writeTimeoutSeconds")
                logger.notice(
                    "sync connection closed: the client took no data for \(Int(writeTimeout)) s", metadata: ["connection": "\(id)"])
                channel.close(mode: .all, promise: nil)
            }
            // A message whose next chunk is late: the connection refuses it (it checks again in turn).
            group.addTask {
                while await partialMessage.stalled(clock: clock, timeout: chunkTimeout) { continuation.yield(.chunkOverdue) }
            }
            await connection.run(events)
            // Hummingbird's close handshake would read (and unmask) all the client still sends.
            if await connection.closesWithoutDraining { channel.close(mode: .all, promise: nil) }
            continuation.finish()
            gate.close()
            group.cancelAll()
        }
    }
}

extension SyncRoutes {
    /// Writes `frames` as binary WebSocket frames in one event-loop task with one flush, and waits
    /// until the socket took them (or the channel failed). A connection's messages take this path
    /// only, one call at a time, so they stay in order; the WebSocket handler's own frames (pings,
    /// pongs, the close) are whole frames and may come between two of them, as WebSocket allows.
    /// The pipeline's frame encoder does the framing (the server configures no WebSocket extension,
    /// which the handler's own writer would otherwise apply).
    static func write(_ frames: [[UInt8]], to channel: any Channel, whenWritten: @escaping @Sendable () -> Void = {}) async throws {
        guard !frames.isEmpty else { return }
        let written = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute {
            for (index, bytes) in frames.enumerated() {
                var buffer = channel.allocator.buffer(capacity: bytes.count)
                buffer.writeBytes(bytes)
                let frame = WebSocketFrame(fin: true, opcode: .binary, data: buffer)
                if index == frames.count - 1 {
                    channel.writeAndFlush(frame, promise: written)
                } else {
                    channel.write(frame, promise: nil)
                }
            }
        }
        written.futureResult.whenComplete { _ in whenWritten() }
        try await written.futureResult.get()
    }
}
