import AtollCore
import Foundation
import JWTKit

/// The claims read from an OpenID Connect ID token: `iss`, `sub` (the identity), `aud`, `exp`,
/// `iat`, `nbf`, and the profile fields `email` and `name`.
struct OpenIDClaims: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var nbf: NotBeforeClaim?
    var email: String?
    var name: String?

    /// The signature only: the times are checked against the server's clock by ``OpenIDTokens``.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Checks the ID tokens of Sign in with Apple and Google against the keys each app configured
/// or the provider publishes (``ServerConfiguration/OpenIDProvider``, ``RemoteKeySet``): the signature (RS256 or ES256 only, with the key the
/// token's `kid` names), the issuer, the audience and the times, with ``leeway`` for clock skew.
///
/// ```swift
/// let claims = try await openID.verify(idToken, provider: .apple, appID: "tasks", now: now())
/// ```
struct OpenIDTokens: Sendable {
    /// Seconds of clock difference tolerated on `exp`, `iat` and `nbf`.
    static let leeway: TimeInterval = 60
    /// The largest ID token accepted (Apple's and Google's are about 1 KB).
    static let maxTokenBytes = 16 * 1024

    struct Verifier: Sendable {
        /// Keys configured (inline or in a file), or fetched from the provider.
        enum Keys: Sendable {
            case fixed(JWTKeyCollection, algorithms: [String: String])
            case remote(RemoteKeySet)
        }
        let keys: Keys
        let issuers: [String]
        let audience: [String]

        /// The keys to check a token naming `kid` with, and each key id's algorithm.
        func keySet(for kid: String?, now: Date) async throws -> (JWTKeyCollection, [String: String]) {
            switch keys {
            case .fixed(let collection, let algorithms): (collection, algorithms)
            case .remote(let remote): try await remote.keys(for: kid, now: now)
            }
        }
    }

    /// By app id; apps added at run time (``install(_:appID:)``) join those of the configuration.
    private let verifiers: Locked<[String: [AuthProvider: Verifier]]>

    /// Reads the keys of every app's configured providers (files included).
    init(configuration: ServerConfiguration) async throws {
        try await self.init(apps: configuration.apps)
    }

    /// Reads the keys of the configured providers of every app of `apps` (files included).
    init(apps: [ServerConfiguration.App]) async throws {
        var verifiers: [String: [AuthProvider: Verifier]] = [:]
        for (index, app) in apps.enumerated() {
            verifiers[app.id] = try await Self.verifiers(for: app, field: "apps[\(index)]")
        }
        self.verifiers = Locked(verifiers)
    }

    /// The verifiers of `app`'s configured providers; `field` names the app in errors.
    static func verifiers(for app: ServerConfiguration.App, field appField: String) async throws -> [AuthProvider: Verifier] {
        var out: [AuthProvider: Verifier] = [:]
        for (provider, settings) in [(AuthProvider.apple, app.apple), (.google, app.google)] {
            guard let settings else { continue }
            let field = "\(appField).\(provider == .apple ? "apple" : "google")"
            let keys: Verifier.Keys
            if let url = settings.keysURL(google: provider == .google) {
                keys = .remote(RemoteKeySet(url: url, timeout: settings.timeout))
            } else {
                let set = try OpenIDKeySet(json: try settings.jwksText(field: field), field: field)
                keys = .fixed(try await set.collection(field: field), algorithms: set.algorithms)
            }
            let issuers = settings.issuer.map { [$0] } ?? Self.defaultIssuers(provider)
            out[provider] = Verifier(keys: keys, issuers: issuers, audience: settings.acceptedAudience)
        }
        return out
    }

    /// Puts `verifiers` in place for `appID`: an app added or replaced at run time.
    func install(_ verifiers: [AuthProvider: Verifier], appID: String) {
        self.verifiers.withLock { $0[appID] = verifiers.isEmpty ? nil : verifiers }
    }

    static func defaultIssuers(_ provider: AuthProvider) -> [String] {
        provider == .apple ? ["https://appleid.apple.com"] : ["https://accounts.google.com", "accounts.google.com"]
    }

    /// The claims of the ID token `token` of `provider` for `appID`, checked at `now`; with
    /// `audience`, the token must be meant for that client id (an auth code's).
    /// - Throws: `ServerError`: `.authProviderDisabled` when the app has no keys for the provider,
    ///   `.badRequest` for an oversized token, `.invalidCredentials` for any other fault (signature,
    ///   algorithm, key id, issuer, audience, expiry, empty `sub`), with a message naming it,
    ///   `.authError` when the provider's keys cannot be fetched.
    func verify(_ token: String, provider: AuthProvider, appID: String, now: Date, audience: String? = nil) async throws -> OpenIDClaims {
        guard let verifier = verifiers.withLock({ $0[appID]?[provider] }) else {
            throw ServerError(.authProviderDisabled, "the \(provider.rawValue) provider is not configured for this app")
        }
        guard token.utf8.count <= Self.maxTokenBytes else {
            throw ServerError(.badRequest, "the ID token is larger than \(Self.maxTokenBytes) bytes")
        }
        let header = try Self.header(of: token)
        let (keys, algorithms) = try await verifier.keySet(for: header.kid, now: now)
        guard let kid = header.kid, let algorithm = algorithms[kid] else {
            throw ServerError(.invalidCredentials, "the ID token's key id (kid) is not one of the provider's keys")
        }
        guard header.alg == algorithm else {
            throw ServerError(.invalidCredentials, "the ID token's algorithm \(header.alg ?? "none") does not match its key (\(algorithm))")
        }
        let claims: OpenIDClaims
        do {
            claims = try await keys.verify(token, as: OpenIDClaims.self)
        } catch {
            throw ServerError(.invalidCredentials, "the ID token's signature or claims are invalid")
        }
        guard verifier.issuers.contains(claims.iss.value) else {
            throw ServerError(.invalidCredentials, "the ID token was not issued by \(verifier.issuers[0]) (iss)")
        }
        let accepted = audience.map { [$0] } ?? verifier.audience
        guard claims.aud.value.contains(where: accepted.contains) else {
            throw ServerError(.invalidCredentials, "the ID token is not meant for this app (aud)")
        }
        let leeway = Self.leeway
        guard claims.exp.value.addingTimeInterval(leeway) > now else {
            throw ServerError(.invalidCredentials, "the ID token has expired (exp)")
        }
        guard claims.iat.value.addingTimeInterval(-leeway) <= now else {
            throw ServerError(.invalidCredentials, "the ID token is issued in the future (iat)")
        }
        if let nbf = claims.nbf, nbf.value.addingTimeInterval(-leeway) > now {
            throw ServerError(.invalidCredentials, "the ID token is not valid yet (nbf)")
        }
        guard !claims.sub.value.isEmpty, claims.sub.value.utf8.count <= 255 else {
            throw ServerError(.invalidCredentials, "the ID token's sub must have 1 to 255 bytes")
        }
        return claims
    }

    struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    /// The token's header, read before any key is tried: the algorithm must be the key's.
    static func header(of token: String) throws -> Header {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw ServerError(.invalidCredentials, "the ID token is not a JWT (three dot-separated parts)") }
        var base64 = parts[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw ServerError(.invalidCredentials, "the ID token's header is not base64url JSON")
        }
        return header
    }
}
