import NIOCore
import NIOPosix

/// One client connection through a ``FaultProxy`` and its upstream connection. Confined to the
/// client channel's event loop (the upstream channel shares it), hence `@unchecked Sendable`:
/// every method runs there.
final class ProxyConnection: @unchecked Sendable {
    enum Side { case client, server }

    /// What the bytes of the connection are.
    private enum Mode {
        /// HTTP, waiting for the end of the first response's head (is it a 101?).
        case firstResponse
        /// Plain bytes to the end.
        case passthrough
        /// WebSocket frames, both ways.
        case webSocket
    }

    /// Something due to go out in one direction.
    private enum Item {
        case bytes(ByteBuffer)
        /// Close the connection (the end of a cut frame: counted already).
        case cut
        /// The sender closed: close the connection once what came before is delivered.
        case end
    }

    /// One direction's state.
    private struct Lane {
        var parser: WebSocketFrameParser
        var queue = CircularBuffer<(deadline: NIODeadline, item: Item)>()
        var lastDeadline = NIODeadline.uptimeNanoseconds(0)
        var delivery: Scheduled<Void>?
        /// A frame held back to go after the next one.
        var held: ByteBuffer?
        var heldFlush: Scheduled<Void>?
        /// A streamed (oversized) frame being discarded.
        var discardingStream = false
        /// Nothing more is taken in (a cut or an end is queued).
        var finished = false
        /// Bytes queued, held or waiting for the upstream connection.
        var pendingBytes = 0
        var reading = true
    }

    /// How long a frame held for reordering waits for a next frame before it goes alone.
    static let reorderHold = TimeAmount.milliseconds(30)
    /// The most bytes of a first response head scanned for `101`.
    static let maxHeadBytes = 16 * 1024

    let core: FaultProxy.Core
    let eventLoop: any EventLoop
    private let client: any Channel
    private var upstream: (any Channel)?
    /// Bytes for the server before its connection is up.
    private var waitingForUpstream: [ByteBuffer] = []
    private var mode = Mode.firstResponse
    private var head: [UInt8] = []
    private var lanes: [Lane]
    private var isClosed = false
    private var blackHoled = false
    /// Bytes or frames were discarded: the peers' streams have a hole.
    private var lostData = false

    init(core: FaultProxy.Core, client: any Channel) {
        self.core = core
        self.client = client
        eventLoop = client.eventLoop
        let parser = WebSocketFrameParser(maxFrameBytes: core.maxBufferedBytes / 2)
        lanes = [Lane(parser: parser), Lane(parser: parser)]
    }

    private static func index(_ direction: FaultProxy.Direction) -> Int { direction == .clientToServer ? 0 : 1 }

    // MARK: Events

