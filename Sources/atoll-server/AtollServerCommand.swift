import ArgumentParser
import AtollServer
import Foundation
import Logging

/// `atoll-server`: the sync server with zero configuration, or the settings of a JSON file and flags.
@main
struct AtollServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "atoll-server",
        abstract: "The Atoll sync server: apps, users, auth, sync and the admin API over one port.",
        discussion: """
            With no arguments it listens on 127.0.0.1:9090, keeps its data in ./atoll-data and runs in \
            development mode (unknown app ids are created on first use). Development mode on an address \
            other than loopback is refused unless --allow-development-mode-on-network says it is meant. \
            Flags override the config file; the environment variables ATOLL_HOST, ATOLL_PORT and \
            ATOLL_STORE override the file but not the flags; ATOLL_SECRET_KEY sets secretKey.
            """)

    @Option(help: "The address to listen on (default 127.0.0.1, env ATOLL_HOST).")
    var host: String?

    @Option(help: "The port to listen on; 0 picks a free one (default 9090, env ATOLL_PORT).")
    var port: Int?

    @Option(help: "The data folder (default ./atoll-data).")
    var data: String?

    @Option(help: "A JSON configuration file (see docs/server.md).")
    var config: String?

    @Option(help: """
        Keep everything in PostgreSQL: postgres://user:password@host:port/database (default: SQLite in the \
        data folder; env ATOLL_STORE). Several nodes on one database serve the same apps.
        """)
    var store: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Flag(inversion: .prefixedNo, help: "Create unknown app ids on first use (overrides the config file).")
    var developmentMode: Bool?

    @Flag(help: "Run in development mode on an address other than loopback anyway (refused otherwise).")
    var allowDevelopmentModeOnNetwork = false

    @Option(help: "A PEM certificate chain: serve HTTPS and wss:// (needs --tls-key).")
    var tlsCertificate: String?

    @Option(help: "The PEM private key of --tls-certificate.")
    var tlsKey: String?

    func run() async throws {
        var logger = Logger(label: "atoll-server")
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level \(logLevel)")
        }
        logger.logLevel = level

        // Checked once the flags and the environment are applied (they may be what makes it valid).
        var configuration = try config.map { try ServerConfiguration.read(from: URL(fileURLWithPath: $0)) }
            ?? ServerConfiguration()
        let environment = ProcessInfo.processInfo.environment
        if let envHost = environment["ATOLL_HOST"], !envHost.isEmpty { configuration.host = envHost }
        if let envPort = environment["ATOLL_PORT"], !envPort.isEmpty {
            guard let value = Int(envPort) else { throw ValidationError("ATOLL_PORT is not a number: \(envPort)") }
            configuration.port = value
        }
        if let envStore = environment["ATOLL_STORE"], !envStore.isEmpty { configuration.store = envStore }
        if let envKey = environment["ATOLL_SECRET_KEY"], !envKey.isEmpty { configuration.secretKey = envKey }
        if let host { configuration.host = host }
        if let store { configuration.store = store }
        if let port { configuration.port = port }
        if let data { configuration.dataDirectory = data }
        if let developmentMode { configuration.developmentMode = developmentMode }
        if allowDevelopmentModeOnNetwork { configuration.allowDevelopmentModeOnNetwork = true }
        switch (tlsCertificate, tlsKey) {
        case (nil, nil): break
        case (let certificate?, let key?):
            configuration.tls = .init(certificateChainPath: certificate, privateKeyPath: key)
        default:
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
        do {
            try configuration.validate()
            try await AtollServer(configuration: configuration, logger: logger).run()
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }
}
