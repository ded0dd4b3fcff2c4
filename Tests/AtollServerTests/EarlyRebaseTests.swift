import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// Uploads rebased before their transaction (outside the store's write lock), with other uploads
/// integrated in between: the history is what rebasing everything under the lock would give.
@Suite struct EarlyRebaseTests {
    static func set(_ version: Int64, _ title: String, timestamp: Int64) -> Changeset {
        SyncFixtures.changeset(version, timestamp: timestamp, [.set(SyncFixtures.task("t"), path: [.property("title")], value: .string(title))])
    }

    @Test func anotherClientsUploadInBetweenIsRebasedOverInsideTheLock() async throws {
        let gate = InterleavingGate()
        try await withServer(interleaving: gate) { server in
            let coordinator = server.running.coordinator
            let token = try await SyncFixtures.accessToken(server)
            let a = try await SyncTestClient.connect(to: server), b = try await SyncTestClient.connect(to: server)
            for client in [a, b] { _ = try await client.hello() }
            let identA = try #require(try await a.bind(1, partition: .string("home"), token: token).identAnswer)
            a.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "first"), lastServerVersion: 0)])))
            _ = try await a.next { $0.uploadAck }
            let identB = try #require(try await b.bind(1, partition: .string("home"), token: token).identAnswer)

            // A uploads on base 0 (its own v1 since): rebased early, then paused before its transaction.
            let held = gate.holdNext(.afterEarlyRebase)
            a.send(.upload(Upload(session: 1, changesets: [UploadChangeset(Self.set(2, "from A", timestamp: 1_700_000_000_200), lastServerVersion: 0)])))
            await held.reached()
            // B's upload lands in between.
            b.send(.upload(Upload(session: 1, changesets: [UploadChangeset(Self.set(1, "from B", timestamp: 1_700_000_000_100), lastServerVersion: identB.latestServerVersion)])))
            #expect(try await b.next { $0.uploadAck }.serverVersion == 2)
            held.release()
            #expect(try await a.next { $0.uploadAck }.serverVersion == 3)

            // What rebasing A's upload over the whole history after its base gives.
            let history = try await coordinator.store.history(realmID: try await coordinator.realm(appID: "tasks", path: "s:home").id, after: 0, maxBytes: 1 << 20)
            #expect(history.map(\.serverVersion) == [1, 2, 3])
            let batch = UploadBatch(fileIdent: identA.fileIdent.ident, baseServerVersion: 0, changesets: [Self.set(2, "from A", timestamp: 1_700_000_000_200)])
            let expected = try ServerIntegrator.integrate(
                batch, over: SyncCoordinator.skippingOwnPrefix(of: Array(history.prefix(2)), for: batch), lastIntegratedClientVersion: 1)
            #expect(history[2].changeset.instructions == expected.first?.instructions)
            #expect(await coordinator.rebasedAgain == 0, "another client's entry in between is rebased over, not a reason to start again")
            for client in [a, b] { await client.close() }
        }
    }

    /// The uploader's own changeset integrated in between (a second connection of the same client
    /// file re-sending it): the early rebase no longer fits, the upload is rebased again under the
    /// lock, and nothing is integrated twice.
    @Test func theUploadersOwnChangesetInBetweenMakesItRebaseAgain() async throws {
        let gate = InterleavingGate()
        try await withServer(interleaving: gate) { server in
            let coordinator = server.running.coordinator
            let token = try await SyncFixtures.accessToken(server)
            let a = try await SyncTestClient.connect(to: server)
            _ = try await a.hello()
            let ident = try #require(try await a.bind(1, partition: .string("home"), token: token).identAnswer)
            a.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "first"), lastServerVersion: 0)])))
            _ = try await a.next { $0.uploadAck }

            let held = gate.holdNext(.afterEarlyRebase)
            let upload = Upload(session: 1, changesets: [UploadChangeset(Self.set(2, "again", timestamp: 1_700_000_000_200), lastServerVersion: 0)])
            a.send(.upload(upload))
            await held.reached()
            // The same client file on a second connection re-sends the same changeset meanwhile.
            let twin = try await SyncTestClient.connect(to: server)
            _ = try await twin.hello()
            _ = try #require(try await twin.bind(1, partition: .string("home"), token: token, file: ident.fileIdent,
                                                 serverVersion: 1, epoch: ident.epoch).identAnswer)
            twin.send(.upload(Upload(session: 1, changesets: [UploadChangeset(Self.set(2, "again", timestamp: 1_700_000_000_200), lastServerVersion: 1)])))
            #expect(try await twin.next { $0.uploadAck }.serverVersion == 2)
            held.release()
            #expect(try await a.next { $0.uploadAck }.clientVersion == 2)
            let realmID = try await coordinator.realm(appID: "tasks", path: "s:home").id
            #expect(try await coordinator.store.history(realmID: realmID, after: 0, maxBytes: 1 << 20).map(\.serverVersion) == [1, 2],
                    "the re-sent changeset is integrated once")
            #expect(await coordinator.rebasedAgain == 1, "the early rebase was dropped and done again under the lock")
            await a.close()
            await twin.close()
        }
    }
}
