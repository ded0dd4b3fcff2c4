import Foundation

/// A secret the server needs across restarts: the configured one, or one generated on first start
/// and kept in a file of the data folder, readable by the owner only.
enum StoredSecret {
    static func load(configured: String?, file: URL, what: String) throws -> String {
        if let configured { return configured }
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            let secret = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret.utf8.count >= 32 else { throw ConfigurationError(field: file.path, "the stored \(what) is shorter than 32 bytes") }
            return secret
        }
        var secret = Secrets.token(byteCount: 48)
        // Never a leading "-": typed after `--admin-key`, it would read as another option.
        while secret.hasPrefix("-") { secret = Secrets.token(byteCount: 48) }
        let created = FileManager.default.createFile(
            atPath: file.path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600])
        guard created else { throw ConfigurationError(field: file.path, "cannot write the \(what)") }
        return secret
    }
}

/// The key access tokens are signed with, in `<data>/token-secret` unless configured, so tokens
/// survive a restart.
enum TokenSecret {
    static let fileName = "token-secret"

    static func load(configuration: ServerConfiguration, dataDirectory: URL) throws -> String {
        try StoredSecret.load(configured: configuration.tokenSecret, file: dataDirectory.appendingPathComponent(fileName), what: "token secret")
    }
}

/// The key of the admin API, in `<data>/admin-key` unless configured, where the `atoll` tool finds it
/// (`AdminClient.keyFileName`, which the server does not link: keep the two names equal).
enum AdminKey {
    static let fileName = "admin-key"

    static func load(configuration: ServerConfiguration, dataDirectory: URL) throws -> String {
        try StoredSecret.load(configured: configuration.adminKey, file: dataDirectory.appendingPathComponent(fileName), what: "admin key")
    }
}
