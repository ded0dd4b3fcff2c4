import AtollServer
import AtollTesting
import Foundation
import Logging

/// A real `AtollServer` on 127.0.0.1 with a free port and a temporary data folder.
struct TestServer {
    let configuration: ServerConfiguration
    let running: RunningAtollServer
    let http: HTTP

    var folder: URL { URL(fileURLWithPath: configuration.dataDirectory) }
    var auth: AuthService { running.auth }

    static let logger: Logger = {
        var logger = Logger(label: "atoll-server-tests")
        logger.logLevel = .error
        return logger
    }()

    /// A test configuration: loopback, port 0, a new temporary folder, the fewest PBKDF2 rounds allowed.
    static func configuration(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> ServerConfiguration {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("atoll-server-tests-\(UUID().uuidString)", isDirectory: true)
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: folder.path,
            passwordHashRounds: PasswordHasher.minimumRounds)
        configuration.durability = .normal  // a commit that survives the process is enough here
        configure(&configuration)
        return configuration
    }

    static func start(_ configuration: ServerConfiguration, clock: ManualClock? = nil) async throws -> TestServer {
        let running = try await AtollServer(configuration: configuration, logger: logger, clock: clock?.wall ?? .system).start()
        return TestServer(configuration: configuration, running: running, http: HTTP(baseURL: running.baseURL))
    }

    /// Stops the server and starts a new one on the same data folder (on a new port).
    func restarted() async throws -> TestServer {
        try await running.shutdown()
        return try await Self.start(configuration)
    }
}

/// Runs `body` against a fresh server, then stops it and removes its folder, whether `body` threw or not.
func withServer(
    _ configuration: ServerConfiguration = TestServer.configuration(),
    clock: ManualClock? = nil,
    _ body: (TestServer) async throws -> Void
) async throws {
    defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
    let server = try await TestServer.start(configuration, clock: clock)
    do {
        try await body(server)
    } catch {
        try? await server.running.shutdown()
        throw error
    }
    try await server.running.shutdown()
}
