import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// Issue 21 §1: linking takes over no password, a revoked login stops working everywhere, a
/// pending registration expires. Raw HTTP and raw sync frames against an in-process server.
extension SerialAuthTests {
@Suite("Accounts: no takeover, complete revocation")
struct AccountTakeoverTests {
    static func link(_ server: TestServer, _ accessToken: String, email: String, password: String) async throws -> HTTP.Answer {
        try await server.http.send(
            "POST", HTTP.loginPath(app: "tasks", provider: "local-userpass") + "?link=true", bearer: accessToken,
            body: HTTP.encode(["username": email, "password": password]))
    }

    static func login(_ server: TestServer, _ email: String, _ password: String) async throws -> HTTP.Login {
        try await server.http.emailLogin(email: email, password: password).decode(HTTP.Login.self)
    }

    /// The probe of the issue: V links the credentials of A, a registered account never used.
    /// Each address keeps its own password: V's with V's, A's (now V's too) with A's.
    @Test func linkingAnotherAccountKeepsEachAddressWithItsOwnPassword() async throws {
        try await withServer { server in
            #expect(try await server.http.register(email: "v@example.com", password: "v-password").status == 201)
            #expect(try await server.http.register(email: "a@example.com", password: "a-password").status == 201)
            let v = try await Self.login(server, "v@example.com", "v-password")

            let linked = try await Self.link(server, v.access_token, email: "a@example.com", password: "a-password")
            #expect(linked.status == 200, "\(linked.text)")

            let own = try await server.http.emailLogin(email: "v@example.com", password: "v-password")
            #expect(own.status == 200, "V's own address still logs in with V's password: \(own.text)")
            #expect(try own.decode(HTTP.Login.self).user_id == v.user_id)
            let taken = try await server.http.emailLogin(email: "v@example.com", password: "a-password")
            #expect(taken.status == 401 && taken.errorCode == "InvalidCredentials", "A's password does not open V's address")
            let other = try await server.http.emailLogin(email: "a@example.com", password: "a-password")
            #expect(other.status == 200 && (try? other.decode(HTTP.Login.self).user_id) == v.user_id)
            #expect(try await server.http.emailLogin(email: "a@example.com", password: "v-password").status == 401)
        }
    }

    /// Link, log out, link again with the access token kept from before: refused, and so are
    /// deleting the user and binding a sync session with it.
    @Test func anAccessTokenWhoseDeviceLoggedOutCannotLinkDeleteOrBind() async throws {
        try await withServer { server in
            let anonymous = try await server.http.anonymousLogin()
            _ = try await server.http.register(email: "first@example.com", password: "first-pw")
            _ = try await server.http.register(email: "second@example.com", password: "second-pw")
            #expect(try await Self.link(server, anonymous.access_token, email: "first@example.com", password: "first-pw").status == 200)

            #expect(try await server.http.send("DELETE", "/api/client/v1/auth/session", bearer: anonymous.refresh_token).status == 204)
            let again = try await Self.link(server, anonymous.access_token, email: "second@example.com", password: "second-pw")
            #expect(again.status == 401 && again.errorCode == "InvalidToken", "\(again.text)")
            #expect(try await server.auth.store.user(appID: "tasks", providerType: "local-userpass", identityID: "second@example.com")?.id
                    != anonymous.user_id)

            let delete = try await server.http.send("DELETE", "/api/client/v1/auth/delete", bearer: anonymous.access_token)
            #expect(delete.status == 401 && delete.errorCode == "InvalidToken")
            #expect(try await server.auth.store.user(id: anonymous.user_id) != nil)

            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let bind = try #require(try await client.bind(1, partition: .string("home"), token: anonymous.access_token).errorMessage)
            #expect(bind.code == .userLoggedOut)
            await client.close()

            // Another device of the same user goes on.
            let other = try await Self.login(server, "first@example.com", "first-pw")
            #expect(try await Self.link(server, other.access_token, email: "second@example.com", password: "second-pw").status == 200)
        }
    }

