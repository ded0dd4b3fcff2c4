import AtollCore
import AtollTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Atomics
import HummingbirdWSClient
import Logging
import NIOCore

/// What hostile or careless clients cost the server (issue 10's figures): the server runs as a
/// child process (`atoll-server` next to this binary) so its resident memory is its own.
///
/// - `L1`: 1,000 WebSocket connections from one address; how many the server refuses, its RSS.
/// - `L2`: one client streams uploads (1 MiB values) as fast as the socket takes them, far faster
///   than the server integrates; the server's peak RSS and the bytes it took in.
/// - `L3`: 1,000 wrong passwords for one account, 32 at a time, while another user logs in over
///   and over; the 429s, and that user's login latency.
struct LimitsBenchmark {
    /// Bytes L2 streams (`ATOLL_BENCH_STREAM_MB`, 2,048 by default).
    var streamBytes = (Int(ProcessInfo.processInfo.environment["ATOLL_BENCH_STREAM_MB"] ?? "") ?? 2_048) << 20

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-bench-limits-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess.start(dataDirectory: folder)
        defer { Task { await server.stop() } }
        let idle = server.residentBytes
        report("atoll", "L0_server_rss_idle", Double(idle) / 1e6, "MB")
        try await connectionFlood(server)
        try await uploadStream(server)
        try await loginFlood(server)
        await server.stop()
    }

    // MARK: L1

    func connectionFlood(_ server: ServerProcess) async throws {
        let url = "ws://127.0.0.1:\(server.port)/api/client/v1/app/bench/sync"
        let refused = Counter(), admitted = Counter()
        let released = Counter()
        let peak = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<1_000 {
                group.addTask {
                    let answered = Counter()
                    defer { if answered.value == 0 { refused.add(1) } }  // refused before the upgrade (HTTP 429)
                    try? await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: Self.quiet) { inbound, outbound, _ in
                        answered.add(1)
                        switch try await Self.helloAnswer(inbound, outbound) {
                        case .hello?:
                            admitted.add(1)
                            while released.value == 0 { try await Task.sleep(for: .milliseconds(50)) }  // open until counted
                        default:
                            refused.add(1)  // an error, or closed without a word
                        }
                    }
                }
            }
            // Until every connection has its answer (a minute at most), sampling the server's memory.
            let deadline = ContinuousClock.now + .seconds(60)
            while refused.value + admitted.value < 1_000, ContinuousClock.now < deadline {
                peak.max(server.residentBytes)
                try await Task.sleep(for: .milliseconds(20))
            }
            peak.max(server.residentBytes)
            released.add(1)
            if refused.value + admitted.value < 1_000 { group.cancelAll() }
            try await group.waitForAll()
        }
        report("atoll", "L1_flood_unanswered", Double(1_000 - refused.value - admitted.value), "connections")
        report("atoll", "L1_flood_admitted", Double(admitted.value), "connections")
        report("atoll", "L1_flood_refused", Double(refused.value), "connections")
        report("atoll", "L1_flood_server_rss_peak", Double(peak.value) / 1e6, "MB")
    }

    // MARK: L2

    func uploadStream(_ server: ServerProcess) async throws {
        let token = try await Self.anonymousToken(server)
        let url = "ws://127.0.0.1:\(server.port)/api/client/v1/app/bench/sync"
        // L1's connections close asynchronously: wait until the address is admitted again.
        for _ in 0..<100 {
            let admitted = Counter()
            try? await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: Self.quiet) { inbound, outbound, _ in
                if case .hello? = try await Self.helloAnswer(inbound, outbound) { admitted.add(1) }
            }
            if admitted.value > 0 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let sent = Counter(), peak = Counter()
        let done = Counter()
        let value = String(repeating: "x", count: 1 << 20)
        let task = ObjectSchema(name: "Blob", properties: [Property(name: "_id", type: .string, isPrimaryKey: true), Property(name: "data", type: .string)])
        let sampler = Task {
            while done.value == 0 {
                peak.max(server.residentBytes)
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        let start = ContinuousClock.now
        let target = streamBytes
        try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: Self.quiet) { inbound, outbound, _ in
            var framer = MessageFramer(maxFrameBytes: 256 << 10)
            func send(_ message: ClientMessage) async throws {
                for frame in framer.frames(for: message.encoded()) { try await outbound.write(.binary(ByteBuffer(bytes: frame))) }
            }
            try await send(.hello(ClientHello(versions: ProtocolVersion.supported, userAgent: "bench")))
            try await send(.bind(Bind(session: 1, target: .partition(.string("stream")), accessToken: token)))
            try await send(.ident(Ident(session: 1, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none)))
            // Read (and drop) whatever the server answers, so its writes never block on us.
            let reader = Task { for try await _ in inbound {} }
            defer { reader.cancel() }
            try await Task.sleep(for: .milliseconds(200))  // the ident answer: uploads need a bound session
            let id = ObjectID(type: "Blob", primaryKey: .string("b"))
            var version: Int64 = 1
            try await send(.upload(Upload(session: 1, changesets: [UploadChangeset(Changeset(version: version, timestamp: 1, instructions: [
                .addTable(task), .createObject(id),
            ]), lastServerVersion: 0)])))
            while sent.value < target {
                version += 1
                let changeset = Changeset(version: version, timestamp: version, instructions: [.set(id, path: [.property("data")], value: .string(value))])
                // Uploads on base 0, the way a client that never hears back keeps sending.
                try await send(.upload(Upload(session: 1, changesets: [UploadChangeset(changeset, lastServerVersion: 0)])))
                sent.add(value.utf8.count)
            }
        }
        done.add(1)
        await sampler.value
        let seconds = Double((ContinuousClock.now - start).components.seconds)
        report("atoll", "L2_stream_sent", Double(sent.value) / 1e6, "MB")
        report("atoll", "L2_stream_rate", Double(sent.value) / 1e6 / max(seconds, 1), "MB/s")
        report("atoll", "L2_stream_server_rss_peak", Double(peak.value) / 1e6, "MB")
    }

    // MARK: L3

    func loginFlood(_ server: ServerProcess) async throws {
        let base = URL(string: server.baseURL)!
        _ = try await Self.post(base, "/api/client/v1/app/bench/auth/providers/local-userpass/register", ["email": "victim@example.com", "password": "password1"])
        _ = try await Self.post(base, "/api/client/v1/app/bench/auth/providers/local-userpass/register", ["email": "other@example.com", "password": "password2"])
        let statuses = Locked<[Int: Int]>([:])
        let flooding = Counter()
        let other = Task {
            var latencies: [Double] = []
            while flooding.value == 0 {
                let start = ContinuousClock.now
                let status = try await Self.post(base, "/api/client/v1/app/bench/auth/providers/local-userpass/login", ["username": "other@example.com", "password": "password2"])
                if status == 200 { latencies.append(Double((ContinuousClock.now - start).components.attoseconds) / 1e15 + Double((ContinuousClock.now - start).components.seconds) * 1e3) }
            }
            return latencies
        }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            var launched = 0
            func launch() {
                group.addTask {
                    try await Self.post(base, "/api/client/v1/app/bench/auth/providers/local-userpass/login", ["username": "victim@example.com", "password": "wrong-password"])
                }
                launched += 1
            }
            for _ in 0..<32 { launch() }
            while let status = try await group.next() {
                statuses.withLock { $0[status, default: 0] += 1 }
                if launched < 1_000 { launch() }
            }
        }
        let floodSeconds = Double((ContinuousClock.now - start).components.seconds) + Double((ContinuousClock.now - start).components.attoseconds) / 1e18
        flooding.add(1)
        let latencies = try await other.value.sorted()
        let counts = statuses.withLock { $0 }
        report("atoll", "L3_flood_seconds", floodSeconds, "s")
        report("atoll", "L3_flood_429", Double(counts[429, default: 0]), "responses")
        report("atoll", "L3_flood_401", Double(counts[401, default: 0]), "responses")
        if !latencies.isEmpty {
            report("atoll", "L3_other_login_p50", latencies[latencies.count / 2], "ms")
            report("atoll", "L3_other_login_p99", latencies[min(latencies.count - 1, latencies.count * 99 / 100)], "ms")
        }
    }

    // MARK: Helpers

    /// Sends hello on a new connection and returns the server's first message (nil: it closed).
    static func helloAnswer(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async throws -> ServerMessage? {
        var framer = MessageFramer(maxFrameBytes: 16 << 10)
        for frame in framer.frames(for: ClientMessage.hello(ClientHello(versions: ProtocolVersion.supported, userAgent: "bench")).encoded()) {
            try await outbound.write(.binary(ByteBuffer(bytes: frame)))
        }
        var reassembler = MessageReassembler()
        for try await frame in inbound {
            guard let bytes = try reassembler.receive(Array(frame.data.readableBytesView)) else { continue }
            return try ServerMessage(decoding: bytes)
        }
        return nil
    }

    static let quiet: Logger = {
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        return logger
    }()

    static func post(_ base: URL, _ path: String, _ json: [String: String]) async throws -> Int {
        var request = URLRequest(url: URL(string: path, relativeTo: base)!)
        request.httpMethod = "POST"
        request.httpBody = try JSONSerialization.data(withJSONObject: json)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    static func anonymousToken(_ server: ServerProcess) async throws -> String {
        var request = URLRequest(url: URL(string: "\(server.baseURL)/api/client/v1/app/bench/auth/providers/anon-user/login")!)
        request.httpMethod = "POST"
        request.httpBody = Data("{}".utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, _) = try await URLSession.shared.data(for: request)
        return ((try JSONSerialization.jsonObject(with: data)) as? [String: Any])?["access_token"] as? String ?? ""
    }

}

/// A counter tasks share.
final class Counter: Sendable {
    private let storage = ManagedAtomic<Int>(0)
    var value: Int { storage.load(ordering: .relaxed) }
    func add(_ n: Int) { storage.add(n, ordering: .relaxed) }

    /// Raises the value to `candidate` if it is larger.
    func max(_ candidate: Int) {
        var current = storage.load(ordering: .relaxed)
        while candidate > current {
            let (exchanged, original) = storage.compareExchange(expected: current, desired: candidate, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}

extension ServerProcess {
    /// The child's resident memory (VmRSS of /proc), 0 when it cannot be read.
    var residentBytes: Int {
        guard let pid = processIdentifier,
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return kilobytes * 1024
    }
}
