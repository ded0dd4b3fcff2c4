import AtollServer
import Foundation
import JWTKit

/// Custom JWTs (`custom-token` logins) with any claims, signed HS256 as an app's own identity
/// service would sign them.
///
/// ```swift
/// let token = try await TestCustomJWT.sign(["sub": .string("u-1"), "org": .object(["department": .string("sales")])], key: key)
/// let user = try await app.login(credentials: .jwt(token: token))
/// ```
package enum TestCustomJWT {
    struct Claims: JWTPayload {
        var members: [String: JSONValue]

        init(_ members: [String: JSONValue]) { self.members = members }
        init(from decoder: any Decoder) throws { members = try [String: JSONValue](from: decoder) }
        func encode(to encoder: any Encoder) throws { try members.encode(to: encoder) }
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// `claims` signed with `key`; `exp` is added (ten minutes from now) when missing.
    package static func sign(_ claims: [String: JSONValue], key: String) async throws -> String {
        var claims = claims
        if claims["exp"] == nil { claims["exp"] = .int(Int64(Date().timeIntervalSince1970) + 600) }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return try await keys.sign(Claims(claims))
    }
}
