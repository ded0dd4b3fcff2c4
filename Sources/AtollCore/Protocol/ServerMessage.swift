import Foundation

/// A message from the server to a client. Every session message carries the server's
/// ``SyncEpoch`` for that realm, so a client notices a terminated or restored history on any answer.
package enum ServerMessage: Hashable, Sendable {
    /// Answers ``ClientMessage/hello(_:)`` with the version chosen (a mismatch is an ``error(_:)``).
    case hello(ServerHello)
    /// Answers ``ClientMessage/ident(_:)``: the session is active from here on.
    case identAnswer(IdentAnswer)
    /// Answers ``ClientMessage/ident(_:)`` when the server cannot sync with the client's copy.
    case resetRequired(ResetRequired)
    /// The server integrated every changeset up to a client version.
    case uploadAck(UploadAck)
    /// Server changesets the client has not integrated yet, with progress.
    case download(Download)
    /// Answers ``ClientMessage/mark(_:)`` once every change before it has been sent.
    case markAnswer(MarkAnswer)
    /// The server refused a flexible-sync query set.
    case queryError(QuerySetError)
    /// Answers ``ClientMessage/unbind(_:)``; the session id is free again.
    case unbound(Unbound)
    /// Answers ``ClientMessage/ping(_:)``.
    case pong(Pong)
    /// An error for one session or the whole connection, with what to do about it.
    case error(ErrorMessage)

    /// The session the message belongs to, `nil` for connection messages.
    package var session: SessionID? {
        switch self {
        case .hello, .pong: nil
        case .identAnswer(let m): m.session
        case .resetRequired(let m): m.session
        case .uploadAck(let m): m.session
        case .download(let m): m.session
        case .markAnswer(let m): m.session
        case .queryError(let m): m.session
        case .unbound(let m): m.session
        case .error(let m): m.session
        }
    }

    /// The server's epoch for the session's realm, `nil` for connection messages.
    package var epoch: SyncEpoch? {
        switch self {
        case .hello, .pong: nil
        case .identAnswer(let m): m.epoch
        case .resetRequired(let m): m.epoch
        case .uploadAck(let m): m.epoch
        case .download(let m): m.epoch
        case .markAnswer(let m): m.epoch
        case .queryError(let m): m.epoch
        case .unbound(let m): m.epoch
        case .error(let m): m.session == nil ? nil : m.epoch
        }
    }
}

package struct ServerHello: Hashable, Sendable {
    /// The protocol version both sides speak from now on.
    package var version: UInt32
    /// Free text naming the server, for client logs.
    package var serverName: String
    package init(version: UInt32, serverName: String) {
        self.version = version
        self.serverName = serverName
    }
}

package struct IdentAnswer: Hashable, Sendable {
    package var session: SessionID
    package var epoch: SyncEpoch
    /// The client's ident: the one it sent, or a new one when it sent ``FileIdent/unassigned``.
    package var fileIdent: FileIdent
    /// The latest server version of the realm's history.
    package var latestServerVersion: Int64
    package init(session: SessionID, epoch: SyncEpoch, fileIdent: FileIdent, latestServerVersion: Int64) {
        self.session = session
        self.epoch = epoch
        self.fileIdent = fileIdent
        self.latestServerVersion = latestServerVersion
    }
}

/// Why the server cannot sync with a client's copy any more.
package enum ResetReason: UInt8, Hashable, Sendable, CaseIterable {
    /// Sync was terminated and enabled again: the client's epoch is not the server's.
    case epochChanged = 1
    /// History was restored from a backup older than what the client integrated, or the client's
    /// copy went back in time (its file restored from a backup, commits lost in a power loss).
    case historyRestored = 2
    /// The client was offline longer than the server keeps history.
    case historyCompacted = 3
    /// The server does not know the client's file ident.
    case unknownFileIdent = 4
    /// The server's schema changed in a way the client's copy cannot follow.
    case breakingSchemaChange = 5
}

package struct ResetRequired: Hashable, Sendable {
    package var session: SessionID
    package var epoch: SyncEpoch
    package var reason: ResetReason
    /// Whether the server accepts recovered changes (client recovery on).
    package var recoveryAllowed: Bool
    package var message: String
    package init(session: SessionID, epoch: SyncEpoch, reason: ResetReason, recoveryAllowed: Bool, message: String) {
        self.session = session
        self.epoch = epoch
        self.reason = reason
        self.recoveryAllowed = recoveryAllowed
        self.message = message
    }
}

package struct UploadAck: Hashable, Sendable {
    package var session: SessionID
    package var epoch: SyncEpoch
    /// Every uploaded changeset with a client version up to this one is integrated.
    package var clientVersion: Int64
    /// The server version after integrating them.
    package var serverVersion: Int64
    package init(session: SessionID, epoch: SyncEpoch, clientVersion: Int64, serverVersion: Int64) {
        self.session = session
        self.epoch = epoch
        self.clientVersion = clientVersion
        self.serverVersion = serverVersion
    }
}

