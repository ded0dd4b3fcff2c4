import AtollCore
import Foundation
import JWTKit

/// The claims read from a custom JWT: `sub` (the external user id), `exp` (required), `aud`, `iss`,
/// `nbf`, `iat`, and the optional profile fields `name` and `email`.
struct CustomTokenClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var aud: AudienceClaim?
    var iss: IssuerClaim?
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?
    var name: String?
    var email: String?

    /// The time claims are checked against the server's clock in ``CustomTokens/verify(_:appID:now:)``.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Verifies the custom JWTs of the apps that configured a key.
struct CustomTokens: Sendable {
    /// By app id; apps added at run time (``install(_:appID:)``) join those of the configuration.
    private let verifiers: Locked<[String: Verifier]>

    struct Verifier: Sendable {
        let keys: JWTKeyCollection
        let audience: String?
        let issuer: String?
        let clockSkew: TimeInterval
        let settings: ServerConfiguration.CustomJWT
    }

    /// The longest `sub` accepted, in UTF-8 bytes: it is stored as the identity's id and shown in
    /// profiles.
    static let maxSubjectBytes = 255

    /// Builds a verifier for every app of `configuration` with a `customJWT` key.
    init(configuration: ServerConfiguration) async throws {
        try await self.init(apps: configuration.apps)
    }

    /// Builds a verifier for every app of `apps` with a `customJWT` key.
    init(apps: [ServerConfiguration.App]) async throws {
        var verifiers: [String: Verifier] = [:]
        for app in apps {
            verifiers[app.id] = try await Self.verifier(for: app)
        }
        self.verifiers = Locked(verifiers)
    }

    /// The verifier of `app`'s custom JWTs, or nil when it has no key.
    static func verifier(for app: ServerConfiguration.App) async throws -> Verifier? {
        guard let jwt = app.customJWT else { return nil }
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
        return Verifier(keys: keys, audience: jwt.audience, issuer: jwt.issuer, clockSkew: jwt.clockSkew, settings: jwt)
    }

    /// Puts `verifier` (nil: none, the provider is off) in place for `appID`: an app added or
    /// replaced at run time.
    func install(_ verifier: Verifier?, appID: String) {
        verifiers.withLock { $0[appID] = verifier }
    }

    /// The claims of `token` for `appID`, at `now`.
    /// - Throws: `ServerError(.authProviderDisabled)` when the app has no key, `.invalidCredentials` when the
    ///   signature, expiry, audience or issuer is wrong, the token is not valid yet (`nbf`, `iat`
    ///   later than `now` plus the clock skew), or `sub` is empty or longer than ``maxSubjectBytes``.
    func verify(_ token: String, appID: String, now: Date) async throws -> CustomTokenClaims {
        guard let verifier = verifiers.withLock({ $0[appID] }) else {
            throw ServerError(.authProviderDisabled, "custom JWT authentication is not configured for this app")
        }
        let claims: CustomTokenClaims
        do {
            claims = try await verifier.keys.verify(token, as: CustomTokenClaims.self)
        } catch {
            throw ServerError(.invalidCredentials, "the custom JWT is invalid, expired or wrongly signed")
        }
        guard claims.exp.value > now else {
            throw ServerError(.invalidCredentials, "the custom JWT is invalid, expired or wrongly signed")
        }
        if let audience = verifier.audience, !(claims.aud?.value.contains(audience) ?? false) {
            throw ServerError(.invalidCredentials, "the custom JWT is not meant for this app (aud)")
        }
        if let issuer = verifier.issuer, claims.iss?.value != issuer {
            throw ServerError(.invalidCredentials, "the custom JWT is not from the configured issuer (iss)")
        }
        let latest = now.addingTimeInterval(verifier.clockSkew)
        if let notBefore = claims.nbf?.value, notBefore > latest {
            throw ServerError(.invalidCredentials, "the custom JWT is not valid yet (nbf)")
        }
        if let issued = claims.iat?.value, issued > latest {
            throw ServerError(.invalidCredentials, "the custom JWT was issued in the future (iat)")
        }
        guard !claims.sub.value.isEmpty else {
            throw ServerError(.invalidCredentials, "the custom JWT has an empty sub")
        }
        guard claims.sub.value.utf8.count <= Self.maxSubjectBytes else {
            throw ServerError(.invalidCredentials, "the custom JWT's sub is longer than \(Self.maxSubjectBytes) bytes")
        }
        return claims
    }

    /// The metadata fields (`customJWT.metadataFields`) of `token`, which ``verify(_:appID:now:)``
    /// accepted, by profile name.
    /// - Throws: `ServerError(.invalidCredentials)` when a required one is missing or a value is too large.
    func metadata(of token: String, appID: String) throws -> [String: JSONValue] {
        guard let settings = verifiers.withLock({ $0[appID] })?.settings, !settings.metadataFields.isEmpty else { return [:] }
        guard let payload = Self.payload(of: token) else {
            throw ServerError(.invalidCredentials, "the custom JWT is invalid, expired or wrongly signed")
        }
        return try settings.metadata(ofPayload: payload)
    }
}
