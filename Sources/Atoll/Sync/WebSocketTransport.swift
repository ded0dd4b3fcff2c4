import AtollCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
#if canImport(Network) && canImport(NIOTransportServices)
import NIOTransportServices
#endif

/// The client end of the sync WebSocket (RFC 6455) on NIO: the TCP connection (and TLS for
/// `wss://`), the upgrade, binary frames both ways, pings answered and the close handshake.
///
/// ```swift
/// try await WebSocketTransport.connect(url: "ws://127.0.0.1:9090/api/client/v1/app/todo/sync",
///                                      headers: [], maxFrameSize: 1 << 20) { inbound, writer in
///     try await writer.write([1, 2, 3])
///     for try await message in inbound { print(message.readableBytes) }
/// }
/// ```
///
/// Written on NIO rather than taken from hummingbird-websocket's `WebSocketClient` because that
/// client waits forever when the peer closes the socket before answering the upgrade: NIO's typed
/// upgrade handler fails its result on an error but never at the end of the stream. A TCP load
/// balancer whose node just died does exactly that, and the attempt then hung for the whole connect
/// timeout (2 minutes by default) before the client tried another node. Here the end of the stream
/// before the answer fails the attempt at once (``WebSocketTransportError/closedBeforeUpgrade``).
enum WebSocketTransport {
    /// Connects to `url` (`ws://` or `wss://`), upgrades, and runs `body` with the server's data
    /// frames and a writer; returns when `body` does (the connection is closed then) and throws
    /// what the connection or `body` threw.
    static func connect(
        url: String,
        headers: [(name: String, value: String)],
        maxFrameSize: Int,
        tlsConfiguration: TLSConfiguration? = nil,
        connectTimeout: TimeAmount = .seconds(10),
        eventLoopGroup: any EventLoopGroup = WebSocketTransport.defaultEventLoopGroup,
        _ body: @Sendable (WebSocketInbound, WebSocketWriter) async throws -> Void
    ) async throws {
        let target = try Target(url)
        let sslContext = try (target.secure ? tlsConfiguration ?? .makeClientConfiguration() : nil).map { try NIOSSLContext(configuration: $0) }
        var requestHead = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.requestURI)
        requestHead.headers.add(name: "Host", value: target.hostHeader)
        for (name, value) in headers { requestHead.headers.add(name: name, value: value) }
        let head = requestHead

        let upgrade = try await dial(group: eventLoopGroup, host: target.host, port: target.port, timeout: connectTimeout) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: target.host))
                    }
                    let watcher = UpgradeEndWatcher()
                    try channel.pipeline.syncOperations.addHandler(watcher)
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxFrameSize) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            watcher.upgraded = true
                            return .upgraded(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                        }
                    }
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { .refused(channel) } })
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // Frames the server sends right behind its 101 may arrive in the same read:
                    // they go on to the WebSocket decoder (NIO drops them by default).
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
            .get()

        switch upgrade {
        case .refused(let channel):
            try? await channel.close()
            throw WebSocketTransportError.upgradeRefused
        case .upgraded(let channel):
            try await channel.executeThenClose { inbound, outbound in
                let writer = WebSocketWriter(outbound, allocator: channel.channel.allocator)
                try await body(WebSocketInbound(inbound, writer: writer), writer)
            }
        }
    }

    /// The event loops sync connections run on: Network.framework's on Apple platforms
    /// (NIOTransportServices), so that a connection brings up cellular data or a VPN on demand as
    /// the app's URLSession requests do, which BSD sockets never do on iOS; NIOPosix's elsewhere.
    static var defaultEventLoopGroup: any EventLoopGroup {
        #if canImport(Network) && canImport(NIOTransportServices)
        NIOTSEventLoopGroup.singleton
        #else
        MultiThreadedEventLoopGroup.singleton
        #endif
    }

    /// Opens a TCP connection to `host`:`port` with the bootstrap that belongs to `group`
    /// (Network.framework's for a `NIOTSEventLoopGroup`, BSD sockets' otherwise), Nagle off, and
    /// sets up its pipeline with `initializer`. TLS stays NIOSSL's on both, so the app's
    /// `trustedRootCertificates` and the handshake errors are the same everywhere.
    static func dial<Output: Sendable>(
        group: any EventLoopGroup,
        host: String,
        port: Int,
        timeout: TimeAmount,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Output>
    ) async throws -> Output {
        #if canImport(Network) && canImport(NIOTransportServices)
        if let bootstrap = NIOTSConnectionBootstrap(validatingGroup: group) {
            return try await bootstrap
                .connectTimeout(timeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port, channelInitializer: initializer)
        }
        #endif
        return try await ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port, channelInitializer: initializer)
    }

    private enum Upgrade: Sendable {
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused(any Channel)
    }

    /// Where a `ws://` or `wss://` URL points.
    struct Target: Sendable, Equatable {
        init(secure: Bool, host: String, port: Int, requestURI: String, hostHeader: String) {
            self.secure = secure
            self.host = host
            self.port = port
            self.requestURI = requestURI
            self.hostHeader = hostHeader
        }

        var secure: Bool
        var host: String
        var port: Int
        /// The path and query, as the request line carries them.
        var requestURI: String
        /// `host` or `host:port` when the port is not the scheme's own; IPv6 in brackets.
        var hostHeader: String

        init(_ url: String) throws {
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                  scheme == "ws" || scheme == "wss", let host = components.host, !host.isEmpty
            else { throw WebSocketTransportError.invalidURL(url) }
            secure = scheme == "wss"
            let defaultPort = secure ? 443 : 80
            port = components.port ?? defaultPort
            let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            self.host = bare
            let named = bare.contains(":") ? "[\(bare)]" : bare
            hostHeader = port == defaultPort ? named : "\(named):\(port)"
            let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            requestURI = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
        }
    }
}

