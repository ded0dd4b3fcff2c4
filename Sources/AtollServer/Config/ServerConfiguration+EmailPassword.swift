import AtollCore
import Foundation

extension ServerConfiguration {
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
    /// for a function, answers `{"status": "success"|"pending"|"fail"}` (README, "E-mail/password
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

        /// Checks URLs, the secret and the bounds; `field` is the settings' path in the file.
        func validate(field: String) throws {
            for (name, url) in [("deliveryURL", deliveryURL), ("confirmationFunctionURL", confirmationFunctionURL),
                                ("resetFunctionURL", resetFunctionURL)] {
                guard let url else { continue }
                guard WebhookClient.Target(url) != nil else {
                    throw ConfigurationError(field: "\(field).\(name)", "must be an http:// or https:// URL with a host")
                }
            }
            if confirmation == .function, confirmationFunctionURL == nil {
                throw ConfigurationError(field: "\(field).confirmationFunctionURL", "is required when confirmation is \"function\"")
            }
            if let webhookSecret, webhookSecret.utf8.count < 32 {
                throw ConfigurationError(field: "\(field).webhookSecret", "must be at least 32 bytes")
            }
            guard tokenLifetime >= 60, tokenLifetime <= 7 * 24 * 3600 else {
                throw ConfigurationError(field: "\(field).tokenLifetime", "must be 60 s to 7 days")
            }
            if let pendingRegistrationLifetime, !(60...30 * 24 * 3600).contains(pendingRegistrationLifetime) {
                throw ConfigurationError(field: "\(field).pendingRegistrationLifetime", "must be 60 s to 30 days")
            }
            guard webhookTimeout > 0, webhookTimeout <= 120 else {
                throw ConfigurationError(field: "\(field).webhookTimeout", "must be more than 0 and at most 120 s")
            }
            guard requestsPerAddressPerHour >= 1 else {
                throw ConfigurationError(field: "\(field).requestsPerAddressPerHour", "must be at least 1")
            }
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

        func validate(field: String) throws {
            guard !type.isEmpty else { throw ConfigurationError(field: "\(field).type", "must name an object type") }
            guard !userIdField.isEmpty else { throw ConfigurationError(field: "\(field).userIdField", "must name a field") }
            guard (2...16_384).contains(maxBytes) else {
                throw ConfigurationError(field: "\(field).maxBytes", "must be 2 to 16384 (the document travels in every access token)")
            }
        }
    }
}

extension ServerConfiguration.App {
    /// Reads `emailPassword` and `customUserData` of an app's JSON (defaults when absent).
    mutating func decodeAccountSettings(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AccountCodingKeys.self)
        emailPassword = try container.decodeIfPresent(ServerConfiguration.EmailPassword.self, forKey: .emailPassword) ?? .init()
        customUserData = try container.decodeIfPresent(ServerConfiguration.CustomUserData.self, forKey: .customUserData)
    }

    enum AccountCodingKeys: String, CodingKey {
        case emailPassword, customUserData
    }

    func validateAccountSettings(field: String, developmentMode: Bool) throws {
        try emailPassword.validate(field: "\(field).emailPassword")
        if emailPassword.confirmation == .token, emailPassword.deliveryURL == nil, !developmentMode {
            // Only development mode writes tokens to the log; elsewhere no one could confirm.
            throw ConfigurationError(field: "\(field).emailPassword.deliveryURL", "is required when confirmation is \"token\" outside development mode")
        }
        if let customUserData {
            try customUserData.validate(field: "\(field).customUserData")
            let rules = writeRules(of: customUserData)
            // A role with a `when` is the operator's word on who may write what (an operators' role).
            guard !rules.isEmpty, !rules.contains(where: { $0.when == nil && Self.letsOneUserWriteAnothers($0.write, customUserData) }) else {
                let example = customUserData.partition == nil
                    ? #"{"type": "\#(customUserData.type)", "write": "\#(customUserData.userIdField) == %user.id"}"#
                    : #"{"write": "partition == %user.id"}"#
                throw ConfigurationError(
                    field: "\(field).customUserData",
                    "custom user data is signed into access tokens, so \(customUserData.type) needs a write rule: without one any user "
                        + "could write another's. Add a permission rule such as \(example)")
            }
        }
    }

    /// Whether `rule`, the write rule of the custom user data's objects, may let a user write
    /// another user's: a rule that is always true in any spelling, one that does not name
    /// `%user.id` (it cannot tell users apart) unless it is always false, and, in a partition, one
    /// that lets a user who is not the partition write it (all users' objects share it).
    static func letsOneUserWriteAnothers(_ rule: String, _ settings: ServerConfiguration.CustomUserData) -> Bool {
        let text = rule.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        if ["false", "falsepredicate"].contains(text) { return false }
        guard text.contains("%user.id"), !["true", "truepredicate"].contains(text) else { return true }
        guard let partition = settings.partition else { return false }
        let rules = [ServerConfiguration.PermissionRule(type: nil, read: "true", write: rule)]
        return [ObjectId.generate().stringValue, ObjectId.generate().stringValue].contains {
            Permissions.canWrite(.string(partition), user: $0, rules: rules)
        }
    }

    /// The write rules uploads to the custom user data's objects may be checked against, one per
    /// role: the type's own rules, else the rules of every type (flexible sync); the rules of every
    /// type (a partition).
    private func writeRules(of settings: ServerConfiguration.CustomUserData) -> [ServerConfiguration.PermissionRule] {
        let everyType = permissions.filter { $0.type == nil }
        guard settings.partition == nil else { return everyType }
        let own = permissions.filter { $0.type == settings.type }
        return own.isEmpty ? everyType : own
    }
}
