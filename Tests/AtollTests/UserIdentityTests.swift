@_spi(Testing) import Atoll
import AtollAdminClient
import AtollServer
import AtollTesting
import Foundation
import Testing

/// Linking identities, Apple and Google sign-in, server API keys, deleting users, completion
/// forms and moving an app to another address, against a real server on 127.0.0.1.
extension SerialAppServicesTests {
@MainActor @Suite(.serialized) struct UserIdentityTests {
    static let syncTimeout: Duration = .seconds(30)

    private func open(_ user: User, _ partition: String = "shire", _ behavior: Realm.OpenBehavior = .never) async throws -> Realm {
        var configuration = user.configuration(partitionValue: partition)
        configuration.objectTypes = [SyncedTask.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: behavior)
    }

    private func upload(_ realm: Realm) async throws {
        let session = try #require(realm.syncSession)
        try await withTimeout(Self.syncTimeout) { try await session.wait(for: .upload) }
    }

    @Test func anAnonymousUserUpgradedToAnEmailAccountKeepsItsIdAndData() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            let user = try await app.login(credentials: .anonymous)
            let realm = try await open(user)
            try realm.write { realm.add(SyncedTask(value: ["name": "Plant potatoes"])) }
            try await upload(realm)

            try await app.emailPasswordAuth.registerUser(email: "sam@shire.me", password: "potatoes")
            let linked = try await user.linkUser(credentials: .emailPassword(email: "sam@shire.me", password: "potatoes"))
            #expect(linked === user && linked.id == user.id)
            #expect(user.identities.map(\.providerType) == ["anon-user", "local-userpass"])
            #expect(user.identities.last?.identifier == "sam@shire.me")

