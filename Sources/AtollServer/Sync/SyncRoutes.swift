import AtollCore
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// The WebSocket sync endpoint, `GET /api/client/v1/app/{app}/sync` (docs/protocol.md §2).
///
/// ```swift
/// let webSocketRouter = Router(context: SyncRequestContext.self)
/// SyncRoutes(coordinator: coordinator, auth: auth, metrics: metrics, logger: logger).add(to: webSocketRouter)
/// ```
struct SyncRoutes: Sendable {
    let coordinator: SyncCoordinator
    let auth: AuthService
    let metrics: ServerMetrics
    let logger: Logger
    var limits = SyncLimits()

    static let path: RouterPath = "/api/client/v1/app/:app/sync"

    /// The WebSocket settings of the server: the frame limit it accepts, the default pings.
    var webSocketConfiguration: WebSocketServerConfiguration {
        WebSocketServerConfiguration(maxFrameSize: limits.maxIncomingFrameBytes)
    }

    func add(to router: Router<SyncRequestContext>) {
        router.ws(
            Self.path,
            shouldUpgrade: { [auth] _, context in
                // An unknown app (outside development mode) is refused before the upgrade.
                guard let appID = context.parameters.get("app") else { return .dontUpgrade }
                _ = try await auth.app(appID)
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                guard let appID = context.requestContext.parameters.get("app") else { return }
                try await serve(appID: appID, inbound: inbound, outbound: outbound)
            })
    }

    func serve(appID: String, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let app = try await auth.app(appID)
        let (events, continuation) = AsyncStream<SyncConnection.Event>.makeStream()
        let connection = SyncConnection(
            id: await coordinator.newConnectionID(), appID: appID, app: app, coordinator: coordinator, auth: auth,
            metrics: metrics, logger: logger, limits: limits, events: continuation,
            writeFrame: { frame in try await outbound.write(.binary(ByteBuffer(bytes: frame))) })
        let maxMessage = limits.maxIncomingFrameBytes
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await message in inbound.messages(maxSize: maxMessage) {
                        switch message {
                        case .binary(let buffer): continuation.yield(.frame(Array(buffer.readableBytesView)))
                        case .text: continuation.yield(.textFrame)
                        }
                    }
                } catch {}
                continuation.finish()
            }
            await connection.run(events)
            continuation.finish()
            group.cancelAll()
        }
    }
}
