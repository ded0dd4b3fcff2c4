import AtollCore
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A small HTTP/1.1 client that POSTs JSON to an app's webhooks (token delivery, confirmation and
/// reset functions) and calls identity providers (keys, Google's token endpoint, Facebook's Graph
/// API), bounded in every way the other side could abuse: one deadline for connecting,
/// sending and answering, a cap on the answer's size, and a cap on calls in flight. It runs on NIO's
/// event loops, so a webhook that hangs holds up nothing but its own call.
///
/// ```swift
/// let answer = try await WebhookClient.shared.post("http://127.0.0.1:8025/confirm", json: body, timeout: 10)
/// ```
final class WebhookClient: Sendable {
    /// Where a URL points: scheme, host, port and the request target.
    struct Target: Sendable, Hashable {
        var secure: Bool
        var host: String
        var port: Int
        var path: String

        init?(_ url: String) {
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
                  components.user == nil, components.password == nil
            else { return nil }
            secure = scheme == "https"
            self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
            port = components.port ?? (secure ? 443 : 80)
            guard (1...65535).contains(port) else { return nil }
            let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            self.path = components.percentEncodedQuery.map { path + "?" + $0 } ?? path
        }

        /// Checks a URL of an identity provider's (keys, token endpoint, Graph API): https, or
        /// http on a loopback address (a test's stand-in); no credentials, query or fragment.
        static func checkProviderURL(_ url: String, field: String) throws {
            guard let target = Target(url), let components = URLComponents(string: url),
                  components.query == nil, components.fragment == nil
            else { throw ConfigurationError(field: field, "must be an https:// URL with a host, and no query or fragment") }
            guard target.secure || ServerConfiguration.isLoopback(target.host) else {
                throw ConfigurationError(field: field, "must be https:// (http:// only on a loopback address)")
            }
        }
    }

