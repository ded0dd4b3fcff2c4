import AtollCore
import NIOCore
import NIOPosix

/// A TCP proxy on 127.0.0.1 that injects network faults between clients and a server: drops,
/// latency, duplicated, reordered and cut WebSocket frames, black holes and closed connections.
///
/// HTTP and the WebSocket upgrade pass untouched. A connection whose first response is
/// `101 Switching Protocols` is a WebSocket from then on: the proxy cuts both directions into
/// whole frames (RFC 6455 headers only, payloads untouched), so faults act on frame boundaries
/// and the framing stays valid. Faults are set per direction at any time and apply at once to
/// every open and future connection.
///
/// ```swift
/// let proxy = try await FaultProxy.start(upstream: "127.0.0.1", server.port)
/// let app = App(id: "my-app", configuration: AppConfiguration(baseURL: proxy.baseURL))
/// proxy.set(.init(duplicate: 0.2, reorder: 0.2), for: .clientToServer)
/// proxy.healAll()
/// print(proxy.statistics.faultsInjected)
/// ```
///
/// Memory is bounded: each direction of a connection holds at most about `maxBufferedBytes`
/// (delayed chunks, a held frame, a partial frame) before the proxy stops reading from its
/// sender; a frame longer than half of it streams through without frame faults.
package final class FaultProxy: Sendable {
    /// The port clients connect to.
    package let port: Int
    /// `http://127.0.0.1:<port>`, for `AppConfiguration(baseURL:)`.
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    let core: Core
    private let serverChannel: any Channel

    private init(port: Int, core: Core, serverChannel: any Channel) {
        self.port = port
        self.core = core
        self.serverChannel = serverChannel
    }

    /// Starts a proxy on a free port of 127.0.0.1 that forwards to `host`:`port`.
    ///
    /// - Parameter seed: seeds the per-frame coin flips of the probabilistic faults.
    package static func start(upstream host: String, _ port: Int, maxBufferedBytes: Int = 1 << 20,
                             seed: UInt64 = .random(in: 0 ... .max)) async throws -> FaultProxy {
        let core = Core(upstreamHost: host, upstreamPort: port, maxBufferedBytes: max(64 * 1024, maxBufferedBytes), seed: seed)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let connection = ProxyConnection(core: core, client: channel)
                    try channel.pipeline.syncOperations.addHandler(ProxyConnection.SideHandler(connection: connection, side: .client))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let boundPort = channel.localAddress?.port else {
            try? await channel.close()
            throw FaultProxyError(message: "the proxy's socket has no port")
        }
        return FaultProxy(port: boundPort, core: core, serverChannel: channel)
    }

    /// Sets the faults of one direction (replacing the previous ones).
    package func set(_ faults: Faults, for direction: Direction) {
        core.state.withLock { $0.faults[direction] = faults }
    }

    /// Sets the same faults for both directions.
    package func set(_ faults: Faults) {
        for direction in Direction.allCases { set(faults, for: direction) }
    }

    /// The faults of `direction` now.
    package func faults(for direction: Direction) -> Faults {
        core.state.withLock { $0.faults[direction] ?? .none }
    }

    /// While `true`, new connections are accepted and read but never forwarded nor answered, and
    /// open ones lose everything in both directions.
    package var isBlackHoled: Bool {
        get { core.state.withLock { $0.blackHoled } }
        set { core.state.withLock { $0.blackHoled = newValue } }
    }

    /// Whether the proxy closes connections with a TCP reset (RST, as a middlebox that forgot a
    /// flow does) rather than an orderly FIN (as a server that closes does). `false` by default.
    package var resetsConnections: Bool {
        get { core.state.withLock { $0.resetsConnections } }
        set { core.state.withLock { $0.resetsConnections = newValue } }
    }

    /// Stops every fault. A connection that lost data (dropped bytes or frames, or black-holed) is
    /// closed, as its peers could otherwise wait on it until their keep-alive gives up: they
    /// reconnect at once instead. Other connections stay open.
    /// Sends new connections to `port` of the upstream host from now on (open ones stay where
    /// they are: ``cutAll()`` ends them), as a load balancer does when a node fails its checks.
    package func redirect(toPort port: Int) {
        core.state.withLock { $0.upstreamPort = port }
    }

    package func healAll() {
        core.state.withLock {
            $0.faults = [:]
            $0.blackHoled = false
        }
        for connection in core.openConnections() {
            connection.eventLoop.execute { connection.healed() }
        }
    }

    /// Makes every open connection lose everything from now on, in both directions, its sockets
    /// staying open (a flow a middlebox forgot, a peer that froze); new connections pass. Such a
    /// connection ends only when a peer gives up on it, or at ``healAll()`` or ``cutAll()``.
    package func blackHoleOpenConnections() async {
        for connection in core.openConnections() {
            try? await connection.eventLoop.submit { connection.blackHole() }.get()
        }
    }

    /// Closes every open connection now (each counts as a cut). Faults stay as they are.
    package func cutAll() {
        for connection in core.openConnections() {
            connection.eventLoop.execute { connection.cut() }
        }
    }

    /// What the proxy has done so far.
    package var statistics: Statistics { core.state.withLock { $0.statistics } }

    /// The number of connections open now.
    package var openConnectionCount: Int { core.state.withLock { $0.connections.count } }

    /// Closes every connection and stops listening.
    package func stop() async throws {
        for connection in core.openConnections() {
            connection.eventLoop.execute { connection.close() }
        }
        try await serverChannel.close()
    }
}

/// The proxy could not start.
package struct FaultProxyError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}

extension FaultProxy {
    /// What connections share: the upstream address, the faults, the counters and the open
    /// connections (for `cutAll()` and `healAll()`).
    final class Core: Sendable {
        struct State {
            var faults: [Direction: Faults] = [:]
            var blackHoled = false
            var resetsConnections = false
            var statistics = Statistics()
            var random: UInt64
            var upstreamPort: Int
            var connections: [ObjectIdentifier: ProxyConnection] = [:]
        }

        let upstreamHost: String
        /// Where new connections go; ``FaultProxy/redirect(toPort:)`` moves it, as a load
        /// balancer moves traffic off a failed node.
        var upstreamPort: Int { state.withLock { $0.upstreamPort } }
        let maxBufferedBytes: Int
        let state: Locked<State>

        init(upstreamHost: String, upstreamPort: Int, maxBufferedBytes: Int, seed: UInt64) {
            self.upstreamHost = upstreamHost
            self.maxBufferedBytes = maxBufferedBytes
            state = Locked(State(random: seed, upstreamPort: upstreamPort))
        }

        func faults(_ direction: Direction) -> (Faults, blackHoled: Bool) {
            state.withLock { ($0.faults[direction] ?? .none, $0.blackHoled) }
        }

        /// A coin flip: `true` with probability `p`.
        func chance(_ p: Double) -> Bool {
            guard p > 0 else { return false }
            return random() < p
        }

        /// A uniform number in [0, 1) (SplitMix64).
        func random() -> Double {
            let bits = state.withLock { state -> UInt64 in
                state.random &+= 0x9E37_79B9_7F4A_7C15
                var z = state.random
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
            return Double(bits >> 11) / Double(1 << 53)
        }

        func count(_ update: (inout Statistics) -> Void) {
            state.withLock { update(&$0.statistics) }
        }

        func register(_ connection: ProxyConnection) {
            state.withLock { $0.connections[ObjectIdentifier(connection)] = connection }
        }

        func unregister(_ connection: ProxyConnection) {
            _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
        }

        func openConnections() -> [ProxyConnection] {
            state.withLock { Array($0.connections.values) }
        }
    }
}
