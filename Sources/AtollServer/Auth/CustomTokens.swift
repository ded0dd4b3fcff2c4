import Foundation
import JWTKit

/// The claims read from a custom JWT: `sub` (the external user id), `exp` (required), `aud`, and the
/// optional profile fields `name` and `email`.
struct CustomTokenClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var aud: AudienceClaim?
    var name: String?
    var email: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Verifies the custom JWTs of the apps that configured a key.
struct CustomTokens: Sendable {
    private let verifiers: [String: Verifier]

    struct Verifier: Sendable {
        let keys: JWTKeyCollection
        let audience: String?
    }

    /// Builds a verifier for every app of `configuration` with a `customJWT` key.
    init(configuration: ServerConfiguration) async throws {
        var verifiers: [String: Verifier] = [:]
        for app in configuration.apps {
            guard let jwt = app.customJWT else { continue }
            let keys = JWTKeyCollection()
            switch jwt.algorithm {
            case .hs256:
                // `validate()` has checked the length; jwt-kit asserts on keys under 32 bytes.
                guard jwt.key.utf8.count >= 32 else {
                    throw ConfigurationError(field: "apps.\(app.id).customJWT.key", "an HS256 key must be at least 32 bytes")
                }
                await keys.add(hmac: HMACKey(from: jwt.key), digestAlgorithm: .sha256)
            case .rs256:
                await keys.add(rsa: try Insecure.RSA.PublicKey(pem: jwt.key), digestAlgorithm: .sha256)
            }
            verifiers[app.id] = Verifier(keys: keys, audience: jwt.audience)
        }
        self.verifiers = verifiers
    }

    /// The claims of `token` for `appID`.
    /// - Throws: `ServerError(.authProviderDisabled)` when the app has no key, `.invalidCredentials` when the
    ///   signature, expiry or audience is wrong or `sub` is empty.
    func verify(_ token: String, appID: String) async throws -> CustomTokenClaims {
        guard let verifier = verifiers[appID] else {
            throw ServerError(.authProviderDisabled, "custom JWT authentication is not configured for this app")
        }
        let claims: CustomTokenClaims
        do {
            claims = try await verifier.keys.verify(token, as: CustomTokenClaims.self)
        } catch {
            throw ServerError(.invalidCredentials, "the custom JWT is invalid, expired or wrongly signed")
        }
        if let audience = verifier.audience, !(claims.aud?.value.contains(audience) ?? false) {
            throw ServerError(.invalidCredentials, "the custom JWT is not meant for this app (aud)")
        }
        guard !claims.sub.value.isEmpty else {
            throw ServerError(.invalidCredentials, "the custom JWT has an empty sub")
        }
        return claims
    }
}
