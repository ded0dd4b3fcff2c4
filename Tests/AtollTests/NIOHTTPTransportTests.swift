#if !canImport(Security)
@testable import Atoll
import AtollCore
import Foundation
import NIOCore
import NIOPosix
import Testing

/// The default app transport off Apple platforms (NetworkTransport+NIO.swift) against raw peers on
/// 127.0.0.1 that answer what a hostile or broken server might: every request ends, with the
/// failure URLSession would report.
@Suite(.timeLimit(.minutes(1))) struct NIOHTTPTransportTests {
    @Test func anAnswerLargerThanTheLimitFailsWithoutBeingRead() async throws {
        let peer = try await RawHTTPPeer.start { _ in .answer("HTTP/1.1 200 OK\r\nContent-Length: \(200 << 20)\r\n\r\n{\"a\":") }
        defer { peer.close() }
        let response = await send(peer.request(timeout: 10))
        #expect(response.customStatusCode == -1103, "\(response.body)")
        #expect(response.body.contains("larger than 64 MiB"), "\(response.body)")
    }

    @Test func aChunkedAnswerGrowingPastTheLimitFails() async throws {
        // No length announced: the body is counted as it comes. A limit of 2 MiB here (64 MiB
        // through a debug build under load outran the request's deadline).
        let chunk = String(repeating: "x", count: 1 << 20)
        let body = String(repeating: "100000\r\n\(chunk)\r\n", count: 3) + "0\r\n\r\n"
        let peer = try await RawHTTPPeer.start { _ in .answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body) }
        defer { peer.close() }
        let response = await NIOHTTPTransport.send(peer.request(timeout: 30), limit: 2 << 20)
        #expect(response.customStatusCode == -1103, "\(response.body.prefix(200))")
        #expect(response.body.contains("larger than 2 MiB"), "\(response.body.prefix(200))")
        // Under the limit, the same answer is read whole.
        let whole = await NIOHTTPTransport.send(peer.request(timeout: 30), limit: 4 << 20)
        #expect(whole.customStatusCode == 0 && whole.body.utf8.count == 3 << 20, "\(whole.body.prefix(200))")
    }

    @Test func aServerThatNeverAnswersTimesOutAtTheRequestsTimeout() async throws {
        let peer = try await RawHTTPPeer.start { _ in .silence }
        defer { peer.close() }
        let response = await send(peer.request(timeout: 0.5))
        #expect(response.customStatusCode == -1001, "\(response.body)")
        #expect(response.body.contains("timed out"), "\(response.body)")
    }

    @Test func aServerThatStallsInTheBodyTimesOutAtTheRequestsTimeout() async throws {
        let peer = try await RawHTTPPeer.start { _ in .answer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"partial\":") }
        defer { peer.close() }
        let response = await send(peer.request(timeout: 0.5))
        #expect(response.customStatusCode == -1001, "\(response.body)")
    }

    @Test func aRedirectIsHandedBackNotFollowed() async throws {
        let elsewhere = try await RawHTTPPeer.start { _ in .answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
        defer { elsewhere.close() }
        let peer = try await RawHTTPPeer.start { _ in
            .answer("HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:\(elsewhere.port)/steal\r\nContent-Length: 0\r\n\r\n")
        }
        defer { peer.close() }
        let request = peer.request(timeout: 5)
        request.headers["Authorization"] = "Bearer secret"
        let response = await send(request)
        #expect(response.customStatusCode == 0, "\(response.body)")
        #expect(response.httpStatusCode == 307)
        #expect(elsewhere.connections.withLock { $0 } == 0, "the bearer token went to the redirect's host")
    }

    @Test func anAnswerThatIsNotHTTPFails() async throws {
        let peer = try await RawHTTPPeer.start { _ in .answer("SSH-2.0-OpenSSH_9.0\r\n\r\n") }
        defer { peer.close() }
        let response = await send(peer.request(timeout: 5))
        #expect(response.customStatusCode != 0)
        #expect(response.httpStatusCode == 0)
    }

    @Test func aPortWithNoServerFailsAsCannotConnect() async throws {
        let peer = try await RawHTTPPeer.start { _ in .silence }
        let request = peer.request(timeout: 5)
        peer.close()
        try await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
        let response = await send(request)
        #expect(response.customStatusCode == -1004, "\(response.customStatusCode) \(response.body)")
    }

    @Test func requestsToOneHostReuseTheirConnectionAndKeepTheAnswersHeaders() async throws {
        let peer = try await RawHTTPPeer.start { _ in
            .answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Seen: a\r\nX-Seen: b\r\n\r\nok")
        }
        defer { peer.close() }
        for _ in 0..<3 {
            let response = await send(peer.request(timeout: 5))
            #expect(response.httpStatusCode == 200 && response.body == "ok", "\(response.customStatusCode) \(response.body)")
            #expect(response.headers["X-Seen"] == "a, b" || response.headers["x-seen"] == "a, b", "\(response.headers)")
        }
        #expect(peer.connections.withLock { $0 } == 1)
        #expect(peer.requests.withLock { $0 } == 3)
    }
}

/// A TCP peer on 127.0.0.1 that answers each request head (up to its blank line) as `respond` says.
final class RawHTTPPeer: Sendable {
    enum Behaviour: Sendable {
        case answer(String)
        case silence
    }

    let channel: any Channel
    /// Connections accepted, request heads read.
    let connections: Locked<Int>
    let requests: Locked<Int>
    var port: Int { channel.localAddress!.port! }

    private init(channel: any Channel, connections: Locked<Int>, requests: Locked<Int>) {
        self.channel = channel
        self.connections = connections
        self.requests = requests
    }

    static func start(_ respond: @escaping @Sendable (String) -> Behaviour) async throws -> RawHTTPPeer {
        let counters = (connections: Locked(0), requests: Locked(0))
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                counters.connections.withLock { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(respond: respond, requests: counters.requests))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RawHTTPPeer(channel: channel, connections: counters.connections, requests: counters.requests)
    }

    func request(timeout: TimeInterval) -> RLMRequest {
        let request = RLMRequest()
        request.url = "http://127.0.0.1:\(port)/api/client/v2.0/app/a/location"
        request.timeout = timeout
        return request
    }

    func close() { channel.close(promise: nil) }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let respond: @Sendable (String) -> Behaviour
        let requests: Locked<Int>
        var received = ""

        init(respond: @escaping @Sendable (String) -> Behaviour, requests: Locked<Int>) {
            self.respond = respond
            self.requests = requests
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            received += String(buffer: unwrapInboundIn(data))
            while let end = received.range(of: "\r\n\r\n") {
                let head = String(received[..<end.upperBound])
                received.removeSubrange(..<end.upperBound)
                requests.withLock { $0 += 1 }
                if case .answer(let text) = respond(head) {
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
                }
            }
        }
    }
}
#endif
