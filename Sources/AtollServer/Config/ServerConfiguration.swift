import AtollAppConfig
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
    /// can share (docs/server.md, "Running several nodes").
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
    /// The server's certificate and key, as PEM files (see docs/server.md).
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

    /// The app-level types are the shared configuration model (module AtollAppConfig), so
    /// `atoll apps import`, the configuration file and the admin API carry the same JSON.
    public typealias App = AppConfig.App
    public typealias AuthProviders = AppConfig.AuthProviders
    public typealias CustomJWT = AppConfig.CustomJWT
    public typealias SyncKind = AppConfig.SyncKind
    public typealias PermissionRule = AppConfig.PermissionRule
    public typealias EmailPassword = AppConfig.EmailPassword
    public typealias CustomUserData = AppConfig.CustomUserData
    public typealias Functions = AppConfig.Functions
    public typealias RemoteAccess = AppConfig.RemoteAccess
    public typealias OpenIDProvider = AppConfig.OpenIDProvider
    public typealias Facebook = AppConfig.Facebook
}

extension ServerConfiguration.App {
    /// Whether logins through `provider` are accepted.
    package func accepts(_ provider: AuthProvider) -> Bool {
        switch provider {
        case .anonymous: authProviders.anonymous
        case .emailPassword: authProviders.emailPassword
        case .apiKey: authProviders.apiKey
        case .customToken: authProviders.customToken && customJWT != nil
        case .apple: apple != nil
        case .google: google != nil
        case .facebook: facebook?.clientSecret != nil
        case .customFunction: functions.authenticationURL != nil
        }
    }
}

extension ServerConfiguration.PermissionRule {
    /// A rule that lets no one read or write `type`: what a user gets when no role applies.
    static func denying(_ type: String?) -> Self {
        Self(type: type, role: nil, read: "false", write: "false", insert: false, delete: false)
    }

    /// How errors name the rule: its role, or "the app's rule".
    var label: String { role.map { "role \"\($0)\"" } ?? "the app's rule" }
}
