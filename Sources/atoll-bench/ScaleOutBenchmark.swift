import AtollLoad
import AtollTesting
import Foundation

/// W8 (issues 14 and 26): does a second node add capacity? Each node is its own `atoll-server`
/// process (the release build next to this binary) on one PostgreSQL, capped at the same CPU share
/// by the kernel (``CPUCap``); PostgreSQL and the load generator are not capped, so a node is the
/// bottleneck by construction. The load: `ATOLL_BENCH_W8_SESSIONS` (128) protocol-level sessions,
/// each uploading to a realm of its own, open-loop, at increasing rates; the sustainable rate is
/// the highest whose every write is acknowledged with a p99 (schedule → `uploadAck`) within 50 ms.
///
/// Prints `atoll W8_nodes<n>_sustainable <rate> uploads/s` for 1, 2 and 4 nodes and
/// `atoll W8_speedup_2|4 <x>`, with, for each rate tried, where the CPU went (the nodes against
/// their cap, PostgreSQL, the generator, the machine) and PostgreSQL's commits and WAL flushes.
///
/// Environment: `ATOLL_BENCH_W8_CORES` (0.25 per node), `ATOLL_BENCH_W8_NODES` ("1,2,4"),
/// `ATOLL_BENCH_W8_START` (25 uploads/s per node), `ATOLL_BENCH_W8_STEP` (1.25),
/// `ATOLL_BENCH_W8_WARMUP` (2 s), `ATOLL_BENCH_W8_DURATION` (5 s), `ATOLL_BENCH_W8_P99` (50 ms),
/// `ATOLL_BENCH_W8_JSON` (a file for the runs' reports), `ATOLL_BENCH_W8_ONE_SERVING=1` (diagnosis:
/// all sessions on the first node, the others only hear its announcements).
struct ScaleOutBenchmark {
    let cluster: PostgresCluster
    let environment = ProcessInfo.processInfo.environment
    var sessions: Int { SyncBenchmark.setting("ATOLL_BENCH_W8_SESSIONS", 128) }
    var cores: Double { Double(environment["ATOLL_BENCH_W8_CORES"] ?? "") ?? 0.25 }
    var nodeCounts: [Int] { (environment["ATOLL_BENCH_W8_NODES"] ?? "1,2,4").split(separator: ",").compactMap { Int($0) } }
    var startPerNode: Double { Double(environment["ATOLL_BENCH_W8_START"] ?? "") ?? 25 }
    var step: Double { max(1.02, Double(environment["ATOLL_BENCH_W8_STEP"] ?? "") ?? 1.25) }
    var warmup: Double { Double(environment["ATOLL_BENCH_W8_WARMUP"] ?? "") ?? 2 }
    var duration: Double { Double(environment["ATOLL_BENCH_W8_DURATION"] ?? "") ?? 5 }
    var p99Limit: Double { Double(environment["ATOLL_BENCH_W8_P99"] ?? "") ?? 50 }
    /// Diagnosis: every session on the first node, the others only listening, so their CPU is
    /// what hearing the first node's announcements costs.
    var oneServing: Bool { environment["ATOLL_BENCH_W8_ONE_SERVING"] == "1" }

