import AtollServer
import Foundation
import Testing

@Suite("Server configuration")
struct ConfigurationTests {
    func load(_ json: String) throws -> ServerConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-config-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try ServerConfiguration.load(from: file)
    }

    @Test func theDefaultsAreALocalDevelopmentServer() throws {
        let configuration = try load("{}")
        #expect(configuration == ServerConfiguration())
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 9090)
        #expect(configuration.dataDirectory == "./atoll-data")
        #expect(configuration.developmentMode)
        #expect(configuration.accessTokenLifetime == 1800)
        #expect(configuration.refreshTokenLifetime == 60 * 24 * 3600)
        let app = configuration.settings(forApp: "any")
        #expect(app.accepts(.anonymous) && app.accepts(.emailPassword) && app.accepts(.apiKey))
        #expect(!app.accepts(.customToken))
    }

    @Test func theServerDocsExampleLoads() throws {
        let configuration = try load(
            """
            {
              "host": "0.0.0.0",
              "port": 8080,
              "dataDirectory": "/var/lib/atoll",
              "developmentMode": false,
              "apps": [
                {
                  "id": "tasks",
                  "authProviders": { "anon-user": false, "local-userpass": true, "api-key": true, "custom-token": true },
                  "customJWT": { "algorithm": "HS256", "key": "a shared secret of at least 32 bytes!!", "audience": "tasks-app" },
                  "syncKind": "flexible",
                  "queryableFields": ["owner", "Task.done"],
                  "permissions": [ { "type": "Task", "read": "true", "write": "owner == %user.id" } ],
                  "developmentMode": false,
                  "clientRecovery": true,
                  "maxOfflineTime": 2592000
                }
              ]
            }
            """)
        #expect(configuration.port == 8080)
        #expect(!configuration.developmentMode)
        let app = try #require(configuration.app(id: "tasks"))
        #expect(!app.accepts(.anonymous))
        #expect(app.accepts(.customToken))
        #expect(app.customJWT?.audience == "tasks-app")
        #expect(app.syncKind == .flexible)
        #expect(app.queryableFields == ["owner", "Task.done"])
        #expect(app.permissions == [.init(type: "Task", read: "true", write: "owner == %user.id")])
        #expect(app.maxOfflineTime == 2_592_000)
    }

    @Test func tlsTakesTheCertificateAndKeyFiles() throws {
        let configuration = try load(#"{"tls": {"certificateChainPath": "/etc/atoll/cert.pem", "privateKeyPath": "/etc/atoll/key.pem"}}"#)
        #expect(configuration.tls == .init(certificateChainPath: "/etc/atoll/cert.pem", privateKeyPath: "/etc/atoll/key.pem"))
        #expect(try load("{}").tls == nil, "plain HTTP by default")
    }

    @Test func tlsFilesThatCannotBeReadStopTheStartWithTheirField() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let notPEM = folder.appendingPathComponent("not.pem")
        try Data("not a certificate".utf8).write(to: notPEM)
        let missing = folder.appendingPathComponent("missing.pem").path
        let cases: [(ServerConfiguration.TLS, String, String)] = [
            (.init(certificateChainPath: missing, privateKeyPath: missing), "tls.certificateChainPath", "cannot read"),
            (.init(certificateChainPath: notPEM.path, privateKeyPath: notPEM.path), "tls.certificateChainPath", "not.pem"),
        ]
        for (tls, field, words) in cases {
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: folder.appendingPathComponent("data").path)
            configuration.tls = tls
            do {
                let running = try await AtollServer(configuration: configuration).start()
                try await running.shutdown()
                Issue.record("a server started with \(tls)")
            } catch let error as ConfigurationError {
                #expect(error.field == field)
                #expect(error.message.contains(words), "\(error)")
            }
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(tls: .init(certificateChainPath: "", privateKeyPath: "key.pem")).validate()
        }
    }

    @Test func unusableSettingsAreRefusedWithTheirField() throws {
        let cases: [(String, String)] = [
            (#"{"port": 70000}"#, "port"),
            (#"{"tokenSecret": "short"}"#, "tokenSecret"),
            (#"{"passwordHashRounds": 1000}"#, "passwordHashRounds"),
            (#"{"apps": [{"id": "a"}, {"id": "a"}]}"#, "apps[1].id"),
            (#"{"apps": [{"id": "a", "customJWT": {"algorithm": "HS256", "key": "short"}}]}"#, "apps[0].customJWT.key"),
            (#"{"apps": [{"id": "a", "customJWT": {"algorithm": "RS256", "key": "not pem"}}]}"#, "apps[0].customJWT.key"),
        ]
        for (json, field) in cases {
            #expect(throws: ConfigurationError.self, "\(json)") { try load(json) }
            do { _ = try load(json) } catch let error as ConfigurationError { #expect(error.field == field, "\(json)") }
        }
        #expect(throws: ConfigurationError.self) { try load(#"{"apps": [{"id": "a", "syncKind": "mesh"}]}"#) }
        #expect(throws: ConfigurationError.self) { try load("{not json") }
    }
}
