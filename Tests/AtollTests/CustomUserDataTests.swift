@_spi(Testing) import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

/// The object a test app keeps its users' custom data in.
final class MemberSettings: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var userId = ""
    @Persisted var favoriteColor = ""
    @Persisted var age = 0
    @Persisted var joined = Date(timeIntervalSince1970: 0)
    @Persisted var tags: List<String>
}

/// Custom user data end to end: an object synced by a device becomes `user.customData`.
extension SerialAppServicesTests {
@MainActor @Suite(.serialized) struct CustomUserDataTests {
    static let settings = ServerConfiguration.CustomUserData(type: "MemberSettings", userIdField: "userId")

    private func withServer(maxBytes: Int = 4096, _ body: (SyncTestServer) async throws -> Void) async throws {
        var settings = Self.settings
        settings.maxBytes = maxBytes
        try await withSyncTestServer({ [settings] configuration in
            var app = ServerConfiguration.App(id: "test-app")
            app.customUserData = settings
            // Custom user data needs a write rule: each user writes only their own settings.
            app.permissions = [.init(type: "MemberSettings", write: "userId == %user.id")]
            configuration.apps = [app]
        }) { server in
            try await body(server)
        }
    }

    /// Writes `user`'s settings object from a flexible-sync realm and waits for the upload.
    private func writeSettings(_ user: User, _ fill: @escaping (MemberSettings) -> Void) async throws {
        var configuration = user.flexibleSyncConfiguration()
        configuration.objectTypes = [MemberSettings.self]
        let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
        let subscriptions = realm.subscriptions
        if subscriptions.first(named: "all") == nil {
            try await subscriptions.update { subscriptions.append(QuerySubscription<MemberSettings>(name: "all")) }
        }
        try realm.write {
            let object = realm.objects(MemberSettings.self).first { $0.userId == user.id } ?? {
                let created = MemberSettings(value: ["userId": user.id])
                realm.add(created)
                return created
            }()
            fill(object)
        }
        try await realm.syncSession!.wait(for: .upload)
    }

    @Test func customDataAppearsAfterRefreshOnceTheObjectSynced() async throws {
        try await withServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "ann@example.com", password: "s3cret-pw")
            let user = try await app.login(credentials: .emailPassword(email: "ann@example.com", password: "s3cret-pw"))
            #expect(user.customData.isEmpty)
            try await writeSettings(user) { settings in
                settings.favoriteColor = "blue"
                settings.age = 42
                settings.joined = Date(timeIntervalSince1970: 1_700_000_000)
                settings.tags.append(objectsIn: ["admin", "beta"])
            }
            let refreshed = try await user.refreshCustomData()
            #expect(refreshed["favoriteColor"]??.stringValue == "blue")
            #expect(refreshed == user.customData)
            let data = user.customData
            #expect(data["favoriteColor"]??.stringValue == "blue")
            #expect(data["age"]??.asInt() == 42)
            #expect(data["userId"]??.stringValue == user.id)
            #expect(data["joined"]??.dateValue == Date(timeIntervalSince1970: 1_700_000_000))
            #expect(data["_id"]??.objectIdValue != nil)
            #expect(data["tags"]??.arrayValue == ["admin", "beta"])

            // A later login, on another device, has it at once.
            let other = try await server.app(device: "tablet")
                .login(credentials: .emailPassword(email: "ann@example.com", password: "s3cret-pw"))
            #expect(other.customData["favoriteColor"]??.stringValue == "blue")

            // A change shows after the next refresh, through the completion form too.
            try await writeSettings(user) { $0.favoriteColor = "green" }
            let viaCompletion: String? = await withCheckedContinuation { continuation in
                user.refreshCustomData { result in
                    continuation.resume(returning: (try? result.get())?["favoriteColor"] as? String)
                }
            }
            #expect(viaCompletion == "green")
            #expect(user.customData["favoriteColor"]??.stringValue == "green")
        }
    }

    @Test func aDocumentLargerThanTheCapIsLeftOut() async throws {
        try await withServer(maxBytes: 256) { server in
            let user = try await server.app().login(credentials: .anonymous)
            try await writeSettings(user) { $0.favoriteColor = "red" }
            #expect(try await user.refreshCustomData()["favoriteColor"] == .string("red"))
            try await writeSettings(user) { $0.favoriteColor = String(repeating: "r", count: 1000) }
            let refreshed = try await user.refreshCustomData()
            #expect(refreshed.isEmpty)
            #expect(user.customData.isEmpty)
            #expect(try #require(user.accessToken).utf8.count < 2000)
        }
    }

    /// `userId` is not the key: when two objects hold a user's id, neither is signed into the
    /// token (a forged duplicate must not shadow the real one, nor the other way round).
    @Test func twoObjectsHoldingTheUsersIdGiveNoCustomData() async throws {
        try await withServer { server in
            let user = try await server.app().login(credentials: .anonymous)
            try await writeSettings(user) { $0.favoriteColor = "blue" }
            #expect(try await user.refreshCustomData()["favoriteColor"] == .string("blue"))

            var configuration = user.flexibleSyncConfiguration()
            configuration.objectTypes = [MemberSettings.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            try realm.write { realm.add(MemberSettings(value: ["userId": user.id, "favoriteColor": "red"])) }
            try await realm.syncSession!.wait(for: .upload)
            #expect(realm.objects(MemberSettings.self).count == 2)
            #expect(try await user.refreshCustomData().isEmpty)
            #expect(user.customData.isEmpty)
        }
    }

    @Test func withoutCustomUserDataSettingsTheDocumentIsEmpty() async throws {
        try await withSyncTestServer { server in
            let user = try await server.app().login(credentials: .anonymous)
            try await writeSettings(user) { $0.favoriteColor = "blue" }
            #expect(try await user.refreshCustomData().isEmpty)
            #expect(user.customData == [:])
        }
    }
}
}
