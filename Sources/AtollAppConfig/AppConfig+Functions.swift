import Foundation

extension AppConfig {
    /// An app's functions: each name a client calls (`user.functions.sum(1, 2)`) maps to a webhook
    /// the server POSTs the call to, as App Services ran the function's source. The custom-function
    /// auth provider (`Credentials.function(payload:)`) is a webhook too.
    ///
    /// ```json
    /// "functions": {
    ///   "webhookSecret": "at least 32 bytes of secret ……………",
    ///   "definitions": {
    ///     "sum": { "url": "http://127.0.0.1:8080/sum" },
    ///     "recompute": { "url": "http://127.0.0.1:8080/recompute", "private": true }
    ///   },
    ///   "authenticationURL": "http://127.0.0.1:8080/login"
    /// }
    /// ```
    /// A call's webhook receives `{"purpose": "call", "appId", "name", "arguments": [canonical
    /// extended JSON], "user": {"id", "identities", "custom_data", "data"}, "runAsSystem"}` and
    /// answers `{"result": <extended JSON>}` or `{"error": "message"}`. The authentication webhook
    /// receives `{"purpose": "authenticate", "appId", "payload"}` and answers `{"id": "<external
    /// id>", "name"?}` or `{"error": …}` (docs/server.md, "Functions").
    public struct Functions: Sendable, Hashable, Codable {
        /// One function.
        public struct Function: Sendable, Hashable, Codable {
            /// The webhook that runs it; nil: imported but not yet ported (calls are refused).
            public var url: String?
            /// A private function is not callable by clients (App Services' `private`).
            public var isPrivate: Bool
            /// Passed on to the webhook: whether the function meant to run with system rights
            /// (App Services' `run_as_system`); the server itself grants nothing for it.
            public var runAsSystem: Bool
            /// Who may call it: a condition on the user in the rule language
            /// (`%user.custom_data.role == 'admin'`), App Services' `can_evaluate`; nil: any logged-in user.
            public var canEvaluate: String?

            public init(url: String?, isPrivate: Bool = false, runAsSystem: Bool = false, canEvaluate: String? = nil) {
                self.url = url
                self.isPrivate = isPrivate
                self.runAsSystem = runAsSystem
                self.canEvaluate = canEvaluate
            }

            enum CodingKeys: String, CodingKey {
                case url, canEvaluate, runAsSystem
                case isPrivate = "private"
            }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                self.init(url: try container.decodeIfPresent(String.self, forKey: .url),
                          isPrivate: try container.decodeIfPresent(Bool.self, forKey: .isPrivate) ?? false,
                          runAsSystem: try container.decodeIfPresent(Bool.self, forKey: .runAsSystem) ?? false,
                          canEvaluate: try container.decodeIfPresent(String.self, forKey: .canEvaluate))
            }
        }

        /// The functions by name.
        public var definitions: [String: Function]
        /// The custom-function auth provider's webhook (`custom-function` logins); nil turns it off.
        public var authenticationURL: String?
        /// When set, each webhook request carries `X-Atoll-Signature: sha256=<hex HMAC-SHA256 of
        /// the body>` under this key (at least 32 bytes).
        public var webhookSecret: String?
        /// How long a webhook may take in all, in seconds (App Services' limit was 300 s; 0 < t ≤ 300).
        public var timeout: TimeInterval
        /// The largest call body (name and arguments) accepted, in bytes.
        public var maxArgumentBytes: Int
        /// The largest webhook answer read, in bytes; a longer one fails the call.
        public var maxAnswerBytes: Int
        /// Calls one user may have in flight at once; more are refused with `TooManyRequests`.
        public var callsInFlightPerUser: Int
        /// Calls the whole app may have in flight at once.
        public var callsInFlightPerApp: Int

        public init(definitions: [String: Function] = [:], authenticationURL: String? = nil, webhookSecret: String? = nil,
                    timeout: TimeInterval = 10, maxArgumentBytes: Int = 256 * 1024, maxAnswerBytes: Int = 1 << 20,
                    callsInFlightPerUser: Int = 4, callsInFlightPerApp: Int = 32) {
            self.definitions = definitions
            self.authenticationURL = authenticationURL
            self.webhookSecret = webhookSecret
            self.timeout = timeout
            self.maxArgumentBytes = maxArgumentBytes
            self.maxAnswerBytes = maxAnswerBytes
            self.callsInFlightPerUser = callsInFlightPerUser
            self.callsInFlightPerApp = callsInFlightPerApp
        }

        enum CodingKeys: String, CodingKey {
            case definitions, authenticationURL, webhookSecret, timeout, maxArgumentBytes, maxAnswerBytes
            case callsInFlightPerUser, callsInFlightPerApp
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Functions()
            self.init(
                definitions: try container.decodeIfPresent([String: Function].self, forKey: .definitions) ?? [:],
                authenticationURL: try container.decodeIfPresent(String.self, forKey: .authenticationURL),
                webhookSecret: try container.decodeIfPresent(String.self, forKey: .webhookSecret),
                timeout: try container.decodeIfPresent(TimeInterval.self, forKey: .timeout) ?? defaults.timeout,
                maxArgumentBytes: try container.decodeIfPresent(Int.self, forKey: .maxArgumentBytes) ?? defaults.maxArgumentBytes,
                maxAnswerBytes: try container.decodeIfPresent(Int.self, forKey: .maxAnswerBytes) ?? defaults.maxAnswerBytes,
                callsInFlightPerUser: try container.decodeIfPresent(Int.self, forKey: .callsInFlightPerUser) ?? defaults.callsInFlightPerUser,
                callsInFlightPerApp: try container.decodeIfPresent(Int.self, forKey: .callsInFlightPerApp) ?? defaults.callsInFlightPerApp)
        }
    }

    /// Remote data access of an app (`user.mongoClient("mongodb-atlas").database(_:)`): which
    /// service and database names its calls use. The collections are the types of the app's
    /// flexible-sync schema; the app's rules decide who reads and writes what.
    public struct RemoteAccess: Sendable, Hashable, Codable {
        /// Whether the app serves remote data access.
        public var enabled = true
        /// The service name apps pass to `mongoClient(_:)`.
        public var service = "mongodb-atlas"
        /// The database name apps pass to `database(named:)`; nil: the app's id. `atoll apps
        /// import` keeps the App Services data source's database here.
        public var database: String?

        public init(enabled: Bool = true, service: String = "mongodb-atlas", database: String? = nil) {
            self.enabled = enabled
            self.service = service
            self.database = database
        }

        enum CodingKeys: String, CodingKey { case enabled, service, database }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? true
            service = try container.decodeIfPresent(String.self, forKey: .service) ?? "mongodb-atlas"
            database = try container.decodeIfPresent(String.self, forKey: .database)
        }
    }
}
