import Foundation
import JWTKit

/// The claims of an access token (docs/protocol.md §1): `sub` user id, `app` app id, `exp`, `iat`,
/// `typ: "access"`.
package struct AccessTokenClaims: JWTPayload, Equatable {
    package var sub: SubjectClaim
    package var app: String
    package var exp: ExpirationClaim
    package var iat: IssuedAtClaim
    package var typ: String
    /// A random id, so two tokens issued in the same second differ (a refresh always gives a
    /// new token).
    package var jti: IDClaim?
    /// The device (login) the token was issued to: logging out there ends its sync sessions.
    package var dev: String?
    /// The user's custom data when the app has some (`customUserData`), as App Services put it in
    /// its access tokens: the SDK reads `user.customData` from here.
    package var user_data: [String: JSONValue]?
    /// The API key the login was made with, when it was: such a login may use the user's data but
    /// not add a way in (link an identity, create a key).
    package var api_key: String?

    package init(userID: String, appID: String, deviceID: String? = nil, issuedAt: Date, expiresAt: Date,
                userData: [String: JSONValue]? = nil, apiKeyID: String? = nil) {
        sub = SubjectClaim(value: userID)
        app = appID
        iat = IssuedAtClaim(value: issuedAt)
        exp = ExpirationClaim(value: expiresAt)
        typ = "access"
        jti = IDClaim(value: UUID().uuidString)
        dev = deviceID
        user_data = userData
        api_key = apiKeyID
    }

    /// Signature and type; the expiry is checked against the server's clock by ``AccessTokens/verify(_:now:)``.
    package func verify(using algorithm: some JWTAlgorithm) async throws {
        guard typ == "access" else {
            throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "not an access token")
        }
    }
}

/// Signs and checks access tokens: JWTs signed HS256 with the server's secret.
///
/// ```swift
/// let tokens = AccessTokens(secret: secret, lifetime: 1800)
/// let jwt = try await tokens.issue(userID: user.id, appID: "tasks", now: .now)
/// let claims = try await tokens.verify(jwt, now: clock.now()) // throws ServerError(.invalidToken) when expired or forged
/// ```
package struct AccessTokens: Sendable {
    let keys: JWTKeyCollection
    /// How long a new token is valid, in seconds.
    package let lifetime: TimeInterval

    /// - Parameter secret: at least 32 bytes.
    package init(secret: String, lifetime: TimeInterval) async {
        precondition(secret.utf8.count >= 32, "the access token secret must be at least 32 bytes")
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.lifetime = lifetime
    }

    /// A new signed token for `userID` of `appID`, on the device (login) `deviceID`.
    package func issue(userID: String, appID: String, deviceID: String? = nil, now: Date, userData: [String: JSONValue]? = nil,
                      apiKeyID: String? = nil) async throws -> String
    {
        // JWT times are whole seconds; rounding down keeps `iat` from lying about the future.
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        return try await keys.sign(
            AccessTokenClaims(
                userID: userID, appID: appID, deviceID: deviceID, issuedAt: issuedAt, expiresAt: issuedAt.addingTimeInterval(lifetime),
                userData: userData, apiKeyID: apiKeyID))
    }

    /// The claims of a token this server signed and that has not expired at `now`.
    /// - Throws: `ServerError(.invalidToken)` otherwise.
    package func verify(_ token: String, now: Date) async throws -> AccessTokenClaims {
        guard let claims = try? await keys.verify(token, as: AccessTokenClaims.self), claims.exp.value > now else {
            throw ServerError(.invalidToken, "the access token is invalid or expired")
        }
        return claims
    }
}
