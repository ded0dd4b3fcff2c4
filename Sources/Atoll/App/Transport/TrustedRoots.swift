import Foundation

/// The app's own trust roots (`AppConfiguration.trustedRootCertificates`): what both the app's
/// HTTP requests and its sync connection trust besides the system's roots.
///
/// The sync connection and, off Apple platforms, the default HTTP transport hand the PEM text to
/// NIOSSL (`SyncConnection.clientTLSConfiguration(trusting:)`); on Apple platforms URLSession's
/// trust evaluation takes DER certificates, which ``derCertificates(_:)`` reads here, where it is
/// tested.
enum TrustedRoots {
    /// Why a trusted root could not be read.
    struct Failure: Error, Sendable, CustomStringConvertible {
        /// The index in `trustedRootCertificates`.
        let index: Int
        var description: String { "AppConfiguration.trustedRootCertificates[\(index)] is not a PEM certificate" }
    }

    /// The DER bytes of every `CERTIFICATE` block of `pems`, in order. A string without one, or
    /// with a block that is not base64, fails naming its index.
    ///
    /// - Complexity: O(n) in the total length of `pems`.
    static func derCertificates(_ pems: [String]) throws(Failure) -> [Data] {
        var certificates: [Data] = []
        for (index, pem) in pems.enumerated() {
            let blocks = certificateBlocks(pem)
            guard let blocks, !blocks.isEmpty else { throw Failure(index: index) }
            certificates += blocks
        }
        return certificates
    }

    private static let begin = "-----BEGIN CERTIFICATE-----"
    private static let end = "-----END CERTIFICATE-----"

    /// The decoded blocks of one PEM string; nil when a block is unterminated or not base64.
    private static func certificateBlocks(_ pem: String) -> [Data]? {
        var blocks: [Data] = []
        var rest = Substring(pem)
        while let start = rest.range(of: begin) {
            guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) else { return nil }
            let base64 = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(base64)), !der.isEmpty else { return nil }
            blocks.append(der)
            rest = rest[stop.upperBound...]
        }
        return blocks
    }
}
