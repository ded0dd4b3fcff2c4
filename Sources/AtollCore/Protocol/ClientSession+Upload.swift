extension ClientSession {
    /// A local write committed: queue its changeset for upload (sent at once when the session
    /// is active and no upload of this bind waits for its echo).
    ///
    /// Changesets must come in increasing client version order; an older version is ignored and
    /// reported as an internal error (6).
    package mutating func localChangesetCommitted(_ changeset: Changeset) -> [Action] {
        guard changeset.version > queuedClientVersion else {
            return [.reportError(SessionError(
                code: .clientInternalError,
                message: "local changeset version \(changeset.version) is not after \(queuedClientVersion)",
                action: .warning, isFatal: false))]
        }
        record(changeset)
        return [.reportProgress(uploadProgress)] + uploadsAndQuerySet()
    }

    /// Takes a committed local changeset into the pending list.
    mutating func record(_ changeset: Changeset) {
        queuedClientVersion = changeset.version
        merger.recordLocal(changeset)
        unacknowledgedSizes[changeset.version] = changeset.encoded().count
        pendingGeneration &+= 1
    }

    /// Asks to be told when everything up to now is uploaded (acknowledged) or downloaded (a mark
    /// round trip). The returned actions may already complete it.
    package mutating func wait(for direction: Direction) -> (WaitID, [Action]) {
        let wait = WaitID(rawValue: nextWaitID)
        nextWaitID += 1
        if case .failed(let error) = state { return (wait, [.failWait(wait, error)]) }
        switch direction {
        case .upload:
            uploadWaits.append((wait, queuedClientVersion))
            return (wait, completeUploadWaits())
        case .download:
            let request = nextMarkID
            nextMarkID += 1
            downloadWaits[request] = wait
            guard state == .active else { return (wait, []) }
            return (wait, [.send(.mark(Mark(session: id, requestID: request)))])
        }
    }

    /// Forgets a wait (the caller gave up, e.g. on a timeout); no action is produced for it any more.
    package mutating func cancelWait(_ wait: WaitID) {
        uploadWaits.removeAll { $0.id == wait }
        downloadWaits = downloadWaits.filter { $0.value != wait }
    }

    /// The upload progress: acknowledged bytes of all bytes committed since the session started.
    package var uploadProgress: TransferProgress {
        let pendingBytes = UInt64(unacknowledgedSizes.values.reduce(0, +))
        return TransferProgress(direction: .upload, transferredBytes: uploadedBytes, transferrableBytes: uploadedBytes + pendingBytes)
    }

    /// The upload of every pending changeset on the merger's base, when the session is active,
    /// something in it is not acknowledged yet, and nothing in it was already uploaded on this
    /// bind (its echo is on the way; the next upload follows it).
    ///
    /// An upload carries at most ``maxUploadChangesets`` changesets and about ``maxUploadBytes``
    /// (always at least one changeset): a client far behind sends its backlog in parts, each
    /// integrated in bounded time, instead of one message the server works on for seconds while
    /// the connection's pings wait (and time out, and the whole backlog is sent again).
    mutating func uploads() -> [Action] {
        guard state == .active, let batch = merger.upload(), let first = batch.changesets.first, let last = batch.changesets.last,
              first.version > uploadedOnBind, last.version > acknowledgedClientVersion
        else { return [] }
        // Until the query set is sent, only what was written before it (0: a set with no such order).
        let limit = querySetHeld && querySetBoundary > 0 ? querySetBoundary : Int64.max
        var part: [Changeset] = []
        var bytes = 0
        for changeset in batch.changesets {
            guard changeset.version < limit else { break }
            let size = unacknowledgedSizes[changeset.version] ?? changeset.encoded().count
            if !part.isEmpty, part.count == Self.maxUploadChangesets || bytes + size > Self.maxUploadBytes { break }
            part.append(changeset)
            bytes += size
        }
        guard let newest = part.last else { return [] }
        uploadedOnBind = newest.version
        return [.send(.upload(Upload(
            session: id, changesets: part.map { UploadChangeset($0, lastServerVersion: batch.baseServerVersion) })))]
    }

    /// Uploads what may go now, then the query set once everything written before it went, then
    /// what was written after it (as far as one upload at a time allows).
    ///
    /// Right after ident the set follows the first upload in any case: the server sends nothing
    /// (no echo that would let the next upload go) until it has a set. Only a backlog of more than
    /// one upload written before the set then reaches the server after it.
    mutating func uploadsAndQuerySet(identified: Bool = false) -> [Action] {
        var actions = uploads()
        guard state == .active, querySetHeld, let querySet, identified || !unsentChangesets(before: querySetBoundary) else { return actions }
        querySetSent = true
        actions.append(.send(.queryChange(querySet)))
        return actions + uploads()
    }

    /// A query set waits to be sent.
    var querySetHeld: Bool { querySet != nil && !querySetSent }

    /// Whether a pending changeset before `version` was neither acknowledged nor sent on this bind.
    func unsentChangesets(before version: Int64) -> Bool {
        let sent = max(acknowledgedClientVersion, uploadedOnBind)
        return merger.pending.contains { $0.version < version && $0.version > sent }
    }

    /// The most changesets one upload carries.
    package static let maxUploadChangesets = 256
    /// About the most bytes of changesets one upload carries (a larger single changeset goes alone).
    package static let maxUploadBytes = 1 << 20

    /// The server acknowledged every changeset up to `ack.clientVersion`.
    mutating func acknowledged(_ ack: UploadAck) -> [Action] {
        guard ack.clientVersion <= queuedClientVersion else {
            return protocolViolation("upload ack of client version \(ack.clientVersion), but the newest local version is \(queuedClientVersion)")
        }
        return acknowledge(upTo: ack.clientVersion)
    }

    /// The server has every changeset up to `clientVersion`: told by an upload acknowledgement,
    /// or shown by its echo in a download (the acknowledgement may have been lost with a
    /// connection, and a new bind sends nothing the echo settled, so none would follow).
    mutating func acknowledge(upTo clientVersion: Int64) -> [Action] {
        guard clientVersion > acknowledgedClientVersion else { return [] }  // a repeated ack after a resend
        acknowledgedClientVersion = clientVersion
        settleUploadedBytes()
        var actions: [Action] = [.uploadAcknowledged(clientVersion: clientVersion)]
        if let recovered = unconfirmedReset?.recoveredVersion, clientVersion >= recovered {
            unconfirmedReset = nil
            actions.append(.resetConfirmed)
        }
        return actions + [.reportProgress(uploadProgress)] + completeUploadWaits()
    }

    /// Counts as uploaded what was acknowledged or came back in a download.
    mutating func settleUploadedBytes() {
        let pending = Set(merger.pending.lazy.map(\.version))
        for (version, size) in unacknowledgedSizes where version <= acknowledgedClientVersion || !pending.contains(version) {
            uploadedBytes += UInt64(size)
            unacknowledgedSizes[version] = nil
        }
    }

    /// Completes the upload waits whose every changeset the server has (acknowledged or echoed).
    mutating func completeUploadWaits() -> [Action] {
        let firstUnacknowledged = merger.pending.first { $0.version > acknowledgedClientVersion }?.version ?? Int64.max
        var actions: [Action] = []
        uploadWaits.removeAll { wait in
            guard wait.target < firstUnacknowledged else { return false }
            actions.append(.completeWait(wait.id))
            return true
        }
        return actions
    }
}
