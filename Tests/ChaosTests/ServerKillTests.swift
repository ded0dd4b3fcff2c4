import Atoll
import AtollTesting
import Foundation
import Testing

/// The `atoll-server` executable killed with SIGKILL while two clients upload, then started
/// again on the same data folder and port.
@MainActor @Suite(.serialized) struct ServerKillTests {
    static let syncTimeout: Duration = .seconds(60)

    @Test(.timeLimit(.minutes(3)))
    func everyWriteAcknowledgedBeforeAKill9IsOnTheServerAfterItRestarts() async throws {
        let folder = try TemporaryFolder("atoll-kill9")
        let server = try await ServerProcess.start(dataDirectory: folder.url.appendingPathComponent("server", isDirectory: true))
        func app(_ device: String, _ baseURL: String) -> App { chaosApp("kill9", device: device, baseURL: baseURL, in: folder) }
        var users: [User] = []
        do {
            var realms: [Realm] = []
            for device in ["frodo", "sam"] {
                let user = try await app(device, server.baseURL).login(credentials: .anonymous)
                users.append(user)
                realms.append(try await openChaosRealm(user, partition: "kill9"))
            }

            // Both clients write in quick succession; the server dies mid-stream.
            let ledger = WriteLedger()
            var killed = false
            try await writeInTurns(realms, ledger: ledger, faultAfter: 50) {
                await server.kill9()
                killed = true
            }
            #expect(killed)
            let acknowledged = ledger.acknowledged
            // The clients stay away while the server restarts: what it has is what it kept.
            for realm in realms { realm.syncSession?.suspend() }
            try await server.restart()

            let witnessUser = try await app("witness", server.baseURL).login(credentials: .anonymous)
            users.append(witnessUser)
            let serverRealm = try await openChaosRealm(witnessUser, partition: "kill9", .always)
            let kept = ledger.verify(acknowledged, against: serverRealm)
            #expect(kept.checked > 0, "no write was acknowledged before the kill")
            #expect(kept.lost.isEmpty, "acknowledged writes missing on the server after kill -9: \(kept.lost)")
            #expect(kept.duplicated.isEmpty, "duplicated on the server: \(kept.duplicated)")

            // Back online, the clients upload the rest and end up with the same objects, all writes in them.
            for realm in realms { realm.syncSession?.resume() }
            _ = try await syncAll(realms, within: Self.syncTimeout)
            #expect(canonicalDump(realms[0]) == canonicalDump(realms[1]), "\(differences(canonicalDump(realms[0]), canonicalDump(realms[1])))")
            var lost: Set<String> = []
            var duplicated: Set<String> = []
            for realm in realms {
                let verdict = ledger.verify(Set(ledger.writes.map(\.id)), against: realm)
                lost.formUnion(verdict.lost)
                duplicated.formUnion(verdict.duplicated)
            }
            #expect(lost.isEmpty, "writes missing after restart: \(lost.sorted())")
            #expect(duplicated.isEmpty, "writes duplicated after restart: \(duplicated.sorted())")
            print("kill -9: 2 clients, \(ledger.writes.count) writes, \(kept.checked) acknowledged before the kill and kept, "
                + "lost = \(lost.count), duplicated = \(duplicated.count)")
        } catch {
            for user in users { try? await user.logOut() }
            await server.stop()
            folder.remove()
            throw error
        }
        for user in users { try? await user.logOut() }
        await server.stop()
        folder.remove()
    }
}
