import Atoll
import AtollServer
import AtollTesting
import Foundation

/// Several server nodes on one PostgreSQL (issue 14), which the benchmark starts itself
/// (`PostgresCluster`, fsync on, as in production):
///
/// - `W4_nodes`: W4 with device A on node 1 and device B on node 2 (the write crosses nodes through
///   the database and its NOTIFY).
/// - `W5_postgres`: W5 on one node with the PostgreSQL store.
/// - `W8`: scale-out with 1, 2 and 4 `atoll-server` processes, each capped at the same CPU share
///   (ScaleOutBenchmark).
///
/// W4's and W5's nodes run in this process and share its cores. Environment:
/// `ATOLL_BENCH_ONLY=W4|W5|W8`, W8's own (ScaleOutBenchmark), `ATOLL_BENCH_PG_FSYNC=0` (the cluster without fsync: what the
/// software costs apart from the disk's flushes; never a figure to publish),
/// `ATOLL_BENCH_W4_ONE_NODE=1` (W4 again with A and B on the same PostgreSQL node: what crossing
/// nodes adds), and W4's and W5's own settings.
struct NodesBenchmark {
    let only = ProcessInfo.processInfo.environment["ATOLL_BENCH_ONLY"]
    let fsync = SyncBenchmark.setting("ATOLL_BENCH_PG_FSYNC", 1) != 0

    func run() async throws {
        let cluster = try await PostgresCluster.start(fsync: fsync)
        defer { cluster.stop() }
        if !fsync { print("# PostgreSQL without fsync (ATOLL_BENCH_PG_FSYNC=0): not a durable configuration") }
        if only == nil || only == "W4" {
            let nodes = try await startNodes(2, on: cluster)
            try await LatencyBenchmark(label: "W4_nodes", nodes: (nodes[0], nodes[1])).run()
            if SyncBenchmark.setting("ATOLL_BENCH_W4_ONE_NODE", 0) != 0 {
                // Diagnosis: A and B on the same PostgreSQL node, what crossing nodes adds.
                try await LatencyBenchmark(label: "W4_postgres_one_node", nodes: (nodes[0], nodes[0])).run()
            }
            for node in nodes { try await node.tearDown() }
        }
        if only == nil || only == "W5" {
            let node = try await startNodes(1, on: cluster)[0]
            try await BootstrapBenchmark(label: "W5_postgres", server: node).run()
            try await node.tearDown()
        }
        if only == nil || only == "W8" {
            // Each node its own capped process (ScaleOutBenchmark): the nodes of this process
            // would share its cores and say what one machine does, not what several nodes would.
            try await ScaleOutBenchmark(cluster: cluster).run()
        }
    }

    /// `count` nodes on a new database of `cluster`.
    private func startNodes(_ count: Int, on cluster: PostgresCluster) async throws -> [SyncTestServer] {
        let url = try await cluster.createDatabase()
        var nodes: [SyncTestServer] = []
        for _ in 0..<count {
            nodes.append(try await SyncTestServer.start(realTime: true) { configuration in
                configuration.store = url
                configuration.durability = .full
                // Every bench device connects from 127.0.0.1.
                configuration.limits.newUsersPerAddressPerHour = 10_000
                configuration.limits.connectionsPerAddress = 10_000
            })
        }
        return nodes
    }
}
