import AtollServer
import AtollTesting
import Foundation
import JWTKit
import Testing

extension SerialAuthTests {
/// Facebook access tokens checked with the Graph API and Google server auth codes exchanged at
/// the token endpoint, against a loopback stand-in of both (``FakeIdentityProviders``).
@Suite("Facebook and Google auth codes: the server asks the provider")
struct OAuthLoginTests {
    static let app = "social-app"

    static func configuration(_ fake: FakeIdentityProviders, _ configure: (inout ServerConfiguration.App) -> Void = { _ in }) -> ServerConfiguration {
        TestServer.configuration {
            $0.developmentMode = false
            var app = ServerConfiguration.App(id: Self.app, google: fake.googleSettings)
            app.facebook = fake.facebook
            configure(&app)
            $0.apps = [app, ServerConfiguration.App(id: "plain-app")]
        }
    }

    /// Runs `body` with the fake and a server using it; both stop after.
    static func withProviders(_ configure: (inout ServerConfiguration.App) -> Void = { _ in },
                              _ body: (FakeIdentityProviders, TestServer) async throws -> Void) async throws {
        let fake = try await FakeIdentityProviders.start()
        do {
            try await withServer(configuration(fake, configure)) { try await body(fake, $0) }
        } catch {
            try? await fake.stop()
            throw error
        }
        try await fake.stop()
    }

    static func facebook(_ server: TestServer, _ token: String, app: String = Self.app) async throws -> HTTP.Answer {
        try await server.http.logIn(app: app, provider: "oauth2-facebook", json: ["accessToken": token])
    }

    static func google(_ server: TestServer, code: String, app: String = Self.app) async throws -> HTTP.Answer {
        try await server.http.logIn(app: app, provider: "oauth2-google", json: ["authCode": code])
    }

    @Test func aFacebookTokenLogsInAsItsFacebookUserWithTheProfile() async throws {
        try await Self.withProviders { fake, server in
            fake.addFacebookToken("EAAB-sam-1", user: .init(id: "10001", name: "Sam Gamgee", email: "sam@shire.me",
                                                            pictureURL: "https://cdn.example.com/sam.jpg"))
            fake.addFacebookToken("EAAB-sam-2", user: .init(id: "10001", name: "Sam Gamgee", pictureURL: "https://cdn.example.com/sam2.jpg"))
            let first = try await Self.facebook(server, "EAAB-sam-1")
            #expect(first.status == 200, "\(first.text)")
            let login = try first.decode(HTTP.Login.self)
            let profile = try await server.http.profile(login.access_token)
            let identities = profile.object["identities"] as? [[String: Any]]
            #expect(identities?.count == 1)
            #expect(identities?.first?["provider_type"] as? String == "oauth2-facebook")
            #expect(identities?.first?["id"] as? String == "10001")
            let data = profile.object["data"] as? [String: Any]
            #expect(data?["name"] as? String == "Sam Gamgee")
            #expect(data?["email"] as? String == "sam@shire.me")
            #expect(data?["picture_url"] as? String == "https://cdn.example.com/sam.jpg")

            // The server asked with the app's credentials, and proved the secret to /me.
            let debug = try #require(fake.requests(.debugToken).first)
            #expect(debug.fields["input_token"] == "EAAB-sam-1")
            #expect(debug.fields["access_token"] == "\(FakeIdentityProviders.facebookAppID)|\(FakeIdentityProviders.facebookAppSecret)")
            #expect(fake.requests(.me).first?.fields["appsecret_proof"]?.count == 64)

            // Another token of the same Facebook user is the same user, with the new picture.
            let second = try await Self.facebook(server, "EAAB-sam-2")
            let again = try second.decode(HTTP.Login.self)
            #expect(again.user_id == login.user_id)
            let refreshed = try await server.http.profile(again.access_token)
            #expect((refreshed.object["data"] as? [String: Any])?["picture_url"] as? String == "https://cdn.example.com/sam2.jpg")
        }
    }

