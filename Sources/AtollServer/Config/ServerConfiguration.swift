import AtollCore
import Foundation

/// Everything `atoll-server` needs to start; every field has a default, so `ServerConfiguration()` is a
/// working development server on 127.0.0.1:9090 with its data in `./atoll-data`.
///
/// ```swift
/// var configuration = try ServerConfiguration.load(from: URL(fileURLWithPath: "atoll.json"))
/// configuration.port = 0 // any free port (tests)
/// ```
public struct ServerConfiguration: Sendable, Hashable, Codable {
    /// The address to listen on.
    public var host: String
    /// The TCP port; 0 picks a free one.
    public var port: Int
    /// The folder holding `atoll.sqlite` and the token signing secret.
    public var dataDirectory: String
    /// When on, an app id no one declared is created on its first use.
    public var developmentMode: Bool
    /// How long an access token is valid, in seconds.
    public var accessTokenLifetime: TimeInterval
    /// How long a refresh token is valid, in seconds.
    public var refreshTokenLifetime: TimeInterval
    /// The key access tokens are signed with (at least 32 bytes). When nil it is generated on first
    /// start and kept in `<dataDirectory>/token-secret`.
    public var tokenSecret: String?
    /// The bearer key of the admin API (at least 32 bytes). When nil it is generated on first
    /// start and kept in `<dataDirectory>/admin-key`.
    public var adminKey: String?
    /// PBKDF2 rounds for new password hashes (at least 100,000).
    public var passwordHashRounds: Int
    /// The apps declared up front. In development mode others are created on first use.
    public var apps: [App]
    /// The certificate to serve HTTPS and `wss://` with; nil serves plain HTTP and `ws://`.
    public var tls: TLS?
    /// How acknowledged writes are synced to disk (`full` by default: they survive a power loss).
    public var durability: Durability = .full
    /// Where the server keeps its data: nil for the embedded SQLite store in ``dataDirectory``, or a
    /// `postgres://user:password@host:port/database` URL for PostgreSQL, which several server nodes
    /// can share (README, "Running several nodes").
    public var store: String?
    /// What one client may cost the server (connections, sessions, messages, logins, memory).
    public var limits = Limits()
    /// The proxies (load balancers) in front of the server, as CIDRs (`"10.0.0.0/8"`,
    /// `"2001:db8::/32"`, or one address). A request from one of them is counted, by per-address
    /// limits, under the rightmost address of its ``forwardedHeader`` that is not one of them;
    /// every other request under its own address. Empty (the default): headers are never read.
    public var trustedProxies: [String] = []
    /// The header the trusted proxies append the client's address to: `X-Forwarded-For` (the
    /// default) or `Forwarded` (RFC 7239). Only that one is read.
    public var forwardedHeader: String = "X-Forwarded-For"
    /// Another header clients may send their bearer token in (`Authorization` is always read):
    /// what an SDK's `syncManager.authorizationHeaderName` names, when a proxy in front of the
    /// server uses `Authorization` for itself.
    public var authorizationHeaderName: String?
    /// Development mode (server-wide or of a declared app) on an address other than loopback is
    /// refused unless this says it is meant (`--allow-development-mode-on-network`): anyone who
    /// reaches the port could create apps and push schemas.
    public var allowDevelopmentModeOnNetwork = false
    /// The key (at least 32 bytes) that wraps the token secret and admin key a PostgreSQL store
    /// shares between nodes (AES-GCM); the same on every node. Env `ATOLL_SECRET_KEY`.
    public var secretKey: String?
    /// When set, `GET /metrics` answers only requests with `Authorization: Bearer <metricsToken>`
    /// (at least 16 bytes).
    public var metricsToken: String?

    public init(
        host: String = "127.0.0.1",
        port: Int = 9090,
        dataDirectory: String = "./atoll-data",
        developmentMode: Bool = true,
        accessTokenLifetime: TimeInterval = 30 * 60,
        refreshTokenLifetime: TimeInterval = 60 * 24 * 60 * 60,
        tokenSecret: String? = nil,
        adminKey: String? = nil,
        passwordHashRounds: Int = PasswordHasher.defaultRounds,
        apps: [App] = [],
        tls: TLS? = nil
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.developmentMode = developmentMode
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.tokenSecret = tokenSecret
        self.adminKey = adminKey
        self.passwordHashRounds = passwordHashRounds
        self.apps = apps
        self.tls = tls
    }

