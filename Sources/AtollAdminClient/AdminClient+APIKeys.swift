import Foundation

extension AdminClient {
    /// A server API key: `key` is the secret, only in the answer to ``createServerAPIKey(app:name:)``;
    /// `userID` is the user it logs in as (`Credentials.serverAPIKey`).
    public struct ServerAPIKey: Codable, Sendable, Hashable {
        public var id: String
        public var name: String
        public var key: String?
        public var disabled: Bool
        public var userID: String?

        enum CodingKeys: String, CodingKey {
            case id = "_id"
            case name, key, disabled
            case userID = "user_id"
        }
    }

    /// Makes a server API key for `app`.
    ///
    /// ```swift
    /// let key = try await admin.createServerAPIKey(app: "tasks", name: "backend")
    /// let user = try await app.login(credentials: .serverAPIKey(key.key!))
    /// ```
    public func createServerAPIKey(app: String, name: String) async throws -> ServerAPIKey {
        try await request("POST", "apps/\(app)/api_keys", body: ["name": .string(name)], as: ServerAPIKey.self)
    }

    /// The server API keys of `app` (without their secrets).
    public func serverAPIKeys(app: String) async throws -> [ServerAPIKey] {
        try await request("GET", "apps/\(app)/api_keys", as: [ServerAPIKey].self)
    }

    /// Deletes a server API key and the user it logs in as.
    public func deleteServerAPIKey(app: String, id: String) async throws {
        try await request("DELETE", "apps/\(app)/api_keys/\(id)")
    }
}