    func clientActive() {
        eventLoop.assertInEventLoop()
        core.register(self)
        let blackHole = core.state.withLock { state -> Bool in
            state.statistics.connections += 1
            if state.blackHoled { state.statistics.blackHoledConnections += 1 }
            return state.blackHoled
        }
        if blackHole {
            blackHoled = true
            lostData = true
            return
        }
        ClientBootstrap(group: eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(5))
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SideHandler(connection: self, side: .server))
                }
            }
            .connect(host: core.upstreamHost, port: core.upstreamPort)
            .whenComplete { [self] result in
                switch result {
                case .success(let channel): upstreamConnected(channel)
                case .failure: close()
                }
            }
    }

    private func upstreamConnected(_ channel: any Channel) {
        guard !isClosed else {
            channel.close(promise: nil)
            return
        }
        upstream = channel
        for bytes in waitingForUpstream { channel.write(bytes, promise: nil) }
        channel.flush()
        let count = waitingForUpstream.reduce(0) { $0 + $1.readableBytes }
        waitingForUpstream = []
        lanes[0].pendingBytes -= count
        updateReading(.clientToServer)
    }

    func received(_ bytes: ByteBuffer, from side: Side) {
        guard !isClosed else { return }
        let direction: FaultProxy.Direction = side == .client ? .clientToServer : .serverToClient
        let lane = Self.index(direction)
        guard !lanes[lane].finished else { return }
        let (faults, blackHole) = core.faults(direction)
        switch mode {
        case .webSocket:
            receiveFrames(bytes, direction, faults, blackHole: blackHole)
        case .passthrough:
            forwardRaw(bytes, direction, faults, blackHole: blackHole)
        case .firstResponse where direction == .clientToServer:
            forwardRaw(bytes, direction, faults, blackHole: blackHole)
        case .firstResponse:
            scanFirstResponse(bytes, faults, blackHole: blackHole)
        }
    }

    /// Forwards the first response's head as bytes; after a `101` the rest is WebSocket frames.
    private func scanFirstResponse(_ bytes: ByteBuffer, _ faults: FaultProxy.Faults, blackHole: Bool) {
        let before = head.count
        head.append(contentsOf: bytes.readableBytesView)
        guard let end = Self.endOfHead(head) else {
            if head.count > Self.maxHeadBytes {
                mode = .passthrough
                head = []
            }
            forwardRaw(bytes, .serverToClient, faults, blackHole: blackHole)
            return
        }
        var rest = bytes
        let headPart = rest.readSlice(length: end - before)!
        let upgraded = head.starts(with: Array("HTTP/1.1 101".utf8))
        head = []
        forwardRaw(headPart, .serverToClient, faults, blackHole: blackHole)
        guard !isClosed else { return }
        if upgraded {
            mode = .webSocket
            core.count { $0.webSocketConnections += 1 }
            if rest.readableBytes > 0 { receiveFrames(rest, .serverToClient, faults, blackHole: blackHole) }
        } else {
            mode = .passthrough
            if rest.readableBytes > 0 { forwardRaw(rest, .serverToClient, faults, blackHole: blackHole) }
        }
    }

    /// The offset just past the first `\r\n\r\n`.
    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i + 4
        }
        return nil
    }

    private func forwardRaw(_ bytes: ByteBuffer, _ direction: FaultProxy.Direction, _ faults: FaultProxy.Faults, blackHole: Bool) {
        guard bytes.readableBytes > 0 else { return }
        if blackHoled || blackHole || faults.drop == .discard {
            lostData = true
            core.count { $0.chunksDropped += 1 }
            return
        }
        if faults.drop == .close {
            cut()
            return
        }
        emit(.bytes(bytes), direction, delay: faults.delay)
    }

    private func receiveFrames(_ bytes: ByteBuffer, _ direction: FaultProxy.Direction, _ faults: FaultProxy.Faults, blackHole: Bool) {
        let lane = Self.index(direction)
        let dropping = blackHoled || blackHole || faults.drop == .discard
        for piece in lanes[lane].parser.append(bytes) {
            guard !isClosed, !lanes[lane].finished else { return }
            switch piece {
            case .frame(let frame):
                if dropping {
                    lostData = true
                    core.count { $0.framesDropped += 1 }
                } else if faults.drop == .close {
                    cut()
                } else if frame.readableBytes >= 2 && core.chance(faults.cutMidFrame) {
                    let keep = 1 + Int(core.random() * Double(frame.readableBytes - 1))
                    flushHeld(direction, delay: faults.delay)
                    emit(.bytes(frame.getSlice(at: frame.readerIndex, length: keep)!), direction, delay: faults.delay)
                    core.count { $0.cuts += 1 }
                    emit(.cut, direction, delay: faults.delay)
                    lanes[lane].finished = true
                } else {
                    forwardFrame(frame, direction, faults)
                }
            case .streamStart(let header):
                flushHeld(direction, delay: faults.delay)
                if dropping {
                    lostData = true
                    lanes[lane].discardingStream = true
                    core.count { $0.framesDropped += 1 }
                } else if faults.drop == .close {
                    cut()
                } else {
                    core.count { $0.framesForwarded += 1 }
                    emit(.bytes(header), direction, delay: faults.delay)
                }
            case .streamPart(let part, let isLast):
                if !lanes[lane].discardingStream { emit(.bytes(part), direction, delay: faults.delay) }
                if isLast { lanes[lane].discardingStream = false }
            }
        }
    }

    /// Forwards a whole frame: after a held one (which it overtakes), twice, held back, or as is.
    private func forwardFrame(_ frame: ByteBuffer, _ direction: FaultProxy.Direction, _ faults: FaultProxy.Faults) {
        let lane = Self.index(direction)
        core.count { $0.framesForwarded += 1 }
        if let held = lanes[lane].held {
            lanes[lane].held = nil
            lanes[lane].pendingBytes -= held.readableBytes
            lanes[lane].heldFlush?.cancel()
            lanes[lane].heldFlush = nil
            core.count { $0.framesReordered += 1 }
            emit(.bytes(frame), direction, delay: faults.delay)
            emit(.bytes(held), direction, delay: faults.delay)
        } else if core.chance(faults.reorder) {
            lanes[lane].held = frame
            lanes[lane].pendingBytes += frame.readableBytes
            lanes[lane].heldFlush = eventLoop.scheduleTask(in: Self.reorderHold) { [self] in
                lanes[lane].heldFlush = nil
                flushHeld(direction, delay: core.faults(direction).0.delay)
            }
        } else {
            emit(.bytes(frame), direction, delay: faults.delay)
        }
        if core.chance(faults.duplicate) {
            core.count { $0.framesDuplicated += 1 }
            emit(.bytes(frame), direction, delay: faults.delay)
        }
    }

    /// Sends a frame held for reordering now (no next frame came, or something must not overtake it).
    private func flushHeld(_ direction: FaultProxy.Direction, delay: Duration) {
        let lane = Self.index(direction)
        guard let held = lanes[lane].held else { return }
        lanes[lane].held = nil
        lanes[lane].pendingBytes -= held.readableBytes
        lanes[lane].heldFlush?.cancel()
        lanes[lane].heldFlush = nil
        emit(.bytes(held), direction, delay: delay)
    }

    // MARK: Delivery

    /// Queues `item` to go out after `delay`, never before what was queued earlier.
    private func emit(_ item: Item, _ direction: FaultProxy.Direction, delay: Duration) {
        guard !isClosed else { return }
        let lane = Self.index(direction)
        let now = NIODeadline.now()
        let deadline = max(now + TimeAmount(delay), lanes[lane].lastDeadline)
        lanes[lane].lastDeadline = deadline
        if delay > .zero, case .bytes = item { core.count { $0.chunksDelayed += 1 } }
        if lanes[lane].queue.isEmpty && deadline <= now {
            deliver(item, direction)
            return
        }
        if case .bytes(let bytes) = item { lanes[lane].pendingBytes += bytes.readableBytes }
        lanes[lane].queue.append((deadline, item))
        scheduleDelivery(direction)
        updateReading(direction)
    }

    private func scheduleDelivery(_ direction: FaultProxy.Direction) {
        let lane = Self.index(direction)
        guard lanes[lane].delivery == nil, let first = lanes[lane].queue.first else { return }
        lanes[lane].delivery = eventLoop.scheduleTask(deadline: first.deadline) { [self] in
            lanes[lane].delivery = nil
            deliverDue(direction)
        }
    }

    private func deliverDue(_ direction: FaultProxy.Direction) {
        let lane = Self.index(direction)
        let now = NIODeadline.now()
        while !isClosed, let first = lanes[lane].queue.first, first.deadline <= now {
            lanes[lane].queue.removeFirst()
            if case .bytes(let bytes) = first.item { lanes[lane].pendingBytes -= bytes.readableBytes }
            deliver(first.item, direction)
        }
        guard !isClosed else { return }
        scheduleDelivery(direction)
        updateReading(direction)
    }

    private func deliver(_ item: Item, _ direction: FaultProxy.Direction) {
        switch item {
        case .bytes(let bytes):
            if direction == .serverToClient {
                client.writeAndFlush(bytes, promise: nil)
            } else if let upstream {
                upstream.writeAndFlush(bytes, promise: nil)
            } else {
                waitingForUpstream.append(bytes)
                lanes[0].pendingBytes += bytes.readableBytes
                updateReading(direction)
            }
        case .cut, .end:
            close()
        }
    }

    /// Reads from a direction's sender only while its backlog is small and its receiver keeps up.
    func updateReading(_ direction: FaultProxy.Direction) {
        guard !isClosed else { return }
        let lane = Self.index(direction)
        let (source, destination) = direction == .clientToServer ? (client, upstream) : (upstream, client)
        guard let source else { return }
        let shouldRead = lanes[lane].pendingBytes < core.maxBufferedBytes / 2 && (destination?.isWritable ?? true)
        guard shouldRead != lanes[lane].reading else { return }
        lanes[lane].reading = shouldRead
        _ = source.setOption(ChannelOptions.autoRead, value: shouldRead)
    }

    // MARK: Ending

    /// A side closed its connection: the other side gets what is on its way, then is closed.
    func ended(_ side: Side) {
        guard !isClosed else { return }
        let direction: FaultProxy.Direction = side == .client ? .clientToServer : .serverToClient
        let lane = Self.index(direction)
        if side == .client && upstream == nil {
            close()
            return
        }
        guard !lanes[lane].finished else { return }
        flushHeld(direction, delay: .zero)
        lanes[lane].finished = true
        emit(.end, direction, delay: .zero)
    }

    /// `healAll()`: a connection with a hole in a stream is closed.
    /// Loses everything from now on, in both directions, the sockets staying open.
    func blackHole() {
        eventLoop.assertInEventLoop()
        guard !isClosed else { return }
        blackHoled = true
    }

    func healed() {
        guard !isClosed, lostData || blackHoled else { return }
        cut()
    }

    /// Closes the connection as a fault (counted).
    func cut() {
        guard !isClosed else { return }
        core.count { $0.cuts += 1 }
        close()
    }

    func close() {
        eventLoop.assertInEventLoop()
        guard !isClosed else { return }
        isClosed = true
        for lane in lanes.indices {
            lanes[lane].delivery?.cancel()
            lanes[lane].heldFlush?.cancel()
            lanes[lane].queue.removeAll()
            lanes[lane].held = nil
        }
        waitingForUpstream = []
        let reset = core.state.withLock { $0.resetsConnections }
        for channel in [client, upstream].compactMap({ $0 }) {
            guard reset, let socket = channel as? any SocketOptionProvider else {
                channel.close(promise: nil)
                continue
            }
            // SO_LINGER 0: the close sends RST instead of FIN.
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        }
        core.unregister(self)
    }

    // MARK: Handlers

    /// Passes one channel's events to the connection.
    final class SideHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let connection: ProxyConnection
        let side: Side

        init(connection: ProxyConnection, side: Side) {
            self.connection = connection
            self.side = side
        }

        func channelActive(context: ChannelHandlerContext) {
            if side == .client { connection.clientActive() }
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            connection.received(unwrapInboundIn(data), from: side)
        }

        func channelInactive(context: ChannelHandlerContext) {
            connection.ended(side)
            context.fireChannelInactive()
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            connection.updateReading(side == .client ? .serverToClient : .clientToServer)
            context.fireChannelWritabilityChanged()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            connection.close()
        }
    }
}