    /// The declared app with this id, or nil.
    public func app(id: String) -> App? {
        apps.first { $0.id == id }
    }

    /// The settings of an app: the declared ones, or the defaults for an app created in development mode.
    public func settings(forApp id: String) -> App {
        app(id: id) ?? App(id: id)
    }
}

extension ServerConfiguration {
    /// The server's certificate and key, as PEM files (see README, "Running the server").
    ///
    /// ```swift
    /// configuration.tls = .init(certificateChainPath: "/etc/atoll/cert.pem", privateKeyPath: "/etc/atoll/key.pem")
    /// ```
    public struct TLS: Sendable, Hashable, Codable {
        /// A PEM file with the server's certificate first, then any intermediate certificates.
        public var certificateChainPath: String
        /// A PEM file with the certificate's private key (RSA or EC, unencrypted).
        public var privateKeyPath: String

        public init(certificateChainPath: String, privateKeyPath: String) {
            self.certificateChainPath = certificateChainPath
            self.privateKeyPath = privateKeyPath
        }
    }

    /// One app: which auth providers it accepts, how it syncs, who may read and write what.
    public struct App: Sendable, Hashable, Codable {
        public var id: String
        /// Which auth providers are on.
        public var authProviders: AuthProviders
        /// How custom JWTs (`custom-token` logins) are checked; nil turns that provider off.
        public var customJWT: CustomJWT?
        /// How Sign in with Apple ID tokens (`oauth2-apple` logins) are checked; nil turns that provider off.
        public var apple: OpenIDProvider?
        /// How Google ID tokens (`oauth2-google` logins) are checked; nil turns that provider off.
        public var google: OpenIDProvider?
        /// Partition or flexible sync; nil accepts what clients use (development).
        public var syncKind: SyncKind?
        /// Fields flexible-sync queries may use: `"owner"` (any type) or `"Task.owner"`.
        public var queryableFields: [String]
        /// Read and write rules, e.g. `"owner == %user.id"`; none means everyone may read and write.
        public var permissions: [PermissionRule]
        /// Whether the schema is taken from what clients declare (additive changes accepted).
        public var developmentMode: Bool
        /// Whether clients may recover unsynced changes on a client reset.
        public var clientRecovery: Bool
        /// How long a client may stay offline before it needs a client reset, in seconds; nil keeps all history.
        public var maxOfflineTime: TimeInterval?
        /// How e-mail/password accounts are confirmed and reset (automatic confirmation by default).
        public var emailPassword = EmailPassword()
        /// Where `user.customData` comes from; nil: every user's custom data is empty.
        public var customUserData: CustomUserData?
        /// The app's functions and the custom-function auth provider, served by webhooks.
        public var functions = Functions()
        /// Remote data access (`user.mongoClient`): on by default, over the flexible-sync data.
        public var remoteAccess = RemoteAccess()

        public init(
            id: String,
            authProviders: AuthProviders = AuthProviders(),
            customJWT: CustomJWT? = nil,
            syncKind: SyncKind? = nil,
            queryableFields: [String] = [],
            permissions: [PermissionRule] = [],
            developmentMode: Bool = true,
            clientRecovery: Bool = true,
            maxOfflineTime: TimeInterval? = nil,
            apple: OpenIDProvider? = nil,
            google: OpenIDProvider? = nil
        ) {
            self.apple = apple
            self.google = google
            self.id = id
            self.authProviders = authProviders
            self.customJWT = customJWT
            self.syncKind = syncKind
            self.queryableFields = queryableFields
            self.permissions = permissions
            self.developmentMode = developmentMode
            self.clientRecovery = clientRecovery
            self.maxOfflineTime = maxOfflineTime
        }

        /// Whether logins through `provider` are accepted.
        public func accepts(_ provider: AuthProvider) -> Bool {
            switch provider {
            case .anonymous: authProviders.anonymous
            case .emailPassword: authProviders.emailPassword
            case .apiKey: authProviders.apiKey
            case .customToken: authProviders.customToken && customJWT != nil
            case .apple: apple != nil
            case .google: google != nil
            case .customFunction: functions.authenticationURL != nil
            }
        }
    }

