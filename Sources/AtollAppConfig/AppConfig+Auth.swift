import Foundation

extension AppConfig {
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

        /// Every provider off: what an import starts from (only what the export turns on is on).
        public static let none = AuthProviders(anonymous: false, emailPassword: false, apiKey: false, customToken: false)

        /// The providers' names in the HTTP API.
        enum CodingKeys: String, CodingKey {
            case anonymous = "anon-user"
            case emailPassword = "local-userpass"
            case apiKey = "api-key"
            case customToken = "custom-token"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                anonymous: try container.decodeIfPresent(Bool.self, forKey: .anonymous) ?? true,
                emailPassword: try container.decodeIfPresent(Bool.self, forKey: .emailPassword) ?? true,
                apiKey: try container.decodeIfPresent(Bool.self, forKey: .apiKey) ?? true,
                customToken: try container.decodeIfPresent(Bool.self, forKey: .customToken) ?? true)
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
        /// The key: a secret the operator supplies (never in an export, never answered by the admin API).
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

    /// A claim of the custom JWT copied into the user's profile data at each login (App Services'
    /// `metadata_fields`): `name` is its path in the token (`org.department`), `fieldName` the
    /// name it gets (`%user.data.department` in rules, `user.profile.metadata` on the device).
    ///
    /// ```json
    /// "customJWT": {"algorithm": "HS256", "key": "…",
    ///               "metadataFields": [{"name": "org.department", "fieldName": "department", "required": true}]}
    /// ```
    public struct MetadataField: Sendable, Hashable, Codable {
        public var name: String
        public var fieldName: String?
        /// A token without the claim (or with null) is refused.
        public var required: Bool

        public init(name: String, fieldName: String? = nil, required: Bool = false) {
            self.name = name
            self.fieldName = fieldName
            self.required = required
        }

        /// The name in the profile: `fieldName`, else `name`.
        public var profileName: String { fieldName ?? name }

