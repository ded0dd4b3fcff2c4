import Foundation

/// The secret access tokens are signed with: the configured one, or one generated on first start and
/// kept in `<data>/token-secret` (readable by the owner only), so tokens survive a restart.
enum TokenSecret {
    static let fileName = "token-secret"

    static func load(configuration: ServerConfiguration, dataDirectory: URL) throws -> String {
        if let secret = configuration.tokenSecret { return secret }
        let file = dataDirectory.appendingPathComponent(fileName)
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            let secret = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret.utf8.count >= 32 else {
                throw ConfigurationError(field: file.path, "the stored token secret is shorter than 32 bytes")
            }
            return secret
        }
        let secret = Secrets.token(byteCount: 48)
        let created = FileManager.default.createFile(
            atPath: file.path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600])
        guard created else { throw ConfigurationError(field: file.path, "cannot write the token secret") }
        return secret
    }
}

/// The key of the admin API: the configured one, or one generated on first start and kept in
/// `<data>/admin-key` (readable by the owner only), where the `atoll` tool finds it.
enum AdminKey {
    static let fileName = "admin-key"

    static func load(configuration: ServerConfiguration, dataDirectory: URL) throws -> String {
        if let key = configuration.adminKey { return key }
        let file = dataDirectory.appendingPathComponent(fileName)
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            let key = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            guard key.utf8.count >= 32 else { throw ConfigurationError(field: file.path, "the stored admin key is shorter than 32 bytes") }
            return key
        }
        let key = Secrets.token(byteCount: 32)
        let created = FileManager.default.createFile(
            atPath: file.path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600])
        guard created else { throw ConfigurationError(field: file.path, "cannot write the admin key") }
        return key
    }
}