    func run() async throws {
        let cap = CPUCap.detect()
        print("# W8: CPU cap per node: \(cap.description)")
        if case .unavailable = cap {
            print("# W8 skipped: the nodes cannot be given a CPU share here, and uncapped nodes on shared cores measure the machine, not the nodes")
            return
        }
        let server = try ServerProcess.locateExecutable()
        // PostgreSQL (its processes; the backends its postmaster forks later follow) and this process: uncapped, but
        // weighted like the nodes against the other work on the machine.
        let uncapped: [Int32] = [getpid()] + ResourceProbe.postgresPIDs(of: cluster)
        var weighted: CPUGroup?
        for pid in uncapped { weighted = try cap.cap(pid: pid, name: "atoll-bench-uncapped", cores: nil) ?? weighted }
        defer {
            for pid in uncapped { cap.release(pid: pid) }
            weighted?.remove()
        }
        print("# W8: \(server.path), \(sessions) sessions each on a realm of its own, \(cores) core per node; PostgreSQL and the generator uncapped")
        printMachineFacts()
        var figures: [Int: Double] = [:]
        var reports: [String: LoadReport] = [:]
        for count in nodeCounts {
            let (rate, result) = try await sustainable(nodes: count, cap: cap, server: server)
            figures[count] = rate
            reports["nodes\(count)"] = result
            report("atoll", "W8_nodes\(count)_sustainable", rate, "uploads/s")
        }
        if let one = figures[1], one > 0 {
            for count in nodeCounts where count > 1 {
                if let rate = figures[count] { report("atoll", "W8_speedup_\(count)", rate / one, "x") }
            }
        }
        if let path = environment["ATOLL_BENCH_W8_JSON"] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(reports).write(to: URL(fileURLWithPath: path))
            print("# W8 report: \(path)")
        }
    }

    /// The highest rate `nodes` capped nodes hold, stepping up from the start rate.
    private func sustainable(nodes count: Int, cap: CPUCap, server: URL) async throws -> (Double, LoadReport) {
        let url = try await cluster.createDatabase()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-bench-w8-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try Self.writeLoadConfiguration(in: folder, realms: sessions)
        let executable = try cap.wrapper(for: server, cores: cores, in: folder) ?? server
        var nodes: [ServerProcess] = []
        var groups: [CPUGroup] = []
        defer {
            // The nodes have stopped by then (or the kernel keeps a group that still has a process).
            for group in groups { group.remove() }
        }
        for i in 0..<count {
            let node = try await ServerProcess.start(dataDirectory: folder.appendingPathComponent("node-\(i)"), executable: executable,
                                                     arguments: ["--config", config.path, "--store", url])
            nodes.append(node)
            if let pid = node.processIdentifier, let group = try cap.cap(pid: pid, name: "atoll-bench-node-\(i)", cores: cores) {
                groups.append(group)
            }
        }
        let generator: LoadGenerator
        do {
            generator = try await LoadGenerator.connect(LoadGenerator.Configuration(
                baseURLs: (oneServing ? [nodes[0]] : nodes).map(\.baseURL), appID: "bench", sessions: sessions, connections: max(8, 4 * count), sessionsPerRealm: 1))
        } catch {
            for node in nodes { await node.stop() }
            throw error
        }
        print("# W8 \(count) node(s): \(generator.boundSessions) sessions identified")
        let probe = ResourceProbe(nodes: nodes, groups: groups, cluster: cluster, database: url)
        var rate = startPerNode * Double(count)
        var best = 0.0
        var phases: [LoadReport.Phase] = []
        var retried = false
        for _ in 0..<40 {
            let before = await probe.sample()
            let phase = await generator.run(rate: rate, warmup: warmup, duration: duration)
            let after = await probe.sample()
            phases.append(phase)
            let held = phase.isComplete && phase.acknowledgement.p99 <= p99Limit
            print(String(format: "# W8 nodes=%d rate=%.0f: p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, %d/%d acknowledged, %@ — %@",
                         count, rate, phase.acknowledgement.p50, phase.acknowledgement.p99, phase.acknowledgement.p999,
                         phase.acknowledged, phase.writes, held ? "held" : "NOT held", probe.describe(before, after)))
            if held {
                best = rate
                retried = false
                rate *= step
            } else if !retried && phase.failedSessions == 0 {
                retried = true  // once more at the same rate: the cores are shared with other work
                try? await Task.sleep(for: .seconds(2))
            } else {
                break
            }
        }
        await generator.close()
        let result = generator.report(workload: "W8_nodes\(count)", phases: phases)
        for node in nodes { await node.stop() }
        return (best, result)
    }

    /// A configuration for bench servers: the per-address and per-user limits far above what one
    /// generator on 127.0.0.1 needs, every realm of the run cached.
    static func writeLoadConfiguration(in folder: URL, realms: Int) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let big = 10_000_000
        let limits: [String: Int] = [
            "connectionsPerAddress": big, "connectionsPerUser": big, "sessionsPerConnection": big, "sessionsPerUser": big,
            "realmsPerUser": big, "clientFilesPerUser": big, "newUsersPerAddressPerHour": big, "newAppsPerMinute": big,
            "cachedRealms": max(256, realms + 64),
        ]
        let file = folder.appendingPathComponent("bench-server.json")
        try JSONSerialization.data(withJSONObject: ["limits": limits], options: [.sortedKeys]).write(to: file)
        return file
    }
}

