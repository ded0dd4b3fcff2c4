import Foundation

/// A self-signed certificate for `localhost` and `127.0.0.1` (EC P-256, valid 2025–2125) and its
/// key, for tests of the server's TLS. Made once with:
/// ```
/// openssl req -new -key key.pem -subj "/CN=localhost/O=Atoll tests" -out req.csr
/// openssl ca -selfsign -keyfile key.pem -in req.csr -startdate 20250101000000Z -enddate 21250101000000Z \
///     -extensions ext   # subjectAltName = DNS:localhost,IP:127.0.0.1; basicConstraints = CA:TRUE
/// ```
/// No system trusts it: a client trusts it only through `AppConfiguration.trustedRootCertificates`.
package enum TestCertificate {
    /// The certificate, PEM.
    package static let certificatePEM = """
    -----BEGIN CERTIFICATE-----
    MIIBtzCCAV6gAwIBAgIBATAKBggqhkjOPQQDAjAqMRIwEAYDVQQDDAlsb2NhbGhv
    c3QxFDASBgNVBAoMC0F0b2xsIHRlc3RzMCAXDTI1MDEwMTAwMDAwMFoYDzIxMjUw
    MTAxMDAwMDAwWjAqMRIwEAYDVQQDDAlsb2NhbGhvc3QxFDASBgNVBAoMC0F0b2xs
    IHRlc3RzMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEvVKi7OqeD69EWetwHwce
    idxsgDnLlL7dgOg9DkDtWeo57tWyJesFjX8PCY9X1x/Eb+8SLQCFjMmwQx3By/rZ
    0qNzMHEwGgYDVR0RBBMwEYIJbG9jYWxob3N0hwR/AAABMA8GA1UdEwEB/wQFMAMB
    Af8wDgYDVR0PAQH/BAQDAgKEMBMGA1UdJQQMMAoGCCsGAQUFBwMBMB0GA1UdDgQW
    BBSYC0MktHVCanOVDzJv0SQ/sAYg+zAKBggqhkjOPQQDAgNHADBEAiAiQY1bCrpz
    RsQmRKTT6PIS5jFhdEfI5EyIT8PGKDiLSgIgRuWVo1VN99vEjjYu8h4KgPmbDhhq
    /XkZ9pWpFzMc4U8=
    -----END CERTIFICATE-----
    """

    /// Its private key, PEM (PKCS#8).
    package static let privateKeyPEM = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgrqcGbevzdm2hvNt1
    jiWs9DlgMKaKbGa2nqoIs2JH+O2hRANCAAS9UqLs6p4Pr0RZ63AfBx6J3GyAOcuU
    vt2A6D0OQO1Z6jnu1bIl6wWNfw8Jj1fXH8Rv7xItAIWMybBDHcHL+tnS
    -----END PRIVATE KEY-----
    """

    /// A private key that is not the certificate's, for tests of a mismatched pair.
    package static let otherPrivateKeyPEM = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5+LuvBbRXtsGAAZX
    QPxZu8GCrv8VaYo3KenojcP9JHahRANCAARPf5Q6PjxFuFq/f6D8mi0ctYIWKlFI
    TmewoxTi0hcpenjF856G1F3GKPjBRbcSlgde5x2TPt375qsqTcLB2VSh
    -----END PRIVATE KEY-----
    """

    /// Writes both PEM files into `folder` and returns their paths, for `ServerConfiguration.tls`.
    package static func write(to folder: URL) throws -> (certificatePath: String, privateKeyPath: String) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = folder.appendingPathComponent("test-cert.pem")
        let key = folder.appendingPathComponent("test-key.pem")
        try certificatePEM.write(to: certificate, atomically: true, encoding: .utf8)
        try privateKeyPEM.write(to: key, atomically: true, encoding: .utf8)
        return (certificate.path, key.path)
    }
}