/// Why a WebSocket connection could not be made.
enum WebSocketTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidURL(String)
    /// The peer ended the stream before it answered the upgrade request.
    case closedBeforeUpgrade
    /// The peer answered the upgrade request without switching protocols.
    case upgradeRefused

    var description: String {
        switch self {
        case .invalidURL(let url): "\(url) is not a ws:// or wss:// URL"
        case .closedBeforeUpgrade: "the server closed the connection before answering the WebSocket upgrade"
        case .upgradeRefused: "the server answered the WebSocket upgrade without switching protocols"
        }
    }
}

/// Turns the end of the stream before the upgrade's answer into an error, which NIO's upgrade
/// handler (further down the pipeline) fails the upgrade with. After the upgrade it only passes
/// things on. Confined to the channel's event loop, hence `@unchecked Sendable`.
private final class UpgradeEndWatcher: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    var upgraded = false

    func channelInactive(context: ChannelHandlerContext) {
        if !upgraded { context.fireErrorCaught(WebSocketTransportError.closedBeforeUpgrade) }
        context.fireChannelInactive()
    }
}

/// The server's data frames (binary, and continuation frames as they come); pings are answered and
/// the server's close is answered and ends the sequence.
struct WebSocketInbound: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    private let frames: NIOAsyncChannelInboundStream<WebSocketFrame>
    private let writer: WebSocketWriter

    init(_ frames: NIOAsyncChannelInboundStream<WebSocketFrame>, writer: WebSocketWriter) {
        self.frames = frames
        self.writer = writer
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(frames: frames.makeAsyncIterator(), writer: writer) }

    struct AsyncIterator: AsyncIteratorProtocol {
        var frames: NIOAsyncChannelInboundStream<WebSocketFrame>.AsyncIterator
        let writer: WebSocketWriter

        mutating func next() async throws -> ByteBuffer? {
            while let frame = try await frames.next() {
                switch frame.opcode {
                case .binary, .continuation:
                    return frame.unmaskedData
                case .ping:
                    try await writer.send(.pong, frame.unmaskedData)
                case .connectionClose:
                    // Answer with the code the server sent (RFC 6455 §5.5.1), unless we closed
                    // first, then let the server close the TCP connection (§7.1.1): closing it
                    // here at once could drop the answer still on its way out.
                    var data = frame.unmaskedData
                    let code = data.readWebSocketErrorCode() ?? .normalClosure
                    try? await writer.close(code, reason: nil)
                    do {
                        while try await frames.next() != nil {}
                    } catch {}
                    return nil
                default:
                    continue  // text (the protocol has none) and pongs
                }
            }
            return nil
        }
    }
}

/// Writes masked frames to the server (RFC 6455 §5.3: every client frame is masked).
final class WebSocketWriter: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    private let allocator: ByteBufferAllocator
    private let closeSent = Locked(false)

    init(_ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, allocator: ByteBufferAllocator) {
        self.outbound = outbound
        self.allocator = allocator
    }

    /// Writes one binary frame; returns once the channel took it (backpressure from the socket).
    func write(_ bytes: [UInt8]) async throws {
        try await send(.binary, ByteBuffer(bytes: bytes))
    }

    /// Sends a close frame (once) and takes no more frames; what was written before still goes out.
    func close(_ code: WebSocketErrorCode, reason: String?) async throws {
        guard closeSent.withLock({ sent in defer { sent = true }; return !sent }) else { return }
        var data = allocator.buffer(capacity: 2 + 123)
        data.write(webSocketErrorCode: code)
        if let reason {
            // At most 123 bytes (a control frame carries 125), cut at a character boundary.
            var cut = ""
            for character in reason where cut.utf8.count + character.utf8.count <= 123 { cut.append(character) }
            data.writeString(cut)
        }
        defer { outbound.finish() }
        try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data))
    }

    fileprivate func send(_ opcode: WebSocketOpcode, _ data: ByteBuffer) async throws {
        try await outbound.write(WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data))
    }
}
