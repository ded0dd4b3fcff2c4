import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of the HTTP API: Hummingbird's basic one plus the client's address, which
/// login throttling counts failures by.
public struct AtollRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

extension ClientAddressResolver {
    /// The key of per-address limits for `request`, from `peer` (``key(peer:forwardedFor:)``).
    func key(_ request: Request, peer: SocketAddress?) -> String {
        let name = HTTPField.Name(header.rawValue)!
        return key(peer: peer?.ipAddress, forwardedFor: request.headers[values: name])
    }
}

/// The request context of the WebSocket sync endpoint, with the client's address (connections
/// per address are limited).
public struct SyncRequestContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    public let remoteAddress: SocketAddress?
    /// The connection's channel: closed by the server when a client stops reading (its writes
    /// would otherwise wait for good).
    let channel: any Channel

    public init(source: Source) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}
