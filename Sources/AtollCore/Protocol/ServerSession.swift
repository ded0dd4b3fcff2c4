import Foundation

/// One bound session as the server sees it, and every decision about it that needs nothing but
/// what the session said and what the server told it (docs/protocol.md §2). Pure: the server's
/// shell (`SyncConnection`) feeds in messages and facts it read from the store, carries out what
/// comes back, and keeps only resources here (the realm, the user's rules, a timer).
///
/// - The order of its messages: bind, then ident, then uploads, marks and query changes, until
///   unbind (``validate(_:)``).
/// - What the server told the client: its client file, the cursor of its downloads and its own
///   client versions at or before it (``accept(file:ownClientVersion:)``, ``delivered(_:ownClientVersion:)``).
/// - Its access token's expiry (``tokenExpires``, ``isTokenExpired(now:)``).
/// - An upload's shape before the store sees it (``prepare(_:flexible:epoch:)``), and the answer
///   to a refused one (``answer(to:session:epoch:)``).
/// - When the client file is recorded as seen (``recordsSeen(now:integrated:fromUpload:)``).
package struct ServerSession: Sendable, Hashable {
    package enum State: Hashable, Sendable {
        /// Bind received; ident expected next.
        case bound
        /// Ident received: uploads, marks and query changes are allowed.
        case identified
    }

    package let id: SessionID
    package let target: SyncTarget
    package private(set) var state: State = .bound
    /// The highest client version uploaded in this session.
    package private(set) var lastClientVersion: Int64 = 0
    /// The server version the client said it integrated in its ident.
    package private(set) var identServerVersion: Int64 = 0
    package private(set) var querySetVersion: Int64 = 0
    /// Whether a query change arrived in this session (the first may repeat the ident's version).
    private var hasQueryChange = false
    /// Flexible sync: whether the held objects arrived.
    private var hasHeldObjects = false

    /// The client file, once the ident is accepted.
    package private(set) var file: FileIdent = .unassigned
    /// The newest server version sent to the client (or that it had at ident).
    package private(set) var cursor: Int64 = 0
    /// The newest of the client's own client versions at or before ``cursor``.
    package private(set) var lastOwnClientVersion: Int64 = 0
    /// The newest of the client's own client versions at or before the server version its ident
    /// named: uploads at or below it are re-sent duplicates.
    package private(set) var settledClientVersion: Int64 = 0
    /// When the session's access token expires; the session ends then unless it is refreshed.
    package var tokenExpires: Date = .distantFuture
    /// When the client file was last recorded as seen, and when an upload last recorded what the
    /// client had integrated.
    private var lastSeenRecorded: Date = .distantPast
    private var lastIntegratedRecorded: Date = .distantPast

    package init(bind: Bind) {
        id = bind.session
        target = bind.target
    }

    // MARK: Order

    /// Checks one session message against the order rules.
    ///
    /// - Throws: ``ProtocolError`` with ``ServerErrorCode/messageOutOfOrder`` (ident twice, upload
    ///   before ident, query change on partition sync, …) or ``ServerErrorCode/badClientVersion``
    ///   (client versions that do not increase) or ``ServerErrorCode/badServerVersion``.
    package mutating func validate(_ message: ClientMessage) throws(ProtocolError) {
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

    // MARK: What the server told the client

    /// The ident was accepted with client file `file`; the client's own newest client version at
    /// or before the server version it named is `ownClientVersion`: downloads start after that
    /// server version, and uploads at or below `ownClientVersion` are duplicates.
    package mutating func accept(file: FileIdent, ownClientVersion: Int64) {
        self.file = file
        cursor = identServerVersion
        lastOwnClientVersion = ownClientVersion
        settledClientVersion = ownClientVersion
    }

    /// A download carried history up to `serverVersion`; `ownClientVersion` is the newest of the
    /// client's own changesets in it, if any.
    package mutating func delivered(_ serverVersion: Int64, ownClientVersion: Int64?) {
        cursor = max(cursor, serverVersion)
        if let ownClientVersion { lastOwnClientVersion = max(lastOwnClientVersion, ownClientVersion) }
    }

    /// A flexible-sync catch-up moved the client to `serverVersion` (a view change may also move
    /// it without history).
    package mutating func caughtUp(to serverVersion: Int64) {
        cursor = max(cursor, serverVersion)
    }

    package func isTokenExpired(now: Date) -> Bool { tokenExpires <= now }

    // MARK: Uploads

    /// What an upload becomes before the store sees it: its changesets stamped with the client's
    /// file, on their shared base; or the error that ends the session: the changesets of one upload
    /// must share one base (the client's current server version), and asymmetric types need
    /// flexible sync (a partition's realm is downloaded whole; their objects must never be).
    package func prepare(_ upload: Upload, flexible: Bool, epoch: SyncEpoch) -> UploadPreparation {
        guard let first = upload.changesets.first else {
            return .ready(PreparedUpload(base: identServerVersion, changesets: [], lastClientVersion: 0))
        }
        let base = first.lastServerVersion
        guard upload.changesets.allSatisfy({ $0.lastServerVersion == base }) else {
            return .refused(ErrorMessage(
                code: .badChangeset,
                message: "the changesets of one upload must share one last server version (the client's current one), rebased on it; see docs/merge.md",
                session: id, epoch: epoch))
        }
        let changesets = upload.changesets.map { uploaded in
            var changeset = uploaded.changeset
            changeset.fileIdent = file.ident
            return changeset
        }
        if !flexible, let asymmetric = changesets.lazy.flatMap(\.instructions).compactMap({ instruction -> String? in
            if case .addTable(let table) = instruction, table.isAsymmetric { return table.name }
            return nil
        }).first {
            return .refused(ErrorMessage(
                code: .badChangeset,
                message: "asymmetric type \(asymmetric) is not allowed in partition-based sync; open it in a flexible-sync realm",
                session: id, epoch: epoch))
        }
        return .ready(PreparedUpload(base: base, changesets: changesets, lastClientVersion: upload.changesets[upload.changesets.count - 1].clientVersion))
    }

    /// The error a refused upload gets.
    package static func answer(to error: MergeError, session: SessionID, epoch: SyncEpoch) -> ErrorMessage {
        switch error.code {
        case .badBaseVersion:
            ErrorMessage(code: .badServerVersion, message: error.message, session: session, epoch: epoch)
        case .nonIncreasingClientVersions:
            ErrorMessage(code: .badClientVersion, message: error.message, session: session, epoch: epoch)
        case .missingOwnChangeset:
            // The client must download its own changeset first; binding again does that.
            ErrorMessage(code: .badChangeset, message: error.message, action: .retryLater, session: session, epoch: epoch)
        case .schemaViolation, .invalidInstruction, .clientHistoryDiverged:
            // Sending it again cannot help: the session stops (the SDK reports clientSessionError).
            ErrorMessage(code: .badChangeset, message: error.message, session: session, epoch: epoch)
        }
    }

    // MARK: Seen

    /// Whether to record the session's client file as seen now: always when it says what the
    /// client `integrated` at an ident, at most every 10 s from uploads (each would otherwise
    /// cost a committed write; a value recorded late only makes compaction keep more), else at
    /// most once a minute (downloads ask often). Never before the file is assigned.
    package mutating func recordsSeen(now: Date, integrated: Bool, fromUpload: Bool = false) -> Bool {
        guard file.isAssigned else { return false }
        if fromUpload {
            guard now.timeIntervalSince(lastIntegratedRecorded) > 10 else { return false }
            lastIntegratedRecorded = now
        }
        guard integrated || now.timeIntervalSince(lastSeenRecorded) > 60 else { return false }
        lastSeenRecorded = now
        return true
    }

    private func error(_ code: ServerErrorCode, _ message: String) -> ProtocolError {
        ProtocolError(code, message, session: id)
    }
}

/// The server's view of one connection: hello first and once, then session messages for bound
/// sessions only; and the sessions the server ended, whose late messages it drops. Pure; the
/// server shell owns one per WebSocket.
///
/// ```swift
/// var logic = ServerConnectionLogic()
/// switch logic.receive(message) {
/// case .handle: …                        // carry the message out
/// case .refuse(let error): …             // a connection error, or the end of error.session
/// …
/// }
/// ```
package struct ServerConnectionLogic: Sendable {
    /// What the server does with a message (``receive(_:)``).
    package enum Disposition: Sendable, Equatable {
        /// Carry it out (a session's record is in ``sessions``).
        case handle
        /// The client unbound a session: its record, for the server to let go of what it holds.
        case unbound(ServerSession)
        /// Drop it: the rest of what the client sent before it saw the server end the session.
        case drop
        /// Answer the unbind of a session the server ended with `unbound` in that epoch.
        case answerUnbound(SyncEpoch)
        /// Refuse it: a connection error when the error names no session, else that session ends.
        case refuse(ProtocolError)
    }

    package let supportedVersions: ClosedRange<UInt32>
    /// The version agreed by hello, `nil` before it.
    package private(set) var version: UInt32?
    /// The bound sessions: the one record of each.
    package internal(set) var sessions: [SessionID: ServerSession] = [:]
    /// The sessions the server ended (an error, a reset), with the epoch their unbind is answered
    /// with, until the client binds the id again or unbinds it.
    package private(set) var ended: EndedSessions

    package init(supportedVersions: ClosedRange<UInt32> = ProtocolVersion.supported, maxEndedSessions: Int = 100) {
        self.supportedVersions = supportedVersions
        ended = EndedSessions(capacity: maxEndedSessions)
    }

    /// What to do with `message`, its effect recorded (a bound or unbound session, an agreed
    /// version, a session's order state).
    package mutating func receive(_ message: ClientMessage) -> Disposition {
        if let id = message.session, let epoch = ended.epoch(of: id) {
            switch message {
            case .bind: ended.forget(id)
            case .unbind:
                ended.forget(id)
                return .answerUnbound(epoch)
            default: return .drop
            }
        }
        if case .unbind(let id) = message, let session = sessions[id] {
            sessions[id] = nil
            return .unbound(session)
        }
        do {
            try validate(message)
        } catch {
            return .refuse(error)
        }
        return .handle
    }

    /// Checks a message against the order rules and records its effect (a bound or unbound session,
    /// an agreed version).
    ///
    /// - Throws: ``ProtocolError``: ``ServerErrorCode/unsupportedProtocolVersion``,
    ///   ``ServerErrorCode/messageOutOfOrder`` (anything before hello, a second hello),
    ///   ``ServerErrorCode/unknownSession``, ``ServerErrorCode/sessionAlreadyBound``, or what
    ///   ``ServerSession/validate(_:)`` throws.
    package mutating func validate(_ message: ClientMessage) throws(ProtocolError) {
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
            sessions[bind.session] = ServerSession(bind: bind)
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

    /// The server ended session `id` itself (a session error, a reset required): its late
    /// messages are dropped until the client binds it again or unbinds it (answered in `epoch`).
    /// An id that was not bound leaves nothing behind. Returns its record.
    @discardableResult
    package mutating func endSession(_ id: SessionID, epoch: SyncEpoch) -> ServerSession? {
        guard let session = sessions.removeValue(forKey: id) else { return nil }
        ended.record(id, epoch: epoch)
        return session
    }

    /// Changes the record of bound session `id` (the shell's facts: an accepted ident, a download).
    package mutating func update<R>(_ id: SessionID, _ change: (inout ServerSession) -> R) -> R? {
        guard var session = sessions[id] else { return nil }
        defer { sessions[id] = session }
        return change(&session)
    }
}

/// The sessions a connection ended, with the epoch their unbind is answered with: at most
/// `capacity` (the sessions a connection may bind), the oldest forgotten first, so a flood of
/// refused binds cannot grow it. A forgotten id's late messages get `unknownSession`.
package struct EndedSessions: Sendable, Equatable {
    package let capacity: Int
    private var epochs: [SessionID: SyncEpoch] = [:]
    /// The ids of ``epochs``, oldest first (a few dozen: linear work is fine).
    private var order: [SessionID] = []

    package init(capacity: Int) { self.capacity = max(1, capacity) }

    package var count: Int { epochs.count }

    package func epoch(of id: SessionID) -> SyncEpoch? { epochs[id] }

    package mutating func record(_ id: SessionID, epoch: SyncEpoch) {
        forget(id)
        epochs[id] = epoch
        order.append(id)
        if order.count > capacity { epochs[order.removeFirst()] = nil }
    }

    package mutating func forget(_ id: SessionID) {
        guard epochs.removeValue(forKey: id) != nil else { return }
        order.removeAll { $0 == id }
    }
}

/// What ``ServerSession/prepare(_:flexible:epoch:)`` makes of an upload.
package enum UploadPreparation: Sendable, Hashable {
    case ready(PreparedUpload)
    /// The session ends with this error.
    case refused(ErrorMessage)
}

/// An upload ready for the store (``ServerSession/prepare(_:flexible:epoch:)``).
package struct PreparedUpload: Sendable, Hashable {
    /// The server version the changesets are based on.
    package var base: Int64
    /// The changesets, stamped with the client's file.
    package var changesets: [Changeset]
    /// The last client version of the upload (what its acknowledgement names).
    package var lastClientVersion: Int64
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
