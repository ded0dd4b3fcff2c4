import AtollCore
import Foundation

/// An error of a sync session, with the codes of Realm's `SyncError.Code`.
///
/// ```swift
/// app.syncManager.errorHandler = { error, session in
///     guard let syncError = error as? SyncError else { return }
///     if syncError.code == .clientResetError { … }
/// }
/// ```
public struct SyncError: Error, Sendable, CustomStringConvertible {
    public enum Code: Int, Sendable, Hashable {
        case clientSessionError = 4
        case clientUserError = 5
        case clientInternalError = 6
        case clientResetError = 7
        case permissionDeniedError = 9
        case invalidFlexibleSyncSubscriptions = 10
        case writeRejected = 11
        case connectionFailed = 12
        case tlsHandshakeFailed = 13
        case serverWarning = 14
    }

    public let code: Code
    public let message: String
    public let underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "Sync error \(code) (\(code.rawValue)): \(message)" }
    public var localizedDescription: String { message }

    init(_ error: SessionError) {
        let code = Code(rawValue: error.code.rawValue) ?? .clientSessionError
        self.init(code, error.message, underlying: error)
    }
}
