import AtollCore
import Foundation

/// Timeouts and intervals of the sync connection, in milliseconds, as `AppConfiguration.syncTimeouts`.
/// An app reads them once, when it is made; later changes have no effect on it.
///
/// ```swift
/// let timeouts = SyncTimeoutOptions(connectTimeout: 30_000, pingKeepalivePeriod: 10_000, pongKeepaliveTimeout: 10_000)
/// let app = App(id: "tasks", configuration: AppConfiguration(baseURL: url, syncTimeouts: timeouts))
/// ```
public final class SyncTimeoutOptions: @unchecked Sendable, Equatable, CustomStringConvertible {
    private struct Values: Equatable {
        var connectTimeout: UInt = 120_000
        var connectionLingerTime: UInt = 30_000
        var pingKeepalivePeriod: UInt = 60_000
        var pongKeepaliveTimeout: UInt = 120_000
        var fastReconnectLimit: UInt = 60_000
    }
    private let lock = NSLock()
    nonisolated(unsafe) private var values = Values()

    /// How long connecting may take: TCP, TLS and the WebSocket upgrade together. Default 2 minutes.
    public var connectTimeout: UInt {
        get { self[\.connectTimeout] }
        set { self[\.connectTimeout] = newValue }
    }
    /// How long the connection stays open once no session uses it (the last one's user logged
    /// out, say); a session that starts within it reuses the connection. Default 30 seconds.
    public var connectionLingerTime: UInt {
        get { self[\.connectionLingerTime] }
        set { self[\.connectionLingerTime] = newValue }
    }
    /// Time between a pong and the next ping the client sends. Default 1 minute.
    public var pingKeepalivePeriod: UInt {
        get { self[\.pingKeepalivePeriod] }
        set { self[\.pingKeepalivePeriod] = newValue }
    }
    /// How long the client waits for the pong to a ping before it drops the connection and
    /// reconnects. Default 2 minutes.
    public var pongKeepaliveTimeout: UInt {
        get { self[\.pongKeepaliveTimeout] }
        set { self[\.pongKeepaliveTimeout] = newValue }
    }
    /// A lost connection reconnects at once, without the backoff delay, at most once in this
    /// long; a connection lost again within it waits out the backoff as failed attempts do.
    /// (Realm's sync client uses it to start uploads at once after such a reconnect; Atoll's
    /// uploads never wait for the download.) Default 1 minute.
    public var fastReconnectLimit: UInt {
        get { self[\.fastReconnectLimit] }
        set { self[\.fastReconnectLimit] = newValue }
    }

    public init() {}

    /// One value, read or written under the lock.
    private subscript(value: WritableKeyPath<Values, UInt>) -> UInt {
        get { lock.withLock { values[keyPath: value] } }
        set { lock.withLock { values[keyPath: value] = newValue } }
    }

    /// The options with the given values; `nil` keeps a value's default.
    public convenience init(connectTimeout: UInt? = nil, connectionLingerTime: UInt? = nil, pingKeepalivePeriod: UInt? = nil,
                            pongKeepaliveTimeout: UInt? = nil, fastReconnectLimit: UInt? = nil) {
        self.init()
        if let connectTimeout { self.connectTimeout = connectTimeout }
        if let connectionLingerTime { self.connectionLingerTime = connectionLingerTime }
        if let pingKeepalivePeriod { self.pingKeepalivePeriod = pingKeepalivePeriod }
        if let pongKeepaliveTimeout { self.pongKeepaliveTimeout = pongKeepaliveTimeout }
        if let fastReconnectLimit { self.fastReconnectLimit = fastReconnectLimit }
    }

    public static func == (lhs: SyncTimeoutOptions, rhs: SyncTimeoutOptions) -> Bool {
        lhs === rhs || lhs.lock.withLock { lhs.values } == rhs.lock.withLock { rhs.values }
    }

    public var description: String {
        let v = lock.withLock { values }
        return "SyncTimeoutOptions(connectTimeout: \(v.connectTimeout), connectionLingerTime: \(v.connectionLingerTime), "
            + "pingKeepalivePeriod: \(v.pingKeepalivePeriod), pongKeepaliveTimeout: \(v.pongKeepaliveTimeout), "
            + "fastReconnectLimit: \(v.fastReconnectLimit))"
    }

    /// The values an app's connection uses, read once.
    var snapshot: SyncTimeouts {
        let v = lock.withLock { values }
        return SyncTimeouts(
            connectMilliseconds: Int64(clamping: v.connectTimeout), pingIntervalMilliseconds: Int64(clamping: v.pingKeepalivePeriod),
            pongTimeoutMilliseconds: Int64(clamping: v.pongKeepaliveTimeout), lingerMilliseconds: Int64(clamping: v.connectionLingerTime),
            fastReconnectLimitMilliseconds: Int64(clamping: v.fastReconnectLimit))
    }
}

/// The sync connection's timeouts, in milliseconds (``SyncTimeoutOptions``, read once).
struct SyncTimeouts: Sendable, Equatable {
    var connectMilliseconds: Int64 = 120_000
    var pingIntervalMilliseconds: Int64 = 60_000
    var pongTimeoutMilliseconds: Int64 = 120_000
    var lingerMilliseconds: Int64 = 30_000
    var fastReconnectLimitMilliseconds: Int64 = 60_000
}

extension SyncTimeouts {
    /// What the connection machine is told.
    var machineSettings: ClientConnection.Settings {
        ClientConnection.Settings(connectTimeoutMilliseconds: connectMilliseconds, pingIntervalMilliseconds: pingIntervalMilliseconds,
                                  pongTimeoutMilliseconds: pongTimeoutMilliseconds, lingerMilliseconds: lingerMilliseconds,
                                  fastReconnectLimitMilliseconds: fastReconnectLimitMilliseconds)
    }
}
