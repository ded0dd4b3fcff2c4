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
/// - `W8_nodes1|2|3`: integration throughput: 100 clients, each with its own realm opened before
///   the clock starts, spread over 1, 2 or 3 nodes, each write one small changeset at once; the
///   figure is uploads integrated per second until every client's upload is acknowledged.
///
/// The nodes run in this process and share its cores: with more nodes than cores the figure says
/// what one machine does, not what several would. Environment: `ATOLL_BENCH_ONLY=W4|W5|W8`,
/// `ATOLL_BENCH_W8_CLIENTS` (100), `ATOLL_BENCH_PG_FSYNC=0` (the cluster without fsync: what the
/// software costs apart from the disk's flushes; never a figure to publish),
/// `ATOLL_BENCH_W4_ONE_NODE=1` (W4 again with A and B on the same PostgreSQL node: what crossing
/// nodes adds), and W4's and W5's own settings.
struct NodesBenchmark {
    let only = ProcessInfo.processInfo.environment["ATOLL_BENCH_ONLY"]
    let clients = SyncBenchmark.setting("ATOLL_BENCH_W8_CLIENTS", 100)
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
            for count in 1...3 {
                let nodes = try await startNodes(count, on: cluster)
                let rate = try await throughput(nodes)
                report("atoll", "W8_nodes\(count)", rate, "uploads/s")
                for node in nodes { try await node.tearDown() }
            }
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

    /// Uploads per second: every client writes one object at once; the clock stops when every
    /// upload is acknowledged.
    private func throughput(_ nodes: [SyncTestServer]) async throws -> Double {
        let devices = IdleDevices()
        try await concurrently(clients, width: 16) { i in
            let device = try await BenchDevice.login(nodes[i % nodes.count], device: "w8-\(i)")
            try await device.open("w8-\(i)", .always)
            devices.append(device)
        }
        let all = devices.all
        let rows = TaskRow.generate(all.count, seed: 8)
        let seconds = try await measureAsync {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (device, row) in zip(all, rows) {
                    group.addTask {
                        try await device.add([row])
                        try await device.wait(for: .upload)
                    }
                }
                try await group.waitForAll()
            }
        }
        for device in all { await device.close() }
        return Double(all.count) / seconds
    }
}
