import AtollLoad
import AtollTesting
import Foundation

/// `atoll-bench load`: the protocol-level load generator (AtollLoad) against a server, or against
/// an `atoll-server` it starts in a child process (the one next to this binary), so the server's
/// memory is its own.
///
///     atoll-bench load --preset W11 --json w11.json
///     atoll-bench load --preset W7                                    # 50,000 idle sessions: memory each
///     atoll-bench load --url http://127.0.0.1:9090 --app bench --sessions 5000 --connections 100 \
///         --per-realm 20 --rate 5000 --warmup 5 --duration 20
///     atoll-bench load --sessions 50000 --connections 500 --rate 0      # idle: memory per session
///
/// Options: `--url` (repeat for several nodes), `--app`, `--sessions`, `--connections`, `--users`,
/// `--per-realm` (sessions writing to one realm), `--rate` (writes per second, all sessions; 0 binds
/// and measures memory only), `--rates a,b,c` (several phases), `--warmup`, `--duration`, `--drain`,
/// `--padding` (payload bytes per write), `--workload` (the name in the lines), `--json PATH`.
struct LoadBenchmark {
    struct Options {
        var urls: [String] = []
        var app = "bench"
        var sessions = 1_000
        var connections = 20
        var users: Int?
        var perRealm = 20
        var rates: [Double] = [1_000]
        var warmup = 3.0
        var duration = 10.0
        var drain = 5.0
        var padding = 0
        var workload = "load"
        var json: String?

        static func parse(_ arguments: [String]) throws -> Options {
            var options = Options()
            var rest = arguments[...]
            func value(_ name: String) throws -> String {
                guard let next = rest.popFirst() else { throw BenchUsageError("\(name) needs a value") }
                return next
            }
            func number<T: LosslessStringConvertible>(_ name: String) throws -> T {
                let text = try value(name)
                guard let parsed = T(text) else { throw BenchUsageError("\(name): '\(text)' is not a number") }
                return parsed
            }
            while let argument = rest.popFirst() {
                switch argument {
                case "--preset":
                    let name = try value(argument)
                    guard let preset = presets[name] else { throw BenchUsageError("unknown preset \(name); known: \(presets.keys.sorted())") }
                    options = preset
                case "--url": options.urls.append(try value(argument))
                case "--app": options.app = try value(argument)
                case "--sessions": options.sessions = try number(argument)
                case "--connections": options.connections = try number(argument)
                case "--users": options.users = try number(argument)
                case "--per-realm": options.perRealm = try number(argument)
                case "--rate": options.rates = [try number(argument)]
                case "--rates":
                    options.rates = try value(argument).split(separator: ",").map {
                        guard let rate = Double($0) else { throw BenchUsageError("--rates: '\($0)' is not a number") }
                        return rate
                    }
                case "--warmup": options.warmup = try number(argument)
                case "--duration": options.duration = try number(argument)
                case "--drain": options.drain = try number(argument)
                case "--padding": options.padding = try number(argument)
                case "--workload": options.workload = try value(argument)
                case "--json": options.json = try value(argument)
                default: throw BenchUsageError("unknown option \(argument)")
                }
            }
            return options
        }

        /// W11 (issue 26): 2,000 sessions each writing once a second to shared realms of 20.
        /// W7: 50,000 idle sessions (one realm each) over 500 WebSockets: the server's memory per
        /// session (`W7_server_memory_per_session`), target ≤ 8 KiB.
        static let presets: [String: Options] = {
            var w11 = Options()
            w11.sessions = 2_000
            w11.connections = 40
            w11.perRealm = 20
            w11.rates = [2_000]
            w11.warmup = 5
            w11.duration = 20
            w11.workload = "W11"
            var w7 = Options()
            w7.sessions = 50_000
            w7.connections = 500
            w7.perRealm = 1
            w7.rates = [0]
            w7.workload = "W7"
            return ["W11": w11, "W7": w7]
        }()
    }

    let options: Options

    func run() async throws {
        var server: ServerProcess?
        var folder: URL?
        var urls = options.urls
        if urls.isEmpty {
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-bench-load-\(UUID().uuidString)")
            folder = data
            let groups = (options.sessions + options.perRealm - 1) / max(1, options.perRealm)
            let config = try ScaleOutBenchmark.writeLoadConfiguration(in: data, realms: groups)
            let child = try await ServerProcess.start(dataDirectory: data.appendingPathComponent("server"), arguments: ["--config", config.path])
            server = child
            urls = [child.baseURL]
            print("# atoll-server \(child.executableURL.path) in a child process (pid \(child.processIdentifier ?? 0))")
        }
        defer { if let folder { try? FileManager.default.removeItem(at: folder) } }
        let serverBefore = server.map { ProcessFacts.memory("VmRSS", pid: $0.processIdentifier) } ?? 0
        let configuration = LoadGenerator.Configuration(
            baseURLs: urls, appID: options.app, sessions: options.sessions, connections: options.connections, users: options.users,
            sessionsPerRealm: options.perRealm, padding: options.padding)
        printMachineFacts()
        let generator = try await LoadGenerator.connect(configuration)
        print("# descriptor limit \(generator.descriptorLimit): \(generator.boundSessions) of \(options.sessions) sessions identified over "
            + "\(configuration.connections) connections (\(generator.failedConnections) failed)")
        for failure in generator.failures.prefix(3) { print("# failure: \(failure)") }
        if let server {
            let bytes = ProcessFacts.memory("VmRSS", pid: server.processIdentifier) - serverBefore
            report("atoll", "\(options.workload)_server_memory_per_session", Double(bytes) / 1024 / Double(max(1, generator.boundSessions)), "KiB")
        }
        var phases: [LoadReport.Phase] = []
        for rate in options.rates where rate > 0 {
            phases.append(await generator.run(rate: rate, warmup: options.warmup, duration: options.duration, drain: options.drain))
        }
        await generator.close()
        let result = generator.report(workload: options.workload, phases: phases)
        for line in result.lines() { print(line) }
        if let path = options.json {
            // The same form as every suite's `--json`, so `atoll-bench compare` reads load runs
            // too; the whole report rides along.
            let figures = Figures.shared.withLock { $0 } + result.figures()
            try BenchResults(date: Date(), commit: benchCommit(), suites: ["load"], machine: BenchResults.machineFacts(),
                             figures: figures, load: result).write(to: path)
            print("# report: \(path)")
        }
        if let server { await server.stop() }
    }
}

struct BenchUsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Cores, load average: the facts a figure needs beside it (the cores are shared with whatever else runs).
func printMachineFacts() {
    let machine = ProcessFacts.machine()
    print("# machine: \(machine.cores) cores, load average \(String(format: "%.2f", machine.loadAverage)) (1 min)")
}
