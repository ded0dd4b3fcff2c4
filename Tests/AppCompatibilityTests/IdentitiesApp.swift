@_spi(RealmSwiftExperimental) import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

// An app that lets people start anonymously and keep their data when they sign up, signs in
// with Apple, hands API keys to a build server and roams between two addresses of its server,
// written with realm-swift's completion handlers and async calls.

final class AccountStore {
    let app: App
    init(app: App) { self.app = app }

    /// "Try it first": an anonymous user, upgraded later.
    func start(completion: @escaping (Result<User, Error>) -> Void) {
        app.login(credentials: Credentials.anonymous) { result in
            completion(result)
        }
    }

    /// "Create an account": register the e-mail, then link it to the anonymous user.
    func upgrade(_ user: User, email: String, password: String, completion: @escaping (Result<User, Error>) -> Void) {
        app.emailPasswordAuth.registerUser(email: email, password: password) { error in
            if let error = error {
                completion(.failure(error))
                return
            }
            user.linkUser(credentials: Credentials.emailPassword(email: email, password: password)) { result in
                switch result {
                case .success(let linked):
                    completion(.success(linked))
                case .failure(let error):
                    completion(.failure(error))
                }
            }
        }
    }

    func providers(of user: User) -> [String] {
        return user.identities.map { $0.providerType }
    }

    /// What `ASAuthorizationAppleIDCredential.identityToken` gives, as a string.
    func signInWithApple(identityToken: Data) async throws -> User {
        guard let jwt = String(data: identityToken, encoding: .utf8) else { throw CocoaError(.coderInvalidValue) }
        return try await app.login(credentials: .apple(idToken: jwt))
    }

    func makeBuildServerKey(for user: User, completion: @escaping (String?, Error?) -> Void) {
        user.apiKeysAuth.createAPIKey(named: "build server") { key, error in
            completion(key?.key, error)
        }
    }

    func listKeys(for user: User, completion: @escaping ([String]) -> Void) {
        user.apiKeysAuth.fetchAPIKeys { result in
            switch result {
            case .success(let keys): completion(keys.map { $0.name })
            case .failure: completion([])
            }
        }
    }

    func revokeKey(_ id: ObjectId, of user: User, completion: @escaping (Error?) -> Void) {
        user.apiKeysAuth.disableAPIKey(id) { error in
            if let error = error { return completion(error) }
            user.apiKeysAuth.deleteAPIKey(id, completion: completion)
        }
    }

    func signOut(_ user: User, completion: @escaping (Error?) -> Void) {
        user.logOut(completion: completion)
    }

    func deleteAccount(_ user: User) async throws {
        try await user.delete()
    }
}

@Suite struct IdentitiesApp {
    @Test func anAnonymousUserSignsUpAndKeepsItsAccount() async throws {
        try await withSyncTestServer { server in
            let store = AccountStore(app: server.app(device: "identities"))
            let anonymous: User = try await withCheckedThrowingContinuation { done in
                store.start { done.resume(with: $0) }
            }
            let linked: User = try await withCheckedThrowingContinuation { done in
                store.upgrade(anonymous, email: "rosie@shire.me", password: "green-dragon") { done.resume(with: $0) }
            }
            #expect(linked.id == anonymous.id)
            #expect(store.providers(of: linked) == ["anon-user", "local-userpass"])

            let secret: String? = try await withCheckedThrowingContinuation { done in
                store.makeBuildServerKey(for: linked) { key, error in
                    if let error = error { done.resume(throwing: error) } else { done.resume(returning: key) }
                }
            }
            let ci = try await server.app(device: "ci").login(credentials: .userAPIKey(try #require(secret)))
            #expect(ci.id == linked.id)
            let names: [String] = await withCheckedContinuation { done in store.listKeys(for: linked) { done.resume(returning: $0) } }
            #expect(names == ["build server"])
            let key = try #require(try await linked.apiKeysAuth.fetchAPIKeys().first)
            let revoked: Error? = await withCheckedContinuation { done in store.revokeKey(key.objectId, of: linked) { done.resume(returning: $0) } }
            #expect(revoked == nil)

            let signedOut: Error? = await withCheckedContinuation { done in store.signOut(linked) { done.resume(returning: $0) } }
            #expect(signedOut == nil)
            #expect(linked.state == .loggedOut, "a linked user is not anonymous any more: logging out keeps it")
            let back = try await store.app.login(credentials: .emailPassword(email: "rosie@shire.me", password: "green-dragon"))
            try await store.deleteAccount(back)
            #expect(back.state == .removed)
        }
    }

    @Test func signInWithAppleAndRoaming() async throws {
        let apple = try await TestIdentityProvider(issuer: "https://appleid.apple.com", audience: "com.example.hobbits")
        let server = try await SyncTestServer.start { configuration in
            configuration.apps = [ServerConfiguration.App(id: "test-app", apple: apple.configuration)]
        }
        do {
            var configuration = AppConfiguration(baseURL: server.baseURL, transport: nil, defaultRequestTimeoutMS: 15000,
                                                 enableSessionMultiplexing: true, syncTimeouts: SyncTimeoutOptions())
            configuration.rootDirectory = server.folder.url.appendingPathComponent("devices/roaming")
            let app = App(id: "test-app", configuration: configuration)
            let store = AccountStore(app: app)
            let token = try await apple.idToken(subject: "000999.rosie", email: "rosie@privaterelay.appleid.com")
            let user = try await store.signInWithApple(identityToken: Data(token.utf8))
            #expect(user.identities.first?.providerType == "oauth2-apple")
            #expect(user.profile.email == "rosie@privaterelay.appleid.com")

            let edge = try await server.restartOnAnotherPort()
            try await app.updateBaseUrl(to: edge)
            #expect(app.baseUrl == edge)
            let result: Result<Void, Error> = await withCheckedContinuation { done in
                app.updateBaseUrl(to: edge) { (result: Result<Void, Error>) in done.resume(returning: result) }
            }
            if case .failure(let error) = result { Issue.record(error) }
            let realm = try await Realm(configuration: user.configuration(partitionValue: "roaming"), downloadBeforeOpen: .always)
            #expect(realm.syncSession != nil)
            try await user.logOut()
        } catch {
            try? await server.tearDown()
            throw error
        }
        try await server.tearDown()
    }
}