    /// A webhook's answer.
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
    }

    /// Why a call failed; the message never carries the request body.
    struct Failure: Error, Sendable, CustomStringConvertible {
        enum Code: Sendable { case invalidURL, timeout, answerTooLarge, busy, connection, badAnswer }
        var code: Code
        var message: String
        var description: String { message }

        /// What a client may be told: the kind of failure, never the webhook's host or port.
        var publicReason: String {
            switch code {
            case .invalidURL: "not configured properly"
            case .timeout: "timed out"
            case .answerTooLarge: "answered too much"
            case .busy: "too many calls in flight"
            case .connection: "could not be reached"
            case .badAnswer: "did not answer in HTTP/1.1"
            }
        }
    }

    /// The largest answer body read; a longer one fails the call.
    let maxAnswerBytes: Int
    /// How many calls may be in flight at once; more fail at once with `.busy`.
    let maxInFlight: Int
    private let inFlight = Locked(0)
    private let group: any EventLoopGroup
    private let tls: NIOSSLContext?

    init(maxAnswerBytes: Int = 64 * 1024, maxInFlight: Int = 64, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.maxAnswerBytes = maxAnswerBytes
        self.maxInFlight = maxInFlight
        self.group = group
        tls = try? NIOSSLContext(configuration: .makeClientConfiguration())
    }

    static let shared = WebhookClient()

    /// POSTs `json` to `url` and returns the answer, whatever its status.
    /// - Parameter secret: when given, the request carries `X-Atoll-Signature: sha256=<hex HMAC>`
    ///   of the body under it.
    /// - Parameter maxAnswerBytes: the largest answer read for this call (the client's ``maxAnswerBytes`` when nil).
    /// - Throws: ``Failure``.
    func post(_ url: String, json: Data, secret: String? = nil, timeout: TimeInterval, maxAnswerBytes: Int? = nil) async throws -> Answer {
        try await send(.POST, url, body: json, contentType: "application/json", secret: secret, timeout: timeout, maxAnswerBytes: maxAnswerBytes)
    }

    /// Sends one request (`method` with `body`, or none for a GET) and returns the answer,
    /// whatever its status; a redirect is an answer like any other, never followed.
    /// - Throws: ``Failure``.
    func send(_ method: HTTPMethod, _ url: String, body: Data? = nil, contentType: String? = nil, secret: String? = nil,
              timeout: TimeInterval, maxAnswerBytes: Int? = nil) async throws -> Answer {
        guard let target = Target(url) else { throw Failure(code: .invalidURL, message: "not an http(s) URL") }
        let admitted = inFlight.withLock { count in
            guard count < maxInFlight else { return false }
            count += 1
            return true
        }
        guard admitted else { throw Failure(code: .busy, message: "too many webhook calls in flight") }
        defer { inFlight.withLock { $0 -= 1 } }

        let deadline = NIODeadline.now() + .milliseconds(Int64(max(1, timeout * 1000)))
        let loop = group.next()
        let promise = loop.makePromise(of: Answer.self)
        let maxAnswerBytes = maxAnswerBytes ?? self.maxAnswerBytes
        let tls = target.secure ? tls : nil
        if target.secure, tls == nil { throw Failure(code: .connection, message: "no TLS configuration for https") }
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(.milliseconds(Int64(max(1, timeout * 1000))))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        let handler = try NIOSSLClientHandler(context: tls, serverHostname: target.host.isIPAddress ? nil : target.host)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(AnswerCollector(promise: promise, maxBytes: maxAnswerBytes))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: target.host, port: target.port).get()
        } catch {
            promise.fail(error)
            throw Failure(code: NIODeadline.now() >= deadline ? .timeout : .connection, message: "could not connect to \(target.host):\(target.port)")
        }
        // One deadline for the whole call: past it the channel closes and the call fails.
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            channel.pipeline.fireErrorCaught(Failure(code: .timeout, message: "no answer within \(timeout) s"))
        }
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: target.path)
        let defaultPort = target.port == (target.secure ? 443 : 80)
        let hostHeader = target.host.contains(":") ? "[\(target.host)]" : target.host
        head.headers.add(name: "Host", value: defaultPort ? hostHeader : "\(hostHeader):\(target.port)")
        if let contentType { head.headers.add(name: "Content-Type", value: contentType) }
        if let body { head.headers.add(name: "Content-Length", value: String(body.count)) }
        head.headers.add(name: "Accept", value: "application/json")
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "User-Agent", value: "atoll-server")
        if let secret, let body {
            let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
            head.headers.add(name: "X-Atoll-Signature", value: "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
        }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        do {
            return try await promise.futureResult.get()
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(code: .connection, message: "the webhook connection failed: \(type(of: error))")
        }
    }
}

/// Reads one answer into memory up to a size, then completes the promise (once).
private final class AnswerCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<WebhookClient.Answer>
    private let maxBytes: Int
    private var status: Int?
    private var body: [UInt8] = []
    private var done = false

    init(promise: EventLoopPromise<WebhookClient.Answer>, maxBytes: Int) {
        self.promise = promise
        self.maxBytes = maxBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(let buffer):
            guard body.count + buffer.readableBytes <= maxBytes else {
                finish(context, .failure(WebhookClient.Failure(code: .answerTooLarge, message: "the answer is larger than \(maxBytes) bytes")))
                return
            }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let status else {
                finish(context, .failure(WebhookClient.Failure(code: .badAnswer, message: "no HTTP status line")))
                return
            }
            finish(context, .success(WebhookClient.Answer(status: status, body: body)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let failure = error as? WebhookClient.Failure
            ?? WebhookClient.Failure(code: .badAnswer, message: "the answer is not HTTP/1.1 (\(type(of: error)))")
        finish(context, .failure(failure))
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(context, .failure(WebhookClient.Failure(code: .connection, message: "the webhook closed the connection before answering")))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        complete(.failure(WebhookClient.Failure(code: .connection, message: "the connection ended")))
    }

    private func finish(_ context: ChannelHandlerContext, _ result: Result<WebhookClient.Answer, any Error>) {
        guard complete(result) else { return }
        context.close(promise: nil)
    }

    @discardableResult
    private func complete(_ result: Result<WebhookClient.Answer, any Error>) -> Bool {
        guard !done else { return false }
        done = true
        promise.completeWith(result)
        return true
    }
}

extension String {
    /// Whether the text is an IPv4 or IPv6 address (TLS sends no server name for those).
    fileprivate var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
