@testable import AtollServer
import AtollTesting
import Foundation
import Logging
import Testing

/// Defaults and small leaks (issue 21 §4): development mode stays on loopback unless said
/// otherwise, tokens reach the log only there and only at debug, and what anonymous callers read
/// says nothing of the store, the webhooks or the metrics they were not given.
@Suite struct ExposureTests {
    // MARK: Development mode

    @Test func loopbackAddressesAreTold() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "api.localhost", "::1", "[::1]"] {
            #expect(ServerConfiguration.isLoopback(host), "\(host)")
        }
        for host in ["0.0.0.0", "::", "10.0.0.1", "192.168.1.10", "example.com", "127.0.0.1.example.com", "127.0.0", "", "128.0.0.1"] {
            #expect(!ServerConfiguration.isLoopback(host), "\(host)")
        }
    }

    /// `swift run atoll-server` (127.0.0.1, development mode) starts; development mode, the
    /// server's or an app's, on another address needs the explicit flag.
    @Test func developmentModeOnANetworkAddressNeedsAnExplicitFlag() throws {
        try ServerConfiguration().validate()
        var exposed = ServerConfiguration(host: "0.0.0.0")
        let error = #expect(throws: ConfigurationError.self) { try exposed.validate() }
        #expect(error?.field == "developmentMode")
        #expect(error?.message.contains("development mode") == true)
        #expect(error?.message.contains("--allow-development-mode-on-network") == true)
        exposed.allowDevelopmentModeOnNetwork = true
        try exposed.validate()

        var production = ServerConfiguration(host: "0.0.0.0", developmentMode: false, apps: [ServerConfiguration.App(id: "tasks")])
        // An app's development mode (schemas from clients) is on by default: it counts too.
        #expect(throws: ConfigurationError.self) { try production.validate() }
        production.apps[0].developmentMode = false
        try production.validate()
        #expect(try Self.loadConfiguration(#"{"host": "::", "allowDevelopmentModeOnNetwork": true}"#).allowDevelopmentModeOnNetwork)
    }

    /// The log's first line says development mode.
    @Test func theLogSaysDevelopmentModeFirst() async throws {
        let capture = LogCapture()
        let server = try await AtollServer(configuration: TestServer.configuration(), logger: capture.logger(level: .info)).start()
        try await server.shutdown()
        #expect(capture.all.first?.text.contains("development mode") == true, "\(capture.all.first?.text ?? "no log")")

        let quiet = LogCapture()
        let production = try await AtollServer(configuration: TestServer.configuration {
            $0.developmentMode = false
            $0.apps = [ServerConfiguration.App(id: "tasks", developmentMode: false)]
        }, logger: quiet.logger(level: .info)).start()
        try await production.shutdown()
        #expect(!quiet.all.contains { $0.text.contains("development mode") })
    }

    // MARK: Tokens in the log

    @Test func accountTokensAreLoggedOnlyInDevelopmentModeOnLoopback() {
        #expect(ServerConfiguration().logsAccountTokens)
        #expect(!ServerConfiguration(developmentMode: false).logsAccountTokens)
        var exposed = ServerConfiguration(host: "0.0.0.0")
        exposed.allowDevelopmentModeOnNetwork = true
        #expect(!exposed.logsAccountTokens, "development mode on the network: the log is not the developer's alone")
    }

    /// A confirmation token appears in the log at debug level only (never at notice, where every
    /// operator's log shows it).
    @Test func aConfirmationTokenIsLoggedAtDebugOnly() async throws {
        let receiver = try await WebhookReceiver.start()
        let capture = LogCapture()
        let server = try await AtollServer(configuration: TestServer.emailConfiguration(receiver), logger: capture.logger(level: .trace)).start()
        let http = HTTP(baseURL: server.baseURL)
        #expect(try await http.register(email: "ann@example.com", password: "s3cret-pw").status == 201)
        let token = try #require(await receiver.nextCall()?.token)
        try await server.shutdown()
        try await receiver.stop()
        let mentions = capture.all.filter { $0.text.contains(token) }
        #expect(!mentions.isEmpty, "development mode on loopback: the developer finds the token in the log")
        #expect(mentions.allSatisfy { $0.level == .debug }, "\(mentions.map(\.level))")
    }

    // MARK: /metrics and /health/ready

    @Test func metricsNeedTheTokenWhenOneIsConfigured() async throws {
        let token = "a metrics token of some length"
        try await withServer(TestServer.configuration { $0.metricsToken = token }) { server in
            #expect(try await server.http.send("GET", "/metrics").status == 401)
            #expect(try await server.http.send("GET", "/metrics", bearer: "a metrics token of some lengtX").status == 401)
            #expect(try await server.http.send("GET", "/metrics", bearer: "short").status == 401)
            let answer = try await server.http.send("GET", "/metrics", bearer: token)
            #expect(answer.status == 200)
            #expect(answer.text.contains("atoll_sync_sessions_active"))
        }
        try await withServer { server in
            let open = try await server.http.send("GET", "/metrics")
            #expect(open.status == 200, "open without a token configured")
        }
        let short = TestServer.configuration { $0.metricsToken = "short" }
        #expect(throws: ConfigurationError.self) { try short.validate() }
    }

    // MARK: Webhooks

    /// A reset function that cannot be reached: the client learns that, not where it is.
    @Test func anUnreachableWebhookIsNotNamedToClients() async throws {
        let gone = try await WebhookReceiver.start()
        let url = gone.url("/reset")
        let port = try #require(URLComponents(string: url)?.port)
        try await gone.stop()
        try await withServer(TestServer.emailConfiguration(gone, confirmation: .automatic)) { server in
            #expect(try await server.http.register(email: "ann@example.com", password: "s3cret-pw").status == 201)
            let answer = try await server.http.callReset("ann@example.com", password: "n3w-s3cret")
            // As App Services answers a reset function that failed: the user, never the function's address.
            #expect(answer.status == 400)
            let message = try #require(answer.object["error"] as? String)
            #expect(message == "failed to reset password for user \"ann@example.com\"")
            #expect(!message.contains("127.0.0.1") && !message.contains(String(port)), "\(message)")
            #expect(!answer.text.contains(String(port)))
        }
    }

    static func loadConfiguration(_ json: String) throws -> ServerConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-config-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try ServerConfiguration.load(from: file)
    }
}
