import Atoll
import Foundation
import Testing

// Error handling as Realm apps write it: a sync error handler that switches over every code
// realm-swift declares (including the deprecated underlyingAuthError) and reads serverLogURL,
// and an API key screen reading `disabled`.

func describeSyncError(_ error: SyncError) -> String {
    var text: String
    switch error.code {
    case .clientResetError: text = "reset"
    case .clientSessionError: text = "session"
    case .clientUserError, .underlyingAuthError: text = "user"
    case .clientInternalError: text = "internal"
    case .permissionDeniedError: text = "permission"
    case .invalidFlexibleSyncSubscriptions: text = "subscriptions"
    case .writeRejected: text = "rejected"
    default: text = "other"
    }
    if let url = error.serverLogURL {
        text += " (see \(url))"
    }
    return text
}

func apiKeyRow(_ key: UserAPIKey) -> String {
    "\(key.name)\(key.disabled ? " (disabled)" : "")"
}

@Suite struct ErrorCodesApp {
    @Test func aHandlerOverEveryRealmCodeCompilesAndRuns() {
        #expect(describeSyncError(SyncError(.underlyingAuthError, "token refused")) == "user")
        #expect(describeSyncError(SyncError(.clientResetError, "reset needed")) == "reset")
        #expect(SyncError.Code.underlyingAuthError.rawValue == 8)
    }
}

// A status line over every session state realm-swift declares: an exhaustive switch, no default.
func sessionStatus(_ session: SyncSession) -> String {
    switch session.state {
    case .active: return "syncing"
    case .inactive: return "paused"
    case .invalid: return "stopped"
    }
}
