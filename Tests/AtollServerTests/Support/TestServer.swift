import AtollServer
import AtollTesting
import Foundation

/// The server tests' server is AtollTesting's: a real `AtollServer` on 127.0.0.1 with a free port
/// and a temporary data folder; these tests add the raw HTTP client they speak to it with.
typealias TestServer = SyncTestServer

extension SyncTestServer {
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

    static func start(_ configuration: ServerConfiguration, clock: ManualClock? = nil, interleaving: InterleavingGate? = nil) async throws -> SyncTestServer {
        try await start(configuration: configuration, clock: clock ?? ManualClock(), interleaving: interleaving)
    }

    var running: RunningAtollServer { server }
    var http: HTTP { HTTP(baseURL: server.baseURL) }
    var auth: AuthService { server.auth }
    /// The server's data folder.
    var dataFolder: URL { URL(fileURLWithPath: configuration.dataDirectory) }

    /// Stops the server and starts it again on the same data folder and port.
    func restarted() async throws -> SyncTestServer {
        try await restart()
        return self
    }
}

/// Runs `body` against a fresh server, then stops it and removes its folder, whether `body` threw or not.
func withServer(
    _ configuration: ServerConfiguration = TestServer.configuration(),
    clock: ManualClock? = nil,
    interleaving: InterleavingGate? = nil,
    _ body: (TestServer) async throws -> Void
) async throws {
    let server = try await TestServer.start(configuration, clock: clock, interleaving: interleaving)
    do {
        try await body(server)
    } catch {
        try? await server.tearDown()
        throw error
    }
    try await server.tearDown()
}

/// Where the raw protocol tests reach a server on 127.0.0.1: an in-process ``TestServer`` or the
/// `atoll-server` executable in a child process (``ServerProcess``), whose memory and CPU are its own.
struct SyncEndpoint {
    let port: Int
    let http: HTTP
}

extension SyncTestServer {
    var endpoint: SyncEndpoint { SyncEndpoint(port: server.port, http: http) }
}

extension ServerProcess {
    var endpoint: SyncEndpoint { SyncEndpoint(port: port, http: HTTP(baseURL: URL(string: baseURL)!)) }
}
