import Foundation

/// What a client does when the server requires a client reset (docs/client-reset.md): the
/// decision of ``ClientSession/resetPlan(for:mode:previous:)``, carried out by the SDK.
package enum ClientResetPlan: Hashable, Sendable {
    /// Hand the reset to the app's manual handler, saying why.
    case manual(message: String)
    /// Reset from a fresh copy, recovering the unsynced changes or discarding them; `note` says
    /// why the mode's usual action was not taken ("" when it was).
    case automatic(recover: Bool, message: String, note: String)
}

/// The app's `clientResetMode`, without its blocks.
package enum ClientResetModeKind: String, Hashable, Sendable {
    case manual
    case discardUnsyncedChanges
    case recoverUnsyncedChanges
    case recoverOrDiscardUnsyncedChanges
}

/// An automatic reset applied to the file that the server has not acknowledged yet.
package struct AppliedReset: Hashable, Sendable {
    /// "recover" or "discard".
    package var action: String
    package var date: Date

    package init(action: String, date: Date) {
        self.action = action
        self.date = date
    }
}

extension ClientSession {
    /// The plan for `request` under `mode`, R-RESET-4's fallbacks included: a breaking schema
    /// change or recovery turned off on the server falls back to the manual handler (or, for
    /// recover-or-discard, to discarding), and the same automatic action applied before and never
    /// acknowledged (`previous`) is not applied again: that reset would loop.
    package static func resetPlan(for request: ResetRequest, mode: ClientResetModeKind, previous: AppliedReset?) -> ClientResetPlan {
        let why = "the server requires a client reset (\(request.reason)): \(request.message)"
        if request.reason == .breakingSchemaChange, mode != .manual {
            // Neither recovery nor discarding can carry the file over a schema it no longer matches.
            return .manual(message: why + "; after a breaking schema change no automatic mode can run, so "
                + "\(mode.rawValue) falls back to the manual handler")
        }
        var recover: Bool
        var note = ""
        switch mode {
        case .manual:
            return .manual(message: why)
        case .discardUnsyncedChanges:
            recover = false
        case .recoverUnsyncedChanges:
            guard request.recoveryAllowed else {
                return .manual(message: why + "; the server has client recovery turned off, so recoverUnsyncedChanges falls back to the manual handler")
            }
            recover = true
        case .recoverOrDiscardUnsyncedChanges:
            recover = request.recoveryAllowed
            if !recover { note = "the server has client recovery turned off, so the unsynced changes were discarded" }
        }
        if let previous, previous.action == (recover ? "recover" : "discard") {
            let cycle = "a previous \(previous.action) reset of this file (\(previous.date)) was never acknowledged by the server"
            guard mode == .recoverOrDiscardUnsyncedChanges, recover else {
                return .manual(message: why + "; \(cycle), so \(mode.rawValue) falls back to the manual handler instead of looping")
            }
            recover = false
            note = cycle + ", so the unsynced changes were discarded this time"
        }
        return .automatic(recover: recover, message: why, note: note)
    }
}
