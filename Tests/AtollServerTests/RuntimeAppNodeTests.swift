import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// Runtime apps on several nodes of one PostgreSQL database (issue 24): an app kept through one
/// node is served by every node within a bounded wait, a replacement on any node ends the app's
/// sessions on every node, and what no node would accept through the admin API is served by none.
@Suite(postgresInstalled, .serialized) struct RuntimeAppNodeTests {
    static let path = "/api/admin/v1/apps/tasks/configuration"

    /// A partition-sync app whose anonymous users may write what `write` allows.
    static func body(write: String = "true") -> String {
        """
        {"id": "tasks", "developmentMode": false, "syncKind": "partition",
         "authProviders": {"anon-user": true, "local-userpass": false, "api-key": false, "custom-token": false},
         "permissions": [{"read": "true", "write": "\(write)"}]}
        """
    }

    static let secretKey = "the nodes' secret key, 32 bytes or more, shared"

    /// Two nodes in production mode on a new database.
    static func withNodes(_ body: (TestServer, TestServer, String) async throws -> Void) async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let configuration = {
            TestServer.configuration {
                $0.store = url
                $0.developmentMode = false
                $0.secretKey = secretKey
            }
        }
        try await withServer(configuration()) { first in
            try await withServer(configuration()) { second in try await body(first, second, url) }
        }
    }

    @Test(.timeLimit(.minutes(3))) func anAppPutThroughOneNodeIsServedByTheOtherAndAReplacementEndsSessionsEverywhere() async throws {
        try await Self.withNodes { first, second, _ in
            #expect(try await second.http.logIn(app: "tasks", provider: "anon-user").errorCode == "AppNotFound")
            let created = try await first.http.send("PUT", Self.path, bearer: first.running.adminKey, body: Self.body())
            #expect(created.status == 201, "\(created.text)")
            // Kept wrapped under the nodes' secret key: a read of the table shows no configuration.
            let row = try #require(try await first.running.coordinator.store.runtimeApp(id: "tasks"))
            #expect(row.configuration.hasPrefix("aesgcm1:") && !row.configuration.contains("permissions"))

            // Node 2 serves logins and sync within a bounded wait.
            var served = false
            for _ in 0..<400 where !served {
                served = try await second.http.logIn(app: "tasks", provider: "anon-user").status == 200
                if !served { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(served, "node 2 did not serve the app node 1 kept within 20 s")
            let writer = try await SyncTestClient.connect(to: second)
            _ = try await writer.hello()
            let token = try await second.http.anonymousLogin().access_token
            _ = try #require(try await writer.bind(1, partition: .string("home"), token: token).identAnswer)
            writer.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "first"), lastServerVersion: 0)])))
            #expect(try await writer.next { $0.uploadAck }.serverVersion == 1)
            await writer.close()

            // A session on node 1, then the app replaced through node 2: it ends, typed.
            let reader = try await SyncTestClient.connect(to: first)
            _ = try await reader.hello()
            let readerToken = try await first.http.anonymousLogin().access_token
            _ = try #require(try await reader.bind(2, partition: .string("home"), token: readerToken).identAnswer)
            _ = try await reader.downloads(2, through: 1)
            let generation = first.auth.apps.generation(of: "tasks")
            let replaced = try await second.http.send("PUT", Self.path + "?replace=true", bearer: second.running.adminKey, body: Self.body(write: "false"))
            #expect(replaced.object["status"] as? String == "replaced", "\(replaced.text)")
            let ended = try await reader.next(timeout: .seconds(20)) { $0.errorMessage }
            #expect(ended.code == .tryAgainLater, "\(ended)")
            #expect(first.auth.apps.generation(of: "tasks") != generation)
            #expect(first.auth.apps.app(id: "tasks")?.permissions.first?.write == "false")
            await reader.close()
        }
    }

    /// A configuration too large, or one whose rules do not parse, is refused typed through a
    /// node and reaches no other; one written into the table behind the nodes' back (a role that
    /// may write it) is not served by a node that reads it, which keeps what it served.
    @Test(.timeLimit(.minutes(3))) func hostileConfigurationsReachNoNode() async throws {
        try await Self.withNodes { first, second, url in
            let admin = first.running.adminKey
            let oversized = "{\"id\": \"tasks\", \"x\": \"" + String(repeating: "a", count: 300 << 10) + "\"}"
            let refusals = [
                (oversized, "larger"),
                (#"{"id": "tasks", "developmentMode": false, "permissions": [{"read": "owner == == %user.id"}]}"#, "permissions[0].read"),
            ]
            for (body, names) in refusals {
                let answer = try await first.http.send("PUT", Self.path, bearer: admin, body: body)
                #expect(answer.errorCode == "InvalidAppConfiguration", "\(answer.text.prefix(200))")
                #expect((answer.object["error"] as? String)?.contains(names) == true, "\(answer.text.prefix(200))")
            }
            #expect(try await first.running.coordinator.store.runtimeApps().isEmpty)

            #expect(try await first.http.send("PUT", Self.path, bearer: admin, body: Self.body()).status == 201)
            #expect(await Self.waitUntilServed(second))
            let generation = second.auth.apps.generation(of: "tasks")
            let cluster = try await PostgresCluster.shared()
            let hostile = [
                #"{"id": "tasks", "developmentMode": false, "permissions": [{"read": "owner == == 1"}]}"#,
                #"{"id": "another-app", "developmentMode": false}"#,
                "not json at all",
                "{\"id\": \"tasks\", \"permissions\": " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "}",
                "{\"id\": \"tasks\", \"x\": \"" + String(repeating: "a", count: 300 << 10) + "\"}",
            ]
            for configuration in hostile {
                try await cluster.execute("UPDATE runtime_apps SET configuration = '\(configuration.replacingOccurrences(of: "'", with: "''"))' WHERE id = 'tasks'",
                                          onDatabaseOf: url)
                await second.running.runtimeApps?.catchUp()
                #expect(second.auth.apps.generation(of: "tasks") == generation, "\(configuration.prefix(80)) was served")
                #expect(second.auth.apps.app(id: "tasks")?.permissions.first?.read == "true")
            }
        }
    }

    /// A configuration kept while a node's change feed was down (written behind its back here, so
    /// no notification reaches it) is served once the feed listens again.
    @Test(.timeLimit(.minutes(3))) func aChangeMissedWhileTheFeedWasDownIsReadWhenItListensAgain() async throws {
        try await Self.withNodes { first, second, url in
            #expect(try await first.http.send("PUT", Self.path, bearer: first.running.adminKey, body: Self.body()).status == 201)
            #expect(await Self.waitUntilServed(second))
            let generation = second.auth.apps.generation(of: "tasks")
            let cluster = try await PostgresCluster.shared()
            let quiet = Self.body(write: "false").replacingOccurrences(of: "'", with: "''")
            try await cluster.execute("UPDATE runtime_apps SET configuration = '\(quiet)' WHERE id = 'tasks'", onDatabaseOf: url)
            try await Task.sleep(for: .milliseconds(300))
            #expect(second.auth.apps.generation(of: "tasks") == generation, "served without being told")

            // The listening connections drop; each node listens again and reads the table.
            try await cluster.execute("""
                SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
                WHERE datname = current_database() AND query ILIKE 'LISTEN%'
                """, onDatabaseOf: url)
            var caughtUp = false
            for _ in 0..<400 where !caughtUp {
                caughtUp = second.auth.apps.app(id: "tasks")?.permissions.first?.write == "false"
                if !caughtUp { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(caughtUp, "node 2 did not read the runtime app again when its feed came back")
            #expect(second.auth.apps.generation(of: "tasks") != generation)
        }
    }

    static func waitUntilServed(_ node: TestServer) async -> Bool {
        for _ in 0..<400 {
            if node.auth.apps.app(id: "tasks") != nil { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
