import Atoll
import AtollServer
import AtollTesting
import Foundation
import NIOSSL
import Testing

/// The server over HTTPS and `wss://`, and code 13 when the client does not trust it.
///
/// The users log in over plain HTTP first, then the server restarts with TLS on the same data and
/// port, and an app for the same device folder reaches it at `https://localhost:<port>` with the
/// still valid access token. AppTrustTests log in over HTTPS too.
@MainActor @Suite(.serialized) struct TLSTests {
    /// Waits (bounded, ~10 s) until `errors` holds `count` TLS handshake failures.
    func handshakeFailures(_ errors: Recorder<any Error>, count: Int) async throws -> [SyncError] {
        for _ in 0..<400 {
            let failures = errors.all.compactMap { $0 as? SyncError }.filter { $0.code == .tlsHandshakeFailed }
            if failures.count >= count { return failures }
            try await _Concurrency.Task.sleep(nanoseconds: 25_000_000)
        }
        return errors.all.compactMap { $0 as? SyncError }.filter { $0.code == .tlsHandshakeFailed }
    }

    @Test func aServerCertificateTheClientDoesNotTrustIsReportedAsATLSHandshakeFailure() async throws {
        try await withSyncTestServer { server in
            _ = try await server.app(device: "frodo").login(credentials: .anonymous)
            try await server.restart(tls: true)
            #expect(server.server.baseURL.absoluteString.hasPrefix("https://127.0.0.1:"))

            let app = server.tlsApp(device: "frodo", trustingTestCertificate: false)
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let frodo = try #require(app.currentUser, "the user logged in over HTTP is still logged in")
            var configuration = frodo.configuration(partitionValue: "shire")
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            try realm.write { realm.add(SyncedTask(value: ["name": "offline"])) }

            // Reported, and retried with backoff (~1 s): a second report follows.
            let failures = try await handshakeFailures(errors, count: 2)
            let error = try #require(failures.first)
            #expect(error.code.rawValue == 13)
            #expect(error.localizedDescription.contains("TLS handshake with wss://localhost:"), "\(error)")
            #expect(error.localizedDescription.contains("not trusted"), "\(error)")
            #expect(error.underlying is NIOSSLError, "\(String(describing: error.underlying))")
            #expect(failures.count >= 2, "the session keeps trying")
            #expect(realm.syncSession?.state == .active)
            #expect(!errors.all.contains { ($0 as? SyncError)?.code == .connectionFailed }, "code 12 is only logged")
        }
    }

    @Test func anIPAddressInAnHTTPSBaseURLIsReportedAsATLSFailureNamingTheCause() async throws {
        try await withSyncTestServer { server in
            _ = try await server.app(device: "frodo").login(credentials: .anonymous)
            try await server.restart(tls: true)
            var appConfiguration = server.appConfiguration(device: "frodo")
            appConfiguration.baseURL = server.server.baseURL.absoluteString // https://127.0.0.1:…
            appConfiguration.trustedRootCertificates = [TestCertificate.certificatePEM]
            let app = App(id: server.appId, configuration: appConfiguration)
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            var configuration = try #require(app.currentUser).configuration(partitionValue: "shire")
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            let error = try #require(try await handshakeFailures(errors, count: 1).first)
            #expect(error.localizedDescription.contains("needs a host name, not an IP address"), "\(error)")
            #expect(error.underlying is NIOSSLExtraError)
            for user in app.allUsers.values { try? await user.logOut() }
            _ = realm
        }
    }

    @Test func aClientTrustingTheCertificateSyncsOverWSS() async throws {
        try await withSyncTestServer { server in
            _ = try await server.app(device: "frodo").login(credentials: .anonymous)
            _ = try await server.app(device: "sam").login(credentials: .anonymous)
            try await server.restart(tls: true)

            let errors = Recorder<any Error>()
            var realms: [Realm] = []
            for device in ["frodo", "sam"] {
                let app = server.tlsApp(device: device, trustingTestCertificate: true)
                app.syncManager.errorHandler = { error, _ in errors.append(error) }
                var configuration = try #require(app.currentUser).configuration(partitionValue: "shire")
                configuration.objectTypes = [SyncedTask.self]
                realms.append(try await Realm(configuration: configuration, downloadBeforeOpen: .always))
            }
            try realms[0].write { realms[0].add(SyncedTask(value: ["name": "over TLS"])) }
            try await realms[0].syncSession!.wait(for: .upload)
            try await realms[1].syncSession!.wait(for: .download)
            realms[1].refresh()
            #expect(realms[1].objects(SyncedTask.self).map(\.name) == ["over TLS"])
            #expect(errors.all.isEmpty, "\(errors.all)")
        }
    }

    @Test func aKeyThatIsNotTheCertificatesStopsTheStartWithATypedError() async throws {
        let folder = try TemporaryFolder("atoll-tls")
        defer { folder.remove() }
        let files = try TestCertificate.write(to: folder.url)
        try TestCertificate.otherPrivateKeyPEM.write(toFile: files.privateKeyPath, atomically: true, encoding: .utf8)
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: folder.url.appendingPathComponent("data").path)
        configuration.tls = .init(certificateChainPath: files.certificatePath, privateKeyPath: files.privateKeyPath)
        do {
            let running = try await AtollServer(configuration: configuration).start()
            try await running.shutdown()
            Issue.record("the server started with a key that is not its certificate's")
        } catch let error as ConfigurationError {
            #expect(error.field == "tls.privateKeyPath")
            #expect(error.message.contains("does not go with the certificate"), "\(error)")
        }
    }
}
