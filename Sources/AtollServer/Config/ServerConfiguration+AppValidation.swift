import AtollAppConfig
import AtollCore
import Foundation
import JWTKit

extension ServerConfiguration.App {
    /// The most of each list one app may declare: bounds what one configuration (a file entry, an
    /// admin API body) may make the server hold and evaluate per session.
    static let maxRules = 1_000
    static let maxQueryableFields = 1_000
    static let maxFunctions = 1_000
    /// The longest rule or condition text, in bytes.
    static let maxRuleBytes = 4_096

    /// Checks what the types cannot: the id, key sizes, PEM keys, webhook URLs, bounds, and that
    /// every rule parses. `field` is the app's path in the file (`apps[0]`), `developmentMode` the
    /// server's.
    func validate(field: String, developmentMode: Bool) throws {
        guard Self.isValidID(id) else {
            throw ConfigurationError(field: "\(field).id", "must be letters, digits, '-', '_' or '.' (at most 128 bytes)")
        }
        if let placeholder = secretsLeftAsPlaceholders.first {
            throw ConfigurationError(field: "\(field).\(placeholder)", "is \(Self.secretPlaceholder), the placeholder of a redacted configuration: supply the secret itself")
        }
        for (name, provider) in [("apple", apple), ("google", google)] {
            try provider?.validate(field: "\(field).\(name)")
        }
        try facebook?.validate(field: "\(field).facebook")
        try validateAccountSettings(field: field, developmentMode: developmentMode)
        try functions.validate(field: "\(field).functions")
        if let jwt = customJWT {
            switch jwt.algorithm {
            case .hs256:
                guard jwt.key.utf8.count >= 32 else {
                    throw ConfigurationError(field: "\(field).customJWT.key", "an HS256 key must be at least 32 bytes")
                }
            case .rs256:
                do { _ = try Insecure.RSA.PublicKey(pem: jwt.key) } catch {
                    throw ConfigurationError(field: "\(field).customJWT.key", "not a PEM RSA public key")
                }
            }
            guard (0...600).contains(jwt.clockSkew) else {
                throw ConfigurationError(field: "\(field).customJWT.clockSkew", "must be 0 to 600 seconds")
            }
            if let issuer = jwt.issuer, issuer.isEmpty {
                throw ConfigurationError(field: "\(field).customJWT.issuer", "must not be empty (leave it out to accept any)")
            }
            try jwt.validateMetadataFields(field: "\(field).customJWT.metadataFields")
        }
        try validateRules(field: field)
        if let maxOfflineTime, !(maxOfflineTime >= 0 && maxOfflineTime.isFinite) {
            throw ConfigurationError(field: "\(field).maxOfflineTime", "must be a number of seconds, 0 or more")
        }
    }

    /// Bounds the lists and parses every rule: a rule that does not parse would deny at run time
    /// (never grant), but an operator should hear about it when the app is configured.
    private func validateRules(field: String) throws {
        guard permissions.count <= Self.maxRules else {
            throw ConfigurationError(field: "\(field).permissions", "at most \(Self.maxRules) rules")
        }
        guard queryableFields.count <= Self.maxQueryableFields, queryableFields.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }) else {
            throw ConfigurationError(field: "\(field).queryableFields", "at most \(Self.maxQueryableFields) names of 1 to 256 bytes")
        }
        guard functions.definitions.count <= Self.maxFunctions else {
            throw ConfigurationError(field: "\(field).functions.definitions", "at most \(Self.maxFunctions) functions")
        }
        for (index, rule) in permissions.enumerated() {
            let path = "\(field).permissions[\(index)]"
            for (name, text) in [("read", rule.read), ("write", rule.write), ("when", rule.when)] {
                guard let text else { continue }
                guard Self.ruleParses(text) else {
                    throw ConfigurationError(field: "\(path).\(name)", "not a rule in the query language (with %user.… placeholders)")
                }
            }
        }
    }

    /// Whether `rule` parses as a query (each `%user.…` placeholder an argument), or is `true`/`false`.
    static func ruleParses(_ rule: String) -> Bool {
        guard rule.utf8.count <= maxRuleBytes else { return false }
        let trimmed = rule.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed == "true" || trimmed == "false" { return true }
        // The same substitution the rule gets at run time (`RuleUser.substituting`).
        let (text, paths) = RuleUser.template(of: rule)
        let count = paths.count
        // A placeholder stands for a single value or a list (`team IN %user.custom_data.teams`),
        // which only the user's data tells: the rule is good when it parses with some choice.
        // Every placeholder a value, or every one a list, first (most rules); the mixed choices
        // only when both fail, and only for up to 8 placeholders (256 parses at most).
        if [Value.null, .list([])].contains(where: { (try? QueryExpression.parse(text, arguments: Array(repeating: $0, count: count))) != nil }) {
            return true
        }
        guard count <= 8 else { return false }
        return (0..<(1 << count)).contains { lists in
            let arguments = (0..<count).map { lists & (1 << $0) == 0 ? Value.null : .list([]) }
            return (try? QueryExpression.parse(text, arguments: arguments)) != nil
        }
    }
}
