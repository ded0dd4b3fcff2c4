extension ClientSession {
    /// A server message for this session (or for the whole connection: `session == nil`).
    package mutating func received(_ message: ServerMessage) -> [Action] {
        if let session = message.session, session != id {
            return [.reportError(SessionError(
                code: .clientInternalError, message: "message for session \(session.rawValue) given to session \(id.rawValue)",
                action: .warning, isFatal: false))]
        }
        // After unbind, what the server sent before it read the unbind still arrives: only the
        // `unbound` answer (or an error) matters then.
        if state == .dying {
            switch message {
            case .unbound, .error: break
            default: return []
            }
        }
        // A reset the client decided on itself (a download showed that its copy went back in
        // time) unbound the session: what the server sent before it read the unbind (the rest
        // of the download, an upload's acknowledgement, its own reset required) is moot.
        if case .waitingForReset = state {
            switch message {
            case .error: break
            default: return []
            }
        }
        switch message {
        case .hello, .pong:
            return []
        case .error(let error):
            return receivedError(error)
        case .unbound:
            guard state == .dying else { return [] }
            state = .inactive
            return restartIfRequested()
        case .identAnswer(let answer):
            guard state == .binding else { return outOfOrder("ident answer") }
            return identified(answer)
        case .resetRequired(let reset):
            guard state == .binding || state == .active else { return outOfOrder("reset required") }
            return resetRequired(ResetRequest(reason: reset.reason, message: reset.message,
                                              recoveryAllowed: reset.recoveryAllowed, serverEpoch: reset.epoch))
        case .uploadAck(let ack):
            guard state == .active else { return outOfOrder("upload ack") }
            if let reset = checkEpoch(ack.epoch) { return reset }
            return acknowledged(ack)
        case .download(let download):
            guard state == .active else { return outOfOrder("download") }
            if let reset = checkEpoch(download.epoch) { return reset }
            return downloaded(download)
        case .markAnswer(let mark):
            guard state == .active else { return outOfOrder("mark answer") }
            if let reset = checkEpoch(mark.epoch) { return reset }
            guard let wait = downloadWaits.removeValue(forKey: mark.requestID) else { return [] }  // cancelled
            return [.completeWait(wait)]
        case .queryError(let error):
            guard state == .active else { return outOfOrder("query error") }
            if let reset = checkEpoch(error.epoch) { return reset }
            let report = SessionError(code: .invalidFlexibleSyncSubscriptions, message: error.message,
                                      serverCode: .badQuery, action: .warning, isFatal: false)
            return [.querySetRejected(version: error.querySetVersion, message: error.message), .reportError(report)]
        }
    }

    private mutating func identified(_ answer: IdentAnswer) -> [Action] {
        if checkpoint.fileIdent.isAssigned && answer.fileIdent != checkpoint.fileIdent {
            return protocolViolation("ident answer names \(answer.fileIdent), the client is \(checkpoint.fileIdent)")
        }
        guard answer.fileIdent.isAssigned else { return protocolViolation("ident answer assigns no file ident") }
        if checkpoint.epoch != .none && answer.epoch != checkpoint.epoch {
            return resetRequired(ResetRequest(reason: .epochChanged, message: "the server's history changed (\(answer.epoch), client has \(checkpoint.epoch))",
                                              recoveryAllowed: true, serverEpoch: answer.epoch))
        }
        guard answer.latestServerVersion >= checkpoint.serverVersion else {
            return resetRequired(ResetRequest(reason: .historyRestored,
                                              message: "the server is at version \(answer.latestServerVersion), the client integrated \(checkpoint.serverVersion)",
                                              recoveryAllowed: true, serverEpoch: answer.epoch))
        }
        var actions: [Action] = []
        if answer.fileIdent != checkpoint.fileIdent || answer.epoch != checkpoint.epoch {
            checkpoint.fileIdent = answer.fileIdent
            checkpoint.epoch = answer.epoch
            merger.fileIdent = answer.fileIdent.ident
            actions.append(.persistIdentity(answer.fileIdent, answer.epoch))
        }
        state = .active
        configuration.backoff.reset()
        if let reset = unconfirmedReset, reset.recoveredVersion == nil {
            // Nothing was recovered: the server taking the new identity confirms the reset.
            unconfirmedReset = nil
            actions.append(.resetConfirmed)
        }
        // Uploads first: they may declare the types the query set names (the schema), and
        // those written before the set was committed were written under the previous one.
        actions += uploadsAndQuerySet(identified: true)
        for request in downloadWaits.keys.sorted() { actions.append(.send(.mark(Mark(session: id, requestID: request)))) }
        return actions
    }

    private mutating func downloaded(_ download: Download) -> [Action] {
        let progress = download.progress
        var last = partialBatch.last?.serverVersion ?? receivedServerVersion
        for c in download.changesets {
            // A flexible-sync view change sits at the version of the entry before it.
            let isViewChange = target == .flexible && c.originFileIdent == FlexibleSync.viewChangeFileIdent
            guard c.serverVersion > last || (isViewChange && c.serverVersion == last) else {
                return protocolViolation("download of server version \(c.serverVersion) after version \(last)")
            }
            // A partition's history arrives whole: every version once, in order (a compacted
            // history starts a new file with its snapshot at the version it covers). A gap would
            // leave the file claiming versions it never integrated.
            let startsCompactedHistory = last == 0 && c.originFileIdent == 0
            guard target == .flexible || c.serverVersion == last &+ 1 || startsCompactedHistory else {
                return protocolViolation("download of server version \(c.serverVersion) after version \(last): versions are missing")
            }
            last = c.serverVersion
        }
        let jumps = target != .flexible && !download.changesets.isEmpty && progress.serverVersion != last
        guard progress.serverVersion >= last, progress.latestServerVersion >= progress.serverVersion, !jumps else {
            return protocolViolation("download up to server version \(last) with progress at \(progress.serverVersion) of \(progress.latestServerVersion)")
        }
        if let diverged = divergedOwnChangeset(in: download.changesets) {
            // The server's session is still bound: unbound first, bound again once reset.
            return [.send(.unbind(id))] + resetRequired(ResetRequest(
                reason: .historyRestored, message: diverged, recoveryAllowed: true, serverEpoch: checkpoint.epoch))
        }
        partialBatch += download.changesets
        downloadedBytes += UInt64(download.changesets.reduce(0) { $0 + $1.encodedSize })
        let report = Action.reportProgress(TransferProgress(direction: .download, transferredBytes: downloadedBytes,
                                                            transferrableBytes: downloadedBytes + progress.downloadableBytes))
        guard download.isLastInBatch else { return [report] }
        receivedServerVersion = progress.serverVersion
        var reached = checkpoint
        reached.serverVersion = progress.serverVersion
        var completedQuerySet: Int64?
        if download.querySetVersion > checkpoint.querySetVersion {
            reached.querySetVersion = download.querySetVersion
            completedQuerySet = download.querySetVersion
        }
        let batch = DownloadBatch(changesets: partialBatch, checkpoint: reached, progress: progress,
                                  completedQuerySetVersion: completedQuerySet)
        partialBatch = []
        return [.integrate(batch), report]
    }

    /// Why one of `changesets` shows that this file went back in time, or nil: an entry of the
    /// file's own that is not the pending changeset of its client version (another commit time:
    /// a new commit reused the version of one the file lost), or of a version the file never
    /// handed over. The file was restored from a backup, or lost commits it had uploaded in a
    /// power loss; taking the entry as the acknowledgement of a pending changeset would drop that
    /// changeset unsynced, skipping it would leave the file without the lost commit. Only a
    /// client reset brings the copy back to the server's history (recovering what it did not sync).
    private func divergedOwnChangeset(in changesets: [DownloadChangeset]) -> String? {
        let file = checkpoint.fileIdent.ident
        guard checkpoint.fileIdent.isAssigned else { return nil }
        for c in changesets where c.originFileIdent == file {
            let version = c.changeset.version
            if let pending = merger.pending.first(where: { $0.version == version }) {
                guard pending.timestamp != c.originTimestamp else { continue }
                return "the server holds client version \(version) of this file committed at \(c.originTimestamp), the file's own "
                    + "was committed at \(pending.timestamp): the file went back in time (restored from a backup, or commits lost in a power loss)"
            }
            if version > queuedClientVersion {
                return "the server holds client version \(version) of this file, which the file never committed (its newest is "
                    + "\(queuedClientVersion)): the file went back in time (restored from a backup, or commits lost in a power loss)"
            }
        }
        return nil
    }

    private mutating func receivedError(_ message: ErrorMessage) -> [Action] {
        let error = SessionError(message)
        switch message.action {
        case .warning:
            return [.reportError(error)]
        case .retryLater:
            requestedRetryDelay = max(requestedRetryDelay, message.tryAgainAfterMilliseconds)
            // A connection error is followed by the close; a session error ended the session only.
            guard message.session != nil, state == .binding || state == .active else { return [.reportError(error)] }
            querySetSent = false
            return [.reportError(error)] + scheduleReconnect()
        case .refreshAccessToken:
            guard state == .binding || state == .active else { return [] }
            state = .waitingForAccessToken
            querySetSent = false
            return [.refreshAccessToken]
        case .clientReset:
            return resetRequired(ResetRequest(reason: message.code == .breakingSchemaChange ? .breakingSchemaChange : .historyRestored,
                                              message: message.message, recoveryAllowed: true, serverEpoch: message.epoch))
        case .deleteRealm, .logOut, .protocolViolation:
            return fail(error, unbind: false)
        }
    }

    mutating func resetRequired(_ request: ResetRequest) -> [Action] {
        state = .waitingForReset(request)
        partialBatch = []
        querySetSent = false
        return [.cancelTimer(.reconnect), .requestClientReset(request)]
    }

    /// A session message whose epoch is not the one identified: the history changed under the client.
    private mutating func checkEpoch(_ epoch: SyncEpoch) -> [Action]? {
        guard epoch != checkpoint.epoch else { return nil }
        return resetRequired(ResetRequest(reason: .epochChanged, message: "the server's history changed (\(epoch), client has \(checkpoint.epoch))",
                                          recoveryAllowed: true, serverEpoch: epoch))
    }

    private mutating func outOfOrder(_ what: String) -> [Action] {
        protocolViolation("\(what) received while the session is \(state)")
    }

    mutating func protocolViolation(_ message: String) -> [Action] {
        fail(SessionError(ProtocolError(.messageOutOfOrder, message, session: id)), unbind: true)
    }
}
