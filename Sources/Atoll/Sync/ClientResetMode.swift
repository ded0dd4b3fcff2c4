import AtollCore
import Foundation

/// What hears a sync error: `app.syncManager.errorHandler`, a `.manual(errorHandler:)` client reset.
public typealias ErrorReportingBlock = @Sendable (Swift.Error, SyncSession?) -> Void

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
    /// The app handles the reset: the handler gets the error (a `SyncError` with the backup path
    /// and action token) and the session.
    case manual(errorHandler: ErrorReportingBlock? = nil)

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

    /// The before and after blocks of an automatic mode.
    var blocks: (before: ((Realm) -> Void)?, after: ((Realm, Realm) -> Void)?) {
        switch self {
        case .recoverUnsyncedChanges(let before, let after), .recoverOrDiscardUnsyncedChanges(let before, let after),
             .discardUnsyncedChanges(let before, let after): (before, after)
        case .manual: (nil, nil)
        }
    }

    var isManual: Bool {
        if case .manual = self { true } else { false }
    }

    /// The mode without its blocks, as the reset's plan takes it.
    var kind: ClientResetModeKind {
        switch self {
        case .recoverUnsyncedChanges: .recoverUnsyncedChanges
        case .recoverOrDiscardUnsyncedChanges: .recoverOrDiscardUnsyncedChanges
        case .discardUnsyncedChanges: .discardUnsyncedChanges
        case .manual: .manual
        }
    }

    var name: String { kind.rawValue }
}

/// The client reset mode as a plain number, as Realm's Objective-C API has it
/// (`RLMClientResetModeManual = 0` …). Build a ``ClientResetMode`` from it, with the blocks that mode
/// takes, through ``ClientResetMode/init(_:beforeReset:afterReset:manualClientResetHandler:)``.
public enum RLMClientResetMode: UInt, Sendable, Hashable, CaseIterable {
    case manual = 0
    /// Use `discardUnsyncedChanges` (the same value).
    case discardLocal = 1
    case recoverUnsyncedChanges = 2
    case recoverOrDiscardUnsyncedChanges = 3

    public static var discardUnsyncedChanges: RLMClientResetMode { .discardLocal }
}

extension ClientResetMode {
    /// The mode `mode` with its blocks. Before and after blocks belong to the automatic modes and a
    /// manual handler to `.manual`; any other combination is refused, with a message that says which
    /// block goes where, rather than silently never calling a block.
    ///
    /// - Throws: `Realm.Error` with code `.invalidConfiguration`.
    public init(_ mode: RLMClientResetMode, beforeReset: ((Realm) -> Void)? = nil, afterReset: ((Realm, Realm) -> Void)? = nil,
                manualClientResetHandler: ErrorReportingBlock? = nil) throws {
        switch mode {
        case .manual:
            guard beforeReset == nil, afterReset == nil else {
                throw Realm.Error(.invalidConfiguration, "client reset before and after blocks run only in the automatic modes "
                    + "(recoverUnsyncedChanges, recoverOrDiscardUnsyncedChanges, discardUnsyncedChanges); in manual mode handle "
                    + "the reset in manualClientResetHandler or app.syncManager.errorHandler")
            }
            self = .manual(errorHandler: manualClientResetHandler)
            return
        case .discardLocal, .recoverUnsyncedChanges, .recoverOrDiscardUnsyncedChanges:
            guard manualClientResetHandler == nil else {
                throw Realm.Error(.invalidConfiguration, "a manual client reset handler is only used in manual mode; with \(mode) "
                    + "the reset runs by itself: pass beforeReset/afterReset blocks, and app.syncManager.errorHandler hears of "
                    + "an automatic reset that has to fall back to manual")
            }
        }
        switch mode {
        case .discardLocal: self = .discardUnsyncedChanges(beforeReset: beforeReset, afterReset: afterReset)
        case .recoverUnsyncedChanges: self = .recoverUnsyncedChanges(beforeReset: beforeReset, afterReset: afterReset)
        default: self = .recoverOrDiscardUnsyncedChanges(beforeReset: beforeReset, afterReset: afterReset)
        }
    }
}
