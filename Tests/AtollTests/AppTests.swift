@_spi(Testing) import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

/// Apps, users and credentials against a real server on 127.0.0.1.
@Suite struct AppTests {
    @Test func anonymousLoginMakesTheCurrentUserAndIsReused() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            #expect(app.currentUser == nil)
            let user = try await app.login(credentials: .anonymous)
            #expect(user.isLoggedIn && user.state == .loggedIn)
            #expect(app.currentUser == user)
            #expect(user.accessToken != nil && user.refreshToken != nil)
            #expect(user.identities.map(\.providerType) == ["anon-user"])
            let again = try await app.login(credentials: Credentials.anonymous)
            #expect(again === user, "a logged-in anonymous user is reused, as in Realm")
        }
    }

    @Test func appsWithTheSameIdAndConfigurationShareTheirUsers() async throws {
        try await withSyncTestServer { server in
            let user = try await server.app(device: "a").login(credentials: .anonymous)
            #expect(server.app(device: "a").currentUser === user)
            #expect(server.app(device: "b").currentUser == nil, "another device has its own users")
            #expect(server.app(device: "a") == server.app(device: "a"))
        }
    }

    @Test func emailPasswordRegistrationAndLogin() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "frodo@shire.me", password: "ring-bearer")
            let user = try await app.login(credentials: .emailPassword(email: "frodo@shire.me", password: "ring-bearer"))
            #expect(user.profile.email == "frodo@shire.me")
            let same = try await app.login(credentials: .emailPassword(email: "frodo@shire.me", password: "ring-bearer"))
            #expect(same.id == user.id)
            await #expect { try await app.login(credentials: .emailPassword(email: "frodo@shire.me", password: "nope-nope")) }
                throws: { ($0 as? AppError)?.code == .invalidPassword }
            await #expect { try await app.emailPasswordAuth.registerUser(email: "frodo@shire.me", password: "another1") }
                throws: { ($0 as? AppError)?.code == .accountNameInUse && ($0 as? AppError)?.httpStatusCode == 409 }
        }
    }

    @Test func registrationCompletionHandlerReportsTheError() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            let error: (any Error)? = await withCheckedContinuation { continuation in
                app.emailPasswordAuth.registerUser(email: "sam@shire.me", password: "x") { continuation.resume(returning: $0) }
            }
            #expect((error as? AppError)?.code == .invalidPassword, "a password of one character is refused")
            let user: Result<User, any Error> = await withCheckedContinuation { continuation in
                app.login(credentials: .anonymous) { continuation.resume(returning: $0) }
            }
            #expect((try? user.get())?.isLoggedIn == true)
        }
    }

    @Test func logOutForgetsTheTokensAndMovesTheCurrentUser() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "merry@shire.me", password: "brandybuck")
            let merry = try await app.login(credentials: .emailPassword(email: "merry@shire.me", password: "brandybuck"))
            let anonymous = try await app.login(credentials: .anonymous)
            #expect(app.currentUser == anonymous)
            #expect(app.allUsers.count == 2)
            try await anonymous.logOut()
            #expect(anonymous.state == .removed, "an anonymous user cannot log in again, so it is removed")
            #expect(app.currentUser == merry)
            try await merry.logOut()
            #expect(merry.state == .loggedOut && merry.accessToken == nil && merry.refreshToken == nil)
            #expect(app.currentUser == nil)
            #expect(app.allUsers.keys.sorted() == [merry.id], "a logged-out user stays known until removed")
            try await merry.remove()
            #expect(app.allUsers.isEmpty)
        }
    }

    @Test func switchingTheCurrentUser() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "pippin@shire.me", password: "took-took")
            let pippin = try await app.login(credentials: .emailPassword(email: "pippin@shire.me", password: "took-took"))
            let anonymous = try await app.login(credentials: .anonymous)
            #expect(app.currentUser == anonymous)
            app.switch(to: pippin)
            #expect(app.currentUser == pippin)
        }
    }

    @Test func usersSurviveARestartOfTheAppOfflineWithTheirTokens() async throws {
        try await withSyncTestServer { server in
            let configuration = server.appConfiguration(device: "phone")
            let user = try await App(id: server.appId, configuration: configuration).login(credentials: .anonymous)
            try await server.stop()
            // A fresh process: the same folder, no server.
            let reopened = try #require(App.reopenedForTesting(id: server.appId, configuration: configuration).currentUser)
            #expect(reopened.id == user.id)
            #expect(reopened.state == .loggedIn)
            #expect(reopened.refreshToken == user.refreshToken)
        }
    }

    @Test func aRefusedRefreshTokenLogsTheUserOut() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "bill@bree.me", password: "the-pony")
            let bill = try await app.login(credentials: .emailPassword(email: "bill@bree.me", password: "the-pony"))
            try await server.server.auth.setUserDisabled(bill.id, disabled: true)
            await #expect { _ = try await bill.apiKeysAuth.fetchAPIKeys() } throws: { ($0 as? AppError) != nil }
            await #expect { try await bill.delete() } throws: { error in
                let code = (error as? AppError)?.code
                return code == .userDisabled || code == .invalidSession
            }
            #expect(bill.state == .loggedOut)
        }
    }

    /// realm-swift reports the address in use, its default when none was set.
    @Test func theConfigurationsBaseURLIsTheOneInUse() {
        #expect(App(id: "base-url-\(UUID().uuidString)").configuration.baseURL == AppConfiguration.defaultBaseURL)
        let configured = App(id: "base-url-\(UUID().uuidString)", configuration: AppConfiguration(baseURL: "http://127.0.0.1:1234"))
        #expect(configured.configuration.baseURL == "http://127.0.0.1:1234")
    }

    @Test func apiKeysCreateListLogInDisableAndDelete() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "gandalf@valinor.me", password: "you-shall-not")
            let gandalf = try await app.login(credentials: .emailPassword(email: "gandalf@valinor.me", password: "you-shall-not"))
            let key = try await gandalf.apiKeysAuth.createAPIKey(named: "staff")
            #expect(key.name == "staff" && key.isEnabled)
            let secret = try #require(key.key)
            #expect(try await gandalf.apiKeysAuth.fetchAPIKeys().map(\.name) == ["staff"])
            #expect(try await gandalf.apiKeysAuth.fetchAPIKey(key.objectId).key == nil, "the key itself is shown once")
            // The key logs in on another machine (a login on this device would replace Gandalf's
            // own tokens, and disabling the key revokes its logins).
            let buildServer = server.app(device: "build-server")
            let viaKey = try await buildServer.login(credentials: .userAPIKey(secret))
            #expect(viaKey.id == gandalf.id)
            try await gandalf.apiKeysAuth.disableAPIKey(key.objectId)
            #expect(try await gandalf.apiKeysAuth.fetchAPIKey(key.objectId).disabled)
            await #expect { try await buildServer.login(credentials: .userAPIKey(secret)) } throws: { ($0 as? AppError) != nil }
            try await gandalf.apiKeysAuth.enableAPIKey(key.objectId)
            _ = try await buildServer.login(credentials: .userAPIKey(secret))
            try await gandalf.apiKeysAuth.deleteAPIKey(key.objectId)
            #expect(try await gandalf.apiKeysAuth.fetchAPIKeys().isEmpty)
        }
    }

    @Test func deletingAUserRemovesItOnTheServer() async throws {
        try await withSyncTestServer { server in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "boromir@gondor.me", password: "one-does-not")
            let boromir = try await app.login(credentials: .emailPassword(email: "boromir@gondor.me", password: "one-does-not"))
            try await boromir.delete()
            #expect(boromir.state == .removed)
            await #expect { try await app.login(credentials: .emailPassword(email: "boromir@gondor.me", password: "one-does-not")) }
                throws: { ($0 as? AppError)?.code == .invalidPassword }
        }
    }

    @Test func anUnreachableServerIsAnHTTPRequestFailure() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let app = App(id: "nowhere", configuration: AppConfiguration(baseURL: "http://127.0.0.1:1", rootDirectory: folder.url))
        await #expect { try await app.login(credentials: .anonymous) } throws: { ($0 as? AppError)?.code == .httpRequestFailed }
    }
}
