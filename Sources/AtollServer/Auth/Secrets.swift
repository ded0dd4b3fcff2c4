import Crypto
import Foundation

/// Random secrets and their digests: refresh tokens, API keys, ids of devices.
enum Secrets {
    /// `count` bytes from the system's secure random source.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A new opaque token: `byteCount` random bytes, base64url without padding.
    static func token(byteCount: Int = 32) -> String {
        base64URL(randomBytes(byteCount))
    }

    /// The lowercase hex SHA-256 of a token's UTF-8 bytes: what the store keeps instead of the token.
    static func digest(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Compares two byte strings in time that depends on their length only.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
