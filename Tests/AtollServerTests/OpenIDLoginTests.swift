import AtollServer
import AtollTesting
import Foundation
import JWTKit
import Testing

extension SerialAuthTests {
@Suite("Sign in with Apple and Google: ID tokens against configured keys")
struct OpenIDLoginTests {
    static let app = "oidc-app"

    static func configuration(apple: TestIdentityProvider, google: TestIdentityProvider? = nil) -> ServerConfiguration {
        TestServer.configuration {
            $0.developmentMode = false
            $0.apps = [ServerConfiguration.App(id: app, apple: apple.configuration, google: google?.configuration),
                       ServerConfiguration.App(id: "plain-app")]
        }
    }

    static func login(_ server: TestServer, _ provider: String = "oauth2-apple", idToken: String) async throws -> HTTP.Answer {
        try await server.http.logIn(app: app, provider: provider, json: ["id_token": idToken])
    }

    @Test func anAppleIDTokenLogsInAsTheUserOfItsSubWithRS256AndES256() async throws {
        let apple = try await TestIdentityProvider()
        try await withServer(Self.configuration(apple: apple)) { server in
            let rsa = try await Self.login(server, idToken: try await apple.idToken(subject: "001234.abcd", email: "sam@privaterelay.appleid.com"))
            #expect(rsa.status == 200, "\(rsa.text)")
            let first = try rsa.decode(HTTP.Login.self)
            let ec = try await Self.login(server, idToken: try await apple.idToken(subject: "001234.abcd", keyID: TestIdentityProvider.ecKeyID))
            #expect(try ec.decode(HTTP.Login.self).user_id == first.user_id, "the same sub is the same user")
            let other = try await Self.login(server, idToken: try await apple.idToken(subject: "009999.other"))
            #expect(try other.decode(HTTP.Login.self).user_id != first.user_id)

            let profile = try await server.http.profile(first.access_token)
            let identities = profile.object["identities"] as? [[String: Any]]
            #expect(identities?.first?["provider_type"] as? String == "oauth2-apple")
            #expect(identities?.first?["id"] as? String == "001234.abcd")
            #expect((profile.object["data"] as? [String: Any])?["email"] as? String == "sam@privaterelay.appleid.com")
        }
    }

    @Test func aGoogleIDTokenWithEitherOfGooglesIssuersLogsIn() async throws {
        let apple = try await TestIdentityProvider()
        let google = try await TestIdentityProvider(issuer: "https://accounts.google.com", audience: "1234.apps.googleusercontent.com")
        var configuration = Self.configuration(apple: apple, google: google)
        configuration.apps[0].google?.issuer = nil  // Google's own issuers by default
        try await withServer(configuration) { server in
            for issuer in ["https://accounts.google.com", "accounts.google.com"] {
                let token = try await google.idToken(subject: "1098765") { $0.iss = IssuerClaim(value: issuer) }
                let answer = try await Self.login(server, "oauth2-google", idToken: token)
                #expect(answer.status == 200, "\(issuer): \(answer.text)")
            }
            let apples = try await Self.login(server, "oauth2-google", idToken: try await apple.idToken(subject: "1098765"))
            #expect(apples.status == 401, "an Apple token is not a Google one (another key, issuer, audience)")
            let code = try await server.http.logIn(app: Self.app, provider: "oauth2-google", json: ["authCode": "4/0Ab-server-auth-code"])
            #expect(code.status == 403 && code.errorCode == "AuthProviderDisabled", "server auth codes need Google's servers")
            #expect(code.text.contains("googleId"))
        }
    }

    @Test func forgedExpiredMisaddressedAndConfusedTokensAreRefused() async throws {
        let apple = try await TestIdentityProvider()
        try await withServer(Self.configuration(apple: apple)) { server in
            let now = Date()
            let bad: [(String, String)] = [
                ("signed with another key", try await apple.forgedIdToken(subject: "a")),
                ("EC key id, signed with another EC key", try await apple.forgedIdToken(subject: "a", keyID: TestIdentityProvider.ecKeyID)),
                ("expired beyond the leeway", try await apple.idToken(subject: "a") { $0.exp = ExpirationClaim(value: now.addingTimeInterval(-120)) }),
                ("issued in the future", try await apple.idToken(subject: "a") { $0.iat = IssuedAtClaim(value: now.addingTimeInterval(300)) }),
                ("not valid yet", try await apple.idToken(subject: "a") { $0.nbf = NotBeforeClaim(value: now.addingTimeInterval(300)) }),
                ("wrong audience", try await apple.idToken(subject: "a") { $0.aud = AudienceClaim(value: ["com.someone.else"]) }),
                ("wrong issuer", try await apple.idToken(subject: "a") { $0.iss = IssuerClaim(value: "https://evil.example.com") }),
                ("empty sub", try await apple.idToken(subject: "")),
                ("alg none", try await apple.unsignedIdToken(subject: "a")),
                ("HS256 with the public key as secret", try await apple.hmacWithPublicKeyIdToken(subject: "a")),
                ("not a JWT", "not-a-jwt"),
                ("four parts", "a.b.c.d"),
                ("header not JSON", "bm90IGpzb24.e30.c2ln"),
            ]
            for (reason, token) in bad {
                let answer = try await Self.login(server, idToken: token)
                #expect(answer.status == 401, "\(reason): \(answer.status) \(answer.text)")
                #expect(answer.errorCode == "InvalidCredentials", "\(reason)")
            }
            // The server carries on.
            #expect(try await Self.login(server, idToken: try await apple.idToken(subject: "a")).status == 200)
        }
    }

