import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// Replacing a runtime app's configuration (`PUT …/configuration?replace=true`): its sessions end
/// and bind again under the new rules, and an upload checked under the old rules that reaches the
/// store after the replacement is not integrated: no write is decided by both rule sets.
@Suite struct AppReplacementTests {
    /// A partition-sync app whose anonymous users may read and write `rule` allows.
    static func body(read: String = "true", write: String) -> String {
        """
        {"id": "tasks", "developmentMode": false, "syncKind": "partition",
         "authProviders": {"anon-user": true, "local-userpass": false, "api-key": false, "custom-token": false},
         "permissions": [{"read": "\(read)", "write": "\(write)"}]}
        """
    }

    static let path = "/api/admin/v1/apps/tasks/configuration"

    @Test func anUploadCheckedUnderTheOldRulesIsNotIntegratedAfterTheReplacement() async throws {
        let gate = InterleavingGate()
        try await withServer(TestServer.configuration { $0.developmentMode = false }, interleaving: gate) { server in
            let admin = server.running.adminKey
            let coordinator = server.running.coordinator
            #expect(try await server.http.send("PUT", Self.path, bearer: admin, body: Self.body(write: "true")).status == 201)
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            _ = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "first"), lastServerVersion: 0)])))
            #expect(try await client.next { $0.uploadAck }.serverVersion == 1)

            // The next upload (on base 0: rebased early) waits just before its transaction,
            // checked against the old rules (anyone writes).
            let held = gate.holdNext(.afterEarlyRebase)
            let set = SyncFixtures.changeset(2, timestamp: 1_700_000_000_200, [.set(SyncFixtures.task("t"), path: [.property("title")], value: .string("late"))])
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(set, lastServerVersion: 0)])))
            await held.reached()

            // Replaced by rules under which no one writes; the answer waits for that upload.
            let generation = server.auth.apps.generation(of: "tasks")
            let http = server.http
            let replacing = Task { try await http.send("PUT", Self.path + "?replace=true", bearer: admin, body: Self.body(write: "false")) }
            var waits = 0
            while server.auth.apps.generation(of: "tasks") == generation, waits < 500 {
                waits += 1
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(server.auth.apps.generation(of: "tasks") != generation)
            held.release()
            let answer = try await replacing.value
            #expect(answer.object["status"] as? String == "replaced", "\(answer.text)")

            // The session ended, typed; the late upload was never acknowledged nor integrated.
            let ending = try await client.next { message -> ServerMessage? in
                message.uploadAck != nil || message.errorMessage != nil ? message : nil
            }
            #expect(ending.uploadAck == nil, "the upload checked under the old rules was integrated")
            #expect(ending.errorMessage?.code == .tryAgainLater)
            let realm = try await coordinator.realm(appID: "tasks", path: "s:home")
            #expect(try await coordinator.store.latestServerVersion(realmID: realm.id) == 1)

            // Bound again: the new rules decide (the write is reverted by a compensating write).
            await client.close()
            let next = try await SyncTestClient.connect(to: server)
            _ = try await next.hello()
            let ident = try #require(try await next.bind(2, partition: .string("home"), token: token).identAnswer)
            let again = SyncFixtures.changeset(3, timestamp: 1_700_000_000_300, [.set(SyncFixtures.task("t"), path: [.property("title")], value: .string("again"))])
            next.send(.upload(Upload(session: 2, changesets: [UploadChangeset(again, lastServerVersion: ident.latestServerVersion)])))
            let refused = try await next.next { message -> ErrorMessage? in message.errorMessage }
            #expect(refused.code == .permissionDenied || refused.code == .compensatingWrite, "\(refused)")
            await next.close()
        }
    }
}
