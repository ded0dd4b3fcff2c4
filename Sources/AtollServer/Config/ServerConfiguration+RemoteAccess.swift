import AtollCore

extension ServerConfiguration {
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

extension ServerConfiguration.App {
    private enum RemoteAccessKey: String, CodingKey { case remoteAccess }

    /// Reads `remoteAccess` of an app's configuration (absent: on, `mongodb-atlas`, the app id).
    mutating func decodeRemoteAccess(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: RemoteAccessKey.self)
        remoteAccess = try container.decodeIfPresent(ServerConfiguration.RemoteAccess.self, forKey: .remoteAccess) ?? .init()
    }

    /// The database name remote access answers to.
    var remoteDatabase: String { remoteAccess.database ?? id }
}
