import AtollCore
import Foundation

extension ServerConfiguration.CustomJWT {
    /// At most this many metadata fields.
    package static let maximumMetadataFields = 32
    /// The longest path or field name, in UTF-8 bytes.
    package static let maximumMetadataNameBytes = 128
    /// The largest value of one field, in bytes of JSON; a token with a larger one is refused.
    package static let maximumMetadataValueBytes = 4096

    func validateMetadataFields(field: String) throws(ConfigurationError) {
        guard metadataFields.count <= Self.maximumMetadataFields else {
            throw ConfigurationError(field: field, "at most \(Self.maximumMetadataFields) metadata fields")
        }
        var names = Set<String>()
        for (index, metadata) in metadataFields.enumerated() {
            let at = "\(field)[\(index)]"
            guard metadata.name.utf8.count <= Self.maximumMetadataNameBytes, MongoPredicate.isFieldPath(metadata.name) else {
                throw ConfigurationError(field: "\(at).name", "a claim's path: names separated by dots, at most \(Self.maximumMetadataNameBytes) bytes")
            }
            let name = metadata.profileName
            guard name.utf8.count <= Self.maximumMetadataNameBytes, MongoPredicate.isFieldPath(name), !name.contains(".") else {
                throw ConfigurationError(field: "\(at).fieldName", "a profile field's name (no dots\(metadata.fieldName == nil ? ": give a fieldName for a path" : ""))")
            }
            guard names.insert(name).inserted else { throw ConfigurationError(field: "\(at).fieldName", "\(name) is named twice") }
        }
    }

    /// The metadata fields of a verified token's `payload` (its JSON, after the signature was
    /// checked), by profile name.
    /// - Throws: `ServerError(.invalidCredentials)` when a required field is missing or null, or
    ///   a value is larger than ``maximumMetadataValueBytes``.
    func metadata(ofPayload payload: Data) throws -> [String: JSONValue] {
        guard !metadataFields.isEmpty else { return [:] }
        guard case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payload) else {
            throw ServerError(.invalidCredentials, "the custom JWT's payload is not a JSON object")
        }
        var out: [String: JSONValue] = [:]
        for field in metadataFields {
            var value: JSONValue? = .object(claims)
            for part in field.name.split(separator: ".") {
                guard case .object(let members)? = value else { value = nil; break }
                value = members[String(part)]
            }
            guard let value, value != .null else {
                if field.required { throw ServerError(.invalidCredentials, "the custom JWT lacks the required metadata field \(field.name)") }
                continue
            }
            let size = (try? JSONEncoder().encode(value).count) ?? Int.max
            guard size <= Self.maximumMetadataValueBytes else {
                throw ServerError(.invalidCredentials,
                                  "the custom JWT's metadata field \(field.name) is larger than \(Self.maximumMetadataValueBytes) bytes")
            }
            out[field.profileName] = value
        }
        return out
    }
}

extension CustomTokens {
    /// The payload (second part) of a compact JWT, decoded from base64url; nil when malformed.
    static func payload(of token: String) -> Data? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var text = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: text)
    }
}
