import AtollServer
import Foundation

/// Runs `body` with `count` server nodes on one new PostgreSQL database of the process's test
/// cluster (``PostgresCluster``): in-process `atoll-server`s, each with its own port and data
/// folder, sharing every app, user and history. Devices made with `nodes[i].app(device:)` talk to
/// node i. The nodes read the system's clock, as in production.
///
/// ```swift
/// try await withSyncTestNodes(2) { nodes in
///     let ann = try await nodes[0].app(device: "ann").login(credentials: .anonymous)
///     let bob = try await nodes[1].app(device: "bob").login(credentials: .anonymous)
/// }
/// ```
package func withSyncTestNodes(
    _ count: Int, appId: String = "test-app",
    _ configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in },
    isolation: isolated (any Actor)? = #isolation,
    _ body: ([SyncTestServer]) async throws -> Void
) async throws {
    let url = try await PostgresCluster.shared().createDatabase()
    var nodes: [SyncTestServer] = []
    do {
        for _ in 0..<count {
            nodes.append(try await SyncTestServer.start(appId: appId, realTime: true) { configuration in
                configuration.store = url
                configure(&configuration)
            })
        }
        try await body(nodes)
    } catch {
        for node in nodes { try? await node.tearDown() }
        throw error
    }
    for node in nodes { try await node.tearDown() }
}