    @Test func facebookTokensForAnotherAppInvalidOrExpiredAreRefused() async throws {
        try await Self.withProviders { fake, server in
            let bad: [(String, FakeIdentityProviders.FacebookAccount?)] = [
                ("made for another Facebook app", .init(id: "10002", appID: "99999")),
                ("invalid", .init(id: "10002", isValid: false)),
                ("expired", .init(id: "10002", expiresAt: Date().addingTimeInterval(-60))),
                ("whose profile is another user's", .init(id: "10002", profileID: "10003")),
                ("unknown to Facebook", nil),
            ]
            for (index, (reason, account)) in bad.enumerated() {
                if let account { fake.addFacebookToken("EAAB-bad-\(index)", user: account) }
                let answer = try await Self.facebook(server, "EAAB-bad-\(index)")
                #expect(answer.status == 401 && answer.errorCode == "InvalidCredentials", "\(reason): \(answer.status) \(answer.text)")
            }
            let oversized = try await Self.facebook(server, String(repeating: "E", count: 5000))
            #expect(oversized.status == 400 && oversized.errorCode == "BadRequest")
            let missing = try await server.http.logIn(app: Self.app, provider: "oauth2-facebook", json: ["token": "x"])
            #expect(missing.status == 400 && missing.errorCode == "BadRequest")
            // A token with characters that would break the query reaches Facebook as one value.
            let hostile = try await Self.facebook(server, "a&input_token=EAAB-good#x")
            #expect(hostile.status == 401)
            #expect(fake.requests(.debugToken).last?.fields["input_token"] == "a&input_token=EAAB-good#x")
            // The server carries on.
            fake.addFacebookToken("EAAB-good", user: .init(id: "10004"))
            #expect(try await Self.facebook(server, "EAAB-good").status == 200)
            let unconfigured = try await Self.facebook(server, "EAAB-good", app: "plain-app")
            #expect(unconfigured.status == 403 && unconfigured.errorCode == "AuthProviderDisabled")
        }
    }

    @Test func aGoogleServerAuthCodeLogsInAsTheSubOfItsIDToken() async throws {
        try await Self.withProviders { fake, server in
            fake.addGoogleCode("4/0Ab-one", idToken: try await fake.google.idToken(subject: "1098765", email: "frodo@gmail.com"))
            fake.addGoogleCode("4/0Ab-two", idToken: try await fake.google.idToken(subject: "1098765"))
            let first = try await Self.google(server, code: "4/0Ab-one")
            #expect(first.status == 200, "\(first.text)")
            let login = try first.decode(HTTP.Login.self)
            let profile = try await server.http.profile(login.access_token)
            let identities = profile.object["identities"] as? [[String: Any]]
            #expect(identities?.first?["provider_type"] as? String == "oauth2-google")
            #expect(identities?.first?["id"] as? String == "1098765")
            #expect((profile.object["data"] as? [String: Any])?["email"] as? String == "frodo@gmail.com")

            let exchange = try #require(fake.requests(.token).first)
            #expect(exchange.fields["grant_type"] == "authorization_code")
            #expect(exchange.fields["code"] == "4/0Ab-one")
            #expect(exchange.fields["client_id"] == FakeIdentityProviders.googleClientID)
            #expect(exchange.fields["client_secret"] == FakeIdentityProviders.googleClientSecret)
            #expect(exchange.fields["redirect_uri"] == nil, "codes of Google Sign-In on a device have no redirect URI")

            #expect(try await Self.google(server, code: "4/0Ab-two").decode(HTTP.Login.self).user_id == login.user_id)
            // An ID token of the same account (Credentials.googleId) is the same user too.
            let idToken = try await server.http.logIn(app: Self.app, provider: "oauth2-google",
                                                      json: ["id_token": try await fake.google.idToken(subject: "1098765")])
            #expect(try idToken.decode(HTTP.Login.self).user_id == login.user_id)
            #expect(fake.requests(.keys).count == 1, "the keys are fetched once and kept")
            // A code is good once.
            let reused = try await Self.google(server, code: "4/0Ab-one")
            #expect(reused.status == 401 && reused.errorCode == "InvalidCredentials")
            #expect(reused.text.contains("invalid_grant"))
        }
    }

