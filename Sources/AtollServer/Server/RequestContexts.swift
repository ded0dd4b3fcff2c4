import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of the HTTP API: Hummingbird's basic one plus the client's address, which
/// login throttling counts failures by.
package struct AtollRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?

    package init(source: Source) {
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
package struct SyncRequestContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let webSocket: WebSocketHandlerReference<Self>
    package let remoteAddress: SocketAddress?
    /// The connection's channel: closed by the server when a client stops reading (its writes
    /// would otherwise wait for good).
    let channel: any Channel

    package init(source: Source) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}
