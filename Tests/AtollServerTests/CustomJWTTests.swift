import AtollServer
import AtollTesting
import CryptoExtras
import Foundation
import JWTKit
import Testing

@Suite("Custom JWT logins")
struct CustomJWTTests {
    static let key = "the app's own identity service signs with this key"
    static let audience = "atoll-tests"

    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim?
        var aud: AudienceClaim?
        var name: String?
        var iss: IssuerClaim? = nil
        var nbf: NotBeforeClaim? = nil
        var iat: IssuedAtClaim? = nil

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static func sign(_ claims: Claims, hmac key: String = CustomJWTTests.key) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    static func claims(sub: String = "user-42", expiresIn: TimeInterval? = 600, aud: String? = audience) -> Claims {
        Claims(
            sub: SubjectClaim(value: sub), exp: expiresIn.map { ExpirationClaim(value: Date().addingTimeInterval($0)) },
            aud: aud.map { AudienceClaim(value: [$0]) }, name: "Aragorn")
    }

    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.apps = [
            ServerConfiguration.App(
                id: "jwt-app", customJWT: .init(algorithm: .hs256, key: key, audience: audience))
        ]
    }

    @Test func theSameSubLogsInAsTheSameUser() async throws {
        try await withServer(TestServer.configuration(Self.configure)) { server in
            let token = try await Self.sign(Self.claims())
            let first = try await server.http.logIn(app: "jwt-app", provider: "custom-token", json: ["token": token])
            #expect(first.status == 200)
            let one = try first.decode(HTTP.Login.self)
            let two = try await server.http.logIn(
                app: "jwt-app", provider: "custom-token", json: ["token": try await Self.sign(Self.claims())]
            ).decode(HTTP.Login.self)
            #expect(one.user_id == two.user_id)
            let other = try await server.http.logIn(
                app: "jwt-app", provider: "custom-token", json: ["token": try await Self.sign(Self.claims(sub: "user-43"))]
            ).decode(HTTP.Login.self)
            #expect(other.user_id != one.user_id)

            let profile = try await server.http.profile(one.access_token)
            let identities = profile.object["identities"] as? [[String: Any]]
            #expect(identities?.first?["id"] as? String == "user-42")
            #expect(identities?.first?["provider_type"] as? String == "custom-token")
            #expect((profile.object["data"] as? [String: Any])?["name"] as? String == "Aragorn")
        }
    }

    @Test func aWrongSignatureAudienceOrExpiryIsRefused() async throws {
        try await withServer(TestServer.configuration(Self.configure)) { server in
            let tokens = [
                "wrong key": try await Self.sign(Self.claims(), hmac: "a key the server has never seen before!"),
                "wrong audience": try await Self.sign(Self.claims(aud: "someone-else")),
                "no audience": try await Self.sign(Self.claims(aud: nil)),
                "expired": try await Self.sign(Self.claims(expiresIn: -60)),
                "no exp": try await Self.sign(Self.claims(expiresIn: nil)),
                "empty sub": try await Self.sign(Self.claims(sub: "")),
                "garbage": "not.a.jwt",
            ]
            for (reason, token) in tokens {
                let answer = try await server.http.logIn(app: "jwt-app", provider: "custom-token", json: ["token": token])
                #expect(answer.status == 401, "\(reason)")
                #expect(answer.errorCode == "InvalidCredentials", "\(reason)")
            }
        }
    }

    /// Expiry is read on the server's clock (as every token of its own is), not the machine's.
    @Test func aTokenExpiresOnTheServersClock() async throws {
        let clock = ManualClock()
        try await withServer(TestServer.configuration(Self.configure), clock: clock) { server in
            let token = try await Self.sign(Self.claims(expiresIn: 600))
            #expect(try await server.http.logIn(app: "jwt-app", provider: "custom-token", json: ["token": token]).status == 200)
            clock.advance(by: 3_600)
            let late = try await server.http.logIn(app: "jwt-app", provider: "custom-token", json: ["token": token])
            #expect(late.status == 401 && late.errorCode == "InvalidCredentials")
        }
    }

    @Test func anAppWithoutAKeyRefusesCustomTokens() async throws {
        try await withServer(TestServer.configuration(Self.configure)) { server in
            let token = try await Self.sign(Self.claims())
            let answer = try await server.http.logIn(app: "dev-app", provider: "custom-token", json: ["token": token])
            #expect(answer.status == 403)
            #expect(answer.errorCode == "AuthProviderDisabled")
        }
    }

    @Test func rs256TokensAreCheckedWithThePublicKey() async throws {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try await withServer(TestServer.configuration { configuration in
            configuration.apps = [
                ServerConfiguration.App(
                    id: "rsa-app", customJWT: .init(algorithm: .rs256, key: privateKey.publicKey.pemRepresentation))
            ]
        }) { server in
            func sign(with key: _RSA.Signing.PrivateKey) async throws -> String {
                let keys = JWTKeyCollection()
                await keys.add(rsa: try Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256)
                return try await keys.sign(Self.claims(aud: nil))
            }
            let good = try await server.http.logIn(
                app: "rsa-app", provider: "custom-token", json: ["token": try await sign(with: privateKey)])
            #expect(good.status == 200)
            let bad = try await server.http.logIn(
                app: "rsa-app", provider: "custom-token", json: ["token": try await sign(with: otherKey)])
            #expect(bad.errorCode == "InvalidCredentials")
            // An HS256 token keyed with the public key text must not pass (algorithm confusion).
            let confused = try await Self.sign(Self.claims(aud: nil), hmac: privateKey.publicKey.pemRepresentation)
            let answer = try await server.http.logIn(app: "rsa-app", provider: "custom-token", json: ["token": confused])
            #expect(answer.errorCode == "InvalidCredentials")
        }
    }

    /// `iss` is checked when an issuer is configured; `nbf` and `iat` may be later than now by
    /// the clock skew at most; `sub` is bounded (issue 21 §4).
    @Test func issuerNotBeforeIssuedAtAndSubjectLengthAreChecked() async throws {
        let configuration = TestServer.configuration { configuration in
            configuration.apps = [ServerConfiguration.App(
                id: "jwt-app", customJWT: .init(algorithm: .hs256, key: Self.key, audience: Self.audience, issuer: "https://id.example.com"))]
        }
        try await withServer(configuration) { server in
            func status(_ change: (inout Claims) -> Void) async throws -> Int {
                var claims = Self.claims()
                claims.iss = IssuerClaim(value: "https://id.example.com")
                change(&claims)
                let answer = try await server.http.logIn(app: "jwt-app", provider: "custom-token", json: ["token": try await Self.sign(claims)])
                if answer.status != 200 { #expect(answer.errorCode == "InvalidCredentials") }
                return answer.status
            }
            let later = Date().addingTimeInterval(600), soon = Date().addingTimeInterval(20)
            let cases: [(String, Int, (inout Claims) -> Void)] = [
                ("as configured", 200, { _ in }),
                ("no iss", 401, { $0.iss = nil }),
                ("another iss", 401, { $0.iss = IssuerClaim(value: "https://evil.example.com") }),
                ("nbf in 10 min", 401, { $0.nbf = NotBeforeClaim(value: later) }),
                ("iat in 10 min", 401, { $0.iat = IssuedAtClaim(value: later) }),
                // Within the default 60 s of clock skew: accepted.
                ("nbf in 20 s", 200, { $0.nbf = NotBeforeClaim(value: soon) }),
                ("iat in 20 s", 200, { $0.iat = IssuedAtClaim(value: soon) }),
                ("nbf 10 min ago", 200, { $0.nbf = NotBeforeClaim(value: Date().addingTimeInterval(-600)) }),
                ("sub of 255 bytes", 200, { $0.sub = SubjectClaim(value: String(repeating: "s", count: 255)) }),
                ("sub of 256 bytes", 401, { $0.sub = SubjectClaim(value: String(repeating: "s", count: 256)) }),
                ("sub of 4,000 bytes", 401, { $0.sub = SubjectClaim(value: String(repeating: "s", count: 4_000)) }),
            ]
            for (name, expected, change) in cases {
                let answered = try await status(change)
                #expect(answered == expected, "\(name)")
            }
        }
    }
}
