import AtollCore
import Foundation

/// Carrying out the state machine's actions: messages, timers, downloads written to the file,
/// acknowledgements saved, errors reported, token refreshes.
extension SessionEngine {
    func run(_ input: (inout ClientSession) -> [ClientSession.Action]) async {
        guard var session else { return }
        let actions = input(&session)
        self.session = session
        await perform(actions)
    }

    func perform(_ actions: [ClientSession.Action]) async {
        /// An upload was withheld: every later upload and query set of these actions is too.
        var withholding = false
        for action in actions {
            switch action {
            case .requestConnection:
                publicSession?.update(connection: .connecting)
                await connection.open()
            case .send(let message):
                // Actions run with suspensions between them: a newer query set may have gone out
                // meanwhile (from subscriptionsChanged), and an older one must not follow it.
                if case .queryChange(let change) = message, let current = session?.querySet,
                   current.querySetVersion > change.querySetVersion {
                    continue
                }
                // Suspended by the app, the machine not told yet: a write made after `suspend()`
                // stays local. The machine takes the upload as never sent (at once: no other
                // input runs between), and what follows it here is withheld with it.
                if case .upload(let upload) = message, withholding || suspensionRequested.load(ordering: .sequentiallyConsistent) {
                    withholding = true
                    if let first = upload.changesets.first { session?.withheld(uploadFrom: first.changeset.version, querySet: false) }
                    continue
                }
                if case .queryChange = message, withholding {
                    session?.withheld(uploadFrom: Int64.max, querySet: true)
                    continue
                }
                if message.dependsOnLocalCommits, !syncLogBeforeSending(message) {
                    // The session already counts the message as sent: only a new bind sends it
                    // again (from what the server acknowledged), so this connection ends, and the
                    // usual backoff reconnects.
                    await connection.dropped(reason: "a realm's commits could not be made durable before they left")
                    continue
                }
                await connection.send(message)
                if case .ident = message, sync.enableFlexibleSync { await sendHeldObjects() }
            case .scheduleTimer(let timer, let generation, let delay):
                timers[timer]?.cancel()
                let clock = sync.user.core.clock
                timers[timer] = _Concurrency.Task { [weak self] in
                    try? await clock.sleep(for: Double(max(0, delay)) / 1000)
                    guard !_Concurrency.Task.isCancelled else { return }
                    await self?.run { $0.timerFired(timer, generation: generation) }
                }
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .persistIdentity:
                save()
            case .integrate(let batch):
                await applyDownload(batch)
            case .uploadAcknowledged(let clientVersion):
                save()
                // Once the server has every queued write, the asymmetric objects leave the device.
                if let session, clientVersion >= session.queuedClientVersion { removeUploadedAsymmetricObjects() }
            case .resetConfirmed:
                pendingReset = nil
                save()
            case .reportProgress(let progress):
                reportProgress(progress)
            case .reportError(let error):
                // The user logged out (or was removed) here: the server ending its sessions is expected.
                if error.serverCode == .userLoggedOut, sync.user.state != .loggedIn { continue }
                let isConnectionError = error.code == .connectionFailed || error.code == .tlsHandshakeFailed
                report(SyncError(error, underlying: isConnectionError && error.serverCode == nil ? lastConnectionFailure?.underlying : nil))
                if error.serverCode == .userLoggedOut {
                    // Removed, disabled or its refresh token revoked on the server: log out here too.
                    let user = sync.user
                    _Concurrency.Task { try? await user.logOut() }
                }
            case .requestClientReset(let request):
                // Not awaited here: the reset downloads a fresh copy over this same connection,
                // whose messages reach sessions through the call that brought this action.
                _Concurrency.Task { await self.clientReset(request) }
            case .refreshAccessToken:
                await refreshAccessToken()
            case .querySetRejected(let version, let message):
                markSubscriptions { try $0.markSubscriptionSet(version: version, complete: false, error: message) }
                report(SyncError(.invalidFlexibleSyncSubscriptions, message))
            case .completeWait(let wait):
                waits.removeValue(forKey: wait)?.resume()
            case .failWait(let wait, let error):
                waits.removeValue(forKey: wait)?.resume(throwing: SyncError(error))
            }
        }
        publish()
    }

