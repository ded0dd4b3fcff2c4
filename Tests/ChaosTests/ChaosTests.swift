import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

/// Several clients write to one partition through a ``FaultProxy`` that drops, delays,
/// duplicates, reorders and cuts their traffic at random. Once the network heals they must hold
/// the same objects, with every acknowledged write and none twice.
///
/// `ATOLL_CHAOS_SEED` replays a run's faults and writes (not its timing); `ATOLL_CHAOS_SECONDS`
/// sets how long the faults last (6 by default; 600 for a long run).
@MainActor @Suite(.serialized) struct ChaosTests {
    static let clientCount = 3
    static let convergenceTimeout: Duration = .seconds(60)

    private func open(_ user: User, _ partition: String) async throws -> Realm {
        var configuration = user.configuration(partitionValue: partition)
        configuration.objectTypes = [ChaosItem.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: .never)
    }

    @Test(.timeLimit(.minutes(ChaosSettings.timeLimitMinutes)))
    func clientsConvergeWithEveryAcknowledgedWriteUnderRandomNetworkFaults() async throws {
        let seed = ChaosSettings.seed
        let seconds = ChaosSettings.seconds
        print("chaos: seed \(seed) (replay with ATOLL_CHAOS_SEED=\(seed)), \(seconds) s")
        var rng = SeededRandom(seed: seed)
        try await withSyncTestServer { server in
            let proxy = try await FaultProxy.start(upstream: "127.0.0.1", server.port, seed: rng.next())
            // Closed connections get a RST: a FIN before the WebSocket upgrade's answer stalls the
            // client for good (FaultProxyTests.aConnectionClosedBeforeTheUpgradeAnswerIsRetried).
            proxy.resetsConnections = true
            let syncErrors = Recorder<String>()
            var users: [User] = []
            var realms: [Realm] = []
            for client in 0..<Self.clientCount {
                var configuration = AppConfiguration(
                    baseURL: proxy.baseURL, rootDirectory: server.folder.url.appendingPathComponent("devices/chaos-\(client)", isDirectory: true))
                // Frequent pings: a message lost on a connection shows at the next one, and a
                // connection that carries nothing is dropped within seconds.
                configuration.syncTimeouts = SyncTimeoutOptions(connectTimeout: 5_000, pingKeepalivePeriod: 1_000, pongKeepaliveTimeout: 5_000)
                let app = App(id: server.appId, configuration: configuration)
                app.syncManager.errorHandler = { error, _ in syncErrors.append("\(error)") }
                let user = try await app.login(credentials: .anonymous)
                users.append(user)
                realms.append(try await open(user, "chaos"))
            }

            // Faults and writes, switched at random.
            let ledger = WriteLedger()
            var acknowledgements: [Task<Void, Never>] = []
            var faultLog: [String] = []
            let clock = ContinuousClock()
            let end = clock.now + .seconds(seconds)
            var nextSwitch = clock.now
            var counter = 0
            var restarts = 0
            while clock.now < end {
                if clock.now >= nextSwitch {
                    for realm in realms where restartIfStopped(realm) { restarts += 1 }
                    faultLog.append(Self.injectRandomFault(into: proxy, using: &rng))
                    nextSwitch = clock.now + .milliseconds(Int.random(in: 150...600, using: &rng))
                }
                let client = Int.random(in: 0..<Self.clientCount, using: &rng)
                let id = "c\(client)-w\(counter)"
                counter += 1
                try randomWrite(on: realms[client], client: client, id: id, ledger: ledger, using: &rng)
                let session = try #require(realms[client].syncSession)
                acknowledgements.append(Task { @MainActor in
                    // A write is acknowledged when a wait that started after it returns.
                    if (try? await bounded(.seconds(20), "upload of \(id)") { try await session.wait(for: .upload) }) != nil {
                        ledger.acknowledge(id)
                    }
                })
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...60, using: &rng)))
            }

            // The network heals; every client uploads and downloads everything.
            proxy.healAll()
            for realm in realms where restartIfStopped(realm) { restarts += 1 }
            for realm in realms { realm.syncSession?.reconnect() }
            do {
                restarts += try await syncAll(realms, within: Self.convergenceTimeout)
            } catch let error as TimedOut {
                let sessions = realms.enumerated().map { "client \($0): \($1.syncSession.map { "\($0.state)/\($0.connectionState)" } ?? "none")" }
                print("chaos: no convergence (seed \(seed)): \(sessions); \(proxy.openConnectionCount) open proxy connections; "
                    + "proxy: \(proxy.statistics); last faults: \(faultLog.suffix(5))")
                let serverLines = server.server.metrics.exposition().split(separator: "\n").filter {
                    !$0.hasPrefix("#") && ($0.contains("refusals") || $0.contains("sync_sessions") || $0.contains("http_requests"))
                }
                print("chaos: server: \(serverLines)")
                print("chaos: sync errors reported: \(Set(syncErrors.all.suffix(20)))")
                throw error
            }
            for task in acknowledgements { await task.value }
            let acknowledgedDuringChaos = ledger.acknowledged.count

            // What a device that was never there downloads straight from the server.
            let witness = App(id: server.appId, configuration: AppConfiguration(
                baseURL: server.baseURL, rootDirectory: server.folder.url.appendingPathComponent("devices/witness", isDirectory: true)))
            let witnessUser = try await witness.login(credentials: .anonymous)
            var witnessConfiguration = witnessUser.configuration(partitionValue: "chaos")
            witnessConfiguration.objectTypes = [ChaosItem.self]
            let serverRealm = try await Realm(configuration: witnessConfiguration, downloadBeforeOpen: .always)

            // (1) Every replica, and the server, holds the same objects.
            let reference = canonicalDump(realms[0])
            for (client, realm) in realms.enumerated().dropFirst() {
                let dump = canonicalDump(realm)
                let same = dump == reference  // not in the #expect: the dumps would hide the differences
                #expect(same, "client \(client) differs from client 0 (seed \(seed)): \(differences(dump, reference))")
            }
            let serverDump = canonicalDump(serverRealm)
            let serverSame = serverDump == reference
            #expect(serverSame, "the server differs from client 0 (seed \(seed)): \(differences(serverDump, reference))")

            // (2) Every acknowledged write is there; (3) nothing twice. After the final uploads
            // every write is acknowledged, so all of them are checked, on every replica.
            let allWrites = Set(ledger.writes.map(\.id))
            var lost: Set<String> = []
            var duplicated: Set<String> = []
            var checked = 0
            for realm in realms + [serverRealm] {
                let verdict = ledger.verify(allWrites, against: realm)
                checked = verdict.checked
                lost.formUnion(verdict.lost)
                duplicated.formUnion(verdict.duplicated)
            }
            #expect(lost.isEmpty, "lost writes (seed \(seed)): \(lost.sorted().prefix(20))")
            #expect(duplicated.isEmpty, "duplicated writes (seed \(seed)): \(duplicated.sorted().prefix(20))")

            let statistics = proxy.statistics
            print("chaos: \(Self.clientCount) clients × \(seconds) s × \(statistics.faultsInjected) faults injected "
                + "(\(faultLog.count) fault switches, \(restarts) stopped sessions restarted) × \(checked) writes checked (\(acknowledgedDuringChaos) acknowledged during the faults), "
                + "lost = \(lost.count), duplicated = \(duplicated.count); seed \(seed); \(reference.count) objects")
            print("chaos: proxy: \(statistics)")
            let errorCounts = Dictionary(syncErrors.all.map { (String($0.prefix(160)), 1) }, uniquingKeysWith: +)
            print("chaos: sync errors reported: \(errorCounts.sorted { $0.value > $1.value }.map { "\($0.value)× \($0.key)" })")
            #expect(checked == ledger.writes.count && checked > 0)

            for user in users + [witnessUser] { try? await user.logOut() }
            try await proxy.stop()
        }
    }

    /// Replaces the proxy's faults with a random set; returns what it chose.
    private static func injectRandomFault(into proxy: FaultProxy, using rng: inout SeededRandom) -> String {
        proxy.healAll()
        let direction = FaultProxy.Direction.allCases.randomElement(using: &rng)!
        let chance = Double.random(in: 0.05...0.4, using: &rng)
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:
            return "healthy"
        case 1:
            let delay = Duration.milliseconds(Int.random(in: 5...150, using: &rng))
            proxy.set(.init(delay: delay))
            return "delay \(delay)"
        case 2:
            proxy.set(.init(drop: .discard), for: direction)
            return "drop \(direction)"
        case 3:
            proxy.set(.init(drop: .close), for: direction)
            return "drop+close \(direction)"
        case 4:
            proxy.set(.init(duplicate: chance), for: direction)
            return "duplicate \(direction) \(chance)"
        case 5:
            proxy.set(.init(reorder: chance), for: direction)
            return "reorder \(direction) \(chance)"
        case 6:
            proxy.set(.init(cutMidFrame: chance), for: direction)
            return "cut mid-frame \(direction) \(chance)"
        case 7:
            proxy.isBlackHoled = true
            return "black hole"
        case 8:
            proxy.cutAll()
            return "cut all"
        default:
            let faults = FaultProxy.Faults(delay: .milliseconds(Int.random(in: 1...40, using: &rng)), duplicate: chance / 2,
                                           reorder: chance / 2, cutMidFrame: chance / 4)
            proxy.set(faults, for: direction)
            return "mixed \(direction) \(faults)"
        }
    }
}
