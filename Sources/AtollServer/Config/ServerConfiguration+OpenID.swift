import Foundation
import JWTKit

extension ServerConfiguration {
    /// How an app checks the OpenID Connect ID tokens of one provider (Sign in with Apple, Google):
    /// the provider's public keys (a JWKS), the issuer and the app's client ids. The server never
    /// calls the provider: the keys are configured, inline or in a file the operator refreshes.
    ///
    /// ```json
    /// "apple": { "jwksPath": "/etc/atoll/apple-keys.json", "audience": ["com.example.tasks"] }
    /// ```
    public struct OpenIDProvider: Sendable, Hashable, Codable {
        /// The JWKS as JSON text (in the file: a JSON object or a string).
        public var jwks: String?
        /// A file holding the JWKS, read when the server starts.
        public var jwksPath: String?
        /// The `iss` a token must have; nil means the provider's own (`https://appleid.apple.com`,
        /// `https://accounts.google.com`).
        public var issuer: String?
        /// The client ids (bundle ids, OAuth client ids) a token's `aud` must contain one of.
        public var audience: [String]

        public init(jwks: String? = nil, jwksPath: String? = nil, issuer: String? = nil, audience: [String]) {
            self.jwks = jwks
            self.jwksPath = jwksPath
            self.issuer = issuer
            self.audience = audience
        }

        enum CodingKeys: String, CodingKey {
            case jwks, jwksPath, issuer, audience
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let text = try? container.decodeIfPresent(String.self, forKey: .jwks) {
                jwks = text
            } else if let set = try container.decodeIfPresent(JWKS.self, forKey: .jwks) {
                jwks = String(decoding: try JSONEncoder().encode(set), as: UTF8.self)
            }
            jwksPath = try container.decodeIfPresent(String.self, forKey: .jwksPath)
            issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
            if let one = try? container.decode(String.self, forKey: .audience) {
                audience = [one]
            } else {
                audience = try container.decodeIfPresent([String].self, forKey: .audience) ?? []
            }
        }

        /// Checks the shape: one source of keys, at least one audience, an inline JWKS with a usable key.
        func validate(field: String) throws {
            guard (jwks == nil) != (jwksPath == nil) else {
                throw ConfigurationError(field: "\(field).jwks", "give the keys either inline (jwks) or as a file (jwksPath)")
            }
            guard !audience.isEmpty, audience.allSatisfy({ !$0.isEmpty }) else {
                throw ConfigurationError(field: "\(field).audience", "must list the app's client ids")
            }
            if let jwks { _ = try OpenIDKeySet(json: jwks, field: "\(field).jwks") }
        }

        /// The JWKS text, read from `jwksPath` when it is a file.
        func jwksText(field: String) throws -> String {
            if let jwks { return jwks }
            guard let path = jwksPath, let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(field: "\(field).jwksPath", "cannot read \(jwksPath ?? "")")
            }
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// The usable keys of a JWKS: RSA keys (RS256) and P-256 keys (ES256), each with a `kid`. Other
/// keys (HMAC secrets, other curves) are refused: an ID token is checked with a public key.
struct OpenIDKeySet {
    /// The keys, each with its one algorithm set.
    var keys: [JWK]
    /// The algorithm of each key id.
    var algorithms: [String: String]

    init(json: String, field: String) throws {
        let set: JWKS
        do {
            set = try JSONDecoder().decode(JWKS.self, from: Data(json.utf8))
        } catch {
            throw ConfigurationError(field: field, "not a JWKS (a JSON object with \"keys\")")
        }
        keys = []
        algorithms = [:]
        for (index, var key) in set.keys.enumerated() {
            guard let kid = key.keyIdentifier?.string, !kid.isEmpty else {
                throw ConfigurationError(field: "\(field).keys[\(index)]", "a key needs a kid")
            }
            let algorithm: JWK.Algorithm
            if key.keyType == .rsa {
                algorithm = .rs256
            } else if key.keyType == .ecdsa, key.curve == .ecdsa(.p256) {
                algorithm = .es256
            } else {
                throw ConfigurationError(field: "\(field).keys[\(index)]", "only RSA (RS256) and P-256 (ES256) keys are accepted")
            }
            if let declared = key.algorithm, declared != algorithm {
                throw ConfigurationError(field: "\(field).keys[\(index)].alg", "must be \(algorithm.rawValue) for this key")
            }
            key.algorithm = algorithm
            keys.append(key)
            algorithms[kid] = algorithm.rawValue
        }
        guard !keys.isEmpty else { throw ConfigurationError(field: field, "the JWKS has no keys") }
    }
}
