import Foundation

/// What a configuration exposes beyond the machine it runs on: development mode on a network
/// address, the shared secrets of a PostgreSQL store, `/metrics`.
extension ServerConfiguration {
    /// Whether development mode is on anywhere: server-wide (apps created on first use) or for a
    /// declared app (schemas taken from what clients declare).
    public var usesDevelopmentMode: Bool {
        developmentMode || apps.contains { $0.developmentMode }
    }

    /// Whether confirmation and reset tokens are written to the log (at debug level): only in
    /// development mode on a loopback address, where the one reading the log is the developer.
    public var logsAccountTokens: Bool { developmentMode && Self.isLoopback(host) }

    /// The wrapping of shared secrets under ``secretKey``, when one is configured.
    var secretWrapping: SecretWrapping? { secretKey.map(SecretWrapping.init(secretKey:)) }

    /// Checks what the configuration exposes: development mode only on loopback unless
    /// ``allowDevelopmentModeOnNetwork``; a PostgreSQL store outside development mode keeps its
    /// shared secrets wrapped (``secretKey``) or takes them from the configuration.
    func validateExposure() throws {
        if usesDevelopmentMode, !allowDevelopmentModeOnNetwork, !Self.isLoopback(host) {
            let field = developmentMode ? "developmentMode"
                : "apps[\(apps.firstIndex { $0.developmentMode } ?? 0)].developmentMode"
            throw ConfigurationError(
                field: field,
                "development mode is on while listening on \(host), which is not a loopback address: anyone who reaches "
                    + "the port could create apps and change schemas. Turn development mode off (\"developmentMode\": false, "
                    + "at the top and in each app), listen on 127.0.0.1, or say it is meant with "
                    + "--allow-development-mode-on-network (\"allowDevelopmentModeOnNetwork\": true)")
        }
        if let secretKey, secretKey.utf8.count < 32 {
            throw ConfigurationError(field: "secretKey", "must be at least 32 bytes")
        }
        if let metricsToken, metricsToken.utf8.count < 16 {
            throw ConfigurationError(field: "metricsToken", "must be at least 16 bytes")
        }
        if store != nil, !developmentMode, secretKey == nil, tokenSecret == nil || adminKey == nil {
            throw ConfigurationError(
                field: "secretKey",
                "a PostgreSQL store shares the token secret and the admin key between nodes: set secretKey (or ATOLL_SECRET_KEY) "
                    + "so the database keeps them wrapped, or configure tokenSecret and adminKey on every node")
        }
    }

    /// Whether `host` is a loopback address or name (`localhost`, 127.0.0.0/8, `::1`): only this
    /// machine can reach it.
    public static func isLoopback(_ host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
