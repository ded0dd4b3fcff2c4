import AtollAppConfig
import Foundation
import JWTKit

extension ServerConfiguration.OpenIDProvider {
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
