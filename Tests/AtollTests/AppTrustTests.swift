@testable import Atoll
import AtollCore
import AtollTesting
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// One trust for the app's HTTPS requests and its sync connection
/// (`AppConfiguration.trustedRootCertificates`): a server whose certificate comes from a private CA
/// (``TestCertificate``, a self-signed CA for `localhost`) serves logins and sync to an app that
/// trusts that CA, and neither to one that trusts only the system's roots.
@MainActor @Suite(.serialized) struct AppTrustTests {
    @Test func anAppTrustingThePrivateCALogsInAndSyncsOverHTTPSAndWSS() async throws {
        try await withSyncTestServer { server in
            try await server.restart(tls: true)
            let errors = Recorder<any Error>()
            var realms: [Realm] = []
            for device in ["frodo", "sam"] {
                let app = server.tlsApp(device: device, trustingTestCertificate: true)
                app.syncManager.errorHandler = { error, _ in errors.append(error) }
                // The login goes over https:// through the default transport.
                let user = try await app.login(credentials: .anonymous)
                var configuration = user.configuration(partitionValue: "shire")
                configuration.objectTypes = [SyncedTask.self]
                realms.append(try await Realm(configuration: configuration, downloadBeforeOpen: .always))
            }
            try realms[0].write { realms[0].add(SyncedTask(value: ["name": "over one trust"])) }
            try await realms[0].syncSession!.wait(for: .upload)
            try await realms[1].syncSession!.wait(for: .download)
            realms[1].refresh()
            #expect(realms[1].objects(SyncedTask.self).map(\.name) == ["over one trust"])
            #expect(errors.all.isEmpty, "\(errors.all)")
        }
    }

    @Test func anAppTrustingOnlyTheSystemsRootsFailsBothLoginAndSyncAgainstThePrivateCA() async throws {
        try await withSyncTestServer { server in
            // A user logged in over plain HTTP before the server turned to TLS, to see sync fail too.
            _ = try await server.app(device: "frodo").login(credentials: .anonymous)
            try await server.restart(tls: true)
            let app = server.tlsApp(device: "frodo", trustingTestCertificate: false)
            #expect(app.configuration.trustedRootCertificates.isEmpty)

            // A device with no user yet (an anonymous login of a device that has one asks no server).
            let newcomer = server.tlsApp(device: "pippin", trustingTestCertificate: false)
            do {
                _ = try await newcomer.login(credentials: .anonymous)
                Issue.record("a login over https:// to a server of a private CA succeeded without trusting it")
            } catch let error as AppError {
                #expect(error.code == .httpRequestFailed)
                #expect(error.localizedDescription.contains("not trusted"), "\(error.localizedDescription)")
            }

            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            var configuration = try #require(app.currentUser).configuration(partitionValue: "shire")
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            var failure: SyncError?
            for _ in 0..<400 where failure == nil {
                failure = errors.all.compactMap { $0 as? SyncError }.first { $0.code == .tlsHandshakeFailed }
                if failure == nil { try await _Concurrency.Task.sleep(nanoseconds: 25_000_000) }
            }
            let error = try #require(failure, "no TLS handshake failure reported within ~10 s")
            #expect(error.localizedDescription.contains("not trusted"), "\(error)")
            _ = realm
        }
    }

    @Test func aTransportOfTheAppsOwnThatCallsSuperKeepsTheAppsTrust() async throws {
        try await withSyncTestServer { server in
            try await server.restart(tls: true)
            let transport = CountingTransport()
            var configuration = server.appConfiguration(device: "merry")
            configuration.baseURL = server.httpsBaseURL
            configuration.transport = transport
            configuration.trustedRootCertificates = [TestCertificate.certificatePEM]
            let app = App(id: server.appId, configuration: configuration)
            let user = try await app.login(credentials: .anonymous)
            #expect(transport.count.withLock { $0 } >= 1)
            try await user.logOut()
        }
    }

    @Test func aTrustedRootThatIsNotAPEMCertificateFailsTheRequestNamingIt() async throws {
        let request = RLMRequest()
        request.url = "https://localhost:1/api/client/v2.0/app/a/location"
        request.timeout = 5
        request.trustedRootCertificates = [TestCertificate.certificatePEM, "not a certificate"]
        let response = await send(request)
        #expect(response.customStatusCode != 0)
        #expect(response.body.contains("trustedRootCertificates[1]"), "\(response.body)")
    }

    // MARK: The PEM reader behind Apple's trust evaluation (TrustEvaluator)

    @Test func thePEMReaderGivesTheDERBytesNIOSSLReads() throws {
        let der = try TrustedRoots.derCertificates([TestCertificate.certificatePEM])
        #expect(der.count == 1)
        let fromPEM = try NIOSSLCertificate(bytes: Array(TestCertificate.certificatePEM.utf8), format: .pem)
        #expect(try Array(der[0]) == fromPEM.toDERBytes())
        let two = try TrustedRoots.derCertificates(["chain:\n" + TestCertificate.certificatePEM + "\n" + TestCertificate.certificatePEM])
        #expect(two.count == 2)
    }

    @Test(arguments: ["", "no certificate here", TestCertificate.privateKeyPEM,
                      "-----BEGIN CERTIFICATE-----\nMIIB%%%\n-----END CERTIFICATE-----",
                      "-----BEGIN CERTIFICATE-----\nMIIBtzCCAV6gAwIBAgIBATAKBggqhkjOPQQDAjAq"])
    func thePEMReaderRejectsWhatIsNotACertificate(_ pem: String) {
        #expect(throws: TrustedRoots.Failure(index: 1)) {
            try TrustedRoots.derCertificates([TestCertificate.certificatePEM, pem])
        }
    }
}

extension TrustedRoots.Failure: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.index == rhs.index }
}

/// Counts the requests, then hands them to the default transport.
final class CountingTransport: RLMNetworkTransport, @unchecked Sendable {
    let count = Locked(0)
    override func sendRequest(toServer request: RLMRequest, completion: @escaping RLMNetworkTransportCompletionBlock) {
        count.withLock { $0 += 1 }
        super.sendRequest(toServer: request, completion: completion)
    }
}

/// The default transport's answer to `request`.
func send(_ request: RLMRequest) async -> RLMResponse {
    await withCheckedContinuation { continuation in
        RLMNetworkTransport().sendRequest(toServer: request) { continuation.resume(returning: $0) }
    }
}
