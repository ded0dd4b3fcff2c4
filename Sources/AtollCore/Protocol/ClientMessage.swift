/// A message from a client to the server. ``hello`` and ``ping`` concern the connection; every
/// other message names the session it belongs to. See docs/protocol.md §2 for the order rules.
package enum ClientMessage: Hashable, Sendable {
    /// First message on a connection: the protocol versions the client can speak.
    case hello(ClientHello)
    /// Opens a session for one realm.
    case bind(Bind)
    /// Identifies the client's copy of the realm (sent right after ``bind``).
    case ident(Ident)
    /// Local changesets for the server to integrate.
    case upload(Upload)
    /// Asks for a ``ServerMessage/markAnswer(_:)`` once every change the server had when it read
    /// this mark has been sent: the download-complete barrier.
    case mark(Mark)
    /// Replaces the flexible-sync query set.
    case queryChange(QueryChange)
    /// A new access token for a bound session.
    case refreshAccessToken(RefreshAccessToken)
    /// Closes a session; the server answers ``ServerMessage/unbound(_:)``.
    case unbind(SessionID)
    /// Keep-alive; the server answers ``ServerMessage/pong(_:)`` with the same timestamp.
    case ping(Ping)
    /// Flexible sync: the objects the client holds, sent right after ``ident``.
    case heldObjects(HeldObjects)

    /// The session the message belongs to, `nil` for connection messages.
    package var session: SessionID? {
        switch self {
        case .hello, .ping: nil
        case .bind(let m): m.session
        case .ident(let m): m.session
        case .upload(let m): m.session
        case .mark(let m): m.session
        case .queryChange(let m): m.session
        case .refreshAccessToken(let m): m.session
        case .unbind(let s): s
        case .heldObjects(let m): m.session
        }
    }
}

package struct ClientHello: Hashable, Sendable {
    /// The protocol versions the client speaks.
    package var versions: ClosedRange<UInt32>
    /// Free text naming the SDK and platform, for server logs (`"Atoll/1.0 Linux"`).
    package var userAgent: String
    package init(versions: ClosedRange<UInt32> = ProtocolVersion.supported, userAgent: String) {
        self.versions = versions
        self.userAgent = userAgent
    }
}

package struct Bind: Hashable, Sendable {
    package var session: SessionID
    package var target: SyncTarget
    /// The user's access token (a JWT from the HTTP API).
    package var accessToken: String
    package init(session: SessionID, target: SyncTarget, accessToken: String) {
        self.session = session
        self.target = target
        self.accessToken = accessToken
    }
}

package struct Ident: Hashable, Sendable {
    package var session: SessionID
    /// ``FileIdent/unassigned`` asks the server to assign one.
    package var fileIdent: FileIdent
    /// The last server version the client integrated (0: none).
    package var lastServerVersion: Int64
    /// The epoch of the history that version belongs to (``SyncEpoch/none`` with version 0).
    package var epoch: SyncEpoch
    /// Flexible sync: the query set version the client's data reflects (0 for partition sync).
    package var querySetVersion: Int64
    package init(session: SessionID, fileIdent: FileIdent, lastServerVersion: Int64, epoch: SyncEpoch, querySetVersion: Int64 = 0) {
        self.session = session
        self.fileIdent = fileIdent
        self.lastServerVersion = lastServerVersion
        self.epoch = epoch
        self.querySetVersion = querySetVersion
    }
}

/// One local changeset as uploaded: its client version is ``Changeset/version``.
package struct UploadChangeset: Hashable, Sendable {
    package var changeset: Changeset
    /// The last server version the client had integrated when it made this changeset: the server
    /// transforms the changeset against every server changeset after it.
    package var lastServerVersion: Int64
    package init(_ changeset: Changeset, lastServerVersion: Int64) {
        self.changeset = changeset
        self.lastServerVersion = lastServerVersion
    }
    package var clientVersion: Int64 { changeset.version }
}

package struct Upload: Hashable, Sendable {
    package var session: SessionID
    /// In increasing client version order. Uploads are idempotent: a changeset whose client
    /// version the server already integrated is acknowledged again, not applied twice.
    package var changesets: [UploadChangeset]
    package init(session: SessionID, changesets: [UploadChangeset]) {
        self.session = session
        self.changesets = changesets
    }
}

package struct Mark: Hashable, Sendable {
    package var session: SessionID
    package var requestID: UInt64
    package init(session: SessionID, requestID: UInt64) {
        self.session = session
        self.requestID = requestID
    }
}

/// One subscription of a flexible-sync query set: a type and a query in the query language.
package struct TypeQuery: Hashable, Sendable {
    package var objectType: String
    /// Realm Query Language text, arguments already inlined (`"owner == 'Ann' AND done == false"`).
    package var query: String
    package init(objectType: String, query: String) {
        self.objectType = objectType
        self.query = query
    }
}

package struct QueryChange: Hashable, Sendable {
    package var session: SessionID
    /// Increases with every change of the set; the server answers errors with it.
    package var querySetVersion: Int64
    package var queries: [TypeQuery]
    package init(session: SessionID, querySetVersion: Int64, queries: [TypeQuery]) {
        self.session = session
        self.querySetVersion = querySetVersion
        self.queries = queries
    }
}

/// Flexible sync: every object of a synced type the client holds (by type and primary key), so
/// the server knows which objects its downloads must keep up to date and which to remove.
package struct HeldObjects: Hashable, Sendable {
    package var session: SessionID
    package var objects: [ObjectID]
    package init(session: SessionID, objects: [ObjectID]) {
        self.session = session
        self.objects = objects
    }
}

package struct RefreshAccessToken: Hashable, Sendable {
    package var session: SessionID
    package var accessToken: String
    package init(session: SessionID, accessToken: String) {
        self.session = session
        self.accessToken = accessToken
    }
}

package struct Ping: Hashable, Sendable {
    /// The sender's clock in milliseconds; echoed by the pong.
    package var timestamp: Int64
    /// The round trip the client measured last time, for the server's metrics (0: none yet).
    package var lastRoundTripMilliseconds: Int64
    package init(timestamp: Int64, lastRoundTripMilliseconds: Int64 = 0) {
        self.timestamp = timestamp
        self.lastRoundTripMilliseconds = lastRoundTripMilliseconds
    }
}
