import AtollAdminClient
import AtollServer
import AtollTesting
import Foundation
import Testing

extension SerialAuthTests {
@Suite("Linking identities, deleting users, server API keys, the location route")
struct IdentityLinkTests {
    static func link(_ server: TestServer, _ accessToken: String?, provider: String, json: [String: String]) async throws -> HTTP.Answer {
        try await server.http.send(
            "POST", HTTP.loginPath(app: "tasks", provider: provider) + "?link=true", bearer: accessToken, body: HTTP.encode(json))
    }

    static func identities(_ server: TestServer, _ accessToken: String) async throws -> [String] {
        let profile = try await server.http.profile(accessToken)
        return (profile.object["identities"] as? [[String: Any]] ?? []).compactMap { $0["provider_type"] as? String }
    }

    @Test func anAnonymousUserLinksARegisteredEmailAndKeepsItsId() async throws {
        try await withServer { server in
            let anonymous = try await server.http.anonymousLogin()
            #expect(try await server.http.register(email: "Sam@Shire.me", password: "potatoes").status == 201)
            let linked = try await Self.link(server, anonymous.access_token, provider: "local-userpass",
                                             json: ["username": "sam@shire.me", "password": "potatoes"])
            #expect(linked.status == 200, "\(linked.text)")
            let answer = linked.object
            #expect(answer["user_id"] as? String == anonymous.user_id)
            let token = try #require(answer["access_token"] as? String)
            #expect(try await Self.identities(server, token) == ["anon-user", "local-userpass"])
            // The e-mail now logs in as the anonymous user; the registered user is gone.
            let login = try await server.http.emailLogin(email: "sam@shire.me", password: "potatoes").decode(HTTP.Login.self)
            #expect(login.user_id == anonymous.user_id)
            #expect(try await server.auth.store.users(appID: "tasks").count == 1)
            // The old refresh token still works, and the user's old access token too.
            #expect(try await server.http.refresh(anonymous.refresh_token).status == 201)
        }
    }

    @Test func anIdentityOfAnotherUserAnonymousCredentialsAndRepeatsAreRefused() async throws {
        try await withServer { server in
            _ = try await server.http.register(email: "frodo@shire.me", password: "ring-bearer")
            let frodo = try await server.http.emailLogin(email: "frodo@shire.me", password: "ring-bearer").decode(HTTP.Login.self)
            let anonymous = try await server.http.anonymousLogin()

            let taken = try await Self.link(server, anonymous.access_token, provider: "local-userpass",
                                            json: ["username": "frodo@shire.me", "password": "ring-bearer"])
            #expect(taken.status == 409 && taken.errorCode == "AccountNameInUse", "\(taken.text)")
            let wrongPassword = try await Self.link(server, anonymous.access_token, provider: "local-userpass",
                                                    json: ["username": "frodo@shire.me", "password": "not-it!"])
            #expect(wrongPassword.status == 401 && wrongPassword.errorCode == "InvalidCredentials")
            let anon = try await Self.link(server, frodo.access_token, provider: "anon-user", json: [:])
            #expect(anon.status == 400 && anon.errorCode == "BadRequest")
            let key = try await Self.link(server, frodo.access_token, provider: "api-key", json: ["key": "whatever"])
            #expect(key.status == 400 && key.errorCode == "BadRequest")
            let itself = try await Self.link(server, frodo.access_token, provider: "local-userpass",
                                             json: ["username": "frodo@shire.me", "password": "ring-bearer"])
            #expect(itself.status == 400 && itself.errorCode == "BadRequest", "linking a user to its own identity")
            #expect(try await Self.identities(server, frodo.access_token) == ["local-userpass"])
            #expect(try await Self.identities(server, anonymous.access_token) == ["anon-user"])
        }
    }

    @Test func aDisabledUserCannotLinkNorBeLinkedTo() async throws {
        try await withServer { server in
            let anonymous = try await server.http.anonymousLogin()
            _ = try await server.http.register(email: "bill@bree.me", password: "the-pony")
            let registered = try #require(try await server.auth.store.users(appID: "tasks").first { $0.email == "bill@bree.me" })
            try await server.auth.setUserDisabled(registered.id, disabled: true)
            let toDisabled = try await Self.link(server, anonymous.access_token, provider: "local-userpass",
                                                 json: ["username": "bill@bree.me", "password": "the-pony"])
            #expect(toDisabled.status == 409, "a disabled account is not absorbed: \(toDisabled.text)")

            _ = try await server.http.register(email: "ted@bree.me", password: "sandyman")
            try await server.auth.setUserDisabled(anonymous.user_id, disabled: true)
            let byDisabled = try await Self.link(server, anonymous.access_token, provider: "local-userpass",
                                                 json: ["username": "ted@bree.me", "password": "sandyman"])
            #expect(byDisabled.status == 403 && byDisabled.errorCode == "UserDisabled")
        }
    }