    /// Deleting or disabling an API key revokes the refresh tokens its logins got and ends the
    /// sync sessions they bound; the owner's other logins go on.
    @Test func deletingOrDisablingAnAPIKeyRevokesItsLogins() async throws {
        try await withServer { server in
            let owner = try await server.http.anonymousLogin()
            let ownSession = try await SyncSessionEndTests.session(server, token: owner.access_token)
            for action in ["DELETE", "disable"] {
                let created = try await server.http.post("/api/client/v1/auth/api_keys", bearer: owner.refresh_token, json: ["name": action])
                let id = try #require(created.object["_id"] as? String), key = try #require(created.object["key"] as? String)
                let keyLogin = try await server.http.logIn(provider: "api-key", json: ["key": key]).decode(HTTP.Login.self)
                let keySession = try await SyncSessionEndTests.session(server, token: keyLogin.access_token)
                let offspring = try await server.http.post("/api/client/v1/auth/api_keys", bearer: keyLogin.refresh_token, json: ["name": "child"])
                #expect(offspring.status == 400, "a key's login makes no key that would outlive it: \(offspring.text)")

                let answer = action == "DELETE"
                    ? try await server.http.send("DELETE", "/api/client/v1/auth/api_keys/\(id)", bearer: owner.refresh_token)
                    : try await server.http.send("PUT", "/api/client/v1/auth/api_keys/\(id)/disable", bearer: owner.refresh_token)
                #expect(answer.status == 204, "\(action)")
                #expect(try await SyncSessionEndTests.endingError(keySession).code == .userLoggedOut, "\(action)")
                #expect(try await server.http.refresh(keyLogin.refresh_token).status == 401, "\(action)")
                let bind = try await SyncTestClient.connect(to: server)
                _ = try await bind.hello()
                #expect(try await bind.bind(1, partition: .string("home"), token: keyLogin.access_token).errorMessage?.code == .userLoggedOut)
                await bind.close()
                await keySession.close()
                if action == "disable" {
                    // Enabled again, the key logs in anew; the old login stays revoked.
                    #expect(try await server.http.send("PUT", "/api/client/v1/auth/api_keys/\(id)/enable", bearer: owner.refresh_token).status == 204)
                    #expect(try await server.http.refresh(keyLogin.refresh_token).status == 401)
                    #expect(try await server.http.logIn(provider: "api-key", json: ["key": key]).status == 200)
                }
            }
            #expect(try await SyncSessionEndTests.isAlive(ownSession, request: 1), "the owner's own session goes on")
            #expect(try await server.http.refresh(owner.refresh_token).status == 201)
            await ownSession.close()
        }
    }

