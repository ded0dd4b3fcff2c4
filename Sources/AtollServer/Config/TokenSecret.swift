import Foundation

/// A secret the server needs across restarts: the configured one, or one generated on first start
/// and kept in a file of the data folder, readable by the owner only.
enum StoredSecret {
    static func load(configured: String?, file: URL, what: String) throws -> String {
        if let configured { return configured }
        return try loadFile(file, what: what)
    }

    /// A new secret: 48 random bytes, base64url.
    static func generate() -> String {
        var secret = Secrets.token(byteCount: 48)
        // Never a leading "-": typed after `--admin-key`, it would read as another option.
        while secret.hasPrefix("-") { secret = Secrets.token(byteCount: 48) }
        return secret
    }

    /// The configured secret, or the one the store shares between the nodes that use it (made by
    /// the first; nil from a store that shares none, whose node keeps its own in `file`). A shared
    /// secret is also written to `file`, where the `atoll` tool finds the admin key.
    ///
    /// With `wrapping`, the store keeps the secret wrapped (``SecretWrapping``): one an older server
    /// stored in plain text is wrapped in place. Without, a plain secret is accepted only in
    /// development mode (``ServerConfiguration/validate()`` refuses the rest).
    static func load(configured: String?, shared name: String, in store: any ServerStore, wrapping: SecretWrapping?,
                     file: URL, what: String) async throws -> String {
        if let configured { return configured }
        let made = try wrapping.map { wrapping in try wrapping.wrap(Self.generate(), name: name) }
        guard let stored = try await store.sharedSecret(named: name, making: { made ?? Self.generate() }) else {
            return try loadFile(file, what: what)
        }
        let secret = try reveal(stored, name: name, wrapping: wrapping, what: what)
        if let wrapping, !SecretWrapping.isWrapped(stored) {
            // Stored by a server without a key: wrapped now (unless another node did meanwhile).
            _ = try await store.replaceSharedSecret(named: name, stored: stored, with: try wrapping.wrap(secret, name: name))
        }
        if (try? String(contentsOf: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) != secret {
            try? FileManager.default.removeItem(at: file)
            FileManager.default.createFile(atPath: file.path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600])
        }
        return secret
    }

    /// The secret a store keeps as `stored`.
    private static func reveal(_ stored: String, name: String, wrapping: SecretWrapping?, what: String) throws -> String {
        guard SecretWrapping.isWrapped(stored) else { return stored }
        guard let wrapping else {
            throw ConfigurationError(
                field: "secretKey",
                "the \(what) in the database is wrapped: set the secret key the other nodes use (secretKey or ATOLL_SECRET_KEY)")
        }
        return try wrapping.unwrap(stored, name: name, what: what)
    }

    private static func loadFile(_ file: URL, what: String) throws -> String {
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            let secret = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret.utf8.count >= 32 else { throw ConfigurationError(field: file.path, "the stored \(what) is shorter than 32 bytes") }
            return secret
        }
        let secret = generate()
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

    static func load(configuration: ServerConfiguration, dataDirectory: URL, store: any ServerStore) async throws -> String {
        try await StoredSecret.load(configured: configuration.tokenSecret, shared: "token-secret", in: store,
                                    wrapping: configuration.secretWrapping, file: dataDirectory.appendingPathComponent(fileName), what: "token secret")
    }
}

/// The key of the admin API, in `<data>/admin-key` unless configured, where the `atoll` tool finds it
/// (`AdminClient.keyFileName`, which the server does not link: keep the two names equal).
enum AdminKey {
    static let fileName = "admin-key"

    static func load(configuration: ServerConfiguration, dataDirectory: URL, store: any ServerStore) async throws -> String {
        try await StoredSecret.load(configured: configuration.adminKey, shared: "admin-key", in: store,
                                    wrapping: configuration.secretWrapping, file: dataDirectory.appendingPathComponent(fileName), what: "admin key")
    }
}
