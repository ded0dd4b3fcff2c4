import AtollAppConfig
import Foundation

extension ServerConfiguration.Functions {
    /// Checks names, URLs, the secret, conditions and bounds; `field` is the settings' path in the file.
    func validate(field: String) throws {
        for (name, function) in definitions.sorted(by: { $0.key < $1.key }) {
            guard Self.isValidName(name) else {
                throw ConfigurationError(field: "\(field).definitions", "\"\(name)\" is not a function name (letters, digits, '_', '-', '.', at most 128)")
            }
            if let url = function.url, WebhookClient.Target(url) == nil {
                throw ConfigurationError(field: "\(field).definitions.\(name).url", "must be an http:// or https:// URL with a host")
            }
            // A condition that does not parse never holds: the function is then callable by no one.
            if let condition = function.canEvaluate, condition.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ConfigurationError(field: "\(field).definitions.\(name).canEvaluate", "must not be empty (leave it out to let any user call)")
            }
        }
        if let url = authenticationURL, WebhookClient.Target(url) == nil {
            throw ConfigurationError(field: "\(field).authenticationURL", "must be an http:// or https:// URL with a host")
        }
        if let webhookSecret, webhookSecret.utf8.count < 32 {
            throw ConfigurationError(field: "\(field).webhookSecret", "must be at least 32 bytes")
        }
        guard timeout > 0, timeout <= 300 else {
            throw ConfigurationError(field: "\(field).timeout", "must be more than 0 and at most 300 s")
        }
        guard (1...(16 << 20)).contains(maxArgumentBytes) else {
            throw ConfigurationError(field: "\(field).maxArgumentBytes", "must be 1 byte to 16 MB")
        }
        guard (1...(16 << 20)).contains(maxAnswerBytes) else {
            throw ConfigurationError(field: "\(field).maxAnswerBytes", "must be 1 byte to 16 MB")
        }
        guard callsInFlightPerUser >= 1, callsInFlightPerApp >= callsInFlightPerUser else {
            throw ConfigurationError(field: "\(field).callsInFlightPerUser", "must be at least 1 and at most callsInFlightPerApp")
        }
    }

    /// A name a client may ask for: what App Services allowed, and nothing a log line could trip on.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0)) }
    }
}
