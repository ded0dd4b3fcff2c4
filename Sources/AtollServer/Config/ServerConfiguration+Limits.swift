import Foundation

extension ServerConfiguration {
    /// How the embedded store syncs its history to disk (SQLite's `synchronous` in WAL mode).
    public enum Durability: String, Sendable, Hashable, Codable {
        /// `synchronous = FULL`: a write the server acknowledged survives a crash of the process and
        /// a power loss. The default.
        case full
        /// `synchronous = NORMAL`: a write survives a crash of the process; the last transactions
        /// before a power loss may be lost. Faster commits; a documented trade-off.
        case normal
    }

    /// What one client may cost the server; every refusal is logged and counted in `/metrics`
    /// (`atoll_limit_refusals_total{limit=…}`). Each field has a default fit for a production
    /// server; a configuration file sets any of them under `limits`.
    public struct Limits: Sendable, Hashable, Codable {
        /// Open sync connections from one IP address.
        public var connectionsPerAddress = 256
        /// Sync connections that have a session of one user bound.
        public var connectionsPerUser = 64
        /// Sessions bound at once on one connection.
        public var sessionsPerConnection = 64
        /// Sessions of one user bound at once across all of its connections (at most
        /// ``connectionsPerUser`` × ``sessionsPerConnection`` without it).
        public var sessionsPerUser = 256
        /// Realms (partitions) one user may create by binding paths no one used before; binding an
        /// existing realm is not limited by it.
        public var realmsPerUser = 1_000
        /// Objects one flexible-sync session may claim to hold (`heldObjects`).
        public var heldObjectsPerSession = 250_000
        /// Objects the flexible-sync sessions of one user may claim to hold together.
        public var heldObjectsPerUser = 500_000
        /// Queries in one flexible-sync subscription set.
        public var queriesPerSubscriptionSet = 1_000
        /// Bytes of query text (type names and queries) in one flexible-sync subscription set.
        public var querySetBytes = 1 << 20
        /// Sync client files (one per device and realm) one user may register.
        public var clientFilesPerUser = 10_000
        /// Apps created in development mode per minute (unknown app ids in URLs).
        public var newAppsPerMinute = 30
        /// The largest sync message once a session is bound (uploads of big values).
        public var maxMessageBytes = 64 << 20
        /// Instructions and values one sync message may decode to: what a message costs in memory
        /// once decoded (about 100 bytes each at most), whatever its size on the wire.
        public var maxDecodedElements = 2_000_000
        /// Bytes of partly received sync messages of one user across its connections (a message
        /// is held as its chunks arrive): past it the connection is refused.
        public var messageBytesInFlightPerUser = 128 << 20
        /// The same, for every user of one client address together (anonymous users are cheap to
        /// make: a per-user budget alone multiplies with them).
        public var messageBytesInFlightPerAddress = 512 << 20
        /// Seconds between two chunks of one sync message: a message whose next chunk does not
        /// arrive in time is refused and its connection closed.
        public var messageChunkTimeoutSeconds = 30
        /// The largest sync message before the connection has bound a session (hello, bind).
        public var unauthenticatedMessageBytes = 64 << 10
        /// Bytes of frames received but not handled yet per connection: past it the server stops
        /// reading the socket until the connection catches up.
        public var inboundBufferBytes = 4 << 20
        /// History notifications waiting for one connection: past it the client is too slow to keep
        /// up and is disconnected (it resumes from its last version when it reconnects).
        public var outboundBacklog = 4_096
        /// Seconds a frame may wait to be written to a client: a client that stopped reading (its
        /// socket full) is disconnected then, and resumes from its last version when it reconnects.
        public var writeTimeoutSeconds = 60
        /// Failed logins per account per minute before logins of that account are refused (429).
        public var failedLoginsPerAccount = 10
        /// Failed logins per IP address per minute before its logins are refused (429).
        public var failedLoginsPerAddress = 100
        /// Users one IP address may create per hour: e-mail/password registrations and anonymous
        /// logins (each makes a user). Past it they are refused (429) while that address's other
        /// users log in as usual; a flood of sign-ups cannot fill the store.
        public var newUsersPerAddressPerHour = 600
        /// Confirmation and reset requests (resend, retry, send reset, reset function) one IP
        /// address may make per hour, whatever e-mail addresses they name: one client cannot
        /// have the app mail every address it knows. Past it they are refused (429).
        public var accountEmailsPerAddressPerHour = 100
        /// Password hashes computed at once (logins, registrations); the rest wait their turn.
        public var concurrentPasswordHashes = max(2, ProcessInfo.processInfo.activeProcessorCount / 2)
        /// Realm states the sync coordinator keeps in memory; the least recently used are dropped
        /// (and rebuilt from the store when needed again).
        public var cachedRealms = 256

