extension ClientSession {
    /// A local write committed: queue its changeset for upload (sent at once when active).
    ///
    /// Changesets must come in increasing client version order; an older version is ignored and
    /// reported as an internal error (6).
    public mutating func localChangesetCommitted(_ changeset: Changeset) -> [Action] {
        guard changeset.version > latestClientVersion else {
            return [.reportError(SessionError(
                code: .clientInternalError,
                message: "local changeset version \(changeset.version) is not after \(latestClientVersion)",
                action: .warning, isFatal: false))]
        }
        latestClientVersion = changeset.version
        pending.append(UploadChangeset(changeset, lastServerVersion: checkpoint.serverVersion))
        pendingSizes.append(changeset.encoded().count)
        var actions: [Action] = [.reportProgress(uploadProgress)]
        if state == .active { actions += uploads() }
        return actions
    }

    /// Asks to be told when everything up to now is uploaded (acknowledged) or downloaded (a mark
    /// round trip). The returned actions may already complete it.
    public mutating func wait(for direction: Direction) -> (WaitID, [Action]) {
        let wait = WaitID(rawValue: nextWaitID)
        nextWaitID += 1
        if case .failed(let error) = state { return (wait, [.failWait(wait, error)]) }
        switch direction {
        case .upload:
            uploadWaits.append((wait, latestClientVersion))
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
    public mutating func cancelWait(_ wait: WaitID) {
        uploadWaits.removeAll { $0.id == wait }
        downloadWaits = downloadWaits.filter { $0.value != wait }
    }

    /// The upload progress: acknowledged bytes of all bytes committed since the session started.
    public var uploadProgress: TransferProgress {
        let pendingBytes = UInt64(pendingSizes.reduce(0, +))
        return TransferProgress(direction: .upload, transferredBytes: uploadedBytes, transferrableBytes: uploadedBytes + pendingBytes)
    }

    /// Upload messages for every pending changeset not yet sent on this connection, in order,
    /// each of at most ``Configuration/maxUploadBytes`` (and at least one changeset).
    mutating func uploads() -> [Action] {
        var actions: [Action] = []
        var batch: [UploadChangeset] = []
        var bytes = 0
        for (changeset, size) in zip(pending, pendingSizes) where changeset.clientVersion > sentClientVersion {
            if !batch.isEmpty && bytes + size > configuration.maxUploadBytes {
                actions.append(.send(.upload(Upload(session: id, changesets: batch))))
                batch = []
                bytes = 0
            }
            batch.append(changeset)
            bytes += size
            sentClientVersion = changeset.clientVersion
        }
        if !batch.isEmpty { actions.append(.send(.upload(Upload(session: id, changesets: batch)))) }
        return actions
    }

    /// The server acknowledged every changeset up to `ack.clientVersion`.
    mutating func acknowledged(_ ack: UploadAck) -> [Action] {
        guard ack.clientVersion <= latestClientVersion else {
            return protocolViolation("upload ack of client version \(ack.clientVersion), but the newest local version is \(latestClientVersion)")
        }
        guard ack.clientVersion > acknowledgedClientVersion else { return [] }  // a repeated ack after a resend
        acknowledgedClientVersion = ack.clientVersion
        sentClientVersion = max(sentClientVersion, ack.clientVersion)
        let done = pending.prefix { $0.clientVersion <= ack.clientVersion }.count
        uploadedBytes += UInt64(pendingSizes.prefix(done).reduce(0, +))
        pending.removeFirst(done)
        pendingSizes.removeFirst(done)
        return [.uploadAcknowledged(clientVersion: ack.clientVersion), .reportProgress(uploadProgress)] + completeUploadWaits()
    }

    /// Completes the upload waits whose every changeset is acknowledged.
    mutating func completeUploadWaits() -> [Action] {
        let firstPending = pending.first?.clientVersion ?? Int64.max
        var actions: [Action] = []
        uploadWaits.removeAll { wait in
            guard wait.target < firstPending else { return false }
            actions.append(.completeWait(wait.id))
            return true
        }
        return actions
    }
}
