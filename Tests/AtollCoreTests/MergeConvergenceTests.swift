@testable import AtollCore
import Foundation
import Testing

/// The acid test of DESIGN.md §3: random writes on 3–5 clients, random disconnects, duplicated,
/// delayed and reordered uploads and downloads; after full sync every client and the server hold
/// byte-identical canonical dumps.
///
/// `ATOLL_FUZZ_SCHEDULES=10000 swift test --filter Convergence` runs more schedules;
/// `ATOLL_FUZZ_SEED=1234 swift test --filter Convergence` replays one, printing its events.
@Suite struct MergeConvergenceTests {
    static let environment = ProcessInfo.processInfo.environment

    static var seeds: [UInt64] {
        if let seed = environment["ATOLL_FUZZ_SEED"].flatMap(UInt64.init) { return [seed] }
        let count = environment["ATOLL_FUZZ_SCHEDULES"].flatMap(Int.init) ?? 300
        return (0..<UInt64(count)).map { 0xA70_11 &+ $0 &* 7919 }
    }

    /// Runs one schedule; returns a description of the divergence, or `nil` when all converge.
    static func check(seed: UInt64, logging: Bool) throws -> (failure: String?, log: [String], hostile: (refused: Int, integrated: Int)) {
        var sim = MergeFuzzSimulation(seed: seed, logging: logging)
        do {
            try sim.run(steps: 30 + Int(seed % 90))
            try sim.quiesce()
        } catch {
            return ("\(error)", sim.log, (0, 0))
        }
        let hostile = (sim.hostileRefused, sim.hostileIntegrated)
        guard sim.isQuiescent else { return ("clients still have pending changes after quiescence", sim.log, hostile) }
        let server = sim.serverState.canonicalDump()
        for (i, client) in sim.clients.enumerated() where client.state.canonicalDump() != server {
            return ("client \(i) differs from the server\n--- server\n\(sim.serverState.canonicalDescription())\n--- client \(i)\n\(client.state.canonicalDescription())", sim.log, hostile)
        }
        return (nil, sim.log, hostile)
    }

    @Test func everyReplicaConvergesAfterQuiescence() throws {
        let seeds = Self.seeds
        let start = Date()
        var failures: [UInt64] = []
        var hostileRefused = 0, hostileIntegrated = 0
        for seed in seeds {
            let (failure, _, hostile) = try Self.check(seed: seed, logging: seeds.count == 1)
            hostileRefused += hostile.refused
            hostileIntegrated += hostile.integrated
            guard let failure else { continue }
            failures.append(seed)
            if failures.count == 1 {
                let (_, log, _) = try Self.check(seed: seed, logging: true)
                Issue.record("""
                    Schedule \(seed) diverged: \(failure)
                    Events:
                    \(log.joined(separator: "\n"))
                    Re-run just this schedule: ATOLL_FUZZ_SEED=\(seed) swift test --filter Convergence
                    """)
            }
        }
        // The hostile client's uploads reached the server's validation, and most were refused.
        if seeds.count > 50 { #expect(hostileRefused > hostileIntegrated) }
        let elapsed = Date().timeIntervalSince(start)
        print("convergence fuzzer: \(seeds.count) schedules in \(String(format: "%.2f", elapsed)) s (\(String(format: "%.0f", Double(seeds.count) / max(elapsed, 0.001))) schedules/s), \(failures.count) failed\(failures.isEmpty ? "" : ": \(failures.prefix(20))"); hostile uploads: \(hostileRefused) refused, \(hostileIntegrated) integrated")
    }
}