        public init() {}

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            var limits = Limits()
            func read(_ key: CodingKeys, _ field: WritableKeyPath<Limits, Int>) throws {
                if let value = try c.decodeIfPresent(Int.self, forKey: key) { limits[keyPath: field] = value }
            }
            try read(.connectionsPerAddress, \.connectionsPerAddress)
            try read(.connectionsPerUser, \.connectionsPerUser)
            try read(.sessionsPerConnection, \.sessionsPerConnection)
            try read(.sessionsPerUser, \.sessionsPerUser)
            try read(.realmsPerUser, \.realmsPerUser)
            try read(.heldObjectsPerSession, \.heldObjectsPerSession)
            try read(.heldObjectsPerUser, \.heldObjectsPerUser)
            try read(.queriesPerSubscriptionSet, \.queriesPerSubscriptionSet)
            try read(.querySetBytes, \.querySetBytes)
            try read(.messageBytesInFlightPerUser, \.messageBytesInFlightPerUser)
            try read(.messageBytesInFlightPerAddress, \.messageBytesInFlightPerAddress)
            try read(.messageChunkTimeoutSeconds, \.messageChunkTimeoutSeconds)
            try read(.clientFilesPerUser, \.clientFilesPerUser)
            try read(.newAppsPerMinute, \.newAppsPerMinute)
            try read(.maxMessageBytes, \.maxMessageBytes)
            try read(.unauthenticatedMessageBytes, \.unauthenticatedMessageBytes)
            try read(.maxDecodedElements, \.maxDecodedElements)
            try read(.inboundBufferBytes, \.inboundBufferBytes)
            try read(.outboundBacklog, \.outboundBacklog)
            try read(.writeTimeoutSeconds, \.writeTimeoutSeconds)
            try read(.failedLoginsPerAccount, \.failedLoginsPerAccount)
            try read(.failedLoginsPerAddress, \.failedLoginsPerAddress)
            try read(.newUsersPerAddressPerHour, \.newUsersPerAddressPerHour)
            try read(.accountEmailsPerAddressPerHour, \.accountEmailsPerAddressPerHour)
            try read(.concurrentPasswordHashes, \.concurrentPasswordHashes)
            try read(.cachedRealms, \.cachedRealms)
            self = limits
        }

        /// Each limit must be at least 1.
        func validate() throws {
            let all: [(String, Int)] = [
                ("connectionsPerAddress", connectionsPerAddress), ("connectionsPerUser", connectionsPerUser),
                ("sessionsPerConnection", sessionsPerConnection), ("clientFilesPerUser", clientFilesPerUser),
                ("sessionsPerUser", sessionsPerUser), ("realmsPerUser", realmsPerUser),
                ("heldObjectsPerSession", heldObjectsPerSession), ("heldObjectsPerUser", heldObjectsPerUser),
                ("queriesPerSubscriptionSet", queriesPerSubscriptionSet), ("querySetBytes", querySetBytes),
                ("messageBytesInFlightPerUser", messageBytesInFlightPerUser),
                ("messageBytesInFlightPerAddress", messageBytesInFlightPerAddress),
                ("messageChunkTimeoutSeconds", messageChunkTimeoutSeconds),
                ("newAppsPerMinute", newAppsPerMinute), ("maxMessageBytes", maxMessageBytes),
                ("unauthenticatedMessageBytes", unauthenticatedMessageBytes), ("inboundBufferBytes", inboundBufferBytes),
                ("maxDecodedElements", maxDecodedElements),
                ("outboundBacklog", outboundBacklog), ("writeTimeoutSeconds", writeTimeoutSeconds),
                ("failedLoginsPerAccount", failedLoginsPerAccount),
                ("failedLoginsPerAddress", failedLoginsPerAddress), ("concurrentPasswordHashes", concurrentPasswordHashes),
                ("newUsersPerAddressPerHour", newUsersPerAddressPerHour),
                ("accountEmailsPerAddressPerHour", accountEmailsPerAddressPerHour),
                ("cachedRealms", cachedRealms),
            ]
            for (name, value) in all where value < 1 {
                throw ConfigurationError(field: "limits.\(name)", "must be at least 1")
            }
        }
    }
}
