import AtollAppConfig
import AtollCore
import Foundation
import JWTKit
import HTTPTypes

/// A configuration that cannot be used, with the field at fault.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The field, as a path in the JSON file (`apps[0].customJWT.key`).
    public let field: String
    public let message: String

    public init(field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "invalid configuration at \(field): \(message)" }
}

extension ServerConfiguration {
    /// Reads a JSON configuration file; missing fields take their defaults. See docs/server.md.
    public static func load(from url: URL) throws -> ServerConfiguration {
        let configuration = try read(from: url)
        try configuration.validate()
        return configuration
    }

    /// Reads a JSON configuration file without checking it: for a caller that applies flags and
    /// the environment first (`--allow-development-mode-on-network`, `ATOLL_SECRET_KEY`) and
    /// checks the result.
    public static func read(from url: URL) throws -> ServerConfiguration {
        let data = try Data(contentsOf: url)
        do {
            return try JSONDecoder().decode(ServerConfiguration.self, from: data)
        } catch let error as DecodingError {
            throw ConfigurationError(field: url.lastPathComponent, Self.describe(error))
        }
    }

    /// Checks what the types cannot: ports, key sizes, PEM keys, unique app ids.
    public func validate() throws {
        guard (0...65535).contains(port) else { throw ConfigurationError(field: "port", "must be 0…65535") }
        if let store {
            do { _ = try PostgresURL(store) } catch let error as PostgresStoreError { throw ConfigurationError(field: "store", error.message) }
        }
        if let tokenSecret, tokenSecret.utf8.count < 32 {
            throw ConfigurationError(field: "tokenSecret", "must be at least 32 bytes")
        }
        if let adminKey, adminKey.utf8.count < 32 {
            throw ConfigurationError(field: "adminKey", "must be at least 32 bytes")
        }
        try validateExposure()
        guard passwordHashRounds >= PasswordHasher.minimumRounds else {
            throw ConfigurationError(field: "passwordHashRounds", "must be at least \(PasswordHasher.minimumRounds)")
        }
        try limits.validate()
        for (index, proxy) in trustedProxies.enumerated() where IPNetwork(proxy) == nil {
            throw ConfigurationError(field: "trustedProxies[\(index)]", "must be an IP address or a CIDR such as 10.0.0.0/8")
        }
        if let name = authorizationHeaderName, HTTPField.Name(name) == nil {
            throw ConfigurationError(field: "authorizationHeaderName", "must be a valid HTTP header name")
        }
        guard ClientAddressResolver.Header(rawValue: forwardedHeader) != nil else {
            throw ConfigurationError(field: "forwardedHeader", "must be \"X-Forwarded-For\" or \"Forwarded\"")
        }
        guard accessTokenLifetime > 0, refreshTokenLifetime > 0 else {
            throw ConfigurationError(field: "accessTokenLifetime", "token lifetimes must be positive")
        }
        if let tls {
            guard !tls.certificateChainPath.isEmpty else {
                throw ConfigurationError(field: "tls.certificateChainPath", "must be the path of a PEM certificate file")
            }
            guard !tls.privateKeyPath.isEmpty else {
                throw ConfigurationError(field: "tls.privateKeyPath", "must be the path of a PEM private key file")
            }
        }
        var seen = Set<String>()
        for (index, app) in apps.enumerated() {
            let field = "apps[\(index)]"
            try app.validate(field: field, developmentMode: developmentMode)
            guard seen.insert(app.id).inserted else {
                throw ConfigurationError(field: "\(field).id", "\(app.id) is declared twice")
            }
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context)).\(key.stringValue) is required"
        @unknown default:
            return "\(error)"
        }
    }
}

// MARK: Decoding with defaults

extension ServerConfiguration {
    enum CodingKeys: String, CodingKey {
        case host, port, dataDirectory, developmentMode, accessTokenLifetime, refreshTokenLifetime, tokenSecret
        case adminKey, passwordHashRounds, apps, tls, durability, limits, store, trustedProxies, forwardedHeader
        case allowDevelopmentModeOnNetwork, secretKey, metricsToken, authorizationHeaderName
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ServerConfiguration()
        self.init(
            host: try container.decodeIfPresent(String.self, forKey: .host) ?? defaults.host,
            port: try container.decodeIfPresent(Int.self, forKey: .port) ?? defaults.port,
            dataDirectory: try container.decodeIfPresent(String.self, forKey: .dataDirectory) ?? defaults.dataDirectory,
            developmentMode: try container.decodeIfPresent(Bool.self, forKey: .developmentMode)
                ?? defaults.developmentMode,
            accessTokenLifetime: try container.decodeIfPresent(TimeInterval.self, forKey: .accessTokenLifetime)
                ?? defaults.accessTokenLifetime,
            refreshTokenLifetime: try container.decodeIfPresent(TimeInterval.self, forKey: .refreshTokenLifetime)
                ?? defaults.refreshTokenLifetime,
            tokenSecret: try container.decodeIfPresent(String.self, forKey: .tokenSecret),
            adminKey: try container.decodeIfPresent(String.self, forKey: .adminKey),
            passwordHashRounds: try container.decodeIfPresent(Int.self, forKey: .passwordHashRounds)
                ?? defaults.passwordHashRounds,
            apps: try container.decodeIfPresent([App].self, forKey: .apps) ?? [],
            tls: try container.decodeIfPresent(TLS.self, forKey: .tls))
        durability = try container.decodeIfPresent(Durability.self, forKey: .durability) ?? .full
        store = try container.decodeIfPresent(String.self, forKey: .store)
        limits = try container.decodeIfPresent(Limits.self, forKey: .limits) ?? Limits()
        trustedProxies = try container.decodeIfPresent([String].self, forKey: .trustedProxies) ?? []
        forwardedHeader = try container.decodeIfPresent(String.self, forKey: .forwardedHeader) ?? defaults.forwardedHeader
        allowDevelopmentModeOnNetwork = try container.decodeIfPresent(Bool.self, forKey: .allowDevelopmentModeOnNetwork) ?? false
        secretKey = try container.decodeIfPresent(String.self, forKey: .secretKey)
        metricsToken = try container.decodeIfPresent(String.self, forKey: .metricsToken)
        authorizationHeaderName = try container.decodeIfPresent(String.self, forKey: .authorizationHeaderName)
    }

    /// Reads the client addresses of requests as ``trustedProxies`` and ``forwardedHeader`` say.
    var clientAddresses: ClientAddressResolver {
        ClientAddressResolver(trustedProxies: trustedProxies, header: ClientAddressResolver.Header(rawValue: forwardedHeader) ?? .xForwardedFor)
    }
}