    /// Auth providers on or off. Anonymous, email/password and API keys are on by default; custom JWT
    /// is on once a key is configured.
    public struct AuthProviders: Sendable, Hashable, Codable {
        public var anonymous: Bool
        public var emailPassword: Bool
        public var apiKey: Bool
        public var customToken: Bool

        public init(anonymous: Bool = true, emailPassword: Bool = true, apiKey: Bool = true, customToken: Bool = true) {
            self.anonymous = anonymous
            self.emailPassword = emailPassword
            self.apiKey = apiKey
            self.customToken = customToken
        }
    }

    /// How an app's custom JWTs are verified.
    public struct CustomJWT: Sendable, Hashable, Codable {
        public enum Algorithm: String, Sendable, Hashable, Codable {
            /// HMAC-SHA256 with a shared secret (`key` is the secret, at least 32 bytes).
            case hs256 = "HS256"
            /// RSA-SHA256 (`key` is the PEM public key).
            case rs256 = "RS256"
        }

        public var algorithm: Algorithm
        public var key: String
        /// When set, a token's `aud` must contain it.
        public var audience: String?
        /// When set, a token's `iss` must be it.
        public var issuer: String?
        /// How far the issuer's clock may be ahead of the server's, in seconds: a token whose `nbf`
        /// or `iat` is later than now plus this is refused (0…600, 60 by default).
        public var clockSkew: TimeInterval
        /// Claims copied into the user's profile data at each login (App Services' `metadata_fields`).
        public var metadataFields: [MetadataField]

        public init(algorithm: Algorithm, key: String, audience: String? = nil, issuer: String? = nil, clockSkew: TimeInterval = 60,
                    metadataFields: [MetadataField] = []) {
            self.algorithm = algorithm
            self.key = key
            self.audience = audience
            self.issuer = issuer
            self.clockSkew = clockSkew
            self.metadataFields = metadataFields
        }
    }

    /// The two sync kinds of the Realm API.
    public enum SyncKind: String, Sendable, Hashable, Codable {
        case partition
        case flexible
    }

    /// Read and write rules for one object type (or all, when `type` is nil), in the query language with
    /// `%user.id` standing for the logged-in user (and `%user.custom_data.<field>`, `%user.data.email`).
    ///
    /// Several rules of one type are roles: a session takes, per type, the first rule whose
    /// ``when`` holds for its user. A type that has rules (or, without its own, the rule of every
    /// type) none of which applies to the user may not be read or written by that user.
    ///
    /// ```swift
    /// PermissionRule(type: "Task", role: "admin", when: "%user.custom_data.isAdmin == true")
    /// PermissionRule(type: "Task", role: "owner", read: "owner == %user.id", write: "owner == %user.id",
    ///                delete: false, fields: FieldAccess(fields: ["owner": .init(read: true, write: false)],
    ///                                                   otherFields: .init(read: true, write: true)))
    /// ```
    public struct PermissionRule: Sendable, Hashable, Codable {
        public var type: String?
        /// The role's name, for errors and logs.
        public var role: String?
        /// When the rule applies: a condition on the user alone (`%user.custom_data.role == 'admin'`),
        /// checked when a session binds; nil: always.
        public var when: String?
        public var read: String
        public var write: String
        /// Whether the user may create objects (that the write rule allows).
        public var insert: Bool
        /// Whether the user may delete objects (that the write rule allows).
        public var delete: Bool
        /// Field-level permissions: which fields of the objects the rules let the user read and
        /// write; nil: all of them. In partition-based sync the rule has no type: a field is
        /// named in every type.
        public var fields: FieldAccess?

        public init(type: String? = nil, read: String = "true", write: String = "true") {
            self.init(type: type, role: nil, when: nil, read: read, write: write)
        }

        public init(type: String? = nil, role: String?, when: String? = nil, read: String = "true", write: String = "true",
                    insert: Bool = true, delete: Bool = true, fields: FieldAccess? = nil) {
            self.type = type
            self.role = role
            self.when = when
            self.read = read
            self.write = write
            self.insert = insert
            self.delete = delete
            self.fields = fields
        }

        /// A rule that lets no one read or write `type`: what a user gets when no role applies.
        static func denying(_ type: String?) -> PermissionRule {
            PermissionRule(type: type, role: nil, read: "false", write: "false", insert: false, delete: false)
        }

        /// How errors name the rule: its role, or "the app's rule".
        var label: String { role.map { "role \"\($0)\"" } ?? "the app's rule" }
    }
}