    @Test func failedExchangesAndIDTokensThatDoNotCheckAreRefused() async throws {
        try await Self.withProviders { fake, server in
            let now = Date()
            let bad: [(String, String)] = [
                ("wrong audience", try await fake.google.idToken(subject: "a") { $0.aud = AudienceClaim(value: ["someone-else.apps.googleusercontent.com"]) }),
                ("wrong issuer", try await fake.google.idToken(subject: "a") { $0.iss = IssuerClaim(value: "https://evil.example.com") }),
                ("expired", try await fake.google.idToken(subject: "a") { $0.exp = ExpirationClaim(value: now.addingTimeInterval(-300)) }),
                ("signed with another key", try await fake.google.forgedIdToken(subject: "a")),
                ("unsigned", try await fake.google.unsignedIdToken(subject: "a")),
                ("not a JWT", "not-a-jwt"),
            ]
            for (index, (reason, token)) in bad.enumerated() {
                fake.addGoogleCode("code-\(index)", idToken: token)
                let answer = try await Self.google(server, code: "code-\(index)")
                #expect(answer.status == 401 && answer.errorCode == "InvalidCredentials", "\(reason): \(answer.status) \(answer.text)")
            }
            let unknown = try await Self.google(server, code: "4/0Ab-never-issued")
            #expect(unknown.status == 401 && unknown.errorCode == "InvalidCredentials")
            fake.setBehavior(.body(#"{"access_token":"ya29.x","token_type":"Bearer"}"#), for: .token)
            let noIDToken = try await Self.google(server, code: "anything")
            #expect(noIDToken.status == 401 && noIDToken.errorCode == "AuthError", "\(noIDToken.text)")
            fake.setBehavior(.httpStatus(503), for: .token)
            let down = try await Self.google(server, code: "anything")
            #expect(down.status == 401 && down.errorCode == "AuthError")
            let oversized = try await Self.google(server, code: String(repeating: "c", count: 5000))
            #expect(oversized.status == 400 && oversized.errorCode == "BadRequest")
        }
        // A wrong client secret: Google refuses the client (invalid_client), the login is refused.
        try await Self.withProviders({ $0.google?.authCode?.clientSecret = "not-the-secret" }) { fake, server in
            fake.addGoogleCode("4/0Ab", idToken: try await fake.google.idToken(subject: "a"))
            let answer = try await Self.google(server, code: "4/0Ab")
            #expect(answer.status == 401 && answer.errorCode == "InvalidCredentials" && answer.text.contains("invalid_client"))
        }
        // Without the secret (an import waiting for it), auth codes are refused; ID tokens still work.
        try await Self.withProviders({ $0.google?.authCode?.clientSecret = nil; $0.facebook?.clientSecret = nil }) { fake, server in
            let code = try await Self.google(server, code: "4/0Ab")
            #expect(code.status == 403 && code.errorCode == "AuthProviderDisabled")
            let facebook = try await Self.facebook(server, "EAAB")
            #expect(facebook.status == 403 && facebook.errorCode == "AuthProviderDisabled")
            let idToken = try await server.http.logIn(app: Self.app, provider: "oauth2-google", json: ["id_token": try await fake.google.idToken(subject: "a")])
            #expect(idToken.status == 200)
            #expect(fake.requests(.token).isEmpty && fake.requests(.debugToken).isEmpty)
        }
    }

    @Test func hugeSlowOrFailingProvidersAreBoundedAndTheServerCarriesOn() async throws {
        try await Self.withProviders { fake, server in
            fake.addFacebookToken("EAAB-merry", user: .init(id: "20001", name: "Merry"))
            // The keys first: nothing is cached yet.
            let cases: [(FakeIdentityProviders.Endpoint, FakeIdentityProviders.Behavior, String)] = [
                (.keys, .hugeBody(1_000_000), "answered too much"), (.keys, .hang, "timed out"), (.keys, .body("[1]"), "not a usable JWKS"),
                (.token, .hugeBody(1_000_000), "answered too much"), (.token, .hang, "timed out"),
                (.debugToken, .hugeBody(1_000_000), "answered too much"), (.debugToken, .hang, "timed out"),
                (.debugToken, .body("not json"), "JSON"), (.debugToken, .httpStatus(500), "HTTP 500"),
                (.me, .hugeBody(1_000_000), "answered too much"), (.me, .hang, "timed out"),
            ]
            for (index, (endpoint, behavior, reason)) in cases.enumerated() {
                fake.setBehavior(behavior, for: endpoint)
                let answer: HTTP.Answer
                if [.keys, .token].contains(endpoint) {
                    fake.addGoogleCode("code-\(index)", idToken: try await fake.google.idToken(subject: "pippin"))
                    answer = try await Self.google(server, code: "code-\(index)")
                } else {
                    answer = try await Self.facebook(server, "EAAB-merry")
                }
                #expect(answer.status == 401 && answer.errorCode == "AuthError", "\(endpoint) \(reason): \(answer.status) \(answer.text)")
                #expect(answer.text.contains(reason), "\(endpoint): \(answer.text)")
                // Meanwhile the server answers others, and the provider's failures throttle no one.
                #expect(try await server.http.logIn(app: "plain-app", provider: "anon-user").status == 200)
                fake.setBehavior(.normal, for: endpoint)
            }
            fake.addGoogleCode("4/0Ab-good", idToken: try await fake.google.idToken(subject: "pippin"))
            #expect(try await Self.google(server, code: "4/0Ab-good").status == 200)
            #expect(try await Self.facebook(server, "EAAB-merry").status == 200)
        }
    }

    @Test func rotatedKeysAreFetchedAgainButMadeUpKeyIDsAreNot() async throws {
        let fake = try await FakeIdentityProviders.start()
        let clock = ManualClock()
        do {
            try await withServer(Self.configuration(fake), clock: clock) { server in
                fake.addGoogleCode("4/0Ab-1", idToken: try await fake.google.idToken(subject: "sam", now: clock.now()))
                #expect(try await Self.google(server, code: "4/0Ab-1").status == 200)
                #expect(fake.requests(.keys).count == 1)
                // Key ids the set lacks, just after a fetch: no fetch (made-up kids cost the provider nothing).
                for attempt in 0..<3 {
                    fake.addGoogleCode("4/0Ab-x\(attempt)", idToken: try await fake.google.idTokenNamingUnknownKey(subject: "sam", keyID: "kid-\(attempt)"))
                    let answer = try await Self.google(server, code: "4/0Ab-x\(attempt)")
                    #expect(answer.status == 401 && answer.errorCode == "InvalidCredentials")
                }
                #expect(fake.requests(.keys).count == 1)
                // A minute on, an unknown key id (a rotation) fetches the keys again, once.
                clock.advance(by: 61)
                for attempt in 0..<3 {
                    let token = try await fake.google.idTokenNamingUnknownKey(subject: "sam", keyID: "rotated")
                    fake.addGoogleCode("4/0Ab-r\(attempt)", idToken: token)
                    #expect(try await Self.google(server, code: "4/0Ab-r\(attempt)").status == 401)
                }
                #expect(fake.requests(.keys).count == 2, "one more fetch for an unknown key id, not one per login")
                // Known keys are used without fetching until they are an hour old.
                fake.addGoogleCode("4/0Ab-2", idToken: try await fake.google.idToken(subject: "sam", now: clock.now()))
                #expect(try await Self.google(server, code: "4/0Ab-2").status == 200)
                #expect(fake.requests(.keys).count == 2)
                clock.advance(by: 3600)
                fake.addGoogleCode("4/0Ab-3", idToken: try await fake.google.idToken(subject: "sam", now: clock.now()))
                #expect(try await Self.google(server, code: "4/0Ab-3").status == 200)
                #expect(fake.requests(.keys).count == 3)
            }
        } catch {
            try? await fake.stop()
            throw error
        }
        try await fake.stop()
    }

    @Test func providerURLsMustBeHTTPSOutsideLoopbackAndTheDefaultsAreTheRealOnes() throws {
        let decoded = try JSONDecoder().decode(ServerConfiguration.App.self, from: Data("""
            {"id": "a", "facebook": {"clientId": "1234", "clientSecret": "s"},
             "google": {"audience": "1.apps.googleusercontent.com", "authCode": {"clientId": "1.apps.googleusercontent.com", "clientSecret": "t"}}}
            """.utf8))
        #expect(decoded.facebook?.graphURL == "https://graph.facebook.com")
        #expect(decoded.google?.authCode?.tokenURL == "https://oauth2.googleapis.com/token")
        #expect(decoded.google?.jwks == nil && decoded.google?.jwksURL == nil)  // Google's published keys
        var good = ServerConfiguration()
        good.apps = [decoded]
        try good.validate()

        let facebook = ServerConfiguration.Facebook(clientId: "1234", clientSecret: "s")
        let google = ServerConfiguration.OpenIDProvider(audience: ["x"], authCode: .init(clientId: "x", clientSecret: "t"))
        func with(_ change: (inout ServerConfiguration.App) -> Void) -> ServerConfiguration {
            var app = ServerConfiguration.App(id: "a", google: google)
            app.facebook = facebook
            change(&app)
            var configuration = ServerConfiguration()
            configuration.apps = [app]
            return configuration
        }
        let wrong: [(String, ServerConfiguration)] = [
            ("Graph API over http", with { $0.facebook?.graphURL = "http://graph.example.com" }),
            ("token endpoint over http", with { $0.google?.authCode?.tokenURL = "http://10.0.0.1/token" }),
            ("keys over http", with { $0.google?.jwksURL = "http://www.example.com/certs" }),
            ("not http at all", with { $0.facebook?.graphURL = "ftp://graph.facebook.com" }),
            ("a query", with { $0.google?.authCode?.tokenURL = "https://oauth2.googleapis.com/token?x=1" }),
            ("credentials in the URL", with { $0.facebook?.graphURL = "https://user:pw@graph.facebook.com" }),
            ("keys inline and from a URL", with { $0.google?.jwks = #"{"keys":[]}"#; $0.google?.jwksURL = "https://x.example.com/k" }),
            ("an empty Facebook app id", with { $0.facebook?.clientId = "" }),
            ("an empty Facebook secret", with { $0.facebook?.clientSecret = "" }),
            ("an empty Google secret", with { $0.google?.authCode?.clientSecret = "" }),
            ("no timeout", with { $0.facebook?.timeout = 0 }),
            ("an endless timeout", with { $0.google?.timeout = 3600 }),
        ]
        for (reason, configuration) in wrong {
            #expect(throws: ConfigurationError.self, "\(reason)") { try configuration.validate() }
        }
        for url in ["http://127.0.0.1:8080/graph", "http://localhost/graph", "http://[::1]:9/graph"] {
            try with { $0.facebook?.graphURL = url }.validate()
        }
    }

    @Test func theClientSecretsAndTokensStayOutOfAnswersAndTheLog() async throws {
        let fake = try await FakeIdentityProviders.start()
        let capture = LogCapture()
        var configuration = Self.configuration(fake)
        configuration.host = "127.0.0.1"
        let server = try await AtollServer(configuration: configuration, logger: capture.logger(level: .trace)).start()
        let http = HTTP(baseURL: server.baseURL)
        fake.addFacebookToken("EAAB-secret-token", user: .init(id: "30001"))
        #expect(try await http.logIn(app: Self.app, provider: "oauth2-facebook", json: ["accessToken": "EAAB-secret-token"]).status == 200)
        fake.setBehavior(.hang, for: .debugToken)
        let failed = try await http.logIn(app: Self.app, provider: "oauth2-facebook", json: ["accessToken": "EAAB-secret-token"])
        fake.setBehavior(.normal, for: .debugToken)
        fake.addGoogleCode("4/0Ab-secret-code", idToken: "not-a-jwt")
        let refused = try await http.logIn(app: Self.app, provider: "oauth2-google", json: ["authCode": "4/0Ab-secret-code"])
        try await server.shutdown()
        try await fake.stop()
        #expect(failed.errorCode == "AuthError" && refused.errorCode == "InvalidCredentials")
        let secrets = [FakeIdentityProviders.facebookAppSecret, FakeIdentityProviders.googleClientSecret, "EAAB-secret-token", "4/0Ab-secret-code"]
        for secret in secrets {
            #expect(!failed.text.contains(secret) && !refused.text.contains(secret))
            #expect(!capture.all.contains { $0.text.contains(secret) }, "\(secret) is in the log")
        }
        #expect(capture.all.contains { $0.text.contains("identity provider call failed") })
        let redacted = String(decoding: try configuration.apps[0].redacted.json(), as: UTF8.self)
        #expect(!redacted.contains(FakeIdentityProviders.facebookAppSecret) && !redacted.contains(FakeIdentityProviders.googleClientSecret))
        #expect(redacted.contains(ServerConfiguration.App.secretPlaceholder))
        try? FileManager.default.removeItem(atPath: configuration.dataDirectory)
    }
}
}
