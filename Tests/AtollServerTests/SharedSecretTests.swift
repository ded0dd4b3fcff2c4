@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// The token secret and admin key a PostgreSQL store shares between nodes are kept wrapped under
/// the nodes' secret key (issue 21 §3): a dump of the database gives neither away.
@Suite(postgresInstalled) struct SharedSecretTests {
    static let key = "the secret key every node of this deployment has"

    /// What `shared_secrets` holds, by name.
    static func stored(_ cluster: PostgresCluster, _ url: String) async throws -> [String: String] {
        let rows = try await cluster.execute("SELECT name, value FROM shared_secrets", onDatabaseOf: url)
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in row[0].flatMap { name in row[1].map { (name, $0) } } })
    }

    static func node(_ url: String, key: String?, developmentMode: Bool = true) async throws -> TestServer {
        try await TestServer.start(TestServer.configuration {
            $0.store = url
            $0.secretKey = key
            $0.developmentMode = developmentMode
        })
    }

    @Test func theStoredBytesDoNotHoldTheSecrets() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let node = try await Self.node(url, key: Self.key, developmentMode: false)
        let tokenSecret = try String(contentsOf: node.dataFolder.appendingPathComponent(TokenSecret.fileName), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let adminKey = node.running.adminKey
        // The node works: the admin API takes its key.
        #expect(try await node.http.send("GET", "/api/admin/v1/apps", bearer: adminKey).status == 200)
        try await node.tearDown()

        let stored = try await Self.stored(cluster, url)
        #expect(Set(stored.keys) == ["token-secret", "admin-key"])
        for (name, value) in stored {
            #expect(value.hasPrefix(SecretWrapping.prefix), "\(name)")
            #expect(!value.contains(tokenSecret) && !value.contains(adminKey), "\(name) is stored in plain text")
            let bytes = Data(base64Encoded: String(value.dropFirst(SecretWrapping.prefix.count))) ?? Data()
            #expect(bytes.range(of: Data(tokenSecret.utf8)) == nil && bytes.range(of: Data(adminKey.utf8)) == nil)
        }

        // A second node with the key shares them.
        let second = try await Self.node(url, key: Self.key, developmentMode: false)
        #expect(second.running.adminKey == adminKey)
        try await second.tearDown()
    }

    /// A database an older server wrote its secrets to in plain text keeps working: the first
    /// node with a key wraps them, and they stay the same secrets.
    @Test func plainSecretsOfAnOlderServerAreWrappedOnFirstStartWithAKey() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let old = try await Self.node(url, key: nil)
        let adminKey = old.running.adminKey
        try await old.tearDown()
        #expect(try await Self.stored(cluster, url)["admin-key"] == adminKey, "without a key (development mode): plain, as before")

        let upgraded = try await Self.node(url, key: Self.key)
        #expect(upgraded.running.adminKey == adminKey)
        try await upgraded.tearDown()
        let stored = try await Self.stored(cluster, url)
        #expect(stored.values.allSatisfy { $0.hasPrefix(SecretWrapping.prefix) && !$0.contains(adminKey) })
    }

    /// A node with another key, or none, refuses to start and says why.
    @Test func aNodeWithTheWrongKeyRefusesWithAClearError() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let first = try await Self.node(url, key: Self.key)

        let wrong = await #expect(throws: ConfigurationError.self) {
            _ = try await Self.node(url, key: "another key of at least thirty-two bytes")
        }
        #expect(wrong?.field == "secretKey")
        #expect(wrong?.message.contains("does not open with this node's secret key") == true, "\(wrong?.message ?? "")")

        let none = await #expect(throws: ConfigurationError.self) { _ = try await Self.node(url, key: nil) }
        #expect(none?.field == "secretKey")
        #expect(none?.message.contains("wrapped") == true, "\(none?.message ?? "")")
        try await first.tearDown()
    }
}

/// The wrapping as pure logic, and which configurations may keep shared secrets how.
@Suite struct SecretWrappingTests {
    @Test func aWrappedSecretOpensWithItsKeyAndNameOnly() throws {
        let wrapping = SecretWrapping(secretKey: SharedSecretTests.key)
        let wrapped = try wrapping.wrap("the token secret", name: "token-secret")
        #expect(SecretWrapping.isWrapped(wrapped) && !wrapped.contains("the token secret"))
        #expect(try wrapping.unwrap(wrapped, name: "token-secret", what: "token secret") == "the token secret")
        #expect(try wrapping.wrap("the token secret", name: "token-secret") != wrapped, "a fresh nonce each time")
        #expect(throws: ConfigurationError.self) { try wrapping.unwrap(wrapped, name: "admin-key", what: "admin key") }
        #expect(throws: ConfigurationError.self) {
            try SecretWrapping(secretKey: "another key of at least thirty-two bytes").unwrap(wrapped, name: "token-secret", what: "token secret")
        }
        #expect(throws: ConfigurationError.self) { try wrapping.unwrap(SecretWrapping.prefix + "not base64!", name: "token-secret", what: "t") }
    }

    /// Outside development mode a PostgreSQL store's secrets are wrapped, or configured.
    @Test func aPostgreSQLStoreInProductionNeedsASecretKeyOrConfiguredSecrets() throws {
        var configuration = ServerConfiguration(developmentMode: false)
        configuration.store = "postgres://atoll@127.0.0.1/atoll"
        let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(error?.field == "secretKey")
        configuration.secretKey = "short"
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.secretKey = SharedSecretTests.key
        try configuration.validate()
        configuration.secretKey = nil
        configuration.tokenSecret = String(repeating: "t", count: 32)
        configuration.adminKey = String(repeating: "a", count: 32)
        try configuration.validate()
        try ServerConfiguration().validate()  // SQLite: the secrets stay in the data folder
    }
}
