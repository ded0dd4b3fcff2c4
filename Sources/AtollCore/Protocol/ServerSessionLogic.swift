/// The server's view of one session's message order: bind, then ident, then uploads, marks and
/// query changes, until unbind. Pure; the server shell owns one per bound session.
public struct ServerSessionLogic: Sendable, Hashable {
    public enum State: Hashable, Sendable {
        /// Bind received; ident expected next.
        case bound
        /// Ident received: uploads, marks and query changes are allowed.
        case identified
    }

    public let id: SessionID
    public let target: SyncTarget
    public private(set) var state: State = .bound
    /// The highest client version uploaded in this session.
    public private(set) var lastClientVersion: Int64 = 0
    /// The server version the client said it integrated in its ident.
    public private(set) var identServerVersion: Int64 = 0
    public private(set) var querySetVersion: Int64 = 0
    /// Whether a query change arrived in this session (the first may repeat the ident's version).
    private var hasQueryChange = false
    /// Flexible sync: whether the held objects arrived.
    private var hasHeldObjects = false

    public init(bind: Bind) {
        id = bind.session
        target = bind.target
    }

    /// Checks one session message against the order rules.
    ///
    /// - Throws: ``ProtocolError`` with ``ServerErrorCode/messageOutOfOrder`` (ident twice, upload
    ///   before ident, query change on partition sync, …) or ``ServerErrorCode/badClientVersion``
    ///   (client versions that do not increase) or ``ServerErrorCode/badServerVersion``.
    public mutating func validate(_ message: ClientMessage) throws(ProtocolError) {
        switch message {
        case .hello, .ping, .bind:
            throw error(.messageOutOfOrder, "\(message.kindName) is not a session message")
        case .ident(let ident):
            guard state == .bound else { throw error(.messageOutOfOrder, "second ident") }
            guard ident.lastServerVersion >= 0 else { throw error(.badServerVersion, "negative server version \(ident.lastServerVersion)") }
            identServerVersion = ident.lastServerVersion
            querySetVersion = ident.querySetVersion
            state = .identified
        case .upload(let upload):
            guard state == .identified else { throw error(.messageOutOfOrder, "upload before ident") }
            // Versions increase within an upload. An upload may start again below the last version
            // seen: re-sending the pending changesets is idempotent (docs/merge.md), the store
            // integrates each client version once.
            var previous: Int64 = 0
            for c in upload.changesets {
                guard c.clientVersion > previous else {
                    throw error(.badClientVersion, "client version \(c.clientVersion) after \(previous) in one upload")
                }
                guard c.lastServerVersion >= 0 else {
                    throw error(.badServerVersion, "negative base server version \(c.lastServerVersion)")
                }
                previous = c.clientVersion
                lastClientVersion = max(lastClientVersion, c.clientVersion)
            }
        case .mark:
            guard state == .identified else { throw error(.messageOutOfOrder, "mark before ident") }
        case .queryChange(let change):
            guard target == .flexible else { throw error(.messageOutOfOrder, "query change on a partition-sync session") }
            guard state == .identified, hasHeldObjects else { throw error(.messageOutOfOrder, "query change before ident and held objects") }
            // After a reconnect the client sends its newest set again, which may be the one its
            // ident names; within the session versions increase.
            guard change.querySetVersion > querySetVersion || (!hasQueryChange && change.querySetVersion >= querySetVersion) else {
                throw error(.messageOutOfOrder, "query set version \(change.querySetVersion) after \(querySetVersion)")
            }
            hasQueryChange = true
            querySetVersion = change.querySetVersion
        case .heldObjects:
            guard target == .flexible else { throw error(.messageOutOfOrder, "held objects on a partition-sync session") }
            guard state == .identified, !hasHeldObjects else { throw error(.messageOutOfOrder, "held objects not right after ident") }
            hasHeldObjects = true
        case .refreshAccessToken:
            break
        case .unbind:
            break
        }
    }

    private func error(_ code: ServerErrorCode, _ message: String) -> ProtocolError {
        ProtocolError(code, message, session: id)
    }
}

/// The server's view of one connection: hello first and once, then session messages for bound
/// sessions only. Pure; the server shell owns one per WebSocket.
///
/// ```swift
/// var logic = ServerConnectionLogic()
/// do { try logic.validate(message) } catch { send(.error(ErrorMessage(error))) }
/// ```
public struct ServerConnectionLogic: Sendable {
    public let supportedVersions: ClosedRange<UInt32>
    /// The version agreed by hello, `nil` before it.
    public private(set) var version: UInt32?
    public private(set) var sessions: [SessionID: ServerSessionLogic] = [:]

    public init(supportedVersions: ClosedRange<UInt32> = ProtocolVersion.supported) {
        self.supportedVersions = supportedVersions
    }

    /// Checks a message against the order rules and records its effect (a bound or unbound session,
    /// an agreed version).
    ///
    /// - Throws: ``ProtocolError``: ``ServerErrorCode/unsupportedProtocolVersion``,
    ///   ``ServerErrorCode/messageOutOfOrder`` (anything before hello, a second hello),
    ///   ``ServerErrorCode/unknownSession``, ``ServerErrorCode/sessionAlreadyBound``, or what
    ///   ``ServerSessionLogic/validate(_:)`` throws.
    public mutating func validate(_ message: ClientMessage) throws(ProtocolError) {
        if case .hello(let hello) = message {
            guard version == nil else { throw ProtocolError(.messageOutOfOrder, "second hello") }
            version = try ProtocolVersion.negotiate(offered: hello.versions, supported: supportedVersions)
            return
        }
        guard version != nil else { throw ProtocolError(.messageOutOfOrder, "\(message.kindName) before hello") }
        switch message {
        case .hello, .ping:
            return
        case .bind(let bind):
            guard sessions[bind.session] == nil else {
                throw ProtocolError(.sessionAlreadyBound, "session \(bind.session.rawValue) is already bound", session: bind.session)
            }
            sessions[bind.session] = ServerSessionLogic(bind: bind)
        case .unbind(let id):
            guard sessions.removeValue(forKey: id) != nil else {
                throw ProtocolError(.unknownSession, "unbind of session \(id.rawValue) that is not bound", session: id)
            }
        default:
            guard let id = message.session, var session = sessions[id] else {
                let id = message.session
                throw ProtocolError(.unknownSession, "\(message.kindName) for session \(id?.rawValue ?? 0) that is not bound", session: id)
            }
            try session.validate(message)
            sessions[id] = session
        }
    }

    /// The server ended a session itself (after a session error or a reset required answer).
    public mutating func endSession(_ id: SessionID) { sessions[id] = nil }
}

extension ClientMessage {
    /// The message's kind, for error texts.
    var kindName: String {
        switch self {
        case .hello: "hello"
        case .bind: "bind"
        case .ident: "ident"
        case .upload: "upload"
        case .mark: "mark"
        case .queryChange: "query change"
        case .refreshAccessToken: "refresh access token"
        case .unbind: "unbind"
        case .ping: "ping"
        case .heldObjects: "held objects"
        }
    }
}
