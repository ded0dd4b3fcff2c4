import AtollCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A protocol-level load generator (issue 26): many sync sessions over a few WebSockets, no realm
/// files. Sessions are grouped into realms (``Configuration/sessionsPerRealm`` sessions each);
/// every session uploads small changesets on an open-loop schedule, and latency is measured from
/// each write's due time to its `uploadAck` and to every other session's download of it.
///
/// ```swift
/// let generator = try await LoadGenerator.connect(LoadGenerator.Configuration(
///     baseURLs: ["http://127.0.0.1:9090"], appID: "bench", sessions: 2_000, connections: 40, sessionsPerRealm: 20))
/// let phase = await generator.run(rate: 2_000, warmup: 5, duration: 20)
/// await generator.close()
/// ```
package final class LoadGenerator: Sendable {
    package struct Configuration: Sendable, Hashable {
        /// Servers (nodes) to spread the connections over: connection `c` goes to `baseURLs[c % count]`.
        package var baseURLs: [String]
        package var appID: String
        package var sessions: Int
        package var connections: Int
        /// Users logged in (anonymous); connection `c` binds its sessions as user `c % users`.
        package var users: Int
        /// Sessions writing to one realm (1: each its own).
        package var sessionsPerRealm: Int
        /// Payload bytes each write adds.
        package var padding: Int
        /// Realm paths are `s:<prefix>-<group>`.
        package var realmPrefix: String
        /// How long to wait for every session to be identified.
        package var bindTimeout: Double
        /// Connections opened at once.
        package var connectWidth: Int

        package init(baseURLs: [String], appID: String, sessions: Int, connections: Int, users: Int? = nil, sessionsPerRealm: Int = 1,
                    padding: Int = 0, realmPrefix: String = "load", bindTimeout: Double = 60, connectWidth: Int = 32) {
            self.baseURLs = baseURLs
            self.appID = appID
            self.sessions = max(1, sessions)
            self.connections = max(1, min(connections, sessions))
            self.users = max(1, min(users ?? connections, connections))
            self.sessionsPerRealm = max(1, sessionsPerRealm)
            self.padding = padding
            self.realmPrefix = realmPrefix
            self.bindTimeout = bindTimeout
            self.connectWidth = max(1, connectWidth)
        }

        /// Which connection session `index` rides on and its id there (sessions are dealt out in
        /// turn, so one realm's sessions are spread over connections as devices would be).
        package func placement(ofSession index: Int) -> (connection: Int, id: SessionID) {
            (index % connections, SessionID(UInt64(index / connections + 1)))
        }

        package var groups: Int { (sessions + sessionsPerRealm - 1) / sessionsPerRealm }
    }

    /// The error when the generator cannot start (no login).
    package struct StartError: Error, CustomStringConvertible, Sendable {
        package let description: String
    }

    package let configuration: Configuration
    let connections: [LoadConnection]
    private let recorder: LoadRecorder
    private let runners: Locked<[Task<Void, Never>]>
    package let descriptorLimit: UInt64
    package let bytesBefore: Int
    package let bytesBound: Int
    package let started: Date
    /// Sessions identified when binding ended.
    package let boundSessions: Int

    private init(configuration: Configuration, connections: [LoadConnection], recorder: LoadRecorder, runners: [Task<Void, Never>],
                 descriptorLimit: UInt64, bytesBefore: Int, bytesBound: Int, started: Date, boundSessions: Int) {
        self.configuration = configuration
        self.connections = connections
        self.recorder = recorder
        self.runners = Locked(runners)
        self.descriptorLimit = descriptorLimit
        self.bytesBefore = bytesBefore
        self.bytesBound = bytesBound
        self.started = started
        self.boundSessions = boundSessions
    }

    /// Raises the descriptor limit, logs the users in, opens the connections, binds every session
    /// and waits until each is identified or failed (or the bind timeout passes).
    package static func connect(_ configuration: Configuration) async throws -> LoadGenerator {
        let started = Date()
        let limit = ProcessFacts.raiseDescriptorLimit().soft
        var tokens: [String] = []
        for user in 0..<configuration.users {
            let base = configuration.baseURLs[user % configuration.baseURLs.count]
            tokens.append(try await anonymousToken(baseURL: base, appID: configuration.appID))
        }
        // After the logins (the HTTP client's own memory is no session's), before the connections.
        let bytesBefore = ProcessFacts.memory("VmRSS")
        let recorder = LoadRecorder(groups: configuration.groups, sessionsPerRealm: configuration.sessionsPerRealm)
        let timestampBase = Int64(Date().timeIntervalSince1970 * 1000) - Int64(ProcessFacts.now() / 1_000_000)
        var perConnection = Array(repeating: [LoadSession](), count: configuration.connections)
        for index in 0..<configuration.sessions {
            let (connection, id) = configuration.placement(ofSession: index)
            let group = index / configuration.sessionsPerRealm
            perConnection[connection].append(LoadSession(
                id: id, index: index, realm: .string("\(configuration.realmPrefix)-\(group)"),
                sharesRealm: configuration.sessionsPerRealm > 1, timestampBase: timestampBase, padding: configuration.padding))
        }
        let connections = perConnection.enumerated().map { c, sessions in
            let base = configuration.baseURLs[c % configuration.baseURLs.count]
            return LoadConnection(index: c, url: syncURL(baseURL: base, appID: configuration.appID), accessToken: tokens[c % tokens.count],
                                  sessions: sessions, recorder: recorder)
        }
        var runners: [Task<Void, Never>] = []
        let deadline = ProcessFacts.now() + UInt64(configuration.bindTimeout * 1e9)
        // Opened a batch at a time: a thousand upgrades at once only time out.
        for batch in stride(from: 0, to: connections.count, by: configuration.connectWidth) {
            let slice = connections[batch..<min(connections.count, batch + configuration.connectWidth)]
            for connection in slice { runners.append(Task { await connection.run() }) }
            while ProcessFacts.now() < deadline, !slice.allSatisfy({ $0.settledSessions == $0.sessionCount }) {
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
        }
        let bytesBound = ProcessFacts.memory("VmRSS")
        return LoadGenerator(configuration: configuration, connections: connections, recorder: recorder, runners: runners,
                             descriptorLimit: limit, bytesBefore: bytesBefore, bytesBound: bytesBound, started: started,
                             boundSessions: connections.reduce(0) { $0 + $1.activeSessions })
    }

    package var activeSessions: Int { connections.reduce(0) { $0 + $1.activeSessions } }
    package var failedSessions: Int { connections.reduce(0) { $0 + $1.failedSessions } }
    package var failedConnections: Int { connections.count { $0.failure != nil } }
    /// The first reasons sessions or connections failed.
    package var failures: [String] { recorder.snapshot().failures + connections.compactMap(\.failure).prefix(4) }

    /// Holds `rate` writes per second (all sessions together) for `warmup` then `duration`
    /// seconds, then waits up to `drain` seconds for the last writes' acknowledgements and downloads.
    package func run(rate: Double, warmup: Double, duration: Double, drain: Double = 5) async -> LoadReport.Phase {
        let sessions = configuration.sessions
        let perSession = rate / Double(sessions)
        let lead: UInt64 = 100_000_000
        let start = ProcessFacts.now() + lead
        let windowStart = start + UInt64(warmup * 1e9)
        let end = windowStart + UInt64(duration * 1e9)
        recorder.reset(window: windowStart..<end)
        let cpuBefore = ProcessFacts.cpuSeconds()
        for connection in connections {
            let count = connection.sessionCount
            let offset = OpenLoopSchedule.offset(connection: connection.index, of: connections.count, ratePerSession: perSession,
                                                 sessionsPerConnection: count)
            let schedule = OpenLoopSchedule(start: start + offset, ratePerSession: perSession, sessions: count)
            connection.start(phase: LoadConnection.Phase(schedule: schedule, total: schedule.writes(from: 0, to: end).upperBound))
        }
        while ProcessFacts.now() < end || !connections.allSatisfy(\.phaseSent) {
            if connections.allSatisfy({ !$0.isOpen }) { break }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        var members = Array(repeating: 0, count: configuration.groups)
        for connection in connections { connection.activeMembers(into: &members, sessionsPerRealm: configuration.sessionsPerRealm) }
        func expected(_ counts: LoadRecorder.Counts) -> Int {
            zip(counts.writesPerGroup, members).reduce(0) { $0 + $1.0 * max(0, $1.1 - 1) }
        }
        let drainEnd = ProcessFacts.now() + UInt64(drain * 1e9)
        var counts = recorder.snapshot()
        while ProcessFacts.now() < drainEnd, counts.acknowledged < counts.writes || counts.downloads < expected(counts) {
            try? await Task.sleep(nanoseconds: 10_000_000)
            counts = recorder.snapshot()
        }
        var cpu: Double?
        if let before = cpuBefore, let after = ProcessFacts.cpuSeconds() { cpu = after - before }
        return LoadReport.Phase(
            rate: rate, warmupSeconds: warmup, durationSeconds: duration, writes: counts.writes, skipped: counts.skipped,
            acknowledged: counts.acknowledged, expectedDownloads: expected(counts), downloads: counts.downloads,
            uploadsPerSecond: Double(counts.acknowledged) / duration, downloadsPerSecond: Double(counts.downloads) / duration,
            acknowledgement: LoadReport.Latency(counts.acknowledgement), download: LoadReport.Latency(counts.download),
            failedSessions: failedSessions, failures: Array(failures.prefix(4)), generatorCPUSeconds: cpu)
    }

    /// The report of the run so far with `phases`.
    package func report(workload: String, phases: [LoadReport.Phase]) -> LoadReport {
        let formatter = ISO8601DateFormatter()
        return LoadReport(
            workload: workload, date: formatter.string(from: started), machine: ProcessFacts.machine(),
            sessionsRequested: configuration.sessions, sessionsActive: boundSessions,
            connections: connections.count, connectionsFailed: failedConnections, users: configuration.users,
            sessionsPerRealm: configuration.sessionsPerRealm, descriptorLimit: descriptorLimit, generatorBytesBefore: bytesBefore,
            generatorBytesBound: bytesBound, phases: phases)
    }


    /// Closes every connection and waits for them.
    package func close() async {
        for connection in connections { connection.stop() }
        for runner in runners.withLock({ $0 }) { await runner.value }
    }

    // MARK: HTTP

    static func syncURL(baseURL: String, appID: String) -> String {
        let ws = baseURL.hasPrefix("https://") ? "wss://" + baseURL.dropFirst(8) : "ws://" + baseURL.dropFirst(baseURL.hasPrefix("http://") ? 7 : 0)
        return "\(ws)/api/client/v1/app/\(appID)/sync"
    }

    /// A new anonymous user's access token.
    static func anonymousToken(baseURL: String, appID: String) async throws -> String {
        var request = URLRequest(url: URL(string: "\(baseURL)/api/client/v1/app/\(appID)/auth/providers/anon-user/login")!)
        request.httpMethod = "POST"
        request.httpBody = Data("{}".utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let token = object["access_token"] as? String
        else { throw StartError(description: "anonymous login at \(baseURL) for app \(appID) answered \(status): \(String(decoding: data.prefix(200), as: UTF8.self))") }
        return token
    }
}
