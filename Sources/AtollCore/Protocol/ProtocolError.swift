/// A broken protocol rule: a malformed message, a bad frame, a message out of order, a version
/// mismatch. Carries the ``ServerErrorCode`` the server would answer with, so a server can send it
/// back with ``ErrorMessage/init(_:epoch:)`` and a client can report it.
///
/// ```swift
/// do { let message = try ClientMessage(decoding: bytes) }
/// catch { print(error.code, error.message) }   // malformedMessage, "upload: unexpected end …"
/// ```
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ServerErrorCode
    /// What was wrong and where, in plain words (no user data beyond names and numbers).
    public var message: String
    /// The session it concerns, `nil` for the whole connection.
    public var session: SessionID?

    public init(_ code: ServerErrorCode, _ message: String, session: SessionID? = nil) {
        self.code = code
        self.message = message
        self.session = session
    }

    public var description: String {
        let scope = session.map { "session \($0.rawValue)" } ?? "connection"
        return "Protocol error \(code.rawValue) (\(code)) on \(scope): \(message)"
    }
}
