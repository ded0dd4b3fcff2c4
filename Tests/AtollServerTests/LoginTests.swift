import AtollServer
import Foundation
import Testing

@Suite("Logins and registration")
struct LoginTests {
    @Test func anonymousLoginCreatesANewUserEachTime() async throws {
        try await withServer { server in
            let first = try await server.http.logIn(provider: "anon-user")
            #expect(first.status == 200)
            let one = try first.decode(HTTP.Login.self)
            let two = try await server.http.anonymousLogin()
            #expect(one.user_id != two.user_id)
            #expect(one.device_id != two.device_id)
            #expect(one.access_token.split(separator: ".").count == 3)
            #expect(one.refresh_token.count == 43)  // 32 bytes, base64url without padding

            let profile = try await server.http.profile(one.access_token)
            #expect(profile.status == 200)
            #expect(profile.object["user_id"] as? String == one.user_id)
            let identities = profile.object["identities"] as? [[String: Any]]
            #expect(identities?.first?["provider_type"] as? String == "anon-user")
        }
    }

    @Test func aRegisteredUserLogsInWithEmailAndPassword() async throws {
        try await withServer { server in
            let registered = try await server.http.register(email: "Frodo@Shire.example", password: "ring-bearer")
            #expect(registered.status == 201)
            #expect(registered.object.isEmpty && registered.text == "{}")

            let login = try await server.http.emailLogin(email: "frodo@shire.example", password: "ring-bearer")
            #expect(login.status == 200)
            let session = try login.decode(HTTP.Login.self)
            let again = try await server.http.emailLogin(email: " FRODO@shire.example", password: "ring-bearer")
                .decode(HTTP.Login.self)
            #expect(again.user_id == session.user_id)

            let profile = try await server.http.profile(session.access_token)
            #expect((profile.object["data"] as? [String: Any])?["email"] as? String == "frodo@shire.example")
            let identities = profile.object["identities"] as? [[String: Any]]
            #expect(identities?.first?["provider_type"] as? String == "local-userpass")
            #expect(identities?.first?["id"] as? String == "frodo@shire.example")
        }
    }

    @Test func aWrongPasswordOrUnknownEmailIsInvalidCredentials() async throws {
        try await withServer { server in
            _ = try await server.http.register(email: "sam@shire.example", password: "potatoes")
            for (email, password) in [("sam@shire.example", "taters"), ("nobody@shire.example", "potatoes")] {
                let answer = try await server.http.emailLogin(email: email, password: password)
                #expect(answer.status == 401)
                #expect(answer.errorCode == "InvalidCredentials")
                // App Services' own message (realm-swift's tests compare it); which was wrong is logged.
                #expect(answer.text.contains("\"unauthorized\""))
                #expect(!answer.text.contains(password))
            }
        }
    }

    @Test func anyNonEmptyUserNameRegistersAndLogsIn() async throws {
        try await withServer { server in
            for name in ["frodo", "Bilbo Baggins", "+44 20 7946 0000", "ринг"] {
                let registered = try await server.http.register(email: name, password: "secret1")
                let login = try await server.http.emailLogin(email: name, password: "secret1")
                #expect(registered.status == 201, "\(name)")
                #expect(login.status == 200, "\(name)")
            }
        }
    }

    @Test func registeringAnEmailTwiceIsAccountNameInUse() async throws {
        try await withServer { server in
            #expect(try await server.http.register(email: "merry@shire.example", password: "brandybuck").status == 201)
            let second = try await server.http.register(email: "MERRY@shire.example", password: "other-password")
            #expect(second.status == 409)
            #expect(second.errorCode == "AccountNameInUse")
            #expect(second.text.contains("name already in use"))
        }
    }

    @Test func aPasswordOutsideSixTo128CharactersIsInvalidPassword() async throws {
        try await withServer { server in
            for password in ["12345", String(repeating: "p", count: 129)] {
                let answer = try await server.http.register(email: "pippin@shire.example", password: password)
                #expect(answer.status == 400)
                #expect(answer.errorCode == "InvalidPassword")
            }
            #expect(try await server.http.register(email: "pippin@shire.example", password: "123456").status == 201)
            let longest = String(repeating: "p", count: 128)
            #expect(try await server.http.register(email: "took@shire.example", password: longest).status == 201)
        }
    }

