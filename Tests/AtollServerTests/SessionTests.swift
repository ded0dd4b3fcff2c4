import AtollServer
import Foundation
import JWTKit
import Testing

@Suite("Sessions, tokens and profiles")
struct SessionTests {
    static let secret = "a test secret that is long enough for HS256 tokens"

    static func sign(_ claims: AccessTokenClaims, secret: String = SessionTests.secret) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    @Test func aRefreshTokenIssuesANewAccessToken() async throws {
        try await withServer { server in
            let session = try await server.http.anonymousLogin()
            let refreshed = try await server.http.refresh(session.refresh_token)
            #expect(refreshed.status == 201)
            let accessToken = try #require(refreshed.object["access_token"] as? String)
            #expect(refreshed.object.count == 1)
            let profile = try await server.http.profile(accessToken)
            #expect(profile.status == 200)
            #expect(profile.object["user_id"] as? String == session.user_id)
        }
    }

    @Test func accessTokensCarryTheDocumentedClaims() async throws {
        try await withServer(TestServer.configuration { $0.tokenSecret = Self.secret }) { server in
            let session = try await server.http.anonymousLogin(app: "claims-app")
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: Self.secret), digestAlgorithm: .sha256)
            let claims = try await keys.verify(session.access_token, as: AccessTokenClaims.self)
            #expect(claims.sub.value == session.user_id)
            #expect(claims.app == "claims-app")
            #expect(claims.typ == "access")
            let lifetime = claims.exp.value.timeIntervalSince(claims.iat.value)
            #expect(lifetime == 30 * 60)
        }
    }

    @Test func loggingOutRevokesTheRefreshToken() async throws {
        try await withServer { server in
            let session = try await server.http.anonymousLogin()
            let logout = try await server.http.send("DELETE", "/api/client/v1/auth/session", bearer: session.refresh_token)
            #expect(logout.status == 204)
            #expect(logout.body.isEmpty)
            let refresh = try await server.http.refresh(session.refresh_token)
            #expect(refresh.status == 401)
            #expect(refresh.errorCode == "InvalidToken")
            let again = try await server.http.send("DELETE", "/api/client/v1/auth/session", bearer: session.refresh_token)
            #expect(again.errorCode == "InvalidToken")
            // Another session of the same kind is untouched.
            let other = try await server.http.anonymousLogin()
            #expect(try await server.http.refresh(other.refresh_token).status == 201)
        }
    }

    @Test func garbageForgedAndExpiredAccessTokensAreInvalidToken() async throws {
        try await withServer(TestServer.configuration { $0.tokenSecret = Self.secret }) { server in
            let session = try await server.http.anonymousLogin()
            let now = Date()
            let forged = try await Self.sign(
                AccessTokenClaims(
                    userID: session.user_id, appID: "tasks", issuedAt: now, expiresAt: now.addingTimeInterval(600)),
                secret: "another secret, just as long as the real one is")
            let expired = try await Self.sign(
                AccessTokenClaims(
                    userID: session.user_id, appID: "tasks", issuedAt: now.addingTimeInterval(-3600),
                    expiresAt: now.addingTimeInterval(-1800)))
            let otherApp = try await Self.sign(
                AccessTokenClaims(
                    userID: session.user_id, appID: "another-app", issuedAt: now, expiresAt: now.addingTimeInterval(600)))
            let valid = try await Self.sign(
                AccessTokenClaims(userID: session.user_id, appID: "tasks", issuedAt: now, expiresAt: now.addingTimeInterval(600)))
            #expect(try await server.http.profile(valid).status == 200)

            for token in ["garbage", "a.b.c", forged, expired, otherApp, session.refresh_token] {
                let answer = try await server.http.profile(token)
                #expect(answer.status == 401, "\(token)")
                #expect(answer.errorCode == "InvalidToken", "\(token)")
            }
            let missing = try await server.http.send("GET", "/api/client/v1/auth/profile")
            #expect(missing.status == 401)
            #expect(missing.errorCode == "InvalidToken")
        }
    }

    @Test func anExpiredRefreshTokenIsInvalidToken() async throws {
        // A refresh token that lives one millisecond has expired by the time the next request arrives.
        try await withServer(TestServer.configuration { $0.refreshTokenLifetime = 0.001 }) { server in
            let session = try await server.http.anonymousLogin()
            let answer = try await server.http.refresh(session.refresh_token)
            #expect(answer.status == 401)
            #expect(answer.errorCode == "InvalidToken")
        }
    }

    @Test func anAccessTokenIsNotARefreshToken() async throws {
        try await withServer { server in
            let session = try await server.http.anonymousLogin()
            for token in [session.access_token, "garbage"] {
                let answer = try await server.http.refresh(token)
                #expect(answer.status == 401)
                #expect(answer.errorCode == "InvalidToken")
            }
        }
    }

    @Test func deletingAUserRemovesItAndItsTokens() async throws {
        try await withServer { server in
            _ = try await server.http.register(email: "boromir@gondor.example", password: "one-does-not")
            let session = try await server.http.emailLogin(email: "boromir@gondor.example", password: "one-does-not")
                .decode(HTTP.Login.self)
            let deleted = try await server.http.send("DELETE", "/api/client/v1/auth/delete", bearer: session.access_token)
            #expect(deleted.status == 204)

            #expect(try await server.http.profile(session.access_token).errorCode == "InvalidToken")
            #expect(try await server.http.refresh(session.refresh_token).errorCode == "InvalidToken")
            let login = try await server.http.emailLogin(email: "boromir@gondor.example", password: "one-does-not")
            #expect(login.errorCode == "InvalidCredentials")
            #expect(try await server.auth.store.user(id: session.user_id) == nil)
            // The email is free again.
            #expect(try await server.http.register(email: "boromir@gondor.example", password: "again!").status == 201)
        }
    }
}
