import Foundation

extension AdminClient {
    /// What the server did with an app configuration.
    public typealias AppConfigurationAnswer = AdminAPI.AppConfigurationAnswer

    /// An app's configuration as the server serves it, secrets as `"<secret>"`.
    public struct AppConfigurationView: Sendable, Hashable {
        public var app: String
        /// `configurationFile` (read-only) or `runtime` (added through the admin API).
        public var origin: String
        /// Grows each time the app is installed or replaced.
        public var generation: UInt64
        /// The configuration's JSON (one entry of a configuration file's `apps`).
        public var configuration: Data
    }

    /// App `app`'s configuration on the running server, with its secrets redacted: what
    /// `atoll apps show` prints. Throws `AppNotFound` (404) for an app with no configuration.
    public func appConfiguration(app: String) async throws -> AppConfigurationView {
        let answer = try await request("GET", "apps/\(app)/configuration", as: AdminAPI.AppConfiguration<AdminAPI.JSON>.self)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return AppConfigurationView(app: answer.app, origin: answer.origin, generation: answer.generation,
                                    configuration: try encoder.encode(answer.configuration))
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
        let path = "apps/\(app)/configuration\(replace ? "?replace=true" : "")"
        return try decodeAnswer(AppConfigurationAnswer.self, from: try await request("PUT", path, bodyData: configuration), to: "PUT", path)
    }
}