        enum CodingKeys: String, CodingKey { case name, fieldName, required }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(name: try container.decode(String.self, forKey: .name),
                      fieldName: try container.decodeIfPresent(String.self, forKey: .fieldName),
                      required: try container.decodeIfPresent(Bool.self, forKey: .required) ?? false)
        }
    }

        enum CodingKeys: String, CodingKey {
            case algorithm, key, audience, issuer, clockSkew, metadataFields
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                algorithm: try container.decode(Algorithm.self, forKey: .algorithm),
                key: try container.decode(String.self, forKey: .key),
                audience: try container.decodeIfPresent(String.self, forKey: .audience),
                issuer: try container.decodeIfPresent(String.self, forKey: .issuer),
                clockSkew: try container.decodeIfPresent(TimeInterval.self, forKey: .clockSkew) ?? 60,
                metadataFields: try container.decodeIfPresent([MetadataField].self, forKey: .metadataFields) ?? [])
        }
    }

    /// How an app checks the OpenID Connect ID tokens of one provider (Sign in with Apple, Google):
    /// the provider's public keys (a JWKS), the issuer and the app's client ids. The keys are
    /// configured inline or in a file the operator refreshes, or fetched from `jwksURL` (the
    /// provider's published keys when none of the three is given). With ``authCode``, Google
    /// server auth codes are exchanged at Google's token endpoint for an ID token checked the same way.
    ///
    /// ```json
    /// "apple": { "jwksPath": "/etc/atoll/apple-keys.json", "audience": ["com.example.tasks"] }
    /// "google": { "audience": ["1234.apps.googleusercontent.com"],
    ///             "authCode": { "clientId": "1234.apps.googleusercontent.com", "clientSecret": "…" } }
    /// ```
    public struct OpenIDProvider: Sendable, Hashable, Codable {
        /// The JWKS as JSON text (in the file: a JSON object or a string).
        public var jwks: String?
        /// A file holding the JWKS, read when the server starts.
        public var jwksPath: String?
        /// Where the server fetches the JWKS (https, or http on a loopback address), kept an hour
        /// and fetched again for a key id it does not know. Nil with neither ``jwks`` nor
        /// ``jwksPath``: the provider's own (``defaultJWKSURL(google:)``).
        public var jwksURL: String?
        /// The `iss` a token must have; nil means the provider's own (`https://appleid.apple.com`,
        /// `https://accounts.google.com`).
        public var issuer: String?
        /// The client ids (bundle ids, OAuth client ids) a token's `aud` must contain one of
        /// (``AuthCode/clientId`` counts as one).
        public var audience: [String]
        /// Google server auth codes (`Credentials.google(serverAuthCode:)`); nil refuses them.
        public var authCode: AuthCode?
        /// How long one call to the provider (keys, code exchange) may take, in seconds.
        public var timeout: TimeInterval

        public init(jwks: String? = nil, jwksPath: String? = nil, jwksURL: String? = nil, issuer: String? = nil, audience: [String],
                    authCode: AuthCode? = nil, timeout: TimeInterval = 10) {
            self.jwks = jwks
            self.jwksPath = jwksPath
            self.jwksURL = jwksURL
            self.issuer = issuer
            self.audience = audience
            self.authCode = authCode
            self.timeout = timeout
        }

        /// The published JWKS of Google (`google`) or Apple.
        public static func defaultJWKSURL(google: Bool) -> String {
            google ? "https://www.googleapis.com/oauth2/v3/certs" : "https://appleid.apple.com/auth/keys"
        }

        /// The client ids an ID token may be meant for: ``audience`` and the auth-code client id.
        public var acceptedAudience: [String] {
            guard let clientID = authCode?.clientId, !audience.contains(clientID) else { return audience }
            return audience + [clientID]
        }

        enum CodingKeys: String, CodingKey {
            case jwks, jwksPath, jwksURL, issuer, audience, authCode, timeout
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let text = try? container.decodeIfPresent(String.self, forKey: .jwks) {
                jwks = text
            } else if let set = try container.decodeIfPresent(AnyJSON.self, forKey: .jwks) {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                jwks = String(decoding: try encoder.encode(set), as: UTF8.self)
            }
            jwksPath = try container.decodeIfPresent(String.self, forKey: .jwksPath)
            jwksURL = try container.decodeIfPresent(String.self, forKey: .jwksURL)
            issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
            if let one = try? container.decode(String.self, forKey: .audience) {
                audience = [one]
            } else {
                audience = try container.decodeIfPresent([String].self, forKey: .audience) ?? []
            }
            authCode = try container.decodeIfPresent(AuthCode.self, forKey: .authCode)
            timeout = try container.decodeIfPresent(TimeInterval.self, forKey: .timeout) ?? 10
        }
    }

    /// How an app's e-mail/password accounts are confirmed and reset, and where their tokens go.
    ///
    /// ```json
    /// "emailPassword": {
    ///   "confirmation": "token",
    ///   "deliveryURL": "http://127.0.0.1:8025/atoll-mail",
    ///   "resetFunctionURL": "http://127.0.0.1:8025/reset"
    /// }
    /// ```
    /// The server POSTs `{"purpose": "confirm"|"reset", "username", "token", "tokenId"}` (plus
    /// `"arguments"` for the reset function) to these URLs; the app's service mails the token, or,
    /// for a function, answers `{"status": "success"|"pending"|"fail"}` (docs/server.md, "E-mail/password
    /// accounts").
    public struct EmailPassword: Sendable, Hashable, Codable {
        /// How a new account is confirmed.
        public enum Confirmation: String, Sendable, Hashable, Codable {
            /// At once: the account can log in right after registering.
            case automatic
            /// By a token handed to ``deliveryURL``; `confirmUser(_:tokenId:)` confirms it.
            case token
            /// By ``confirmationFunctionURL``'s answer: success confirms, pending waits for
            /// `confirmUser(_:tokenId:)`, fail refuses the registration.
            case function
        }

        public var confirmation: Confirmation
        /// Where confirmation and reset tokens are POSTed for delivery (by mail, say). Without one,
        /// tokens are only written to the log, and only in development mode.
        public var deliveryURL: String?
        /// The confirmation function's webhook (``Confirmation/function``).
        public var confirmationFunctionURL: String?
        /// The reset function's webhook: turns on `callResetPasswordFunction`.
        public var resetFunctionURL: String?
        /// When set, each webhook request carries `X-Atoll-Signature: sha256=<hex HMAC-SHA256 of
        /// the body>` under this key (at least 32 bytes), so the receiver knows it came from here.
        public var webhookSecret: String?
        /// How long a confirmation or reset token is valid, in seconds.
        public var tokenLifetime: TimeInterval
        /// How long a registration waits for its confirmation, in seconds (nil: ``tokenLifetime``).
        /// Past it the name is free again: no one holds an address they cannot confirm.
        public var pendingRegistrationLifetime: TimeInterval?
        /// How long a webhook call may take in all (connect, send, answer), in seconds.
        public var webhookTimeout: TimeInterval
        /// Confirmation and reset requests (resend, retry, send reset, reset function) per e-mail
        /// address per hour; more are refused with `TooManyRequests`.
        public var requestsPerAddressPerHour: Int

        public init(
            confirmation: Confirmation = .automatic, deliveryURL: String? = nil, confirmationFunctionURL: String? = nil,
            resetFunctionURL: String? = nil, webhookSecret: String? = nil, tokenLifetime: TimeInterval = 30 * 60,
            webhookTimeout: TimeInterval = 10, requestsPerAddressPerHour: Int = 5, pendingRegistrationLifetime: TimeInterval? = nil
        ) {
            self.pendingRegistrationLifetime = pendingRegistrationLifetime
            self.confirmation = confirmation
            self.deliveryURL = deliveryURL
            self.confirmationFunctionURL = confirmationFunctionURL
            self.resetFunctionURL = resetFunctionURL
            self.webhookSecret = webhookSecret
            self.tokenLifetime = tokenLifetime
            self.webhookTimeout = webhookTimeout
            self.requestsPerAddressPerHour = requestsPerAddressPerHour
        }

        enum CodingKeys: String, CodingKey {
            case confirmation, deliveryURL, confirmationFunctionURL, resetFunctionURL, webhookSecret, tokenLifetime
            case webhookTimeout, requestsPerAddressPerHour, pendingRegistrationLifetime
        }

        /// How long a registration waits for its confirmation: ``pendingRegistrationLifetime``, or ``tokenLifetime``.
        public var pendingLifetime: TimeInterval { pendingRegistrationLifetime ?? tokenLifetime }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = EmailPassword()
            self.init(
                confirmation: try container.decodeIfPresent(Confirmation.self, forKey: .confirmation) ?? defaults.confirmation,
                deliveryURL: try container.decodeIfPresent(String.self, forKey: .deliveryURL),
                confirmationFunctionURL: try container.decodeIfPresent(String.self, forKey: .confirmationFunctionURL),
                resetFunctionURL: try container.decodeIfPresent(String.self, forKey: .resetFunctionURL),
                webhookSecret: try container.decodeIfPresent(String.self, forKey: .webhookSecret),
                tokenLifetime: try container.decodeIfPresent(TimeInterval.self, forKey: .tokenLifetime) ?? defaults.tokenLifetime,
                webhookTimeout: try container.decodeIfPresent(TimeInterval.self, forKey: .webhookTimeout) ?? defaults.webhookTimeout,
                requestsPerAddressPerHour: try container.decodeIfPresent(Int.self, forKey: .requestsPerAddressPerHour)
                    ?? defaults.requestsPerAddressPerHour,
                pendingRegistrationLifetime: try container.decodeIfPresent(TimeInterval.self, forKey: .pendingRegistrationLifetime))
        }
    }

    /// Where a user's custom data lives: an object type of the app's synced data whose
    /// `userIdField` holds the user's id. Its fields become `user.customData` (in the access token).
    ///
    /// ```json
    /// "customUserData": { "type": "UserProfile", "userIdField": "userId" }
    /// ```
    public struct CustomUserData: Sendable, Hashable, Codable {
        /// The object type.
        public var type: String
        /// The field holding the user's id (a string, or an ObjectId of the same hex).
        public var userIdField: String
        /// The partition (a string partition value) holding the objects, for partition-based
        /// sync; nil reads the app's flexible-sync data.
        public var partition: String?
        /// The largest document, in bytes of JSON, put in an access token. A larger one is left out
        /// (`customData` is empty) and the server logs a warning.
        public var maxBytes: Int

        public init(type: String, userIdField: String, partition: String? = nil, maxBytes: Int = 4096) {
            self.type = type
            self.userIdField = userIdField
            self.partition = partition
            self.maxBytes = maxBytes
        }

        enum CodingKeys: String, CodingKey {
            case type, userIdField, partition, maxBytes
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                type: try container.decode(String.self, forKey: .type),
                userIdField: try container.decode(String.self, forKey: .userIdField),
                partition: try container.decodeIfPresent(String.self, forKey: .partition),
                maxBytes: try container.decodeIfPresent(Int.self, forKey: .maxBytes) ?? 4096)
        }
    }
}

/// Any JSON value, read to be written again (an inline JWKS given as an object).
enum AnyJSON: Codable, Hashable {
    case null, bool(Bool), number(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([AnyJSON].self) { self = .array(value) }
        else { self = .object(try container.decode([String: AnyJSON].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
