import AtollAppConfig
import Foundation
import JWTKit

extension ServerConfiguration.OpenIDProvider {
    /// Checks the shape: at most one source of keys, an inline JWKS with a usable key, the
    /// provider URLs (https, or http on a loopback address), the app's client ids, the timeout.
    func validate(field: String) throws {
        guard [jwks != nil, jwksPath != nil, jwksURL != nil].filter({ $0 }).count <= 1 else {
            throw ConfigurationError(field: "\(field).jwks", "give the keys one way: inline (jwks), as a file (jwksPath) or as a URL (jwksURL)")
        }
        guard !acceptedAudience.isEmpty, audience.allSatisfy({ !$0.isEmpty }) else {
            throw ConfigurationError(field: "\(field).audience", "must list the app's client ids")
        }
        if let jwks { _ = try OpenIDKeySet(json: jwks, field: "\(field).jwks") }
        if let jwksURL { try WebhookClient.Target.checkProviderURL(jwksURL, field: "\(field).jwksURL") }
        guard timeout > 0, timeout <= 60 else {
            throw ConfigurationError(field: "\(field).timeout", "must be more than 0 and at most 60 s")
        }
        if let authCode {
            guard !authCode.clientId.isEmpty, authCode.clientId.utf8.count <= 256 else {
                throw ConfigurationError(field: "\(field).authCode.clientId", "must be the OAuth client id (1 to 256 bytes)")
            }
            if let secret = authCode.clientSecret, secret.isEmpty || secret.utf8.count > 1024 {
                throw ConfigurationError(field: "\(field).authCode.clientSecret", "must have 1 to 1024 bytes (leave it out to refuse auth codes)")
            }
            try WebhookClient.Target.checkProviderURL(authCode.tokenURL, field: "\(field).authCode.tokenURL")
            if let redirect = authCode.redirectURI, redirect.utf8.count > 2048 {
                throw ConfigurationError(field: "\(field).authCode.redirectURI", "must be at most 2048 bytes")
            }
        }
    }

    /// Where the keys are fetched from when they are neither inline nor in a file.
    func keysURL(google: Bool) -> String? {
        guard jwks == nil, jwksPath == nil else { return nil }
        return jwksURL ?? Self.defaultJWKSURL(google: google)
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

extension ServerConfiguration.Facebook {
    /// Checks the app id, the secret, the Graph API's URL and the timeout.
    func validate(field: String) throws {
        guard !clientId.isEmpty, clientId.utf8.count <= 128, clientId.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw ConfigurationError(field: "\(field).clientId", "must be the Facebook app id (1 to 128 letters or digits)")
        }
        if let secret = clientSecret, secret.isEmpty || secret.utf8.count > 1024 || secret.contains(where: { !$0.isASCII || $0.isWhitespace }) {
            throw ConfigurationError(field: "\(field).clientSecret", "must have 1 to 1024 visible ASCII characters (leave it out to refuse Facebook logins)")
        }
        try WebhookClient.Target.checkProviderURL(graphURL, field: "\(field).graphURL")
        guard timeout > 0, timeout <= 60 else {
            throw ConfigurationError(field: "\(field).timeout", "must be more than 0 and at most 60 s")
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

    /// The keys of `json`; `skippingUnusable` leaves out keys of other kinds (a provider's
    /// published set) instead of refusing the set (an operator's).
    init(json: String, field: String, skippingUnusable: Bool = false) throws {
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
                if skippingUnusable { continue }
                throw ConfigurationError(field: "\(field).keys[\(index)]", "a key needs a kid")
            }
            let algorithm: JWK.Algorithm
            if key.keyType == .rsa {
                algorithm = .rs256
            } else if key.keyType == .ecdsa, key.curve == .ecdsa(.p256) {
                algorithm = .es256
            } else if skippingUnusable {
                continue
            } else {
                throw ConfigurationError(field: "\(field).keys[\(index)]", "only RSA (RS256) and P-256 (ES256) keys are accepted")
            }
            if let declared = key.algorithm, declared != algorithm {
                if skippingUnusable { continue }
                throw ConfigurationError(field: "\(field).keys[\(index)].alg", "must be \(algorithm.rawValue) for this key")
            }
            key.algorithm = algorithm
            keys.append(key)
            algorithms[kid] = algorithm.rawValue
        }
        guard !keys.isEmpty else { throw ConfigurationError(field: field, "the JWKS has no keys") }
    }

    /// The keys, ready to verify with.
    func collection(field: String) async throws -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        for key in keys {
            do { try await collection.add(jwk: key) } catch {
                throw ConfigurationError(field: field, "key \(key.keyIdentifier?.string ?? "?") cannot be used: \(error)")
            }
        }
        return collection
    }
}
