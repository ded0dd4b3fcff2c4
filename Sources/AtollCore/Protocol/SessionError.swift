/// The codes of a sync error, with the names and raw values of Realm's `SyncError.Code`: the SDK's
/// `SyncError.Code` is this type.
///
/// ```swift
/// if syncError.code == .clientResetError { … }
/// ```
public enum SyncErrorCode: Int, Sendable, Hashable, CaseIterable {
    /// Something is wrong with one session (a synced realm): it stopped.
    case clientSessionError = 4
    /// Something is wrong with the user: logged out, removed, or its token refused.
    case clientUserError = 5
    /// The sync client failed internally.
    case clientInternalError = 6
    /// The server can no longer sync with the local copy: the realm must be reset.
    /// `clientResetInfo()` gives the backup path and the token that runs the reset.
    case clientResetError = 7
    /// Realm's code for an authentication error under a sync error (deprecated there, never reported
    /// by its sync client since v10): declared so that apps switching over the codes compile. Atoll
    /// reports authentication failures as `clientUserError`, as Realm does.
    case underlyingAuthError = 8
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

    /// The code a server error maps to: specific codes first (bad query → 10, compensating write
    /// → 11, permission → 9, sync disabled or a server warning → 14), then the action (reset → 7, log out or token → 5, warning → 14,
    /// retry later → 12, protocol violation → 4).
    package init(serverCode: ServerErrorCode, action: ErrorAction) {
        switch (serverCode, action) {
        case (.badQuery, _): self = .invalidFlexibleSyncSubscriptions
        case (.syncDisabled, _), (.serverWarning, _): self = .serverWarning
        case (.compensatingWrite, _): self = .writeRejected
        case (.permissionDenied, _), (_, .deleteRealm): self = .permissionDeniedError
        case (_, .clientReset): self = .clientResetError
        case (.invalidAccessToken, _), (.accessTokenExpired, _), (.userLoggedOut, _), (_, .logOut),
             (_, .refreshAccessToken):
            self = .clientUserError
        case (_, .warning): self = .serverWarning
        case (_, .retryLater): self = .connectionFailed
        case (_, .protocolViolation): self = .clientSessionError
        }
    }
}

/// An error a ``ClientSession`` reports: what the SDK turns into a `SyncError` for
/// `syncManager.errorHandler`.
package struct SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    package var code: SyncErrorCode
    package var message: String
    /// The server's code when the server sent the error, `nil` when the client found it.
    package var serverCode: ServerErrorCode?
    /// What the client does about it (the server's action, or the client's own decision).
    package var action: ErrorAction
    /// Whether the session stopped because of it. Non-fatal connection errors (12) are retried with
    /// backoff and only logged, unless the app asked async open to fail on them.
    package var isFatal: Bool
    /// With ``SyncErrorCode/writeRejected``: the objects the server reverted.
    package var compensatingWrites: [CompensatingWrite]

    package init(code: SyncErrorCode, message: String, serverCode: ServerErrorCode? = nil, action: ErrorAction,
                isFatal: Bool, compensatingWrites: [CompensatingWrite] = [])
    {
        self.code = code
        self.message = message
        self.serverCode = serverCode
        self.action = action
        self.isFatal = isFatal
        self.compensatingWrites = compensatingWrites
    }

    /// The error a server message reports.
    package init(_ error: ErrorMessage) {
        let fatal: Bool = switch error.action {
        case .warning, .retryLater, .refreshAccessToken: false
        case .clientReset, .deleteRealm, .logOut, .protocolViolation: true
        }
        self.init(code: SyncErrorCode(serverCode: error.code, action: error.action), message: error.message,
                  serverCode: error.code, action: error.action, isFatal: fatal, compensatingWrites: error.compensatingWrites)
    }

    /// A protocol rule the server broke, as the client saw it (code 4, fatal).
    package init(_ error: ProtocolError) {
        self.init(code: .clientSessionError, message: error.message, serverCode: error.code, action: .protocolViolation, isFatal: true)
    }

    package var description: String { "Sync error \(code.rawValue) (\(code)): \(message)" }
}
