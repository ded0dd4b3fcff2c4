import Foundation

// realm-swift's session states, with its raw values (`RLMSyncSessionState`,
// `RLMSyncConnectionState`). On Apple platforms they are Objective-C enums, so that `state` and
// `connectionState` can be `@objc dynamic` and key-value observed as in realm-swift; elsewhere the
// same enums without the attribute, which needs Objective-C interoperability.
extension SyncSession {
    #if canImport(ObjectiveC)
    /// Whether the session syncs: realm-swift's three states (see the non-Apple declaration below).
    @objc(AtollSyncSessionState)
    public enum State: UInt, Sendable {
        case active, inactive, invalid
    }

    /// The state of the connection the session uses.
    @objc(AtollSyncConnectionState)
    public enum ConnectionState: UInt, Sendable {
        case disconnected, connecting, connected
    }
    #else
    /// Whether the session syncs.
    /// realm-swift's three states, so that apps' exhaustive `switch`es compile: a session that is
    /// ending, or waiting for a new access token, is still `.active` (as realm-swift reports
    /// realm-core's dying and token states); a suspended one is `.inactive`.
    public enum State: UInt, Sendable {
        /// Syncing, or trying to (connecting, binding, reconnecting after a backoff, waiting for a
        /// new access token, ending).
        case active
        /// Not syncing: not started, suspended by `suspend()`, ended by its user logging out, or
        /// stopped by an error.
        case inactive
        /// Ended for good: its user logged out or was removed. Discard it; opening the realm
        /// again (after logging in) makes a new session.
        case invalid
    }

    /// The state of the connection the session uses.
    public enum ConnectionState: UInt, Sendable {
        case disconnected, connecting, connected
    }
    #endif
}