    /// Writes a download to the file: the session merges it inside the write transaction, after
    /// the transaction read the local history, and is kept only once the write committed (memory
    /// never runs ahead of the file; a failed write binds again and the server sends it again).
    ///
    /// The app may commit on another thread at any moment: a commit the session has not seen
    /// would have the download applied on top of it unrebased, and be uploaded unrebased over the
    /// download (the replicas then disagree on list order and last-writer-wins values).
    func applyDownload(_ batch: ClientSession.DownloadBatch) async {
        guard let realm, var next = session else { return }
        do {
            try Self.downloadWriteFaults.withLock { $0[configuration.storageKey] }?()
            try realm.write {
                let raced = try realm.localChangesets(after: next.queuedClientVersion)
                try realm.integrateRemoteInWrite(next.integrate(batch, raced: raced))
                try realm.saveSyncState(next.savedState, includingPending: next.pendingGeneration != savedPendingGeneration)
                if let version = batch.completedQuerySetVersion, version > 0 {
                    try realm.markSubscriptionSet(version: version, complete: true, error: nil)
                }
            }
        } catch {
            report(SyncError(.clientInternalError, "a download could not be integrated: \(error)", underlying: error as? any Swift.Error & Sendable))
            await run { $0.downloadNotApplied() }
            return
        }
        session = next
        savedPendingGeneration = next.pendingGeneration
        if batch.completedQuerySetVersion ?? 0 > 0 { SubscriptionEvents.stateChanged(path: configuration.storageKey) }
        await run { $0.downloadApplied() }
    }

    /// Tests only: failures to inject before a download's write, by realm (empty in production).
    static let downloadWriteFaults = Locked<[String: @Sendable () throws -> Void]>([:])

    /// Writes the session's state (and the pending reset's) to the file.
    func save() {
        guard let realm, let session else { return }
        do {
            try realm.write {
                try realm.saveSyncState(session.savedState, includingPending: session.pendingGeneration != savedPendingGeneration)
                if pendingReset == nil, savedPendingReset != nil { try realm.savePendingReset(nil) }
            }
            savedPendingGeneration = session.pendingGeneration
            savedPendingReset = pendingReset
        } catch {
            report(SyncError(.clientInternalError, "the sync state could not be saved: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    /// Gets a new access token for a session the server refused the token of. A refresh that
    /// fails while the user stays logged in (the server is unreachable) is tried again later;
    /// a refused refresh token logs the user out, which stops the session.
    func refreshAccessToken() async {
        do {
            let token = try await sync.user.validAccessToken(forceRefresh: true)
            await run { $0.accessTokenRefreshed(token) }
        } catch {
            guard sync.user.state == .loggedIn, !isStopped.load(ordering: .acquiring) else { return }
            report(SyncError(.clientUserError, "the access token could not be refreshed: \(error)", underlying: error as? any Swift.Error & Sendable))
            await run { $0.accessTokenRefreshFailed() }
        }
    }

    /// Flexible sync: tells the server which objects the realm holds (right after ident).
    func sendHeldObjects() async {
        guard let realm else { return }
        realm.refresh()
        do {
            await connection.send(.heldObjects(HeldObjects(session: id, objects: try realm.heldObjectIDs())))
        } catch {
            report(SyncError(.clientInternalError, "cannot list the realm's objects: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    /// Records a subscription set's new state and wakes whoever waits for it.
    func markSubscriptions(_ body: (Realm) throws -> Void) {
        guard let realm else { return }
        do {
            try realm.write { try body(realm) }
            SubscriptionEvents.stateChanged(path: configuration.storageKey)
        } catch {
            report(SyncError(.clientInternalError, "the subscription state could not be saved: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

}

extension SessionEngine {
    /// Syncs the file's log before `message` leaves: an upload carries commits, an ident the
    /// server version they stand on, and once the server holds either, losing the commit in a
    /// power loss would send the device back in time (docs/storage.md, "Durability"). Returns
    /// false when the sync failed: the message is not sent (reported; the caller ends the
    /// connection so that the next bind sends it again).
    func syncLogBeforeSending(_ message: ClientMessage) -> Bool {
        guard let realm, configuration.inMemoryIdentifier == nil else { return true }
        do {
            try RealmFiles.syncLog(realm.coordinator.path)
            return true
        } catch {
            report(SyncError(.clientInternalError, "not sent: the realm's commits could not be made durable first (\(error))"))
            return false
        }
    }
}

extension ClientMessage {
    /// Whether the server will record something of the device's commits from the message.
    var dependsOnLocalCommits: Bool {
        switch self {
        case .upload, .ident: true
        default: false
        }
    }
}
