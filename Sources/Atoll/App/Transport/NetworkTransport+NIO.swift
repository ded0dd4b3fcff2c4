#if !canImport(Security) && canImport(AsyncHTTPClient)
import AsyncHTTPClient
import AtollCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The default transport where URLSession cannot take the app's trust roots (Linux and the other
/// platforms without Apple's Security framework): HTTP/1.1 on SwiftNIO and NIOSSL, trusting
/// exactly what the sync connection trusts (`SyncConnection.clientTLSConfiguration(trusting:)`).
///
/// Bounded against a hostile or broken server: one deadline (the request's `timeout`) for
/// connecting, sending and reading the whole answer; an answer larger than ``maxResponseBytes``
/// fails; redirects are not followed (a 3xx is handed back as it is, so a bearer token never goes
/// to another host); idle connections are reused per host and closed after a minute.
enum NIOHTTPTransport {
    /// The largest answer body read; a longer one fails the request (`customStatusCode` -1103).
    static let maxResponseBytes = 64 << 20
    /// Connections per host at once, as the URLSession transport allows.
    static let maxConnectionsPerHost = 64

    /// One client per set of trusted roots (an app configuration's), kept for the process: each
    /// holds its own connection pool.
    private static let clients = Locked<[[String]: AsyncHTTPClient.HTTPClient]>([:])

    static func client(trusting pems: [String]) throws -> AsyncHTTPClient.HTTPClient {
        try clients.withLock { clients in
            if let client = clients[pems] { return client }
            var configuration = AsyncHTTPClient.HTTPClient.Configuration(
                tlsConfiguration: try SyncConnection.clientTLSConfiguration(trusting: pems),
                redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(30)),
                connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: maxConnectionsPerHost),
                decompression: .disabled)
            configuration.httpVersion = .http1Only
            // A connection that cannot be made (refused, an untrusted certificate) fails the request
            // at once, as URLSession does, instead of being retried until the request's deadline.
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = AsyncHTTPClient.HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[pems] = client
            return client
        }
    }

    /// Sends `request` and returns the answer, or a response with a non-zero `customStatusCode`
    /// (URLSession's code for the same failure) and the reason when there is none. `limit`: the
    /// largest answer body read (tests make it small).
    static func send(_ request: RLMRequest, limit: Int = maxResponseBytes) async -> RLMResponse {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            return RLMNetworkTransport.failure(-1, "'\(request.url)' is not a valid URL")
        }
        let client: AsyncHTTPClient.HTTPClient
        do {
            client = try self.client(trusting: request.trustedRootCertificates)
        } catch {
            return RLMNetworkTransport.failure(-1202, (error as? SyncError)?.message ?? "\(error)")
        }
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: "\(request.method)")
        for (name, value) in request.headers { outgoing.headers.replaceOrAdd(name: name, value: value) }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(string: request.body)) }
        let seconds = request.timeout.isFinite && request.timeout > 0 ? min(request.timeout, 86_400) : 60
        let timeout = TimeAmount.nanoseconds(Int64(seconds * 1_000_000_000))
        let prepared = outgoing
        do {
            return try await withThrowingTaskGroup(of: RLMResponse?.self) { group in
                group.addTask { try await exchange(prepared, client: client, deadline: .now() + timeout, limit: limit) }
                // The deadline of `execute` ends with the answer's head; this one covers the body too.
                group.addTask {
                    try await _Concurrency.Task.sleep(nanoseconds: UInt64(timeout.nanoseconds))
                    return nil
                }
                defer { group.cancelAll() }
                guard let response = try await group.next() ?? nil else {
                    return RLMNetworkTransport.failure(-1001, "\(request.method) \(request.url) timed out after \(seconds) s")
                }
                return response
            }
        } catch {
            return failure(error, request: request, seconds: seconds, limit: limit)
        }
    }

    private static func exchange(_ request: HTTPClientRequest, client: AsyncHTTPClient.HTTPClient,
                                 deadline: NIODeadline, limit: Int) async throws -> RLMResponse {
        let response = try await client.execute(request, deadline: deadline)
        let answer = RLMResponse()
        answer.httpStatusCode = Int(response.status.code)
        for (name, value) in response.headers {
            answer.headers[name] = answer.headers[name].map { $0 + ", " + value } ?? value
        }
        let body = try await response.body.collect(upTo: limit)
        answer.body = String(decoding: body.readableBytesView, as: UTF8.self)
        return answer
    }

    /// The response of a request that got no answer, with URLSession's code for the same failure.
    private static func failure(_ error: any Error, request: RLMRequest, seconds: Double, limit: Int) -> RLMResponse {
        if let (reason, _) = ConnectionFailure.tlsHandshakeFailure(error) {
            return RLMNetworkTransport.failure(-1202, "TLS handshake with \(request.url) failed: \(reason)")
        }
        if error is NIOTooManyBytesError {
            return RLMNetworkTransport.failure(-1103, "the answer to \(request.method) \(request.url) is larger than "
                                               + "\(limit >> 20) MiB")
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                return RLMNetworkTransport.failure(-1001, "\(request.method) \(request.url) timed out after \(seconds) s (\(error))")
            default:
                break
            }
        }
        if error is NIOConnectionError || error is IOError {
            return RLMNetworkTransport.failure(-1004, "could not connect to \(request.url): \(error)")
        }
        return RLMNetworkTransport.failure(-1, "\(request.method) \(request.url) failed: \(error)")
    }
}
#endif
