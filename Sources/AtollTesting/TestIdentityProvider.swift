import CryptoExtras
import AtollServer
import Foundation
import JWTKit

/// An OpenID Connect provider made up for a test (a stand-in for Apple or Google): keys it makes
/// (RSA for RS256, P-256 for ES256), the JWKS the server is configured with, and ID tokens it
/// signs, good or deliberately wrong.
///
/// ```swift
/// let apple = try await TestIdentityProvider(issuer: "https://appleid.apple.com", audience: "com.example.tasks")
/// let server = try await SyncTestServer.start { $0.apps = [.init(id: "test-app", apple: apple.configuration)] }
/// let user = try await server.app().login(credentials: .apple(idToken: try await apple.idToken(subject: "001234.abc")))
/// ```
package struct TestIdentityProvider: Sendable {
    package let issuer: String
    package let audience: String
    /// The JWKS (public keys only) as JSON text.
    package let jwks: String
    /// The RSA key's PEM public key (what an HS256 forgery would use as its secret).
    package let rsaPublicKeyPEM: String
    let keys: JWTKeyCollection

    package static let rsaKeyID = "rsa-1"
    package static let ecKeyID = "ec-1"

    package init(issuer: String = "https://appleid.apple.com", audience: String = "com.example.atoll") async throws {
        self.issuer = issuer
        self.audience = audience
        let rsa = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let ec = ES256PrivateKey()
        let keys = JWTKeyCollection()
        await keys.add(rsa: rsa, digestAlgorithm: .sha256, kid: JWKIdentifier(string: Self.rsaKeyID))
        await keys.add(ecdsa: ec, kid: JWKIdentifier(string: Self.ecKeyID))
        self.keys = keys
        let primitives = try rsa.publicKey.getKeyPrimitives()
        let point = try require_(ec.publicKey.parameters)
        let set: [String: Any] = ["keys": [
            ["kty": "RSA", "kid": Self.rsaKeyID, "use": "sig", "alg": "RS256",
             "n": Self.base64URL(primitives.modulus), "e": Self.base64URL(primitives.publicExponent)],
            ["kty": "EC", "kid": Self.ecKeyID, "use": "sig", "crv": "P-256", "x": point.x, "y": point.y],
        ]]
        jwks = String(decoding: try JSONSerialization.data(withJSONObject: set, options: [.sortedKeys]), as: UTF8.self)
        rsaPublicKeyPEM = try rsa.publicKey.pemRepresentation
    }

    /// The server's settings for this provider (inline JWKS).
    package var configuration: ServerConfiguration.OpenIDProvider {
        ServerConfiguration.OpenIDProvider(jwks: jwks, issuer: issuer, audience: [audience])
    }

    /// The claims of an ID token; each can be set wrong on purpose.
    package struct Claims: JWTPayload {
        package var iss: IssuerClaim
        package var sub: SubjectClaim
        package var aud: AudienceClaim
        package var exp: ExpirationClaim
        package var iat: IssuedAtClaim
        package var nbf: NotBeforeClaim?
        package var email: String?
        package func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A signed ID token for `subject`; `configure` changes the claims (wrong audience, expired…).
    /// `keyID` picks the key (``rsaKeyID`` signs RS256, ``ecKeyID`` ES256).
    package func idToken(subject: String, email: String? = nil, keyID: String = TestIdentityProvider.rsaKeyID, now: Date = Date(),
                        _ configure: (inout Claims) -> Void = { _ in }) async throws -> String {
        var claims = Claims(
            iss: IssuerClaim(value: issuer), sub: SubjectClaim(value: subject), aud: AudienceClaim(value: [audience]),
            exp: ExpirationClaim(value: now.addingTimeInterval(600)), iat: IssuedAtClaim(value: now), nbf: nil, email: email)
        configure(&claims)
        return try await keys.sign(claims, kid: JWKIdentifier(string: keyID))
    }

    /// A token signed with a key of its own (not in the JWKS) under this provider's key id.
    package func forgedIdToken(subject: String, keyID: String = TestIdentityProvider.rsaKeyID) async throws -> String {
        let other = try await TestIdentityProvider(issuer: issuer, audience: audience)
        return try await other.idToken(subject: subject, keyID: keyID)
    }

    /// A good token whose header names `keyID`, a key the JWKS does not have (a rotated key):
    /// its signature is the real key's, so only the key id gives it away.
    package func idTokenNamingUnknownKey(subject: String, keyID: String) async throws -> String {
        let parts = try await idToken(subject: subject).split(separator: ".")
        let header = Self.base64URL(Data(#"{"alg":"RS256","kid":"\#(keyID)","typ":"JWT"}"#.utf8))
        return ([header] + parts.dropFirst().map(String.init)).joined(separator: ".")
    }

    /// An unsigned token (`alg: none`) with good claims.
    package func unsignedIdToken(subject: String) async throws -> String {
        let none = JWTKeyCollection()
        await none.addUnsecuredNone(kid: JWKIdentifier(string: Self.rsaKeyID))
        return try await none.sign(goodClaims(subject), kid: JWKIdentifier(string: Self.rsaKeyID))
    }

    /// An HS256 token whose secret is the RSA public key (the algorithm-confusion forgery).
    package func hmacWithPublicKeyIdToken(subject: String) async throws -> String {
        let hmac = JWTKeyCollection()
        await hmac.add(hmac: HMACKey(from: rsaPublicKeyPEM), digestAlgorithm: .sha256, kid: JWKIdentifier(string: Self.rsaKeyID))
        return try await hmac.sign(goodClaims(subject), kid: JWKIdentifier(string: Self.rsaKeyID))
    }

    private func goodClaims(_ subject: String) -> Claims {
        Claims(iss: IssuerClaim(value: issuer), sub: SubjectClaim(value: subject), aud: AudienceClaim(value: [audience]),
               exp: ExpirationClaim(value: Date().addingTimeInterval(600)), iat: IssuedAtClaim(value: Date()), nbf: nil, email: nil)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The value, or a test setup error.
private func require_<T>(_ value: T?) throws -> T {
    guard let value else { throw CocoaError(.featureUnsupported) }
    return value
}