    @Test func rawLinkRequestsWithoutTokenOrWithBadBodiesAreRefused() async throws {
        try await withServer { server in
            let anonymous = try await server.http.anonymousLogin()
            let path = HTTP.loginPath(app: "tasks", provider: "local-userpass") + "?link=true"
            let noToken = try await server.http.send("POST", path, body: #"{"username":"a@b.c","password":"secret"}"#)
            #expect(noToken.status == 401 && noToken.errorCode == "InvalidToken")
            let refreshAsAccess = try await server.http.send("POST", path, bearer: anonymous.refresh_token, body: "{}")
            #expect(refreshAsAccess.status == 401)
            let malformed = try await server.http.send("POST", path, bearer: anonymous.access_token, body: #"{"username": "#)
            #expect(malformed.status == 400 && malformed.errorCode == "BadRequest")
            let missing = try await server.http.send("POST", path, bearer: anonymous.access_token, body: #"{"username":"a@b.c"}"#)
            #expect(missing.status == 400 && missing.errorCode == "BadRequest")
            let otherApp = try await server.http.send(
                "POST", HTTP.loginPath(app: "another-app", provider: "local-userpass") + "?link=true", bearer: anonymous.access_token,
                body: #"{"username":"a@b.c","password":"secret"}"#)
            #expect(otherApp.status == 401 && otherApp.errorCode == "InvalidToken")
            let unknownProvider = try await Self.link(server, anonymous.access_token, provider: "oauth2-nowhere", json: [:])
            #expect(unknownProvider.status == 403 && unknownProvider.errorCode == "AuthProviderDisabled")
        }
    }

    @Test func anAppleIdentityLinksAndThenLogsInAsTheSameUser() async throws {
        let apple = try await TestIdentityProvider()
        let configuration = TestServer.configuration { $0.apps = [ServerConfiguration.App(id: "tasks", apple: apple.configuration)] }
        try await withServer(configuration) { server in
            let anonymous = try await server.http.anonymousLogin()
            let token = try await apple.idToken(subject: "000111.link")
            let linked = try await Self.link(server, anonymous.access_token, provider: "oauth2-apple", json: ["id_token": token])
            #expect(linked.status == 200, "\(linked.text)")
            let login = try await server.http.logIn(provider: "oauth2-apple", json: ["id_token": token]).decode(HTTP.Login.self)
            #expect(login.user_id == anonymous.user_id)
            let other = try await server.http.anonymousLogin()
            let again = try await Self.link(server, other.access_token, provider: "oauth2-apple", json: ["id_token": token])
            #expect(again.status == 409 && again.errorCode == "AccountNameInUse")
            let forged = try await Self.link(server, other.access_token, provider: "oauth2-apple",
                                             json: ["id_token": try await apple.forgedIdToken(subject: "000222.x")])
            #expect(forged.status == 401 && forged.errorCode == "InvalidCredentials")
        }
    }

    @Test func deletingAUserDeletesItsIdentitiesTokensAndKeys() async throws {
        try await withServer { server in
            _ = try await server.http.register(email: "boromir@gondor.me", password: "one-does-not")
            let boromir = try await server.http.emailLogin(email: "boromir@gondor.me", password: "one-does-not").decode(HTTP.Login.self)
            let key = try await server.http.post("/api/client/v1/auth/api_keys", bearer: boromir.refresh_token, json: ["name": "horn"])
            let secret = try #require(key.object["key"] as? String)
            #expect(try await server.http.send("DELETE", "/api/client/v1/auth/delete", bearer: boromir.access_token).status == 204)
            #expect(try await server.http.logIn(provider: "api-key", json: ["key": secret]).status == 401)
            #expect(try await server.http.refresh(boromir.refresh_token).status == 401)
            #expect(try await server.http.emailLogin(email: "boromir@gondor.me", password: "one-does-not").status == 401)
            #expect(try await server.http.register(email: "boromir@gondor.me", password: "another-one").status == 201,
                    "the e-mail identity went with the user")
        }
    }

    @Test func serverAPIKeysAreMadeListedAndDeletedWithTheAdminAPI() async throws {
        try await withServer { server in
            let admin = server.admin
            let created = try await admin.createServerAPIKey(app: "tasks", name: "backend")
            let secret = try #require(created.key)
            let login = try await server.http.logIn(provider: "api-key", json: ["key": secret]).decode(HTTP.Login.self)
            let keys = try await admin.serverAPIKeys(app: "tasks")
            #expect(keys.map(\.name) == ["backend"] && keys.first?.userID == login.user_id && keys.first?.key == nil)
            #expect(try await Self.identities(server, login.access_token) == ["api-key"])
            try await admin.deleteServerAPIKey(app: "tasks", id: created.id)
            #expect(try await server.http.logIn(provider: "api-key", json: ["key": secret]).status == 401)
            #expect(try await admin.serverAPIKeys(app: "tasks").isEmpty)
            await #expect(throws: (any Error).self) { try await admin.createServerAPIKey(app: "tasks", name: "  ") }
        }
    }

    @Test func theLocationRouteNamesAKnownAppOnly() async throws {
        let configuration = TestServer.configuration {
            $0.developmentMode = false
            $0.apps = [ServerConfiguration.App(id: "tasks")]
        }
        try await withServer(configuration) { server in
            let known = try await server.http.send("GET", "/api/client/v1/app/tasks/location")
            #expect(known.status == 200)
            #expect((known.object["hostname"] as? String)?.hasPrefix("http://127.0.0.1:") == true)
            #expect((known.object["ws_hostname"] as? String)?.hasPrefix("ws://") == true)
            let unknown = try await server.http.send("GET", "/api/client/v1/app/nope/location")
            #expect(unknown.status == 404 && unknown.errorCode == "AppNotFound")
        }
    }
}
}