            // No longer anonymous: logging out keeps the user, which logs in again by e-mail.
            try await user.logOut()
            #expect(user.state == .loggedOut)
            let again = try await app.login(credentials: .emailPassword(email: "sam@shire.me", password: "potatoes"))
            #expect(again.id == user.id)
            #expect(again.identities.map(\.providerType) == ["anon-user", "local-userpass"])
            // Another device sees the data the anonymous user wrote.
            let phone = try await server.app(device: "phone").login(credentials: .emailPassword(email: "sam@shire.me", password: "potatoes"))
            #expect(phone.id == user.id)
            let other = try await open(phone, "shire", .always)
            #expect(other.objects(SyncedTask.self).map(\.name) == ["Plant potatoes"])
            // A new anonymous login is a new user: the linked one is not reused as anonymous.
            #expect(try await app.login(credentials: .anonymous).id != user.id)
        }
    }

    @Test func linkingRefusalsAreAppErrors() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "frodo@shire.me", password: "ring-bearer")
            let frodo = try await app.login(credentials: .emailPassword(email: "frodo@shire.me", password: "ring-bearer"))
            let anonymous = try await app.login(credentials: .anonymous)
            await #expect { try await anonymous.linkUser(credentials: .emailPassword(email: "frodo@shire.me", password: "ring-bearer")) }
                throws: { ($0 as? AppError)?.code == .accountNameInUse }
            await #expect { try await frodo.linkUser(credentials: .anonymous) } throws: { ($0 as? AppError)?.code == .badRequest }
            await #expect { try await frodo.linkUser(credentials: .emailPassword(email: "frodo@shire.me", password: "ring-bearer")) }
                throws: { ($0 as? AppError)?.code == .badRequest }
            await #expect { try await anonymous.linkUser(credentials: .emailPassword(email: "frodo@shire.me", password: "wrong!")) }
                throws: { ($0 as? AppError)?.code == .invalidPassword }
            #expect(anonymous.identities.map(\.providerType) == ["anon-user"])
            try await anonymous.logOut()
            await #expect { try await anonymous.linkUser(credentials: .jwt(token: "x")) } throws: { ($0 as? AppError)?.code == .invalidSession }
        }
    }

    @Test func signInWithAppleAndGoogleIDTokens() async throws {
        let apple = try await TestIdentityProvider(issuer: "https://appleid.apple.com", audience: "com.example.tasks")
        let google = try await TestIdentityProvider(issuer: "https://accounts.google.com", audience: "42.apps.googleusercontent.com")
        let server = try await SyncTestServer.start {
            $0.apps = [ServerConfiguration.App(id: "test-app", apple: apple.configuration, google: google.configuration)]
        }
        do {
            let app = server.app()
            let user = try await app.login(credentials: .apple(idToken: try await apple.idToken(subject: "001.sam", email: "sam@icloud.com")))
            #expect(user.identities.map { "\($0.providerType)/\($0.identifier)" } == ["oauth2-apple/001.sam"])
            #expect(user.profile.email == "sam@icloud.com")
            let same = try await server.app(device: "mac").login(credentials: .apple(idToken: try await apple.idToken(subject: "001.sam")))
            #expect(same.id == user.id)
            let linked = try await user.linkUser(credentials: .googleId(token: try await google.idToken(subject: "1234567")))
            #expect(linked.identities.map(\.providerType) == ["oauth2-apple", "oauth2-google"])
            let viaGoogle = try await server.app(device: "pixel").login(credentials: .googleId(token: try await google.idToken(subject: "1234567")))
            #expect(viaGoogle.id == user.id)

            await #expect { try await app.login(credentials: .apple(idToken: try await apple.forgedIdToken(subject: "001.sam"))) }
                throws: { ($0 as? AppError)?.code == .invalidPassword }
            await #expect { try await app.login(credentials: .google(serverAuthCode: "4/0Ab")) }
                throws: { ($0 as? AppError)?.code == .authProviderNotFound }
            await #expect { try await app.login(credentials: .facebook(accessToken: "EAAB")) }
                throws: { ($0 as? AppError)?.code == .authProviderNotFound }
        } catch {
            try? await server.tearDown()
            throw error
        }
        try await server.tearDown()
    }

    @Test func aServerAPIKeyLogsInAsItsOwnUser() async throws {
        try await withSyncTestServer { server in
            let key = try await server.admin.createServerAPIKey(app: server.appId, name: "backend")
            let user = try await server.app().login(credentials: .serverAPIKey(try #require(key.key)))
            #expect(user.identities.map(\.providerType) == ["api-key"])
            #expect(user.identities.first?.identifier == key.id)
            try await server.admin.deleteServerAPIKey(app: server.appId, id: key.id)
            await #expect { try await server.app(device: "other").login(credentials: .serverAPIKey(key.key!)) }
                throws: { ($0 as? AppError)?.code == .invalidPassword }
        }
    }

    @Test func deletingAUserRemovesItsLocalRealms() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            let user = try await app.login(credentials: .anonymous)
            let path: String = try await {
                let realm = try await open(user)
                try realm.write { realm.add(SyncedTask(value: ["name": "gone soon"])) }
                try await upload(realm)
                return try #require(realm.configuration.fileURL).path
            }()
            #expect(FileManager.default.fileExists(atPath: path))
            try await user.delete()
            #expect(user.state == .removed)
            #expect(app.allUsers[user.id] == nil)
            #expect(await waitUntil(timeout: .seconds(10)) { !FileManager.default.fileExists(atPath: path) },
                    "the deleted user's realm file is removed")
        }
    }

    @Test func completionFormsReportResultsAndErrors() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "gandalf@valinor.me", password: "you-shall-not")
            let login: Result<User, any Error> = await withCheckedContinuation { done in
                app.login(credentials: .emailPassword(email: "gandalf@valinor.me", password: "you-shall-not")) { done.resume(returning: $0) }
            }
            let gandalf = try login.get()
            let keys = gandalf.apiKeysAuth

            let created: Result<UserAPIKey, any Error> = await withCheckedContinuation { done in
                keys.createAPIKey(named: "staff") { (result: Result<UserAPIKey, any Error>) in done.resume(returning: result) }
            }
            let staff = try created.get()
            let (tupleKey, tupleError): (UserAPIKey?, (any Error)?) = await withCheckedContinuation { done in
                keys.createAPIKey(named: "pipe") { key, error in done.resume(returning: (key, error)) }
            }
            #expect(tupleKey?.name == "pipe" && tupleError == nil)
            let duplicate: (UserAPIKey?, (any Error)?) = await withCheckedContinuation { done in
                keys.createAPIKey(named: "pipe") { key, error in done.resume(returning: (key, error)) }
            }
            #expect(duplicate.0 == nil && (duplicate.1 as? AppError)?.code == .badRequest)

            let fetched: Result<UserAPIKey, any Error> = await withCheckedContinuation { done in
                keys.fetchAPIKey(staff.objectId) { done.resume(returning: $0) }
            }
            #expect(try fetched.get().name == "staff")
            let fetchedTuple: UserAPIKey? = await withCheckedContinuation { done in
                keys.fetchAPIKey(staff.objectId) { key, _ in done.resume(returning: key) }
            }
            #expect(fetchedTuple?.objectId == staff.objectId)
            let all: Result<[UserAPIKey], any Error> = await withCheckedContinuation { done in
                keys.fetchAPIKeys { (result: Result<[UserAPIKey], any Error>) in done.resume(returning: result) }
            }
            #expect(try all.get().map(\.name).sorted() == ["pipe", "staff"])
            let allTuple: [UserAPIKey]? = await withCheckedContinuation { done in
                keys.fetchAPIKeys { keys, _ in done.resume(returning: keys) }
            }
            #expect(allTuple?.count == 2)
            for step in ["disable", "enable", "delete"] {
                let error: (any Error)? = await withCheckedContinuation { done in
                    switch step {
                    case "disable": keys.disableAPIKey(staff.objectId) { done.resume(returning: $0) }
                    case "enable": keys.enableAPIKey(staff.objectId) { done.resume(returning: $0) }
                    default: keys.deleteAPIKey(staff.objectId) { done.resume(returning: $0) }
                    }
                }
                #expect(error == nil, "\(step)")
            }
            let missing: (any Error)? = await withCheckedContinuation { done in
                keys.deleteAPIKey(staff.objectId) { done.resume(returning: $0) }
            }
            #expect(missing is AppError, "the key is gone")

            let anonymous = try await app.login(credentials: .anonymous)
            let linkResult: Result<User, any Error> = await withCheckedContinuation { done in
                anonymous.linkUser(credentials: .anonymous) { done.resume(returning: $0) }
            }
            #expect(((try? linkResult.get()) == nil))
            let loggedOut: (any Error)? = await withCheckedContinuation { done in gandalf.logOut { done.resume(returning: $0) } }
            #expect(loggedOut == nil && gandalf.state == .loggedOut)
            let removed: (any Error)? = await withCheckedContinuation { done in gandalf.remove { done.resume(returning: $0) } }
            #expect(removed == nil && gandalf.state == .removed)
            let deleted: (any Error)? = await withCheckedContinuation { done in anonymous.delete { done.resume(returning: $0) } }
            #expect(deleted == nil && anonymous.state == .removed)
        }
    }

    @Test func updateBaseUrlMovesLoggedInUsersAndTheirSyncToTheNewAddress() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            #expect(app.baseUrl == server.baseURL && app.baseURL == server.baseURL)
            let user = try await app.login(credentials: .anonymous)
            let realm = try await open(user)
            try realm.write { realm.add(SyncedTask(value: ["name": "before the move"])) }
            try await upload(realm)

            // The same deployment (its data, its token secret) at another address; the old one is gone.
            let newURL = try await server.restartOnAnotherPort()
            #expect(newURL != server.baseURL)
            await #expect { try await app.updateBaseUrl(to: "ftp://example.com") } throws: { ($0 as? AppError)?.code == .invalidParameter }
            await #expect { try await app.updateBaseUrl(to: "http://127.0.0.1:1") } throws: { ($0 as? AppError)?.code == .httpRequestFailed }
            #expect(app.baseUrl == server.baseURL, "a failed move keeps the old address")

            try await app.updateBaseUrl(to: newURL + "/")
            #expect(app.baseUrl == newURL)
            #expect(user.state == .loggedIn)
            // The refresh token is the deployment's: it works at the new address.
            _ = try await user.apiKeysAuth.fetchAPIKeys()
            try realm.write { realm.add(SyncedTask(value: ["name": "after the move"])) }
            try await upload(realm)

            var configuration = server.appConfiguration(device: "elsewhere")
            configuration.baseURL = newURL
            let other = try await App(id: server.appId, configuration: configuration).login(credentials: .anonymous)
            let seen = try await open(other, "shire", .always)
            #expect(seen.objects(SyncedTask.self).map(\.name).sorted() == ["after the move", "before the move"])

            let moved: (any Error)? = await withCheckedContinuation { done in
                app.updateBaseUrl(to: newURL) { (error: (any Error)?) in done.resume(returning: error) }
            }
            #expect(moved == nil)
        }
    }
}
}
