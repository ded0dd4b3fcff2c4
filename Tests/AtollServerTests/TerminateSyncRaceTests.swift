import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// `terminateSync` while clients bind and identify (issue 10 §3): no session survives it at the
/// old epoch and no old epoch stays cached, so no upload is dropped silently afterwards.
@Suite struct TerminateSyncRaceTests {
    /// Deterministic: a session bound before the termination identifies while the histories are
    /// being restarted.
    @Test func aSessionIdentifyingDuringTheTerminationIsEnded() async throws {
        let gate = InterleavingGate()
        try await withServer(interleaving: gate) { server in
            let token = try await SyncFixtures.accessToken(server)
            let coordinator = server.running.coordinator
            let writer = try await SyncTestClient.connect(to: server)
            _ = try await writer.hello()
            _ = try #require(try await writer.bind(1, partition: .string("p0"), token: token).identAnswer)
            writer.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "x"), lastServerVersion: 0)])))
            _ = try await writer.next { $0.uploadAck }
            await writer.close()

            let late = try await SyncTestClient.connect(to: server)
            _ = try await late.hello()
            late.send(.bind(Bind(session: 1, target: .partition(.string("p0")), accessToken: token)))
            late.send(.ping(Ping(timestamp: 1)))
            _ = try await late.next { $0.pong }  // the bind was handled before the termination

            let held = gate.holdNext(.whileTerminating)
            let termination = Task { try await coordinator.terminateSync(appID: "tasks") }
            await held.reached()
            // Identified while the histories are being restarted.
            late.send(.ident(Ident(session: 1, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none)))
            let answer = try await late.next { message -> ServerMessage? in message.identAnswer != nil || message.errorMessage != nil ? message : nil }
            held.release()
            try await termination.value

            if let ident = answer.identAnswer {
                // Answered at an epoch that no longer exists: it must have been ended since.
                _ = ident
                #expect(try await late.next(timeout: .seconds(15)) { $0.errorMessage }.code == .syncDisabled)
            } else {
                #expect(answer.errorMessage?.code == .syncDisabled)
            }
            #expect(await coordinator.sessions(appID: "tasks").isEmpty)
            for (key, cached) in await coordinator.realms where key.appID == "tasks" {
                let stored = try await coordinator.store.realm(appID: "tasks", path: key.path, creatingWith: .none, now: Date())
                #expect(cached.epoch == stored.epoch, "\(key.path): an old epoch stayed cached")
            }
            await late.close()
        }
    }

    @Test func bindsRacingATerminationNeverKeepTheOldEpoch() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            // History in a few realms, so the termination has work to do while binds arrive.
            let setup = try await SyncTestClient.connect(to: server)
            _ = try await setup.hello()
            for i in 0..<5 {
                let session = SessionID(UInt64(i + 1))
                setup.send(.bind(Bind(session: session, target: .partition(.string("p\(i)")), accessToken: token)))
                setup.send(.ident(Ident(session: session, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none)))
                _ = try await setup.next { $0.identAnswer?.session == session ? $0.identAnswer : nil }
                setup.send(.upload(Upload(session: session, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "x"), lastServerVersion: 0)])))
                _ = try await setup.next { $0.uploadAck?.session == session ? $0.uploadAck : nil }
            }
            await setup.close()
            let coordinator = server.running.coordinator

            // Eight clients bind and identify over and over while the termination runs.
            let racers = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for r in 0..<8 {
                        group.addTask {
                            let client = try await SyncTestClient.connect(to: server)
                            _ = try await client.hello()
                            for round in 0..<10 {
                                let session = SessionID(UInt64(round + 1))
                                client.send(.bind(Bind(session: session, target: .partition(.string("p\(r % 5)")), accessToken: token)))
                                client.send(.ident(Ident(session: session, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none)))
                                // Whatever the answer (ident answer, sync disabled), move on.
                                _ = try? await client.next(timeout: .seconds(30)) { message -> Bool? in
                                    message.identAnswer != nil || message.errorMessage != nil ? true : nil
                                }
                            }
                            await client.close()
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await Task.sleep(for: .milliseconds(20))
            try await coordinator.terminateSync(appID: "tasks")
            try await racers.value

            // Nothing bound at an old epoch remains, and every cached realm has the store's epoch.
            #expect(await coordinator.sessions(appID: "tasks").isEmpty)
            for (key, cached) in await coordinator.realms where key.appID == "tasks" {
                let stored = try await server.running.coordinator.store.realm(appID: "tasks", path: key.path, creatingWith: .none, now: Date())
                #expect(cached.epoch == stored.epoch, "\(key.path) cached at \(cached.epoch), stored at \(stored.epoch)")
            }

            // After enabling, a client that identifies gets the new epoch and its upload is acknowledged.
            try await coordinator.enableSync(appID: "tasks")
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let ident = try #require(try await client.bind(1, partition: .string("p0"), token: token).identAnswer)
            let stored = try await coordinator.store.realm(appID: "tasks", path: PartitionValue.string("p0").path, creatingWith: .none, now: Date())
            #expect(ident.epoch == stored.epoch)
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("after", title: "y"), lastServerVersion: ident.latestServerVersion)])))
            #expect(try await client.next { $0.uploadAck }.clientVersion == 1)
            await client.close()
        }
    }
}
