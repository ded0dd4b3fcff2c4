import Foundation

extension AdminClient {
    /// What the server did with an app configuration.
    public struct AppConfigurationAnswer: Codable, Sendable, Hashable {
        public var app: String
        /// `created`, `unchanged` or `replaced`.
        public var status: String
    }

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
        let data = try await request("GET", "apps/\(app)/configuration")
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let id = object["app"] as? String, let origin = object["origin"] as? String,
              let generation = (object["generation"] as? NSNumber)?.uint64Value, let configuration = object["configuration"] as? [String: Any],
              let json = try? JSONSerialization.data(withJSONObject: configuration, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else {
            throw AdminClientError(status: 200, message: "the server's answer to GET apps/\(app)/configuration is not what was expected")
        }
        return AppConfigurationView(app: id, origin: origin, generation: generation, configuration: json)
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
