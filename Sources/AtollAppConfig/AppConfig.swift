import AtollCore
import Foundation

/// One app's configuration, as the server's configuration file holds it (an entry of `apps`), as
/// `atoll apps import` produces it, and as the admin API takes it (`PUT /api/admin/v1/apps/:app/configuration`):
/// one model, so the three carry the same JSON. The server names these types
/// `ServerConfiguration.App`, `ServerConfiguration.PermissionRule` and so on, and checks them
/// (`ServerConfiguration.App.validate`), since checking needs its crypto and webhook code.
///
/// ```swift
/// let app = try JSONDecoder().decode(AppConfig.App.self, from: json)
/// ```
public enum AppConfig {
    /// One app: which auth providers it accepts, how it syncs, who may read and write what.
    public struct App: Sendable, Hashable {
        public var id: String
        /// Which auth providers are on.
        public var authProviders: AuthProviders
        /// How custom JWTs (`custom-token` logins) are checked; nil turns that provider off.
        public var customJWT: CustomJWT?
        /// How Sign in with Apple ID tokens (`oauth2-apple` logins) are checked; nil turns that provider off.
        public var apple: OpenIDProvider?
        /// How Google ID tokens (`oauth2-google` logins) are checked; nil turns that provider off.
        public var google: OpenIDProvider?
        /// How Facebook user access tokens (`oauth2-facebook` logins) are checked; nil turns that provider off.
        public var facebook: Facebook?
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

        /// Whether an app id is usable: letters, digits, '-', '_' or '.', at most 128 bytes (it
        /// names a file of the server's data folder and a path component of every URL).
        public static func isValidID(_ id: String) -> Bool {
            !id.isEmpty && id.utf8.count <= 128 && id != "." && id != ".."
                && id.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
        }
    }

    /// The two sync kinds of the Realm API.
    public enum SyncKind: String, Sendable, Hashable, Codable {
        case partition
        case flexible
    }
}

// MARK: Coding

extension AppConfig.App: Codable {
    enum CodingKeys: String, CodingKey {
        case id, authProviders, customJWT, syncKind, queryableFields, permissions, developmentMode
        case clientRecovery, maxOfflineTime, apple, google, facebook, emailPassword, customUserData, functions, remoteAccess
    }

    /// Reads an app; missing fields take their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            authProviders: try container.decodeIfPresent(AppConfig.AuthProviders.self, forKey: .authProviders) ?? .init(),
            customJWT: try container.decodeIfPresent(AppConfig.CustomJWT.self, forKey: .customJWT),
            syncKind: try container.decodeIfPresent(AppConfig.SyncKind.self, forKey: .syncKind),
            queryableFields: try container.decodeIfPresent([String].self, forKey: .queryableFields) ?? [],
            permissions: try container.decodeIfPresent([AppConfig.PermissionRule].self, forKey: .permissions) ?? [],
            developmentMode: try container.decodeIfPresent(Bool.self, forKey: .developmentMode) ?? true,
            clientRecovery: try container.decodeIfPresent(Bool.self, forKey: .clientRecovery) ?? true,
            maxOfflineTime: try container.decodeIfPresent(TimeInterval.self, forKey: .maxOfflineTime),
            apple: try container.decodeIfPresent(AppConfig.OpenIDProvider.self, forKey: .apple),
            google: try container.decodeIfPresent(AppConfig.OpenIDProvider.self, forKey: .google))
        facebook = try container.decodeIfPresent(AppConfig.Facebook.self, forKey: .facebook)
        emailPassword = try container.decodeIfPresent(AppConfig.EmailPassword.self, forKey: .emailPassword) ?? .init()
        customUserData = try container.decodeIfPresent(AppConfig.CustomUserData.self, forKey: .customUserData)
        functions = try container.decodeIfPresent(AppConfig.Functions.self, forKey: .functions) ?? .init()
        remoteAccess = try container.decodeIfPresent(AppConfig.RemoteAccess.self, forKey: .remoteAccess) ?? .init()
    }

    /// Writes every setting (secrets included: this is what the configuration file and the
    /// server's own copy hold; the admin API never answers with it).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(authProviders, forKey: .authProviders)
        try container.encodeIfPresent(customJWT, forKey: .customJWT)
        try container.encodeIfPresent(apple, forKey: .apple)
        try container.encodeIfPresent(google, forKey: .google)
        try container.encodeIfPresent(facebook, forKey: .facebook)
        try container.encodeIfPresent(syncKind, forKey: .syncKind)
        try container.encode(queryableFields, forKey: .queryableFields)
        try container.encode(permissions, forKey: .permissions)
        try container.encode(developmentMode, forKey: .developmentMode)
        try container.encode(clientRecovery, forKey: .clientRecovery)
        try container.encodeIfPresent(maxOfflineTime, forKey: .maxOfflineTime)
        try container.encode(emailPassword, forKey: .emailPassword)
        try container.encodeIfPresent(customUserData, forKey: .customUserData)
        try container.encode(functions, forKey: .functions)
        try container.encode(remoteAccess, forKey: .remoteAccess)
    }

    /// The app as JSON: sorted keys, so one configuration always gives the same bytes.
    public func json(pretty: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

extension AppConfig.App {
    /// Every secret of an app, by its path in the app's JSON: the custom JWT key, the webhook
    /// secrets, the Facebook and Google client secrets. ``redacted`` and
    /// ``secretsLeftAsPlaceholders`` both read this one list, so a secret added here is covered by both.
    static var secrets: [(path: String, value: WritableKeyPath<Self, String?>)] {
        [("customJWT.key", \.customJWTKey),
         ("functions.webhookSecret", \.functions.webhookSecret),
         ("emailPassword.webhookSecret", \.emailPassword.webhookSecret),
         ("facebook.clientSecret", \.facebookClientSecret),
         ("google.authCode.clientSecret", \.googleAuthCodeClientSecret)]
    }

    /// The app with every secret replaced by `"<secret>"`: what a tool may print.
    public var redacted: Self {
        var app = self
        for secret in Self.secrets where app[keyPath: secret.value] != nil {
            app[keyPath: secret.value] = Self.secretPlaceholder
        }
        return app
    }

    /// What ``redacted`` puts in place of a secret.
    public static let secretPlaceholder = "<secret>"

    /// The fields (as paths in the app's JSON) whose secret is ``secretPlaceholder``: a redacted
    /// configuration sent back as it was. Such an app is refused: its "secret" would be public.
    public var secretsLeftAsPlaceholders: [String] {
        Self.secrets.compactMap { self[keyPath: $0.value] == Self.secretPlaceholder ? $0.path : nil }
    }

    // Optional views of the secrets inside optional parts (setting one where the part is absent
    // does nothing).
    private var customJWTKey: String? {
        get { customJWT?.key }
        set { if let newValue { customJWT?.key = newValue } }
    }

    private var facebookClientSecret: String? {
        get { facebook?.clientSecret }
        set { facebook?.clientSecret = newValue }
    }

    private var googleAuthCodeClientSecret: String? {
        get { google?.authCode?.clientSecret }
        set { google?.authCode?.clientSecret = newValue }
    }
}
