import AtollCore

/// The sync server library. The sync issue fills it in: apps, auth, the WebSocket protocol and the
/// store behind one `ServerStore` protocol. For now it exposes the version it speaks.
public enum AtollServer {
    /// The sync protocol version this server speaks.
    public static let protocolVersion = 1
}
