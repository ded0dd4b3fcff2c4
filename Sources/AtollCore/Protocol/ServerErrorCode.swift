/// Why the server (or a client's protocol checks) refused something, as carried by an
/// ``ErrorMessage``. Codes below 200 concern the whole connection; 200 and up concern one session.
///
/// Each code has a ``defaultAction``; the server may send another action with it (for example
/// ``retryLater`` with a delay while it is overloaded).
package enum ServerErrorCode: UInt16, Sendable, Hashable, CaseIterable {
    // Connection level.
    /// Client and server protocol version ranges do not overlap.
    case unsupportedProtocolVersion = 100
    /// A message could not be decoded.
    case malformedMessage = 101
    /// A message tag nobody knows.
    case unknownMessage = 102
    /// A message arrived in a state that does not allow it (upload before ident, …).
    case messageOutOfOrder = 103
    /// A frame's chunk header is inconsistent (wrong message id, index or count, too large).
    case badFrame = 104
    /// A message names a session that is not bound on this connection.
    case unknownSession = 105
    /// A bind reuses the id of a session still bound on this connection.
    case sessionAlreadyBound = 106
    /// The server is going down; reconnect later.
    case serverShuttingDown = 107
    /// The server is overloaded; reconnect after the delay it gives.
    case tryAgainLater = 108

    // Session level.
    /// The access token is not valid (bad signature, wrong app).
    case invalidAccessToken = 200
    /// The access token expired: refresh it and send it again.
    case accessTokenExpired = 201
    /// The user was logged out, removed or disabled on the server.
    case userLoggedOut = 202
    /// The user may not read this realm.
    case permissionDenied = 203
    /// An uploaded changeset is malformed or breaks the schema.
    case badChangeset = 204
    /// The client file ident (or its salt) is unknown to the server.
    case badClientFileIdent = 205
    /// The client claims a server version the server never produced.
    case badServerVersion = 206
    /// Client versions in an upload do not increase.
    case badClientVersion = 207
    /// The server cannot sync with the client's copy any more.
    case clientResetRequired = 208
    /// A flexible-sync query is invalid or uses a field that may not be queried.
    case badQuery = 209
    /// The server reverted writes the client may not make.
    case compensatingWrite = 210
    /// A warning the app should see (degraded mode, …); the session goes on.
    case serverWarning = 211
    /// Sync is not enabled for this app.
    case syncDisabled = 212
    /// The realm path (partition value) is malformed or not allowed.
    case badSyncTarget = 213
    /// The server's schema changed in a way the client's copy cannot follow.
    case breakingSchemaChange = 214

    /// Whether the code concerns the whole connection rather than one session.
    package var isConnectionLevel: Bool { rawValue < 200 }

    /// What a client does on this code when the server sends no other action.
    package var defaultAction: ErrorAction {
        switch self {
        case .unsupportedProtocolVersion, .malformedMessage, .unknownMessage, .messageOutOfOrder, .badFrame,
             .unknownSession, .sessionAlreadyBound, .badChangeset, .badClientVersion, .badSyncTarget:
            .protocolViolation
        case .serverShuttingDown, .tryAgainLater: .retryLater
        case .invalidAccessToken, .accessTokenExpired: .refreshAccessToken
        case .userLoggedOut: .logOut
        case .permissionDenied: .deleteRealm
        case .badClientFileIdent, .badServerVersion, .clientResetRequired, .breakingSchemaChange: .clientReset
        case .badQuery, .compensatingWrite, .serverWarning, .syncDisabled: .warning
        }
    }
}

/// What the client must do about an error the server sent.
package enum ErrorAction: UInt8, Sendable, Hashable, CaseIterable {
    /// Tell the app; the session goes on.
    case warning = 1
    /// Close the connection and reconnect after the given delay (or the backoff).
    case retryLater = 2
    /// The local copy cannot sync any more: run a client reset.
    case clientReset = 3
    /// The user may not have this realm: delete the local copy (at next start or on request).
    case deleteRealm = 4
    /// The user is no longer valid: log it out.
    case logOut = 5
    /// The peer broke the protocol; the session (or connection) stops until restarted.
    case protocolViolation = 6
    /// Refresh the access token over HTTP and send it again; not shown to the app unless that fails.
    case refreshAccessToken = 7
}
