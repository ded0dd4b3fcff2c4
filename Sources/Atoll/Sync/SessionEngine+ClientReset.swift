import AtollCore
import Foundation

/// Automatic client reset: choosing the action, and applying a fresh copy to the file.
extension SessionEngine {
    /// Tests only: what runs once a client reset downloaded its fresh copy, by realm.
    static let freshCopyHooks = Locked<[String: @Sendable () -> Void]>([:])

    /// The server cannot sync with this file any more: reset it as the configuration's
    /// `clientResetMode` says (docs/client-reset.md), falling back as R-RESET-4 says, and to the
    /// manual handler when the same automatic action was already applied and never acknowledged
    /// (a reset that would loop).
    func clientReset(_ request: ClientSession.ResetRequest) async {
        if let realm {
            // Read from the file: a reset applied by an earlier run of the app counts too.
            realm.refresh()
            pendingReset = (try? realm.loadPendingReset()) ?? pendingReset
            savedPendingReset = pendingReset
        }
        let previous = pendingReset.map { AppliedReset(action: $0.action, date: $0.date) }
        switch ClientSession.resetPlan(for: request, mode: sync.clientResetMode.kind, previous: previous) {
        case .manual(let message):
            await handleManualReset(message: message)
        case .automatic(let recover, let message, let note):
            await automaticReset(recover: recover, why: message, note: note)
        }
    }

    func automaticReset(recover: Bool, why: String, note: String) async {
        let mode = sync.clientResetMode
        do {
            try await resetFromFreshCopy(recovering: recover, reason: note.isEmpty ? why : why + "; " + note)
        } catch {
            if recover, case .recoverOrDiscardUnsyncedChanges = mode {
                logger.warning("client reset: recovery failed (\(error)); discarding the unsynced changes instead")
                return await automaticReset(recover: false, why: why, note: "recovery failed (\(error)), so the unsynced changes were discarded")
            }
            await handleManualReset(message: why + "; the automatic reset (\(mode.name)) failed, so it falls back to the manual handler: \(error)")
        }
    }

    /// An automatic reset that discards what was not synced (docs/client-reset.md): a fresh copy of the
    /// server's data is downloaded into a side realm, then ONE write transaction on this file
    /// makes its objects equal to the copy's with the fewest changes (objects both hold keep
    /// their identity, so open results and notifications carry on and report what changed) and
    /// adopts the copy's place in the history. The before block sees the data as it was, the
    /// after block both.
    ///
    /// Recovering, the local changes the server never acknowledged are replayed on top, in the
    /// same transaction, as new local changes (uploaded next) by the recovery rules of
    /// `ClientResetRecovery`.
    func resetFromFreshCopy(recovering: Bool, reason: String) async throws {
        guard let realm else { throw SyncError(.clientInternalError, "the session has no realm open") }
        let (before, after) = sync.clientResetMode.blocks
        let fresh = try await downloadFreshCopy()
        Self.freshCopyHooks.withLock { $0[configuration.storageKey] }?()
        realm.refresh()
        let beforeReset = realm.freeze()
        before?(beforeReset)
        let now = Date()
        var archive: URL?
        var changes: [Instruction] = []
        var recovered: [Instruction] = []
        var discarded = 0
        var reset = ClientSyncState(fileIdent: fresh.sync.fileIdent, serverVersion: fresh.sync.serverVersion, epoch: fresh.sync.epoch)
        try realm.write {
            // Read inside the write: a commit made while the fresh copy downloaded (or since) is
            // among the unsynced changes, recovered or archived, never reverted unrecorded.
            let unsynced = try unsyncedChanges()
            changes = try realm.replicaState().instructions(becoming: fresh.state)
            let recovery = recovering ? ClientResetRecovery.recovery(of: unsynced, onto: fresh.state) : nil
            recovered = recovery?.kept ?? []
            discarded = recovery?.dropped.count ?? unsynced.reduce(0) { $0 + $1.instructions.count }
            if discarded > 0 {
                // Written before the data changes: what is discarded is never lost unrecorded.
                archive = try DiscardedChangesArchive.write(
                    realmPath: configuration.fileURL?.path ?? configuration.storageKey, appFolder: sync.user.core.folder,
                    mode: sync.clientResetMode.name, reason: reason, date: now, changes: unsynced, dropped: recovery?.dropped)
            }
            // Every local version before this commit is settled: none of it is uploaded again.
            // This commit's own record holds the recovered changes (nothing when discarding).
            reset.acknowledgedClientVersion = realm.snapshotVersion
            reset.queuedClientVersion = reset.acknowledgedClientVersion
            try realm.integrateRemoteInWrite([Changeset(version: 0, timestamp: 0, instructions: changes)])
            if !recovered.isEmpty {
                try realm.integrateRemoteInWrite([Changeset(version: 0, timestamp: 0, instructions: recovered)])
                realm.transaction?.instructions.append(contentsOf: recovered)
            }
            try realm.saveSyncState(reset, includingPending: true)
            pendingReset = PendingReset(action: recovering ? "recover" : "discard", date: now,
                                        recoveredVersion: recovered.isEmpty ? nil : reset.acknowledgedClientVersion + 1)
            try realm.savePendingReset(pendingReset)
        }
        savedPendingReset = pendingReset
        logger.notice("client reset", metadata: [
            "realm": "\(configuration.storageKey)", "changes": "\(changes.count)", "recovered": "\(recovered.count)",
        ])
        resetOutcome.withLock {
            $0 = ClientResetOutcome(mode: sync.clientResetMode.name, didRecover: recovering, discardedChangeCount: discarded,
                                    discardedChangesArchive: archive, reason: reason, date: now)
        }
        after?(beforeReset, realm)
        if var session {
            let actions = session.resetCompleted(reset, unconfirmed: pendingReset.map { ClientSession.UnconfirmedReset(recoveredVersion: $0.recoveredVersion) })
            self.session = session
            savedPendingGeneration = session.pendingGeneration  // the file holds the reset's state
            await perform(actions)
        }
        await localCommitted()  // the recovered changes go up
    }

    /// The local changes the server has not acknowledged, oldest first: what recovery replays.
    /// Call it inside the reset's write transaction, so nothing is committed after it reads.
    func unsyncedChanges() throws -> [Changeset] {
        guard let realm, let session else { return [] }
        // Handed to the session and not acknowledged (an upload the server acknowledged is synced
        // even when its echo has not come back yet), then what was committed after the last
        // hand-over.
        return session.unacknowledged + (try realm.localChangesets(after: session.queuedClientVersion))
    }
}
