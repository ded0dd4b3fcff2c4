import Foundation

extension AdminClient {
    /// What the server did with an app configuration.
    public struct AppConfigurationAnswer: Codable, Sendable, Hashable {
        public var app: String
        /// `created`, `unchanged` or `replaced`.
        public var status: String
    }

    /// Adds app `app` to the running server with `configuration` (the JSON of one entry of a
    /// configuration file's `apps`, as `atoll apps import` makes it). The same configuration
    /// again is `unchanged`; another one for an existing app is refused (`AppExists`, HTTP 409)
    /// unless `replace`, which ends the app's sync sessions so they reconnect under the new rules.
    ///
    /// ```swift
    /// let answer = try await admin.putAppConfiguration(app: plan.app.id, try plan.appJSON())
    /// ```
    public func putAppConfiguration(app: String, _ configuration: Data, replace: Bool = false) async throws -> AppConfigurationAnswer {
        let data = try await request("PUT", "apps/\(app)/configuration\(replace ? "?replace=true" : "")", bodyData: configuration)
        do {
            return try JSONDecoder().decode(AppConfigurationAnswer.self, from: data)
        } catch {
            throw AdminClientError(status: 200, message: "the server's answer to PUT apps/\(app)/configuration is not what was expected: \(error)")
        }
    }
}
