import AtollAppConfig
import AtollCore
import Foundation

extension ServerConfiguration.EmailPassword {
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

extension ServerConfiguration.CustomUserData {
    func validate(field: String) throws {
        guard !type.isEmpty else { throw ConfigurationError(field: "\(field).type", "must name an object type") }
        guard !userIdField.isEmpty else { throw ConfigurationError(field: "\(field).userIdField", "must name a field") }
        guard (2...16_384).contains(maxBytes) else {
            throw ConfigurationError(field: "\(field).maxBytes", "must be 2 to 16384 (the document travels in every access token)")
        }
    }
}

extension ServerConfiguration.App {
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
