import AtollCore
import Foundation

/// An error of a sync session, with the codes of Realm's `SyncError.Code`.
///
/// ```swift
/// app.syncManager.errorHandler = { error, session in
///     guard let syncError = error as? SyncError else { return }
///     if syncError.code == .clientResetError, let (backupPath, token) = syncError.clientResetInfo() { … }
/// }
/// ```
public struct SyncError: Error, Sendable, CustomStringConvertible, LocalizedError {
    public enum Code: Int, Sendable, Hashable {
        /// Something is wrong with one session (a synced realm): it stopped.
        case clientSessionError = 4
        /// Something is wrong with the user: logged out, removed, or its token refused.
        case clientUserError = 5
        /// The sync client failed internally.
        case clientInternalError = 6
        /// The server can no longer sync with the local copy: the realm must be reset.
        /// `clientResetInfo()` gives the backup path and the token that runs the reset.
        case clientResetError = 7
        /// The user may not sync this realm; its local copy is deleted at the next app start,
        /// or at once with the token of `deleteRealmUserInfo()`.
        case permissionDeniedError = 9
        /// The server refused a flexible-sync subscription.
        case invalidFlexibleSyncSubscriptions = 10
        /// The server reverted writes of this client (`compensatingWriteInfo` lists them).
        case writeRejected = 11
        /// The connection failed without a more specific code (retried with backoff, only logged).
        case connectionFailed = 12
        /// The TLS handshake with the server failed.
        case tlsHandshakeFailed = 13
        /// The server sent a warning the app may want to know about.
        case serverWarning = 14
    }

    public let code: Code
    public let message: String
    public let underlying: (any Error & Sendable)?
    /// With `.writeRejected`: the objects the server reverted and why; `nil` for other errors.
    public let compensatingWriteInfo: [CompensatingWriteInfo]?
    /// With `.clientResetError` and `.permissionDeniedError`: what `SyncSession.immediatelyHandleError` runs.
    let actionToken: ActionToken?

    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.init(code, message, underlying: underlying, compensatingWriteInfo: nil, actionToken: nil)
    }

    init(_ code: Code, _ message: String, underlying: (any Error & Sendable)?,
         compensatingWriteInfo: [CompensatingWriteInfo]?, actionToken: ActionToken?) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.compensatingWriteInfo = compensatingWriteInfo
        self.actionToken = actionToken
    }

    public var description: String { "Sync error \(code) (\(code.rawValue)): \(message)" }
    public var localizedDescription: String { message }
    public var errorDescription: String? { message }

    /// The error a session reports; `underlying` is the session error unless a more precise one
    /// (the NIO error of a failed connection) is given.
    init(_ error: SessionError, underlying: (any Error & Sendable)? = nil) {
        let code = Code(rawValue: error.code.rawValue) ?? .clientSessionError
        let reverted = error.compensatingWrites.map(CompensatingWriteInfo.init)
        self.init(code, error.message, underlying: underlying ?? error,
                  compensatingWriteInfo: code == .writeRejected || !reverted.isEmpty ? reverted : nil, actionToken: nil)
    }

    /// The same error with the token of the file action it comes with.
    func with(_ token: ActionToken) -> SyncError {
        SyncError(code, message, underlying: underlying, compensatingWriteInfo: compensatingWriteInfo, actionToken: token)
    }
}

/// A write the server rejected and reverted (listed by a `.writeRejected` error), for logging and
/// debugging: the reasons are the server's words and may change.
///
/// ```swift
/// for write in syncError.compensatingWriteInfo ?? [] {
///     print("\(write.objectType) \(write.primaryKey): \(write.reason)")
/// }
/// ```
public struct CompensatingWriteInfo: Sendable, Hashable, CustomStringConvertible {
    /// The class name of the object written.
    public let objectType: String
    /// The primary key of the object written (Realm's is an `AnyRealmValue`; Atoll has no
    /// mixed type yet, so it is the sync protocol's `Value`: `.objectId(id)`, `.string(s)`, `.int(i)`, …).
    public let primaryKey: Value
    /// Why the server rejected the write.
    public let reason: String

    init(_ write: CompensatingWrite) {
        objectType = write.objectType
        primaryKey = write.primaryKey
        reason = write.reason
    }

    public var description: String { "\(objectType) \(primaryKey): \(reason)" }
}
