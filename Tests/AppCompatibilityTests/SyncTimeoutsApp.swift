import Atoll
import AtollTesting
import Foundation
import Testing

// An app that tunes its sync client's timeouts, as Realm's docs show it.
private func makeApp(baseURL: String, root: URL) -> App {
    let syncTimeoutOptions = SyncTimeoutOptions(
        connectTimeout: 30000,
        connectionLingerTime: 5000,
        pingKeepalivePeriod: 10000,
        pongKeepaliveTimeout: 10000,
        fastReconnectLimit: 30000
    )
    var configuration = AppConfiguration(baseURL: baseURL, transport: nil, defaultRequestTimeoutMS: 15000, syncTimeouts: syncTimeoutOptions)
    configuration.rootDirectory = root
    return App(id: "test-app", configuration: configuration)
}

@Suite struct SyncTimeoutsApp {
    @Test func anAppWithTunedTimeoutsSyncs() async throws {
        try await withSyncTestServer { server in
            let app = makeApp(baseURL: server.baseURL, root: server.folder.url.appendingPathComponent("devices/timeouts"))
            let user = try await app.login(credentials: .anonymous)
            #expect(app.configuration.syncTimeouts?.pingKeepalivePeriod == 10000)
            let realm = try await Realm(configuration: user.configuration(partitionValue: "timeouts"), downloadBeforeOpen: .always)
            #expect(realm.syncSession != nil)
            try await user.logOut()
        }
    }
}
