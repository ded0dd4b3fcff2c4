/// A broken protocol rule: a malformed message, a bad frame, a message out of order, a version
/// mismatch. Carries the ``ServerErrorCode`` the server would answer with, so a server can send it
/// back with ``ErrorMessage/init(_:epoch:)`` and a client can report it.
///
/// ```swift
/// do { let message = try ClientMessage(decoding: bytes) }
/// catch { print(error.code, error.message) }   // malformedMessage, "upload: unexpected end …"
/// ```
package struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    package var code: ServerErrorCode
    /// What was wrong and where, in plain words (no user data beyond names and numbers).
    package var message: String
    /// The session it concerns, `nil` for the whole connection.
    package var session: SessionID?
    /// What the peer should do, when not the code's ``ServerErrorCode/defaultAction``: frames lost,
    /// repeated or reordered on the way are the network's fault, not the peer's, and a new
    /// connection (``ErrorAction/retryLater``) repairs them.
    package var action: ErrorAction?

    package init(_ code: ServerErrorCode, _ message: String, session: SessionID? = nil, action: ErrorAction? = nil) {
        self.code = code
        self.message = message
        self.session = session
        self.action = action
    }

    /// A frame lost, repeated or out of order on the way: the connection is closed and a new one
    /// carries on from where the peers' versions say.
    static func inTransit(_ message: String) -> ProtocolError {
        ProtocolError(.badFrame, message, action: .retryLater)
    }

    package var description: String {
        let scope = session.map { "session \($0.rawValue)" } ?? "connection"
        return "Protocol error \(code.rawValue) (\(code)) on \(scope): \(message)"
    }
}
