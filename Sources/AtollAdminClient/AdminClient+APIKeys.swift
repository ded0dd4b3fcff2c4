import Foundation

extension AdminClient {
    /// A server API key: `key` is the secret, only in the answer to ``createServerAPIKey(app:name:)``;
    /// `userID` is the user it logs in as (`Credentials.serverAPIKey`).
    public typealias ServerAPIKey = AdminAPI.ServerAPIKey

    /// Makes a server API key for `app`.
    ///
    /// ```swift
    /// let key = try await admin.createServerAPIKey(app: "tasks", name: "backend")
    /// let user = try await app.login(credentials: .serverAPIKey(key.key!))
    /// ```
    public func createServerAPIKey(app: String, name: String) async throws -> ServerAPIKey {
        try await request("POST", "apps/\(app)/api_keys", body: AdminAPI.NewServerAPIKey(name: name), as: ServerAPIKey.self)
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