/// Where the CPU goes during a phase: each node (against its cap), PostgreSQL's processes, this
/// process, the whole machine; and PostgreSQL's commits and WAL flushes.
struct ResourceProbe {
    let nodes: [ServerProcess]
    let groups: [CPUGroup]
    let cluster: PostgresCluster
    let database: String

    struct Sample {
        var time = ProcessFacts.now()
        var nodes: [Double] = []
        var throttled: [Double] = []
        var postgres = 0.0
        var generator = 0.0
        var machineBusy = 0.0
        var machineTotal = 0.0
        var commits = 0.0
        var walSyncs = 0.0
    }

    func sample() async -> Sample {
        var sample = Sample()
        sample.nodes = nodes.map { node in node.processIdentifier.flatMap { ProcessFacts.cpuSeconds(pid: $0) } ?? 0 }
        sample.throttled = groups.map { $0.throttling.seconds }
        sample.postgres = Self.postgresPIDs(of: cluster).reduce(0) { $0 + (ProcessFacts.cpuSeconds(pid: $1) ?? 0) }
        sample.generator = ProcessFacts.cpuSeconds() ?? 0
        (sample.machineBusy, sample.machineTotal) = Self.machineCPU()
        if let rows = try? await cluster.execute("SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::text, "
            + "(SELECT wal_sync FROM pg_stat_wal)::text", onDatabaseOf: database), let row = rows.first {
            sample.commits = Double(row[0] ?? "") ?? 0
            sample.walSyncs = Double(row.count > 1 ? row[1] ?? "" : "") ?? 0
        }
        return sample
    }

    func describe(_ a: Sample, _ b: Sample) -> String {
        let seconds = Double(b.time - a.time) / 1e9
        guard seconds > 0 else { return "" }
        let nodeCores = zip(a.nodes, b.nodes).map { String(format: "%.2f", ($1 - $0) / seconds) }.joined(separator: "/")
        let throttled = zip(a.throttled, b.throttled).map { String(format: "%.0f%%", 100 * ($1 - $0) / seconds) }.joined(separator: "/")
        let ticks = b.machineTotal - a.machineTotal
        let busy = ticks > 0 ? (b.machineBusy - a.machineBusy) / ticks * Double(ProcessInfo.processInfo.activeProcessorCount) : 0
        return String(format: "cores: nodes %@ (throttled %@ of the time), postgres %.2f, generator %.2f, machine %.2f of %d; "
                      + "postgres %.0f commits/s, %.0f WAL syncs/s",
                      nodeCores, throttled.isEmpty ? "-" : throttled, (b.postgres - a.postgres) / seconds, (b.generator - a.generator) / seconds,
                      busy, ProcessInfo.processInfo.activeProcessorCount, (b.commits - a.commits) / seconds, (b.walSyncs - a.walSyncs) / seconds)
    }

    /// The postmaster: the first line of `postmaster.pid`.
    static func postmaster(of cluster: PostgresCluster) -> Int32? {
        let file = cluster.folder.appendingPathComponent("data/postmaster.pid")
        guard let text = try? String(contentsOf: file, encoding: .utf8), let first = text.split(separator: "\n").first else { return nil }
        return Int32(first)
    }

    /// The postmaster and its children.
    static func postgresPIDs(of cluster: PostgresCluster) -> [Int32] {
        guard let postmaster = postmaster(of: cluster) else { return [] }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == postmaster { pids.append(pid) }
        }
        return pids
    }

    /// Busy and total jiffies of all CPUs (`/proc/stat`).
    static func machineCPU() -> (Double, Double) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8), let line = text.split(separator: "\n").first else { return (0, 0) }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return (0, 0) }
        let total = values.prefix(8).reduce(0, +)
        return (total - values[3] - values[4], total)
    }
}
