import AtollCore
import Atomics
import Foundation
import NIOPosix
import NIOSSL

/// Why the app's sync connection closed or could not open: what every session hears, with the
/// code the session reports it under (`connectionFailed`, or `tlsHandshakeFailed` when TLS refused
/// the server).
struct ConnectionFailure: Sendable {
    var code: SyncErrorCode
    var message: String
    /// The NIO / NIOSSL error, for `SyncError.underlying`.
    var underlying: (any Error & Sendable)?

    /// Classifies an error of `WebSocketClient.connect`. A TLS error counts as a failed handshake
    /// only while the WebSocket was not open yet (`opened == false`): a TLS error on an open
    /// connection (an unclean shutdown) is an ordinary connection failure.
    init(_ error: any Error, url: String, opened: Bool) {
        underlying = error
        if !opened, let (reason, tlsError) = Self.tlsHandshakeFailure(error) {
            code = .tlsHandshakeFailed
            message = "TLS handshake with \(url) failed: \(reason)"
            underlying = tlsError
        } else {
            code = .connectionFailed
            message = "\(error)"
        }
    }

    init(code: SyncErrorCode, message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// A readable reason and the NIOSSL error when `error` is (or, for a failed connection attempt,
    /// holds) a TLS handshake failure, else nil.
    static func tlsHandshakeFailure(_ error: any Error) -> (reason: String, error: any Error)? {
        if let attempts = error as? NIOConnectionError {
            // Setting up TLS on a new connection fails inside the connection attempt.
            return attempts.connectionErrors.lazy.compactMap { tlsHandshakeFailure($0.error) }.first
        }
        return tlsReason(error).map { ($0, error) }
    }

    private static func tlsReason(_ error: any Error) -> String? {
        switch error {
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed(let boringSSL):
                let text = "\(boringSSL)"
                if text.contains("CERTIFICATE_VERIFY_FAILED") {
                    return "the server's certificate is not trusted (\(text)); add its root to "
                        + "AppConfiguration.trustedRootCertificates if it is yours"
                }
                return text
            case .unableToValidateCertificate, .noCertificateToValidate, .cannotMatchULabel, .cannotFindPeerIP:
                return "the server's certificate could not be validated (\(error))"
            default:
                return nil
            }
        case let error as NIOSSLExtraError:
            switch error {
            case .failedToValidateHostname, .serverHostnameImpossibleToMatch:
                return "the server's certificate is not valid for this host name (\(error))"
            case .cannotUseIPAddressInSNI:
                // The WebSocket client sends the URL's host as TLS server name, which may not be an IP address.
                return "wss:// needs a host name, not an IP address, in the app's base URL (\(error))"
            default:
                return "\(error)"
            }
        case let error as BoringSSLError:
            return "\(error)"
        default:
            return nil
        }
    }
}

/// Whether a connection attempt got as far as an open WebSocket (set from the WebSocket's handler).
final class OpenedFlag: Sendable {
    private let value = ManagedAtomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
