import AtollCore

/// One generated sync session, as a state machine with no I/O: it says what to send and reads what
/// the server answers (docs/protocol.md §2.2). A connection holds many; each costs about a hundred
/// bytes plus eight per write in flight.
///
/// ```swift
/// var session = LoadSession(id: 1, index: 0, realm: .string("load-0"), sharesRealm: true)
/// send(session.bind(accessToken: token))          // bind and ident together
/// let outcome = session.receive(message)          // identAnswer → active
/// if let upload = session.write(due: t) { send(upload) }
/// ```
package struct LoadSession: Sendable {
    package enum State: Hashable, Sendable {
        /// Not bound yet.
        case idle
        /// `bind` and `ident` sent, no answer yet.
        case binding
        /// Identified: uploads and downloads flow.
        case active
        /// The server ended the session (an error, a reset); the reason.
        case failed(String)
    }

    /// What one server message did.
    package struct Outcome: Hashable, Sendable {
        /// The session became active.
        package var identified = false
        /// Due times of this session's writes the server acknowledged with this message.
        package var acknowledged: [UInt64] = []
        /// Other sessions' writes this message downloaded.
        package var downloaded: [LoadWrite] = []
        /// Downloaded changesets that were no generated write (another client's data).
        package var foreign = 0
        /// Why the session failed with this message.
        package var failure: String?
        package init() {}
    }

    package let id: SessionID
    /// The session's index in the whole run (its writes carry it).
    package let index: Int
    package let realm: PartitionValue
    /// Whether other sessions write to the realm too: uploads then carry every write not yet seen
    /// back in a download, as the SDK's pending changesets do (the server refuses an upload that
    /// skips one of the client's own changesets when another client's entry sits before it).
    package let sharesRealm: Bool
    /// Milliseconds since 1970 at the generator's clock zero: a write's commit time is this plus
    /// its due time, so a re-sent write keeps its timestamp.
    package let timestampBase: Int64
    /// Payload bytes added to each write.
    package let padding: Int

    package private(set) var state: State = .idle
    package private(set) var fileIdent = FileIdent.unassigned
    package private(set) var epoch = SyncEpoch.none
    /// The newest server version downloaded (what uploads are based on).
    package private(set) var serverVersion: Int64 = 0
    /// The client version of the newest write.
    package private(set) var lastVersion: Int64 = 0
    /// Every write up to this client version is acknowledged (`uploadAck`).
    package private(set) var acknowledgedVersion: Int64 = 0
    /// Every own write up to this client version came back in a download.
    package private(set) var echoedVersion: Int64 = 0
    /// Due times of the writes from client version ``firstPendingVersion`` on: not yet both
    /// acknowledged and seen back.
    private var pendingDue: [UInt64] = []
    private var pendingStart = 0
    package private(set) var firstPendingVersion: Int64 = 1

    package init(id: SessionID, index: Int, realm: PartitionValue, sharesRealm: Bool, timestampBase: Int64 = 0, padding: Int = 0) {
        self.id = id
        self.index = index
        self.realm = realm
        self.sharesRealm = sharesRealm
        self.timestampBase = timestampBase
        self.padding = padding
    }

    package var isActive: Bool { state == .active }

    /// Writes sent and not yet acknowledged.
    package var inFlight: Int { Int(lastVersion - acknowledgedVersion) }

    /// `bind` and `ident` of a new client file (the client does not wait between the two).
    package mutating func bind(accessToken: String) -> [ClientMessage] {
        state = .binding
        return [
            .bind(Bind(session: id, target: .partition(realm), accessToken: accessToken)),
            .ident(Ident(session: id, fileIdent: fileIdent, lastServerVersion: serverVersion, epoch: epoch)),
        ]
    }

    /// Commits a write and returns the upload carrying it; nil (nothing written) unless active.
    package mutating func write(due: UInt64) -> ClientMessage? {
        guard state == .active else { return nil }
        lastVersion += 1
        pendingDue.append(due)
        let first = sharesRealm ? max(echoedVersion + 1, firstPendingVersion) : lastVersion
        var changesets: [UploadChangeset] = []
        changesets.reserveCapacity(Int(lastVersion - first + 1))
        for version in first...lastVersion {
            let due = pendingDue[pendingStart + Int(version - firstPendingVersion)]
            changesets.append(UploadChangeset(changeset(version: version, due: due), lastServerVersion: serverVersion))
        }
        return .upload(Upload(session: id, changesets: changesets))
    }

    /// The changeset of client version `version`, due at `due`: the same bytes every time it is sent.
    func changeset(version: Int64, due: UInt64) -> Changeset {
        // Client version v is the session's (v − 1)-th write: ordinals count across phases too.
        LoadWrite(writer: index, ordinal: Int(version - 1), due: due)
            .changeset(version: version, isFirst: version == 1, padding: padding, timestamp: timestampBase + Int64(due / 1_000_000))
    }

    /// Takes one server message for this session.
    package mutating func receive(_ message: ServerMessage) -> Outcome {
        var outcome = Outcome()
        switch state {
        case .active: return receiveActive(message)
        case .binding: break
        case .idle, .failed: return outcome  // late messages of a failed session are dropped
        }
        switch message {
        case .identAnswer(let answer):
            fileIdent = answer.fileIdent
            epoch = answer.epoch
            state = .active
            outcome.identified = true
        case .resetRequired(let reset):
            fail("reset required (reason \(reset.reason.rawValue)): \(reset.message)", &outcome)
        case .error(let error) where error.action != .warning:
            fail("error \(error.code.rawValue) before ident: \(error.message)", &outcome)
        default:
            break
        }
        return outcome
    }

    private mutating func receiveActive(_ message: ServerMessage) -> Outcome {
        var outcome = Outcome()
        if let serverEpoch = message.epoch, serverEpoch != epoch {
            fail("the server's epoch changed", &outcome)
            return outcome
        }
        switch message {
        case .uploadAck(let ack):
            guard ack.clientVersion <= lastVersion else {
                fail("acknowledged client version \(ack.clientVersion), newest written is \(lastVersion)", &outcome)
                return outcome
            }
            while acknowledgedVersion < ack.clientVersion {
                acknowledgedVersion += 1
                outcome.acknowledged.append(pendingDue[pendingStart + Int(acknowledgedVersion - firstPendingVersion)])
            }
        case .download(let download):
            for entry in download.changesets {
                if entry.originFileIdent == fileIdent.ident {
                    echoedVersion = max(echoedVersion, min(entry.changeset.version, lastVersion))
                } else if let write = LoadWrite(decoding: entry.changeset) {
                    outcome.downloaded.append(write)
                } else {
                    outcome.foreign += 1
                }
            }
            serverVersion = max(serverVersion, download.progress.serverVersion)
        case .resetRequired(let reset):
            fail("reset required (reason \(reset.reason.rawValue)): \(reset.message)", &outcome)
        case .error(let error) where error.action != .warning:
            fail("error \(error.code.rawValue): \(error.message)", &outcome)
        default:
            break
        }
        trimPending()
        return outcome
    }

    /// Forgets the due times of writes both acknowledged and seen back.
    private mutating func trimPending() {
        let settled = min(acknowledgedVersion, sharesRealm ? echoedVersion : acknowledgedVersion)
        while firstPendingVersion <= settled, pendingStart < pendingDue.count {
            pendingStart += 1
            firstPendingVersion += 1
        }
        if pendingStart > 32, pendingStart * 2 > pendingDue.count {
            pendingDue.removeFirst(pendingStart)
            pendingStart = 0
        }
    }

    /// The connection closed or failed under the session.
    package mutating func connectionLost(_ reason: String) {
        if case .failed = state { return }
        state = .failed(reason)
    }

    private mutating func fail(_ reason: String, _ outcome: inout Outcome) {
        state = .failed(reason)
        outcome.failure = reason
    }
}
