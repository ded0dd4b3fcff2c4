import Atoll
import AtollTesting
import Foundation
import Testing

/// Two `atoll-server` processes on one PostgreSQL database behind a TCP proxy standing in for the
/// load balancer: the node the clients use is killed with SIGKILL while they upload, the proxy
/// sends new connections to the other node, and the clients reconnect there and converge. No
/// acknowledged write is lost, none duplicated (issue 14, item 4).
@MainActor @Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed (apt-get install postgresql)"))
struct NodeFailoverTests {
    static let syncTimeout: Duration = .seconds(60)

    @Test(.timeLimit(.minutes(3)))
    func clientsOfAKilledNodeReconnectToAnotherAndLoseNothing() async throws {
        let folder = try TemporaryFolder("atoll-failover")
        defer { folder.remove() }
        let store = try await PostgresCluster.shared().createDatabase()
        let nodes = [
            try await ServerProcess.start(dataDirectory: folder.url.appendingPathComponent("node1", isDirectory: true), arguments: ["--store", store]),
            try await ServerProcess.start(dataDirectory: folder.url.appendingPathComponent("node2", isDirectory: true), arguments: ["--store", store]),
        ]
        let balancer = try await FaultProxy.start(upstream: "127.0.0.1", nodes[0].port)
        func app(_ device: String, _ baseURL: String) -> App { chaosApp("failover", device: device, baseURL: baseURL, in: folder) }
        var users: [User] = []
        defer {
            Task { @MainActor [users] in for user in users { try? await user.logOut() } }
        }
        do {
            var realms: [Realm] = []
            for device in ["frodo", "sam"] {
                let user = try await app(device, balancer.baseURL).login(credentials: .anonymous)
                users.append(user)
                realms.append(try await openChaosRealm(user, partition: "failover"))
            }

            let ledger = WriteLedger()
            try await writeInTurns(realms, ledger: ledger, faultAfter: 40) {
                // Node 1 dies mid-stream; the balancer's health check moves traffic to node 2.
                await nodes[0].kill9()
                balancer.redirect(toPort: nodes[1].port)
                balancer.cutAll()
            }
            let acknowledged = ledger.acknowledged

            // What node 2 has: every write acknowledged by either node, once.
            let witness = try await app("witness", nodes[1].baseURL).login(credentials: .anonymous)
            users.append(witness)
            let stored = try await openChaosRealm(witness, partition: "failover", .always)
            let kept = ledger.verify(acknowledged, against: stored)
            #expect(kept.checked > 0, "no write was acknowledged")
            #expect(kept.lost.isEmpty, "acknowledged writes missing after the failover: \(kept.lost)")
            #expect(kept.duplicated.isEmpty, "duplicated after the failover: \(kept.duplicated)")

            // The clients, now on node 2, upload the rest and converge with every write in.
            _ = try await syncAll(realms, within: Self.syncTimeout)
            #expect(canonicalDump(realms[0]) == canonicalDump(realms[1]), "\(differences(canonicalDump(realms[0]), canonicalDump(realms[1])))")
            for realm in realms {
                let verdict = ledger.verify(Set(ledger.writes.map(\.id)), against: realm)
                #expect(verdict.lost.isEmpty, "writes missing after the failover: \(verdict.lost.sorted())")
                #expect(verdict.duplicated.isEmpty, "writes duplicated after the failover: \(verdict.duplicated.sorted())")
            }
            print("failover: 2 clients, \(ledger.writes.count) writes, \(kept.checked) acknowledged and kept across the kill")
        } catch {
            for (index, node) in nodes.enumerated() { print("node \(index + 1)'s log (last lines):\n\(node.logTail())") }
            print("balancer: \(balancer.statistics)")
            try? await balancer.stop()
            for node in nodes { await node.stop() }
            throw error
        }
        try? await balancer.stop()
        for node in nodes { await node.stop() }
    }
}
