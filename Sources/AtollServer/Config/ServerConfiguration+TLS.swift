import Foundation
import NIOSSL

extension ServerConfiguration.TLS {
    /// The server-side TLS configuration: reads both PEM files and checks that the key belongs to the
    /// certificate, so a bad file stops the start with a ``ConfigurationError`` naming the field.
    ///
    /// ```swift
    /// let tlsConfiguration = try configuration.tls?.makeServerTLSConfiguration()
    /// ```
    public func makeServerTLSConfiguration() throws -> TLSConfiguration {
        let chainPEM = try Self.read(certificateChainPath, field: "tls.certificateChainPath")
        let keyPEM = try Self.read(privateKeyPath, field: "tls.privateKeyPath")
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(chainPEM)
        } catch {
            throw ConfigurationError(field: "tls.certificateChainPath", "\(certificateChainPath) is not a PEM certificate chain (\(error))")
        }
        guard !chain.isEmpty else {
            throw ConfigurationError(field: "tls.certificateChainPath", "\(certificateChainPath) holds no PEM certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: keyPEM, format: .pem)
        } catch {
            throw ConfigurationError(field: "tls.privateKeyPath", "\(privateKeyPath) is not an unencrypted PEM private key (\(error))")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        do {
            // BoringSSL checks here that the key is the certificate's.
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ConfigurationError(
                field: "tls.privateKeyPath", "\(privateKeyPath) does not go with the certificate in \(certificateChainPath) (\(error))")
        }
        return configuration
    }

    private static func read(_ path: String, field: String) throws -> [UInt8] {
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ConfigurationError(field: field, "cannot read \(path): \((error as NSError).localizedDescription)")
        }
    }
}
