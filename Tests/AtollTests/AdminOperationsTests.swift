@_spi(Testing) import Atoll
import AtollAdminClient
import AtollServer
import AtollTesting
import Foundation
import Testing

/// The operators' API against a real server, and what clients see of it.
@MainActor @Suite(.serialized) struct AdminOperationsTests {
    /// A realm whose client resets reach the sync manager's error handler (`.manual()`).
    private func open(_ user: User) async throws -> Realm {
        var configuration = user.configuration(partitionValue: "shire", clientResetMode: .manual())
        configuration.objectTypes = [SyncedTask.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: .always)
    }

    /// Waits (bounded) until `errors` holds an error with `code`.
    private func waitFor(_ code: SyncError.Code, in errors: Recorder<any Error>) async throws -> SyncError? {
        for _ in 0..<200 {
            if let match = errors.all.compactMap({ $0 as? SyncError }).first(where: { $0.code == code }) { return match }
            try await _Concurrency.Task.sleep(nanoseconds: 25_000_000)
        }
        return nil
    }

    @Test func theAdminAPINeedsTheAdminKey() async throws {
        try await withSyncTestServer { server in
            let wrong = AdminClient(server: server.server.baseURL, key: String(repeating: "x", count: 40))
            await #expect { _ = try await wrong.apps() } throws: { error in
                (error as? AdminClientError)?.status == 401
            }
            _ = try await server.app(device: "frodo").login(credentials: .anonymous)
            #expect(try await server.admin.apps().map(\.id) == [server.appId])
            await #expect { _ = try await server.admin.users(app: "nope") } throws: { error in
                (error as? AdminClientError)?.status == 404
            }
        }
    }

    @Test func operatorsListUsersAndSessions() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(frodo)
            let users = try await server.admin.users(app: server.appId)
            #expect(users.map(\.id) == [frodo.id])
            #expect(users.first?.providers == ["anon-user"])
            let sessions = try await server.admin.sessions(app: server.appId)
            #expect(sessions.count == 1)
            #expect(sessions.first?.user == frodo.id)
            #expect(sessions.first?.realm == "s:shire")
            _ = realm
        }
    }

    @Test func terminatingSyncWarnsConnectedClientsAndEnablingItResetsThem() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try await app.login(credentials: .anonymous)
            let realm = try await open(frodo)
            try realm.write { realm.add(SyncedTask(value: ["name": "before"])) }
            try await realm.syncSession!.wait(for: .upload)

            try await server.admin.terminateSync(app: server.appId)
            #expect(try await server.admin.apps().first?.syncEnabled == false)
            let warning = try await waitFor(.serverWarning, in: errors)
            #expect(warning?.localizedDescription.contains("terminated") == true)
            #expect(try await server.admin.sessions(app: server.appId).isEmpty)

            // The client retries; once sync is on again its epoch is unknown: a client reset.
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.reconnect()
            let reset = try await waitFor(.clientResetError, in: errors)
            #expect(reset != nil)
        }
    }

    @Test func disablingAUserEndsItsSessionsAndLogsItOut() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try await app.login(credentials: .anonymous)
            let realm = try await open(frodo)
            try await server.admin.setUserDisabled(app: server.appId, user: frodo.id, true)
            #expect(try await waitFor(.clientUserError, in: errors) != nil)
            #expect(try await server.admin.users(app: server.appId).first?.disabled == true)
            for _ in 0..<200 where frodo.state == .loggedIn { try await _Concurrency.Task.sleep(nanoseconds: 25_000_000) }
            #expect(frodo.state != .loggedIn)
            _ = realm
        }
    }
}
