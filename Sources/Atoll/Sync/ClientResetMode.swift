import Foundation

/// What a synced realm does when the server can no longer sync with its local copy (a client
/// reset). See docs/client-reset.md.
public enum ClientResetMode: @unchecked Sendable {
    /// Keep the realm open, download a fresh copy and replay the local changes not yet synced
    /// onto it. The default for both sync kinds.
    case recoverUnsyncedChanges(beforeReset: ((Realm) -> Void)? = nil, afterReset: ((Realm, Realm) -> Void)? = nil)
    /// Recover if possible; else discard the unsynced changes.
    case recoverOrDiscardUnsyncedChanges(beforeReset: ((Realm) -> Void)? = nil, afterReset: ((Realm, Realm) -> Void)? = nil)
    /// Discard the local changes not yet synced and continue with the server's copy.
    case discardUnsyncedChanges(beforeReset: ((Realm) -> Void)? = nil, afterReset: ((Realm, Realm) -> Void)? = nil)
    /// The app handles the reset: the handler gets the error with the backup path and action token.
    case manual(errorHandler: ((SyncError, SyncSession) -> Void)? = nil)

    /// The earlier name of `.discardUnsyncedChanges`.
    @available(*, deprecated, renamed: "discardUnsyncedChanges")
    public static func discardLocal(beforeReset: ((Realm) -> Void)? = nil, afterReset: ((Realm, Realm) -> Void)? = nil) -> ClientResetMode {
        .discardUnsyncedChanges(beforeReset: beforeReset, afterReset: afterReset)
    }

    /// Realm 10.25's spelling, with the blocks unlabelled (`.discardLocal(before, after)`).
    @available(*, deprecated, renamed: "discardUnsyncedChanges")
    public static func discardLocal(_ beforeReset: ((Realm) -> Void)?, _ afterReset: ((Realm, Realm) -> Void)?) -> ClientResetMode {
        .discardUnsyncedChanges(beforeReset: beforeReset, afterReset: afterReset)
    }

    var isManual: Bool {
        if case .manual = self { true } else { false }
    }

    var name: String {
        switch self {
        case .recoverUnsyncedChanges: "recoverUnsyncedChanges"
        case .recoverOrDiscardUnsyncedChanges: "recoverOrDiscardUnsyncedChanges"
        case .discardUnsyncedChanges: "discardUnsyncedChanges"
        case .manual: "manual"
        }
    }
}