    @Test func aSmallClockSkewIsTolerated() async throws {
        let apple = try await TestIdentityProvider()
        try await withServer(Self.configuration(apple: apple)) { server in
            let now = Date()
            let late = try await apple.idToken(subject: "skew") { $0.exp = ExpirationClaim(value: now.addingTimeInterval(-20)) }
            #expect(try await Self.login(server, idToken: late).status == 200)
            let early = try await apple.idToken(subject: "skew") { $0.iat = IssuedAtClaim(value: now.addingTimeInterval(20)) }
            #expect(try await Self.login(server, idToken: early).status == 200)
        }
    }

    @Test func hostileRequestsGetTypedErrors() async throws {
        let apple = try await TestIdentityProvider()
        try await withServer(Self.configuration(apple: apple)) { server in
            let huge = String(repeating: "a", count: 20_000) + "." + String(repeating: "b", count: 20_000) + ".c"
            let oversized = try await Self.login(server, idToken: huge)
            #expect(oversized.status == 400 && oversized.errorCode == "BadRequest")
            let missing = try await server.http.logIn(app: Self.app, provider: "oauth2-apple", json: [:])
            #expect(missing.status == 400 && missing.errorCode == "BadRequest")
            let malformed = try await server.http.send(
                "POST", HTTP.loginPath(app: Self.app, provider: "oauth2-apple"), body: "{\"id_token\": 42")
            #expect(malformed.status == 400 && malformed.errorCode == "BadRequest")
            let wrongType = try await server.http.send(
                "POST", HTTP.loginPath(app: Self.app, provider: "oauth2-apple"), body: "{\"id_token\": 42}")
            #expect(wrongType.status == 400)
            let unconfigured = try await server.http.logIn(
                app: "plain-app", provider: "oauth2-apple", json: ["id_token": try await apple.idToken(subject: "a")])
            #expect(unconfigured.status == 403 && unconfigured.errorCode == "AuthProviderDisabled")
            let facebook = try await server.http.logIn(app: Self.app, provider: "oauth2-facebook", json: ["accessToken": "x"])
            #expect(facebook.status == 403 && facebook.errorCode == "AuthProviderDisabled")
        }
    }

    @Test func theKeysComeInlineOrFromAFileAndBadSettingsAreRefused() async throws {
        let apple = try await TestIdentityProvider()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let keysFile = folder.url.appendingPathComponent("apple-keys.json")
        try Data(apple.jwks.utf8).write(to: keysFile)
        let json = """
            {"apps": [{"id": "a", "apple": {"jwks": \(apple.jwks), "audience": "com.example.atoll"}},
                      {"id": "b", "apple": {"jwksPath": "\(keysFile.path)", "audience": ["com.example.atoll"]}}]}
            """
        let file = folder.url.appendingPathComponent("atoll.json")
        try Data(json.utf8).write(to: file)
        let loaded = try ServerConfiguration.load(from: file)
        #expect(loaded.apps[0].apple?.audience == ["com.example.atoll"])
        #expect(loaded.apps[0].apple?.jwks?.contains("rsa-1") == true)
        #expect(loaded.apps[1].apple?.jwksPath == keysFile.path)

        var fromFile = TestServer.configuration()
        fromFile.apps = [ServerConfiguration.App(id: Self.app, apple: .init(jwksPath: keysFile.path, audience: [apple.audience]))]
        try await withServer(fromFile) { server in
            let answer = try await Self.login(server, idToken: try await apple.idToken(subject: "file"))
            #expect(answer.status == 200)
        }

        let wrong: [(String, ServerConfiguration.OpenIDProvider)] = [
            ("keys from a file and a URL", .init(jwksPath: keysFile.path, jwksURL: "https://appleid.apple.com/auth/keys", audience: ["x"])),
            ("both sources", .init(jwks: apple.jwks, jwksPath: keysFile.path, audience: ["x"])),
            ("no audience", .init(jwks: apple.jwks, audience: [])),
            ("an HMAC key", .init(jwks: #"{"keys":[{"kty":"oct","kid":"h","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}]}"#, audience: ["x"])),
            ("a key without kid", .init(jwks: #"{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b"}]}"#, audience: ["x"])),
            ("not a JWKS", .init(jwks: "[1, 2]", audience: ["x"])),
        ]
        for (reason, provider) in wrong {
            var configuration = ServerConfiguration()
            configuration.apps = [ServerConfiguration.App(id: "a", apple: provider)]
            #expect(throws: ConfigurationError.self, "\(reason)") { try configuration.validate() }
        }
    }
}
}