/// One server changeset as downloaded.
package struct DownloadChangeset: Hashable, Sendable {
    /// The server version this changeset produced.
    package var serverVersion: Int64
    /// The file ident of the client that made it (0: made by the server).
    package var originFileIdent: Int64
    /// When its author committed it (milliseconds since 1970), for last-writer-wins.
    package var originTimestamp: Int64
    /// The last of the receiving client's own versions the server had integrated before this
    /// changeset: the client's local changes after it are concurrent with it.
    package var lastClientVersion: Int64
    package var changeset: Changeset
    /// The changeset's encoding when it is known (read off the wire, or encoded once by the
    /// sender to size its messages), so it is not encoded again. Not part of equality.
    package var encodedChangeset: Data?

    package init(serverVersion: Int64, originFileIdent: Int64, originTimestamp: Int64, lastClientVersion: Int64, changeset: Changeset,
                encodedChangeset: Data? = nil) {
        self.serverVersion = serverVersion
        self.originFileIdent = originFileIdent
        self.originTimestamp = originTimestamp
        self.lastClientVersion = lastClientVersion
        self.changeset = changeset
        self.encodedChangeset = encodedChangeset
    }

    /// The size of the changeset's encoding.
    package var encodedSize: Int { encodedChangeset?.count ?? changeset.encoded().count }

    package static func == (a: Self, b: Self) -> Bool {
        a.serverVersion == b.serverVersion && a.originFileIdent == b.originFileIdent && a.originTimestamp == b.originTimestamp
            && a.lastClientVersion == b.lastClientVersion && a.changeset == b.changeset
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(serverVersion)
        hasher.combine(originFileIdent)
        hasher.combine(changeset)
    }
}

package struct DownloadProgress: Hashable, Sendable {
    /// The server version the client is at once it integrated this message (with the rest of its
    /// batch): the message holds every changeset up to it that the client has not seen, the
    /// client's own included (their return is the acknowledgement, docs/merge.md).
    package var serverVersion: Int64
    /// The newest server version when the message was sent.
    package var latestServerVersion: Int64
    /// Encoded bytes still to download after this message (an estimate).
    package var downloadableBytes: UInt64
    package init(serverVersion: Int64, latestServerVersion: Int64, downloadableBytes: UInt64) {
        self.serverVersion = serverVersion
        self.latestServerVersion = latestServerVersion
        self.downloadableBytes = downloadableBytes
    }
}

package struct Download: Hashable, Sendable {
    package var session: SessionID
    package var epoch: SyncEpoch
    /// In increasing server version order, all after the client's last integrated version.
    package var changesets: [DownloadChangeset]
    package var progress: DownloadProgress
    /// Flexible sync: the query set version these changesets belong to (0 for partition sync).
    package var querySetVersion: Int64
    /// `false` while a bootstrap continues in further messages: integrate them together.
    package var isLastInBatch: Bool
    package init(session: SessionID, epoch: SyncEpoch, changesets: [DownloadChangeset], progress: DownloadProgress,
                querySetVersion: Int64 = 0, isLastInBatch: Bool = true)
    {
        self.session = session
        self.epoch = epoch
        self.changesets = changesets
        self.progress = progress
        self.querySetVersion = querySetVersion
        self.isLastInBatch = isLastInBatch
    }
}

package struct MarkAnswer: Hashable, Sendable {
    package var session: SessionID
    package var epoch: SyncEpoch
    package var requestID: UInt64
    /// The server version every change before the mark reached.
    package var serverVersion: Int64
    package init(session: SessionID, epoch: SyncEpoch, requestID: UInt64, serverVersion: Int64) {
        self.session = session
        self.epoch = epoch
        self.requestID = requestID
        self.serverVersion = serverVersion
    }
}

package struct QuerySetError: Hashable, Sendable {
    package var session: SessionID
    package var epoch: SyncEpoch
    /// The refused query set.
    package var querySetVersion: Int64
    package var message: String
    package init(session: SessionID, epoch: SyncEpoch, querySetVersion: Int64, message: String) {
        self.session = session
        self.epoch = epoch
        self.querySetVersion = querySetVersion
        self.message = message
    }
}

package struct Unbound: Hashable, Sendable {
    package var session: SessionID
    package var epoch: SyncEpoch
    package init(session: SessionID, epoch: SyncEpoch) {
        self.session = session
        self.epoch = epoch
    }
}

package struct Pong: Hashable, Sendable {
    /// The ping's timestamp, echoed.
    package var timestamp: Int64
    package init(timestamp: Int64) { self.timestamp = timestamp }
}

/// An object the server reverted, as listed by a compensating write error.
package struct CompensatingWrite: Hashable, Sendable {
    package var objectType: String
    package var primaryKey: Value
    package var reason: String
    package init(objectType: String, primaryKey: Value, reason: String) {
        self.objectType = objectType
        self.primaryKey = primaryKey
        self.reason = reason
    }
}

package struct ErrorMessage: Hashable, Sendable {
    package var code: ServerErrorCode
    package var message: String
    package var action: ErrorAction
    /// With ``ErrorAction/retryLater``: wait at least this long before reconnecting (0: use the backoff).
    package var tryAgainAfterMilliseconds: Int64
    /// The session concerned, `nil` for the whole connection (the server then closes it).
    package var session: SessionID?
    /// The server's epoch for the session's realm (``SyncEpoch/none`` for connection errors).
    package var epoch: SyncEpoch
    /// With ``ServerErrorCode/compensatingWrite``: the objects reverted.
    package var compensatingWrites: [CompensatingWrite]

    package init(code: ServerErrorCode, message: String, action: ErrorAction? = nil, tryAgainAfterMilliseconds: Int64 = 0,
                session: SessionID? = nil, epoch: SyncEpoch = .none, compensatingWrites: [CompensatingWrite] = [])
    {
        self.code = code
        self.message = message
        self.action = action ?? code.defaultAction
        self.tryAgainAfterMilliseconds = tryAgainAfterMilliseconds
        self.session = session
        self.epoch = epoch
        self.compensatingWrites = compensatingWrites
    }

    /// The error a server sends back for a broken protocol rule.
    package init(_ error: ProtocolError, epoch: SyncEpoch = .none) {
        self.init(code: error.code, message: error.message, action: error.action, session: error.session, epoch: epoch)
    }
}
