@testable import Atoll
import AtollCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Testing

/// The sync client's WebSocket against raw peers: peers that close or refuse before the upgrade
/// (a TCP load balancer whose node died), and the frames a server may send after it.
@Suite(.timeLimit(.minutes(1))) struct WebSocketTransportTests {
    /// What a raw peer does with a connection before any upgrade.
    enum Misbehaviour: String, CaseIterable, Sendable {
        /// Closes as soon as the connection is accepted.
        case closeAtOnce
        /// Reads the upgrade request, then closes without a word (FIN): the case that hung.
        case closeAfterRequest
        /// Answers the request with HTTP 503.
        case answerWithoutUpgrading
    }

    @Test(arguments: Misbehaviour.allCases)
    func aPeerThatDoesNotUpgradeFailsTheAttemptAtOnce(_ misbehaviour: Misbehaviour) async throws {
        let peer = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(MisbehavingPeer(misbehaviour)) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { peer.close(promise: nil) }
        let url = "ws://127.0.0.1:\(peer.localAddress!.port!)/api/client/v1/app/a/sync"
        let started = ContinuousClock.now
        let outcome = await firstOf(within: .seconds(20)) {
            do {
                try await WebSocketTransport.connect(url: url, headers: [], maxFrameSize: 1 << 16) { _, _ in }
                return "connected"
            } catch {
                return "\(error)"
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(outcome != nil, "the attempt was still waiting after 20 s")
        #expect(outcome != "connected")
        if misbehaviour == .closeAfterRequest {
            #expect(outcome == "\(WebSocketTransportError.closedBeforeUpgrade)")
        }
        if misbehaviour == .answerWithoutUpgrading {
            #expect(outcome == "\(WebSocketTransportError.upgradeRefused)")
        }
        #expect(elapsed < .seconds(10))
    }

    /// A server's ping is answered with a pong carrying its data, binary frames arrive in order
    /// (the first ones sent right behind the 101, so they often share its read), every client
    /// frame is masked, and the server's close is answered with its code.
    @Test func pingsAreAnsweredAndTheServersCloseIsEchoed() async throws {
        let seen = Locked<[WebSocketFrame]>([])
        let serverFinished = Locked(false)
        let peer = try await UpgradingPeer.start { inbound, outbound in
            defer { serverFinished.withLock { $0 = true } }
            try await outbound.write(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: [1, 2, 3])))
            try await outbound.write(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "are you there")))
            try await outbound.write(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: [4, 5])))
            var frames = inbound.makeAsyncIterator()
            // The client's own binary frame, then the pong.
            for _ in 0..<2 {
                guard let frame = try await frames.next() else { return }
                seen.withLock { $0.append(frame) }
            }
            var code = ByteBuffer()
            code.write(webSocketErrorCode: .goingAway)
            try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))
            if let frame = try await frames.next() { seen.withLock { $0.append(frame) } }
        }
        defer { peer.close(promise: nil) }
        let received = Locked<[[UInt8]]>([])
        try await WebSocketTransport.connect(url: "ws://127.0.0.1:\(peer.localAddress!.port!)/x?y=1", headers: [("X-Test", "1")],
                                             maxFrameSize: 1 << 16) { inbound, writer in
            try await writer.write([9, 9])
            for try await message in inbound { received.withLock { $0.append(Array(message.readableBytesView)) } }
        }
        #expect(received.withLock { $0 } == [[1, 2, 3], [4, 5]])
        // The peer has read the close reply (or the end of the stream) before we look.
        let finishedInTime = await firstOf(within: .seconds(30)) {
            while !serverFinished.withLock({ $0 }) { try? await _Concurrency.Task.sleep(for: .milliseconds(5)) }
            return true
        }
        #expect(finishedInTime == true)
        let frames = seen.withLock { $0 }
        try #require(frames.count == 3)
        #expect(frames.allSatisfy { $0.maskKey != nil }, "client frames must be masked")
        #expect(frames[0].opcode == .binary && Array(frames[0].unmaskedData.readableBytesView) == [9, 9])
        #expect(frames[1].opcode == .pong && String(buffer: frames[1].unmaskedData) == "are you there")
        var close = frames[2].unmaskedData
        #expect(frames[2].opcode == .connectionClose && close.readWebSocketErrorCode() == .goingAway)
    }

    @Test func urlsBecomeARequestLineAndAHostHeader() throws {
        let plain = try WebSocketTransport.Target("ws://127.0.0.1:9090/api/client/v1/app/my%20app/sync?a=1")
        #expect(plain == WebSocketTransport.Target(secure: false, host: "127.0.0.1", port: 9090, requestURI: "/api/client/v1/app/my%20app/sync?a=1",
                               hostHeader: "127.0.0.1:9090"))
        let secure = try WebSocketTransport.Target("wss://sync.example.com/sync")
        #expect(secure == WebSocketTransport.Target(secure: true, host: "sync.example.com", port: 443, requestURI: "/sync", hostHeader: "sync.example.com"))
        let v6 = try WebSocketTransport.Target("ws://[::1]:80")
        #expect(v6 == WebSocketTransport.Target(secure: false, host: "::1", port: 80, requestURI: "/", hostHeader: "[::1]"))
        for bad in ["http://example.com/sync", "ws:///nohost", "not a url"] {
            #expect(throws: WebSocketTransportError.self) { try WebSocketTransport.Target(bad) }
        }
    }
}

/// Runs `body`, or gives up after `limit` (nil) without waiting for it.
private func firstOf<T: Sendable>(within limit: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
    let (stream, continuation) = AsyncStream<T?>.makeStream()
    let work = _Concurrency.Task { continuation.yield(await body()) }
    let timer = _Concurrency.Task {
        try? await _Concurrency.Task.sleep(for: limit)
        continuation.yield(nil)
    }
    var iterator = stream.makeAsyncIterator()
    let first = await iterator.next() ?? nil
    timer.cancel()
    work.cancel()
    return first
}

private final class MisbehavingPeer: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let misbehaviour: WebSocketTransportTests.Misbehaviour
    init(_ misbehaviour: WebSocketTransportTests.Misbehaviour) { self.misbehaviour = misbehaviour }

    func channelActive(context: ChannelHandlerContext) {
        if misbehaviour == .closeAtOnce { context.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch misbehaviour {
        case .closeAtOnce: break
        case .closeAfterRequest: context.close(promise: nil)
        case .answerWithoutUpgrading:
            let answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
        }
    }
}

/// A WebSocket server on NIO that runs `body` on its first connection.
private enum UpgradingPeer {
    typealias Body = @Sendable (NIOAsyncChannelInboundStream<WebSocketFrame>, NIOAsyncChannelOutboundWriter<WebSocketFrame>) async throws -> Void

    static func start(_ body: @escaping Body) async throws -> any Channel {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketServerUpgrader<NIOAsyncChannel<WebSocketFrame, WebSocketFrame>?>(
                        shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel)
                            }
                        })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                        configuration: .init(upgradeConfiguration: .init(
                            upgraders: [upgrader],
                            notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(nil) })))
                }
            }
        _Concurrency.Task {
            try await server.executeThenClose { connections in
                for try await upgrade in connections {
                    guard let channel = try await upgrade.get() else { continue }
                    try await channel.executeThenClose { inbound, outbound in try await body(inbound, outbound) }
                    return
                }
            }
        }
        return server.channel
    }
}
