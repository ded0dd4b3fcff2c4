import Crypto
import Foundation

/// Wraps the secrets a store shares between nodes (the token secret, the admin key) with AES-256-GCM
/// under a key only the nodes hold (`secretKey`, or `ATOLL_SECRET_KEY`), so a dump or a read of
/// the database does not give them away. The secret's name is authenticated with it: a wrapped
/// admin key cannot be put in the token secret's place.
///
/// A stored value is `aesgcm1:<base64 of nonce, ciphertext and tag>`; anything else is a secret
/// stored in plain text by an older server, which a node with a key wraps in place.
struct SecretWrapping: Sendable {
    static let prefix = "aesgcm1:"
    private let key: SymmetricKey

    /// The wrapping key derived (HKDF-SHA256) from the configured `secretKey` (at least 32 bytes).
    init(secretKey: String) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(secretKey.utf8)), info: Data("atoll shared secrets v1".utf8),
            outputByteCount: 32)
    }

    /// Whether `stored` is a wrapped secret (not plain text).
    static func isWrapped(_ stored: String) -> Bool { stored.hasPrefix(prefix) }

    /// `secret` wrapped for storing under `name`.
    func wrap(_ secret: String, name: String) throws -> String {
        let sealed = try AES.GCM.seal(Data(secret.utf8), using: key, authenticating: Data(name.utf8))
        guard let combined = sealed.combined else { throw ConfigurationError(field: "secretKey", "AES-GCM gave no sealed box") }
        return Self.prefix + combined.base64EncodedString()
    }

    /// The secret `stored` (wrapped) under `name`.
    /// - Throws: ``ConfigurationError`` at `secretKey` when it does not open with this key.
    func unwrap(_ stored: String, name: String, what: String) throws -> String {
        guard let data = Data(base64Encoded: String(stored.dropFirst(Self.prefix.count))),
              let box = try? AES.GCM.SealedBox(combined: data),
              let secret = try? AES.GCM.open(box, using: key, authenticating: Data(name.utf8))
        else {
            throw ConfigurationError(
                field: "secretKey",
                "the \(what) stored in the database does not open with this node's secret key (secretKey or ATOLL_SECRET_KEY): "
                    + "every node on one database needs the key the first node used")
        }
        return String(decoding: secret, as: UTF8.self)
    }
}