    /// A password reset sets the password of that address only, revokes every login of the user
    /// (API-key logins too, with their sync sessions) and leaves the keys: a refresh token from
    /// before the reset cannot make a new key.
    @Test func aResetRevokesEveryLoginOfTheUserAndKeepsItsKeys() async throws {
        try await withEmailServer(confirmation: .automatic) { server, mail in
            #expect(try await server.http.register(email: "ann@example.com", password: "old-secret").status == 201)
            let ann = try await Self.login(server, "ann@example.com", "old-secret")
            #expect(try await server.http.register(email: "ann@work.example", password: "work-secret").status == 201)
            #expect(try await Self.link(server, ann.access_token, email: "ann@work.example", password: "work-secret").status == 200)
            let created = try await server.http.post("/api/client/v1/auth/api_keys", bearer: ann.refresh_token, json: ["name": "ci"])
            let key = try #require(created.object["key"] as? String)
            let keyLogin = try await server.http.logIn(provider: "api-key", json: ["key": key]).decode(HTTP.Login.self)
            let keySession = try await SyncSessionEndTests.session(server, token: keyLogin.access_token)

            _ = try await server.http.sendReset("ann@example.com")
            let call = try #require(await mail.nextCall())
            #expect(try await server.http.reset(password: "new-secret", token: call.token!, tokenId: call.tokenId!).status == 200)

            #expect(try await SyncSessionEndTests.endingError(keySession).code == .userLoggedOut)
            #expect(try await server.http.refresh(keyLogin.refresh_token).status == 401)
            let stale = try await server.http.post("/api/client/v1/auth/api_keys", bearer: ann.refresh_token, json: ["name": "late"])
            #expect(stale.status == 401, "a refresh token from before the reset makes no key")
            #expect(try await server.http.logIn(provider: "api-key", json: ["key": key]).status == 200, "the key itself stays")
            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "new-secret").status == 200)
            #expect(try await server.http.emailLogin(email: "ann@work.example", password: "work-secret").status == 200,
                    "the other address keeps its own password")
            await keySession.close()
        }
    }

    /// Whoever holds a leaked API key can use the user's data, not add a way in that outlives the
    /// key: a login made with the key (its access token, and one refreshed from it) cannot link.
    @Test func aLoginMadeWithAnAPIKeyCannotLinkAnIdentity() async throws {
        try await withServer { server in
            #expect(try await server.http.register(email: "v@example.com", password: "v-password").status == 201)
            #expect(try await server.http.register(email: "evil@example.com", password: "evil-password").status == 201)
            let v = try await Self.login(server, "v@example.com", "v-password")
            let created = try await server.http.post("/api/client/v1/auth/api_keys", bearer: v.refresh_token, json: ["name": "leaked"])
            let key = try #require(created.object["key"] as? String)
            let keyLogin = try await server.http.logIn(provider: "api-key", json: ["key": key]).decode(HTTP.Login.self)
            #expect(keyLogin.user_id == v.user_id)

            let linked = try await Self.link(server, keyLogin.access_token, email: "evil@example.com", password: "evil-password")
            #expect(linked.status == 400, "\(linked.text)")
            let refreshed = try await server.http.refresh(keyLogin.refresh_token)
            let refreshedToken = try #require(refreshed.object["access_token"] as? String)
            let again = try await Self.link(server, refreshedToken, email: "evil@example.com", password: "evil-password")
            #expect(again.status == 400, "a refreshed token of the key's login cannot link either: \(again.text)")
            // The user's own login still links (the address was never used, so it moves to V).
            #expect(try await Self.link(server, v.access_token, email: "evil@example.com", password: "evil-password").status == 200)
        }
    }

    /// A "sessions ended" announcement between nodes may be lost: the periodic check against the
    /// store ends a session whose login was revoked behind this node's back.
    @Test func thePeriodicCheckEndsSessionsWhoseLoginWasRevokedElsewhere() async throws {
        try await withServer { server in
            let login = try await server.http.anonymousLogin()
            let other = try await server.http.anonymousLogin()
            let revoked = try await SyncSessionEndTests.session(server, token: login.access_token)
            let live = try await SyncSessionEndTests.session(server, token: other.access_token)
            // As another node would, without an announcement reaching this one.
            try await server.auth.store.revokeRefreshTokens(userID: login.user_id)
            await server.running.coordinator.catchUpWithOtherNodes()
            let error = try await SyncSessionEndTests.endingError(revoked)
            #expect(error.code == .userLoggedOut)
            #expect(try await SyncSessionEndTests.isAlive(live, request: 1))
            await revoked.close()
            await live.close()
        }
    }

    /// One client cannot have the app mail every address it knows: confirmation and reset
    /// requests are limited per client address too, whatever e-mail addresses they name.
    @Test func confirmationAndResetRequestsAreLimitedPerClientAddress() async throws {
        let receiver = try await WebhookReceiver.start()
        var configuration = TestServer.emailConfiguration(receiver, confirmation: .automatic)
        configuration.limits.accountEmailsPerAddressPerHour = 3
        do {
            try await withServer(configuration) { server in
                for n in 0..<3 { #expect(try await server.http.sendReset("unknown-\(n)@example.com").status == 404) }
                let refused = try await server.http.sendReset("unknown-3@example.com")
                #expect(refused.status == 429 && refused.retryAfter != nil, "\(refused.text)")
                #expect(try await server.http.resendConfirmation("unknown-4@example.com").status == 429)
            }
        } catch {
            try? await receiver.stop()
            throw error
        }
        try await receiver.stop()
    }

    /// A registration nobody confirms expires: the address can be registered again, and a token
    /// sent for the expired registration confirms nothing (it never activates the password the
    /// first registrant chose).
    @Test func anExpiredRegistrationFreesTheAddressAndItsTokensDie() async throws {
        let receiver = try await WebhookReceiver.start()
        let clock = ManualClock()
        let configuration = TestServer.emailConfiguration(receiver) { settings in
            settings.tokenLifetime = 3_600
            settings.pendingRegistrationLifetime = 600
        }
        do {
            try await withServer(configuration, clock: clock) { server in
                #expect(try await server.http.register(email: "owner@example.com", password: "squatter-pw").status == 201)
                let squatted = try #require(await receiver.nextCall())
                #expect(try await server.http.register(email: "owner@example.com", password: "owner-pw").status == 409, "not expired yet")

                clock.advance(by: 601)
                #expect(try await server.http.emailLogin(email: "owner@example.com", password: "squatter-pw").errorCode
                        == "InvalidCredentials", "an expired registration is no account")
                #expect(try await server.http.register(email: "owner@example.com", password: "owner-pw").status == 201)
                let own = try #require(await receiver.nextCall())

                let stale = try await server.http.confirm(token: try #require(squatted.token), tokenId: try #require(squatted.tokenId))
                #expect(stale.status == 400 && stale.errorCode == "BadRequest", "the first registration's token died with it")
                #expect(try await server.http.confirm(token: try #require(own.token), tokenId: try #require(own.tokenId)).status == 200)
                #expect(try await server.http.emailLogin(email: "owner@example.com", password: "owner-pw").status == 200)
                #expect(try await server.http.emailLogin(email: "owner@example.com", password: "squatter-pw").status == 401)
            }
        } catch {
            try? await receiver.stop()
            throw error
        }
        try await receiver.stop()
    }
}
}

