import AtollServer
import Testing

/// Apps: creation, listing, sync on or off, an operator's runtime settings.
extension StoreContract {
    static func appsAreCreatedOnceAndListedByID(_ store: any ServerStore) async throws {
        #expect(try await store.apps() == [])
        #expect(try await store.app(id: "tasks") == nil)
        try await store.createApp(StoredApp(id: "tasks", createdAt: at(0)))
        try await store.createApp(StoredApp(id: "b", createdAt: at(1)))
        try await store.createApp(StoredApp(id: "a", createdAt: at(2)))

        #expect(try await store.app(id: "tasks") == StoredApp(id: "tasks", createdAt: at(0)))
        #expect(try await store.app(id: "c") == nil)
        #expect(try await store.apps() == [
            StoredApp(id: "a", createdAt: at(2)), StoredApp(id: "b", createdAt: at(1)), StoredApp(id: "tasks", createdAt: at(0)),
        ])

        // Every server start creates its configured apps again: that changes nothing, not even
        // what an operator set since.
        #expect(try await store.setSyncEnabled(appID: "tasks", false))
        #expect(try await store.setClientRecovery(appID: "tasks", true))
        #expect(try await store.setMaxOfflineTime(appID: "tasks", 60))
        try await store.createApp(StoredApp(id: "tasks", createdAt: at(100)))
        #expect(try await store.app(id: "tasks")
            == StoredApp(id: "tasks", createdAt: at(0), syncEnabled: false, clientRecovery: true, maxOfflineTime: 60))
        #expect(try await store.apps().map(\.id) == ["a", "b", "tasks"])
    }

    static func createAppRecordsTheAppsSettings(_ store: any ServerStore) async throws {
        let app = StoredApp(id: "tasks", createdAt: at(0), syncEnabled: false, clientRecovery: false, maxOfflineTime: 3600)
        try await store.createApp(app)
        let stored = try #require(try await store.app(id: "tasks"))
        #expect(stored.id == app.id)
        #expect(stored.createdAt == app.createdAt)
        #expect(stored == app)
    }

    static func syncIsTurnedOffAndOn(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await makeApp(store, "other")
        #expect(try await store.app(id: appID)?.syncEnabled == true)

        #expect(try await store.setSyncEnabled(appID: appID, false))
        #expect(try await store.app(id: appID)?.syncEnabled == false)
        #expect(try await store.app(id: "other")?.syncEnabled == true)
        // The same value again: the app exists, so true.
        #expect(try await store.setSyncEnabled(appID: appID, false))
        #expect(try await store.app(id: appID)?.syncEnabled == false)

        #expect(try await store.setSyncEnabled(appID: appID, true))
        #expect(try await store.app(id: appID)?.syncEnabled == true)

        #expect(try await store.setSyncEnabled(appID: "nope", false) == false)
        #expect(try await store.setSyncEnabled(appID: "nope", true) == false)
        #expect(try await store.app(id: "nope") == nil)
    }

    static func runtimeSettingsAreSetAndCleared(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await makeApp(store, "other")
        let fresh = try #require(try await store.app(id: appID))
        #expect(fresh.clientRecovery == nil)
        #expect(fresh.maxOfflineTime == nil)

        #expect(try await store.setClientRecovery(appID: appID, false))
        #expect(try await store.app(id: appID)?.clientRecovery == false)
        #expect(try await store.setClientRecovery(appID: appID, true))
        #expect(try await store.app(id: appID)?.clientRecovery == true)

        #expect(try await store.setMaxOfflineTime(appID: appID, 3600))
        #expect(try await store.app(id: appID)?.maxOfflineTime == 3600)
        #expect(try await store.app(id: appID)?.clientRecovery == true, "one setting leaves the other")
        #expect(try await store.setMaxOfflineTime(appID: appID, 0.5))
        #expect(try await store.app(id: appID)?.maxOfflineTime == 0.5)
        #expect(try await store.setMaxOfflineTime(appID: appID, 0))
        #expect(try await store.app(id: appID)?.maxOfflineTime == 0, "0 (keep all history) is not nil")

        #expect(try await store.setClientRecovery(appID: appID, nil))
        #expect(try await store.app(id: appID)?.clientRecovery == nil)
        #expect(try await store.app(id: appID)?.maxOfflineTime == 0)
        #expect(try await store.setMaxOfflineTime(appID: appID, nil))
        #expect(try await store.app(id: appID) == StoredApp(id: appID, createdAt: at(0)))
        #expect(try await store.app(id: "other") == StoredApp(id: "other", createdAt: at(0)))

        #expect(try await store.setClientRecovery(appID: "nope", true) == false)
        #expect(try await store.setClientRecovery(appID: "nope", nil) == false)
        #expect(try await store.setMaxOfflineTime(appID: "nope", 60) == false)
        #expect(try await store.setMaxOfflineTime(appID: "nope", nil) == false)
        #expect(try await store.app(id: "nope") == nil)
    }

    static func runtimeAppsAreKeptAndReplaced(_ store: any ServerStore) async throws {
        #expect(try await store.runtimeApps() == [])
        #expect(try await store.runtimeApp(id: "tasks") == nil)
        let first = StoredRuntimeApp(id: "tasks", configuration: #"{"id": "tasks"}"#, updatedAt: at(1))
        #expect(try await store.putRuntimeApp(first, ifAbsent: false))
        #expect(try await store.putRuntimeApp(StoredRuntimeApp(id: "b", configuration: #"{"id": "b"}"#, updatedAt: at(2)), ifAbsent: true))
        #expect(try await store.runtimeApp(id: "tasks") == first)
        #expect(try await store.runtimeApps().map(\.id) == ["b", "tasks"])

        // The one-time import keeps what is there; a put replaces it.
        let imported = StoredRuntimeApp(id: "tasks", configuration: #"{"id": "tasks", "old": true}"#, updatedAt: at(3))
        #expect(try await store.putRuntimeApp(imported, ifAbsent: true) == false)
        #expect(try await store.runtimeApp(id: "tasks") == first)
        let replaced = StoredRuntimeApp(id: "tasks", configuration: String(repeating: "x", count: 300_000), updatedAt: at(4))
        #expect(try await store.putRuntimeApp(replaced, ifAbsent: false))
        #expect(try await store.runtimeApp(id: "tasks") == replaced)
        #expect(try await store.runtimeApps().count == 2)
        // Apart from the apps' rows: no app row is needed, none is made.
        #expect(try await store.apps() == [])
    }
}