    @Test func malformedBodiesAreBadRequestAndTheServerStaysUp() async throws {
        try await withServer { server in
            let path = "/api/client/v1/app/tasks/auth/providers/local-userpass/register"
            for body in ["{not json", "[1, 2]", "{\"email\": 3, \"password\": \"secret1\"}", "{\"email\": \"a@b.c\"}"] {
                let answer = try await server.http.send("POST", path, body: body)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.errorCode == "BadRequest", "\(body)")
                #expect(answer.contentType?.hasPrefix("application/json") == true)
            }
            let login = try await server.http.send(
                "POST", HTTP.loginPath(app: "tasks", provider: "local-userpass"), body: "{\"username\": \"x@y.z\"}")
            #expect(login.errorCode == "BadRequest")
            for name in ["", "   ", String(repeating: "n", count: 255)] {
                #expect(try await server.http.register(email: name, password: "secret1").errorCode == "BadRequest")
            }
            #expect(try await server.http.send("GET", "/health").status == 200)
            #expect(try await server.http.anonymousLogin().user_id.count == 24)
        }
    }

    @Test func anUnknownOrDisabledProviderIsAuthProviderDisabled() async throws {
        try await withServer(TestServer.configuration { configuration in
            configuration.apps = [
                ServerConfiguration.App(
                    id: "closed", authProviders: .init(anonymous: false, emailPassword: false, apiKey: false))
            ]
        }) { server in
            let unknown = try await server.http.logIn(provider: "facebook")
            #expect(unknown.status == 403)
            #expect(unknown.errorCode == "AuthProviderDisabled")
            for provider in ["anon-user", "local-userpass", "api-key", "custom-token"] {
                let answer = try await server.http.logIn(app: "closed", provider: provider)
                #expect(answer.status == 403, "\(provider)")
                #expect(answer.errorCode == "AuthProviderDisabled", "\(provider)")
            }
            let register = try await server.http.register(app: "closed", email: "a@b.example", password: "secret1")
            #expect(register.errorCode == "AuthProviderDisabled")
        }
    }

    @Test func anUnknownAppIsCreatedInDevelopmentModeOnly() async throws {
        try await withServer(TestServer.configuration { configuration in
            configuration.developmentMode = false
            configuration.apps = [ServerConfiguration.App(id: "declared")]
        }) { server in
            let unknown = try await server.http.logIn(app: "undeclared", provider: "anon-user")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "AppNotFound")
            let register = try await server.http.register(app: "undeclared", email: "a@b.example", password: "secret1")
            #expect(register.errorCode == "AppNotFound")
            #expect(try await server.http.logIn(app: "declared", provider: "anon-user").status == 200)
        }
        try await withServer { server in
            let login = try await server.http.logIn(app: "brand-new-app", provider: "anon-user")
            #expect(login.status == 200)
            let app = try await server.auth.store.app(id: "brand-new-app")
            #expect(app != nil)
        }
    }

    /// An app created in development mode (or whose runtime configuration file was removed) has
    /// data but no settings: served as it was, it would have no rules. Outside development mode it
    /// is refused like an unknown app, on every door (login, functions, sync, remote access).
    @Test func anAppWithDataButNoConfigurationIsRefusedOutsideDevelopmentMode() async throws {
        try await withServer(TestServer.configuration { configuration in
            configuration.developmentMode = false
            configuration.apps = [ServerConfiguration.App(id: "declared")]
        }) { server in
            try await server.auth.store.createApp(StoredApp(id: "orphan", createdAt: Date()))
            let login = try await server.http.logIn(app: "orphan", provider: "anon-user")
            #expect(login.status == 404)
            #expect(login.errorCode == "AppNotFound")
            await #expect(throws: ServerError.self) { try await server.auth.app("orphan") }
            #expect(try await server.http.logIn(app: "declared", provider: "anon-user").status == 200)
        }
        // In development mode the same app is served (its schema follows the clients').
        try await withServer { server in
            try await server.auth.store.createApp(StoredApp(id: "orphan", createdAt: Date()))
            #expect(try await server.http.logIn(app: "orphan", provider: "anon-user").status == 200)
        }
    }

    @Test func aDisabledUserIsRefusedWithUserDisabled() async throws {
        try await withServer { server in
            _ = try await server.http.register(email: "gollum@misty.example", password: "precious")
            let session = try await server.http.emailLogin(email: "gollum@misty.example", password: "precious")
                .decode(HTTP.Login.self)
            try await server.auth.setUserDisabled(session.user_id, disabled: true)

            let login = try await server.http.emailLogin(email: "gollum@misty.example", password: "precious")
            #expect(login.status == 403)
            #expect(login.errorCode == "UserDisabled")
            let profile = try await server.http.profile(session.access_token)
            #expect(profile.status == 403)
            #expect(profile.errorCode == "UserDisabled")
            // Disabling revoked the refresh tokens.
            let refresh = try await server.http.refresh(session.refresh_token)
            #expect(refresh.status == 401)
            #expect(refresh.errorCode == "InvalidToken")

            try await server.auth.setUserDisabled(session.user_id, disabled: false)
            #expect(try await server.http.emailLogin(email: "gollum@misty.example", password: "precious").status == 200)
        }
    }
}