/// Two nodes on PostgreSQL: a login revoked on one node whose "sessions ended" announcement
/// never reaches the other is caught by the other's periodic check against the database.
@Suite(postgresInstalled) struct RevocationAcrossNodesTests {
    @Test func aRevocationWithoutAnnouncementEndsTheOtherNodesSessionsAtItsNextCheck() async throws {
        try await withSyncTestNodes(2, appId: "tasks") { nodes in
            let login = try await nodes[0].http.anonymousLogin()
            let session = try await SyncSessionEndTests.session(nodes[1], token: login.access_token)
            // Straight to the database, as a node whose announcement was lost would leave it.
            try await nodes[0].auth.store.revokeRefreshTokens(userID: login.user_id)
            // The nodes check every 5 s.
            let error = try await SyncSessionEndTests.endingError(session, timeout: .seconds(30))
            #expect(error.code == .userLoggedOut)
            await session.close()
        }
    }

    @Test func loggingOutOnOneNodeRefusesTheTokenOnTheOther() async throws {
        try await withSyncTestNodes(2, appId: "tasks") { nodes in
            let login = try await nodes[0].http.anonymousLogin()
            let session = try await SyncSessionEndTests.session(nodes[1], token: login.access_token)
            #expect(try await nodes[0].http.send("DELETE", "/api/client/v1/auth/session", bearer: login.refresh_token).status == 204)
            #expect(try await SyncSessionEndTests.endingError(session, timeout: .seconds(30)).code == .userLoggedOut)
            let again = try await SyncTestClient.connect(to: nodes[1])
            _ = try await again.hello()
            #expect(try await again.bind(1, partition: .string("home"), token: login.access_token).errorMessage?.code == .userLoggedOut)
            await again.close()
            await session.close()
        }
    }
}
