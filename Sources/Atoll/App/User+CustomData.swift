import Foundation

/// Custom user data: the document the server puts in the access token from the app's configured
/// object type (docs/server.md, "Custom user data"), as App Services did.
///
/// ```swift
/// let color = user.customData["favoriteColor"]??.stringValue
/// let fresh = try await user.refreshCustomData()   // after the profile object changed
/// ```
extension User {
    /// The user's custom data as of the current access token; empty when the app has none.
    public var customData: Document {
        guard let token = accessToken, let payload = JWTPayload.payload(of: token),
              let data = try? JSONDecoder().decode(UserDataClaim.self, from: payload).user_data,
              case .document(let document) = data.bson
        else { return [:] }
        return document
    }

    /// Refreshes the access token, and with it the custom data, and returns the new data.
    public func refreshCustomData() async throws -> Document {
        _ = try await validAccessToken(forceRefresh: true)
        return customData
    }

    /// Refreshes the custom data and calls `completion` with it (as Foundation values), or with
    /// the error.
    public func refreshCustomData(_ completion: @escaping @Sendable (Result<[AnyHashable: Any], Swift.Error>) -> Void) {
        _Concurrency.Task {
            do {
                let data: Document = try await refreshCustomData()
                completion(.success(data.foundationDictionary))
            } catch {
                completion(.failure(error))
            }
        }
    }

    private struct UserDataClaim: Decodable {
        var user_data: ExtendedJSON?
    }
}

extension JWTPayload {
    /// The decoded middle part of a JWT (not checked: the server checks signatures).
    static func payload(of token: String) -> Data? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

extension Dictionary where Key == String, Value == AnyBSON? {
    /// The document as Foundation values (`NSNull` for nulls), as realm-swift's completion and
    /// Combine forms of `refreshCustomData` hand them out.
    var foundationDictionary: [AnyHashable: Any] {
        reduce(into: [AnyHashable: Any]()) { result, entry in result[entry.key] = entry.value?.foundationValue ?? NSNull() }
    }
}
