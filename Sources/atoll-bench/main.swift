import AtollLoad
import Foundation

// atoll-bench: workloads run through Atoll and through raw SQLite in the same process, so results
// are ratios. Lines read `atoll WORKLOAD VALUE UNIT` (and `sqlite …` for the baseline).
//
//   swift run -c release atoll-bench            # every suite
//   swift run -c release atoll-bench local      # W1–W3: the local store
//   swift run -c release atoll-bench sync       # W4, W5, W7: sync, server in-process on loopback
//   swift run -c release atoll-bench reset      # W6: a client reset recovering 1,000 changes
//   swift run -c release atoll-bench realm-file # W9: opening (converting) a file Realm wrote
//   swift run -c release atoll-bench import     # W10: `atoll data import` of 100,000 Task documents
//   swift run -c release atoll-bench limits     # L0–L3: connection flood, upload stream, login flood
//                                               # (atoll-server in a child process: build it first)
//   swift run -c release atoll-bench load …     # the protocol-level load generator (LoadBenchmark.swift)
//   swift run -c release atoll-bench nodes      # W4/W5 on PostgreSQL; W8: 1, 2, 4 capped node processes
//   swift run -c release atoll-bench local --json a.json   # the figures, the machine and the commit, as JSON
//   swift run -c release atoll-bench compare a.json b.json # each figure of both runs, B/A, better or WORSE
//
// Every run first prints the machine's facts (`machine cores 2`, `machine load_1m …`,
// `machine fdatasync_p50 … ms` of the temporary folder): a figure measured under other load or on
// another disk is not the code's doing.

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "load" {
    // The load generator takes options rather than suites (LoadBenchmark.swift).
    do {
        try await LoadBenchmark(options: .parse(Array(arguments.dropFirst()))).run()
    } catch let error as BenchUsageError {
        FileHandle.standardError.write(Data("atoll-bench load: \(error)\n".utf8))
        exit(2)
    }
    exit(0)
}
if arguments.first == "compare" {
    let files = Array(arguments.dropFirst())
    guard files.count == 2 else {
        FileHandle.standardError.write(Data("atoll-bench compare A.json B.json\n".utf8))
        exit(2)
    }
    let comparison = BenchResults.comparison(try BenchResults.read(from: files[0]), try BenchResults.read(from: files[1]))
    print(comparison.text)
    exit(comparison.regressions.isEmpty ? 0 : 1)
}
var rest = Array(arguments)
var jsonPath: String?
if let flag = rest.firstIndex(of: "--json") {
    guard flag + 1 < rest.count else {
        FileHandle.standardError.write(Data("atoll-bench: --json needs a path\n".utf8))
        exit(2)
    }
    jsonPath = rest[flag + 1]
    rest.removeSubrange(flag...(flag + 1))
}
let suites = rest.isEmpty ? ["local"] : rest
let machine = BenchResults.machineFacts()
if suites != ["sync-w7-clients"] {
    // Printed, not kept as figures: `--json` has them as the machine's facts.
    print("machine cores \(machine.cores)")
    print(String(format: "machine load_1m %.2f", machine.loadAverage))
    print(String(format: "machine fdatasync_p50 %.3f ms", machine.fdatasyncMilliseconds))
}
let startedAt = Date()
for suite in suites {
    switch suite {
    case "local": try LocalBenchmark().run()
    case "sync": try await SyncBenchmark().run()
    case "reset": try await ResetBenchmark().run()
    case "sync-w7-clients": try await IdleSessionClients().run()  // W7's child process
    case "limits": try await LimitsBenchmark().run()  // L0–L3: what hostile clients cost the server
    case "nodes": try await NodesBenchmark().run()  // W4/W5 on PostgreSQL and W8 with 1–3 nodes
    case "realm-file": try RealmFileBenchmark().run()  // W9: converting a file Realm wrote
    case "import": try await ImportBenchmark().run()  // W10: `atoll data import` of 100,000 documents
    default:
        FileHandle.standardError.write(Data("atoll-bench: unknown suite '\(suite)'; known: local, sync, reset, limits, nodes, realm-file, import; or load [options]\n".utf8))
        exit(2)
    }
}
if let jsonPath {
    try BenchResults(date: startedAt, commit: benchCommit(), suites: suites, machine: machine, figures: Figures.shared.withLock { $0 }).write(to: jsonPath)
}
