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
    /// Realm's codes, with Realm's raw values (AtollCore's `SyncErrorCode`, which the sync client reports).
    public typealias Code = SyncErrorCode

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
    /// A link to the server's log of the error. App Services sent one; `atoll-server` logs errors in
    /// its own log (with the session and user), so it is nil.
    public var serverLogURL: URL? { nil }
    public var localizedDescription: String { message }
    public var errorDescription: String? { message }

    /// The error a session reports; `underlying` is the session error unless a more precise one
    /// (the NIO error of a failed connection) is given.
    init(_ error: SessionError, underlying: (any Error & Sendable)? = nil) {
        let code = error.code
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
public struct CompensatingWriteInfo: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The class name of the object written.
    public let objectType: String
    /// The primary key of the object written: `.objectId(id)`, `.string(s)`, `.int(i)`, `.uuid(u)`
    /// (a scalar, so the value is safe to pass across threads).
    public let primaryKey: AnyRealmValue
    /// Why the server rejected the write.
    public let reason: String

    init(_ write: CompensatingWrite) {
        objectType = write.objectType
        primaryKey = AnyRealmValue(primaryKey: write.primaryKey)
        reason = write.reason
    }

    public var description: String { "\(objectType) \(primaryKey): \(reason)" }
}

extension SyncError.Code {
    /// Lets a code stand for every `SyncError` with it in a `catch` clause or a `switch`:
    ///
    /// ```swift
    /// do { try await realm.syncSession?.wait(for: .upload) } catch SyncError.clientResetError { … }
    /// ```
    public static func ~= (code: SyncError.Code, error: any Swift.Error) -> Bool {
        (error as? SyncError)?.code == code
    }
}

// The codes as members of `SyncError`, as realm-swift spells them in a `catch`.
extension SyncError {
    public static var clientSessionError: Code { .clientSessionError }
    public static var clientUserError: Code { .clientUserError }
    public static var clientInternalError: Code { .clientInternalError }
    public static var clientResetError: Code { .clientResetError }
    public static var underlyingAuthError: Code { .underlyingAuthError }
    public static var permissionDeniedError: Code { .permissionDeniedError }
    public static var invalidFlexibleSyncSubscriptions: Code { .invalidFlexibleSyncSubscriptions }
    public static var writeRejected: Code { .writeRejected }
    public static var connectionFailed: Code { .connectionFailed }
    public static var tlsHandshakeFailed: Code { .tlsHandshakeFailed }
    public static var serverWarning: Code { .serverWarning }
}

extension AnyRealmValue {
    /// A primary key of the sync protocol as a mixed value.
    init(primaryKey: Value) {
        switch primaryKey {
        case .objectId(let id): self = .objectId(id)
        case .string(let string): self = .string(string)
        case .int(let int): self = .int(Int(int))
        case .uuid(let uuid): self = .uuid(uuid)
        default: self = .none
        }
    }
}
