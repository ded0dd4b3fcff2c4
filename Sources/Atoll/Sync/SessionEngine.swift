import AtollCore
import Foundation
import Logging
import Synchronization

/// Drives one synced realm: runs the protocol's client state machine (`ClientSession`), carries
/// out its actions over the app's connection, merges downloads with the local changes not yet
/// sent back (`ClientMerger`) and writes them to the realm file.
actor SessionEngine {
    let id: SessionID
    let configuration: Realm.Configuration
    nonisolated let sync: SyncConfiguration
    let connection: SyncConnection
    nonisolated(unsafe) weak var publicSession: SyncSession?
    private var session: ClientSession?
    private var merger = ClientMerger(fileIdent: 0)
    private var state = SyncState()
    /// The pending changesets as last written to the file (skipped when unchanged).
    private var savedPending: [Changeset] = []
    /// The pending reset as last written to the file.
    private var savedPendingReset: PendingReset?
    private var realm: Realm?
    private var waits: [ClientSession.WaitID: CheckedContinuation<Void, Swift.Error>] = [:]
    private var timers: [ClientSession.Timer: _Concurrency.Task<Void, Never>] = [:]
    private var logger = Logging.Logger(label: "atoll.sync.session", factory: SharedLoggerHandler.init)
    /// Set when the user logged out or was removed: the engine never starts again.
    nonisolated let isStopped = Atomic<Bool>(false)
    /// `suspend()` was called and `resume()` not yet.
    private var userSuspended = false
    /// The generation of the reconnect timer scheduled last, for `reconnect()`.
    private var reconnectGeneration: UInt64?
    /// The last download progress the session reported (the upload progress is the session's own).
    private var downloadProgress = ClientSession.TransferProgress(direction: .download, transferredBytes: 0, transferrableBytes: 0)
    /// The highest client version uploaded since the session last bound: the server refuses a
    /// client version twice within one bind (`ServerSessionLogic`).
    private var uploadedOnBind: Int64 = 0
    /// The session asked for an upload that waits for the echo of an earlier one.
    private var uploadDeferred = false
    /// Attempts to refresh the access token since the last success, for the retry delay.
    private var tokenRefreshAttempts = 0
    /// An automatic client reset applied to the file that the server has not acknowledged yet.
    private var pendingReset: PendingReset?
    /// What the last automatic client reset did (`SyncSession.lastClientReset`).
    nonisolated let resetOutcome = Mutex<ClientResetOutcome?>(nil)
    /// Why the connection closed last: the NIO error a connection error reports as `underlying`.
    private var lastConnectionFailure: ConnectionFailure?

    init(id: SessionID, configuration: Realm.Configuration, sync: SyncConfiguration, connection: SyncConnection) {
        self.id = id
        self.configuration = configuration
        self.sync = sync
        self.connection = connection
        logger.logLevel = .warning
    }

    // MARK: Life cycle

    func start() async {
        guard !isStopped.load(ordering: .acquiring), !userSuspended else { return }
        do {
            if realm == nil {
                let realm = try Realm(configuration: configuration, confinement: .actor(self))
                realm.autorefresh = false
                self.realm = realm
                state = try realm.loadSyncState()
                pendingReset = try realm.loadPendingReset()
                savedPendingReset = pendingReset
                savedPending = state.pending
                merger = ClientMerger(fileIdent: state.fileIdent.ident, serverVersion: state.serverVersion, pending: state.pending,
                                      isFlexible: sync.enableFlexibleSync)
            }
            if session == nil {
                let token: String
                do {
                    token = try await sync.user.validAccessToken()
                } catch {
                    // Offline with an expired token: start anyway; the session binds with the stale
                    // token once connected, and the server's refusal makes it refresh the token.
                    guard sync.user.state == .loggedIn else { throw error }
                    token = sync.user.accessToken ?? ""
                }
                // The user may have logged out (or suspended) while the token was fetched.
                guard !isStopped.load(ordering: .acquiring), session == nil, !userSuspended else { return }
                let pending = try unacknowledgedUploads()
                session = ClientSession(
                    id: id, target: sync.target, accessToken: token,
                    checkpoint: ClientSession.Checkpoint(fileIdent: state.fileIdent, serverVersion: state.serverVersion, epoch: state.epoch),
                    pending: pending,
                    configuration: ClientSession.Configuration(backoff: ReconnectBackoff(seed: UInt64.random(in: 0...UInt64.max))))
                realm?.refresh()  // the token was awaited: the app may have committed a newer set meanwhile
                if sync.enableFlexibleSync, let set = try realm?.latestSubscriptionSet() {
                    _ = session?.changeQuerySet(version: set.version, queries: set.queries)
                }
                await connection.register(self, id: id)
                if let session { reportProgress(session.uploadProgress) }
            }
            let isOpen = await connection.status == .open
            await run { $0.start(connectionIsOpen: isOpen) }
        } catch {
            // A logged-out user's session just does not start.
            guard sync.user.state == .loggedIn, !isStopped.load(ordering: .acquiring) else { return }
            report(SyncError(.clientInternalError, "the sync session of \(configuration.storageKey) could not start: \(error)",
                             underlying: error as? any Swift.Error & Sendable))
        }
    }

    /// The local changesets the server has not acknowledged, for (re)upload.
    private func unacknowledgedUploads() throws -> [UploadChangeset] {
        guard let realm else { return [] }
        realm.refresh()
        // A changeset the merger recorded (up to `queuedClientVersion`) that is no longer in its
        // pending list came back in a download: the server has it, even when its upload ack was
        // never saved (the process died first). Uploading it again, after the pending ones, would
        // put client versions out of order in one upload, which the server refuses.
        let recorded = state.queuedClientVersion
        let pendingVersions = Set(merger.pending.map(\.version))
        let changesets = try realm.localChangesets(after: state.acknowledgedClientVersion)
            .filter { $0.version > recorded || pendingVersions.contains($0.version) }
        state.queuedClientVersion = max(state.queuedClientVersion, changesets.last?.version ?? state.acknowledgedClientVersion)
        for changeset in changesets where !pendingVersions.contains(changeset.version) {
            merger.recordLocal(changeset)
        }
        return changesets.map { UploadChangeset($0, lastServerVersion: state.serverVersion) }
    }

    /// `SyncSession.suspend()`: unbinds and stays inactive until `resume()`.
    func suspend() async {
        userSuspended = true
        await run { $0.suspend() }
        publish()
    }

    /// `SyncSession.resume()`.
    func resume() async {
        userSuspended = false
        await start()
        publish()
    }

    /// Why a session stopped: a logged-out user's sessions start again when it logs in; a file
    /// waiting for its reset or deletion action keeps its stopped session until the action ran.
    enum StopReason: UInt8, Sendable {
        case loggedOut
        case fileActionPending
    }

    /// Set with ``isStopped``.
    nonisolated let stopReason = Atomic<UInt8>(StopReason.loggedOut.rawValue)

    /// Ends the session for good: unbinds, cancels timers, fails waits.
    func stop(_ reason: StopReason = .loggedOut) async {
        stopReason.store(reason.rawValue, ordering: .releasing)
        isStopped.store(true, ordering: .releasing)
        await run { $0.suspend() }
        for timer in timers.values { timer.cancel() }
        timers = [:]
        let why = switch reason {
        case .loggedOut: "the user logged out"
        case .fileActionPending: "the session stopped: the realm needs a client reset or was refused (see the error handler)"
        }
        for (_, wait) in waits { wait.resume(throwing: SyncError(reason == .loggedOut ? .clientUserError : .clientResetError, why)) }
        waits = [:]
        await connection.unregister(id)
        session = nil
        realm = nil
        publicSession?.update(state: .inactive, connection: .disconnected)
    }

    /// `SyncSession.reconnect()`: a session waiting out a reconnect delay tries at once.
    func reconnect() async {
        guard let session, session.state == .waitingForConnection, let generation = reconnectGeneration else { return }
        timers.removeValue(forKey: .reconnect)?.cancel()
        await run { $0.timerFired(.reconnect, generation: generation) }
    }

    /// For a `.forCurrentlyOutstandingWork` progress notification: what is outstanding now.
    func snapshotProgress(_ direction: ClientSession.Direction) async {
        if direction == .upload { await localCommitted() }
        let progress = direction == .upload ? (session?.uploadProgress ?? ClientSession.TransferProgress(direction: .upload, transferredBytes: 0, transferrableBytes: 0)) : downloadProgress
        publicSession?.progressSnapshot(direction == .upload ? .upload : .download, SyncSession.Progress(progress))
    }

    private func reportProgress(_ progress: ClientSession.TransferProgress) {
        if progress.direction == .download { downloadProgress = progress }
        publicSession?.reportProgress(progress.direction == .upload ? .upload : .download, SyncSession.Progress(progress))
    }

    // MARK: Inputs

    func connectionOpened() async { await run { $0.connectionOpened() } }

    func connectionClosed(failure: ConnectionFailure?) async {
        lastConnectionFailure = failure
        await run { $0.connectionClosed(error: failure?.message, code: failure?.code ?? .connectionFailed) }
    }

    func received(_ message: ServerMessage) async { await run { $0.received(message) } }

    /// A local write committed: queue its changeset.
    func localCommitted() async {
        guard let realm, session != nil else { return }
        realm.refresh()
        do {
            // Recorded and handed over without a suspension in between: a commit noticed while an
            // earlier call awaits its actions must not be recorded twice (or out of order).
            let changesets = try realm.localChangesets(after: state.queuedClientVersion)
            guard !changesets.isEmpty else { return }
            for changeset in changesets {
                state.queuedClientVersion = changeset.version
                merger.recordLocal(changeset)
            }
            await run { session in changesets.flatMap { session.localChangesetCommitted($0) } }
        } catch {
            report(SyncError(.clientInternalError, "cannot read local history: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    /// A new subscription set was committed: send it (at once when the session is active).
    func subscriptionsChanged() async {
        guard let realm, session != nil else { return }
        realm.refresh()
        do {
            guard let set = try realm.latestSubscriptionSet() else { return }
            await run { $0.changeQuerySet(version: set.version, queries: set.queries) }
        } catch {
            report(SyncError(.clientInternalError, "cannot read the subscriptions: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    func wait(for direction: ClientSession.Direction) async throws {
        if session == nil { await start() }
        guard session != nil else { throw SyncError(.clientInternalError, "the sync session could not start") }
        // Commits reach the engine through a task; a write committed just before this wait may
        // not have been queued yet. Read the history now so the wait covers it.
        if direction == .upload { await localCommitted() }
        let box = WaitBox()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Swift.Error>) in
                if box.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let (waitID, actions) = session!.wait(for: direction)
                waits[waitID] = continuation
                box.id = waitID
                _Concurrency.Task { await self.perform(actions) }
            }
        } onCancel: {
            _Concurrency.Task { await self.cancelWait(box) }
        }
    }

    /// A caller stopped waiting (a timeout): forget the wait and let the caller go.
    private func cancelWait(_ box: WaitBox) {
        guard let id = box.id else {
            box.isCancelled = true
            return
        }
        session?.cancelWait(id)
        waits.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    // MARK: Actions

    private func run(_ input: (inout ClientSession) -> [ClientSession.Action]) async {
        guard var session else { return }
        let actions = input(&session)
        self.session = session
        await perform(actions)
    }

    private func perform(_ actions: [ClientSession.Action]) async {
        for action in actions {
            switch action {
            case .requestConnection:
                publicSession?.update(connection: .connecting)
                await connection.open()
            case .send(.upload):
                uploadDeferred = true
                await sendUpload()
            case .send(let message):
                // Actions run with suspensions between them: a newer query set may have gone out
                // meanwhile (from subscriptionsChanged), and an older one must not follow it.
                if case .queryChange(let change) = message, let current = session?.querySet,
                   current.querySetVersion > change.querySetVersion {
                    continue
                }
                if case .bind = message {
                    uploadedOnBind = 0
                    uploadDeferred = false
                }
                await connection.send(message)
                if case .ident = message, sync.enableFlexibleSync { await sendHeldObjects() }
            case .scheduleTimer(let timer, let generation, let delay):
                if timer == .reconnect { reconnectGeneration = generation }
                timers[timer]?.cancel()
                timers[timer] = _Concurrency.Task { [weak self] in
                    try? await _Concurrency.Task.sleep(nanoseconds: UInt64(max(0, delay)) * 1_000_000)
                    guard !_Concurrency.Task.isCancelled else { return }
                    await self?.run { $0.timerFired(timer, generation: generation) }
                }
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .persistIdentity(let fileIdent, let epoch):
                state.fileIdent = fileIdent
                state.epoch = epoch
                merger.fileIdent = fileIdent.ident
                save()
            case .integrate(let batch):
                if let raced = integrate(batch) {
                    // Local commits the download's write found unqueued: the merger has them now
                    // (rebased over the download); the session learns of them as of any commit.
                    if !raced.isEmpty { await run { session in raced.flatMap { session.localChangesetCommitted($0) } } }
                    await sendUpload()
                } else {
                    // Memory stays at what the file holds; the server sends the download again.
                    let restored = ClientSession.Checkpoint(
                        fileIdent: state.fileIdent, serverVersion: state.serverVersion, epoch: state.epoch,
                        querySetVersion: session?.checkpoint.querySetVersion ?? 0)
                    await run { $0.downloadNotApplied(restoring: restored) }
                }
            case .uploadAcknowledged(let clientVersion):
                state.acknowledgedClientVersion = max(state.acknowledgedClientVersion, clientVersion)
                if let recovered = pendingReset?.recoveredVersion, clientVersion >= recovered { pendingReset = nil }
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
        if let pending = pendingReset, pending.recoveredVersion == nil, session?.state == .active {
            // Nothing was recovered: the server taking the new identity settles the reset.
            pendingReset = nil
            save()
        }
        publish()
    }

    /// Uploads what the merger holds: every pending changeset, rebased over every download, on
    /// one base (docs/merge.md). The session decides when; the batch is the merger's. Within one
    /// bind the server takes each client version once, so while a changeset already uploaded on
    /// this bind is still pending (its echo not downloaded yet) the upload waits for the echo;
    /// a batch without it would miss an own changeset integrated after its base.
    private func sendUpload() async {
        guard uploadDeferred, let batch = merger.upload() else {
            uploadDeferred = false
            return
        }
        guard !batch.changesets.contains(where: { $0.version <= uploadedOnBind }) else { return }
        uploadDeferred = false
        uploadedOnBind = batch.changesets.map(\.version).max() ?? uploadedOnBind
        await connection.send(.upload(Upload(
            session: id, changesets: batch.changesets.map { UploadChangeset($0, lastServerVersion: batch.baseServerVersion) })))
    }

    /// Gets a new access token for a session the server refused the token of. A refresh that
    /// fails while the user stays logged in (the server is unreachable) is tried again later;
    /// a refused refresh token logs the user out, which stops the session.
    private func refreshAccessToken() async {
        do {
            let token = try await sync.user.validAccessToken(forceRefresh: true)
            tokenRefreshAttempts = 0
            await run { $0.accessTokenRefreshed(token) }
        } catch {
            guard sync.user.state == .loggedIn, !isStopped.load(ordering: .acquiring) else { return }
            report(SyncError(.clientUserError, "the access token could not be refreshed: \(error)", underlying: error as? any Swift.Error & Sendable))
            tokenRefreshAttempts += 1
            let delay = min(30.0, pow(2.0, Double(min(tokenRefreshAttempts, 6) - 1)))
            _Concurrency.Task { [weak self] in
                try? await _Concurrency.Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
                await self?.retryTokenRefresh()
            }
        }
    }

    private func retryTokenRefresh() async {
        guard session?.state == .waitingForAccessToken, !isStopped.load(ordering: .acquiring) else { return }
        await refreshAccessToken()
    }

    /// Applies a download: the merger rebases the pending local changes and says what to apply.
    /// The merger and the sync state in memory advance only once the write committed; returns
    /// the local changesets the write found committed but not yet queued (nil when it failed).
    ///
    /// The merge runs inside the write transaction, after reading the local history: the app may
    /// commit on another thread at any moment, and a commit the merger has not seen would have the
    /// download applied on top of it unrebased, and be uploaded unrebased over the download (the
    /// replicas then disagree on list order and last-writer-wins values).
    private func integrate(_ batch: ClientSession.DownloadBatch) -> [Changeset]? {
        guard let realm else { return [] }
        let entries = batch.changesets.map { download -> HistoryEntry in
            var changeset = download.changeset
            changeset.fileIdent = download.originFileIdent
            changeset.timestamp = download.originTimestamp
            return HistoryEntry(serverVersion: download.serverVersion, changeset: changeset)
        }
        var merger = self.merger
        var state = self.state
        var raced: [Changeset] = []
        do {
            try Self.downloadWriteFaults.withLock { $0[configuration.storageKey] }?()
            try realm.write {
                raced = try realm.localChangesets(after: state.queuedClientVersion)
                for changeset in raced { merger.recordLocal(changeset) }
                state.queuedClientVersion = raced.last?.version ?? state.queuedClientVersion
                let toApply = merger.receive(entries)
                state.serverVersion = max(merger.serverVersion, batch.checkpoint.serverVersion)
                state.epoch = batch.checkpoint.epoch
                state.pending = merger.pending
                try realm.integrateRemoteInWrite(toApply)
                try realm.saveSyncState(state, includingPending: state.pending != savedPending)
                if let version = batch.completedQuerySetVersion, version > 0 {
                    try realm.markSubscriptionSet(version: version, complete: true, error: nil)
                }
            }
        } catch {
            report(SyncError(.clientInternalError, "a download could not be integrated: \(error)", underlying: error as? any Swift.Error & Sendable))
            return nil
        }
        self.merger = merger
        self.state = state
        savedPending = state.pending
        if batch.completedQuerySetVersion ?? 0 > 0 { SubscriptionEvents.stateChanged(path: configuration.storageKey) }
        return raced
    }

    /// Tests only: failures to inject before a download's write, by realm (empty in production).
    static let downloadWriteFaults = Mutex<[String: @Sendable () throws -> Void]>([:])
    /// Tests only: what runs once a client reset downloaded its fresh copy, by realm.
    static let freshCopyHooks = Mutex<[String: @Sendable () -> Void]>([:])

    // MARK: Client reset

    /// The server cannot sync with this file any more: reset it as the configuration's
    /// `clientResetMode` says (docs/client-reset.md), falling back as R-RESET-4 says, and to the
    /// manual handler when the same automatic action was already applied and never acknowledged
    /// (a reset that would loop).
    private func clientReset(_ request: ClientSession.ResetRequest) async {
        let why = "the server requires a client reset (\(request.reason)): \(request.message)"
        let mode = sync.clientResetMode
        if let realm {
            // Read from the file: a reset applied by an earlier run of the app counts too.
            realm.refresh()
            pendingReset = (try? realm.loadPendingReset()) ?? pendingReset
            savedPendingReset = pendingReset
        }
        if request.reason == .breakingSchemaChange, !mode.isManual {
            // Neither recovery nor discarding can carry the local file over a schema it no longer matches.
            return await handleManualReset(message: why + "; after a breaking schema change no automatic mode can run, so "
                + "\(mode.name) falls back to the manual handler")
        }
        var recover: Bool
        var note = ""
        switch mode {
        case .manual:
            return await handleManualReset(message: why)
        case .discardUnsyncedChanges:
            recover = false
        case .recoverUnsyncedChanges:
            guard request.recoveryAllowed else {
                return await handleManualReset(message: why + "; the server has client recovery turned off, so recoverUnsyncedChanges falls back to the manual handler")
            }
            recover = true
        case .recoverOrDiscardUnsyncedChanges:
            recover = request.recoveryAllowed
            if !recover { note = "the server has client recovery turned off, so the unsynced changes were discarded" }
        }
        if let previous = pendingReset, previous.action == (recover ? "recover" : "discard") {
            let cycle = "a previous \(previous.action) reset of this file (\(previous.date)) was never acknowledged by the server"
            guard case .recoverOrDiscardUnsyncedChanges = mode, recover else {
                return await handleManualReset(message: why + "; \(cycle), so \(mode.name) falls back to the manual handler instead of looping")
            }
            recover = false
            note = cycle + ", so the unsynced changes were discarded this time"
        }
        await automaticReset(recover: recover, why: why, note: note)
    }

    private func automaticReset(recover: Bool, why: String, note: String) async {
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

    /// An automatic reset that discards what was not synced (DESIGN.md §4): a fresh copy of the
    /// server's data is downloaded into a side realm, then ONE write transaction on this file
    /// makes its objects equal to the copy's with the fewest changes (objects both hold keep
    /// their identity, so open results and notifications carry on and report what changed) and
    /// adopts the copy's place in the history. The before block sees the data as it was, the
    /// after block both.
    ///
    /// Recovering, the local changes the server never acknowledged are replayed on top, in the
    /// same transaction, as new local changes (uploaded next) by the recovery rules of
    /// `ClientResetRecovery`.
    private func resetFromFreshCopy(recovering: Bool, reason: String) async throws {
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
        var reset = SyncState()
        reset.fileIdent = fresh.sync.fileIdent
        reset.epoch = fresh.sync.epoch
        reset.serverVersion = fresh.sync.serverVersion
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
        state = reset
        savedPending = []
        merger = ClientMerger(fileIdent: reset.fileIdent.ident, serverVersion: reset.serverVersion, isFlexible: sync.enableFlexibleSync)
        logger.notice("client reset", metadata: [
            "realm": "\(configuration.storageKey)", "changes": "\(changes.count)", "recovered": "\(recovered.count)",
        ])
        resetOutcome.withLock {
            $0 = ClientResetOutcome(mode: sync.clientResetMode.name, didRecover: recovering, discardedChangeCount: discarded,
                                    discardedChangesArchive: archive, reason: reason, date: now)
        }
        after?(beforeReset, realm)
        let checkpoint = ClientSession.Checkpoint(fileIdent: reset.fileIdent, serverVersion: reset.serverVersion, epoch: reset.epoch)
        await run { $0.resetCompleted(checkpoint, pending: []) }
        await localCommitted()  // the recovered changes go up
    }

    /// The local changes the server has not acknowledged, oldest first: what recovery replays.
    /// Call it inside the reset's write transaction, so nothing is committed after it reads.
    private func unsyncedChanges() throws -> [Changeset] {
        guard let realm else { return [] }
        // Handed to the merger and not acknowledged (an upload the server acknowledged is synced
        // even when its echo has not come back yet), then what was committed after the last
        // hand-over.
        return merger.pending.filter { $0.version > state.acknowledgedClientVersion }
            + (try realm.localChangesets(after: state.queuedClientVersion))
    }

    /// Downloads the server's current data for this realm into an in-memory side realm (a client
    /// file of its own, whose identity this file adopts), with this file's subscriptions for
    /// flexible sync.
    private func downloadFreshCopy() async throws -> (state: ReplicaState, sync: SyncState) {
        var side = configuration
        side.inMemoryIdentifier = "atoll-client-reset-\(UUID().uuidString)"
        let sideRealm = try Realm(configuration: side, confinement: .actor(self))
        guard let session = sideRealm.syncSession else { throw SyncError(.clientInternalError, "the side realm of the reset has no session") }
        defer {
            let engine = session.engine
            _Concurrency.Task { await engine.stop() }
        }
        if sync.enableFlexibleSync, let realm {
            let subscriptions = try realm.subscriptionSetInSnapshot().subscriptions
            try sideRealm.write {
                try SubscriptionStorage.createTables(sideRealm.connection)
                _ = try SubscriptionStorage.insert(subscriptions, sideRealm.connection)
            }
            await session.engine.subscriptionsChanged()
        }
        let timeout = sync.user.core.configuration.syncConnectTimeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await session.wait(for: .upload)
                try await session.wait(for: .download)
            }
            group.addTask {
                try await _Concurrency.Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                throw SyncError(.connectionFailed, "the fresh copy for the client reset did not download within \(Int(timeout)) s")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
        sideRealm.refresh()
        return (try sideRealm.replicaState(), try sideRealm.loadSyncState())
    }

    /// Flexible sync: tells the server which objects the realm holds (right after ident).
    private func sendHeldObjects() async {
        guard let realm else { return }
        realm.refresh()
        do {
            await connection.send(.heldObjects(HeldObjects(session: id, objects: try realm.heldObjectIDs())))
        } catch {
            report(SyncError(.clientInternalError, "cannot list the realm's objects: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    /// Records a subscription set's new state and wakes whoever waits for it.
    private func markSubscriptions(_ body: (Realm) throws -> Void) {
        guard let realm else { return }
        do {
            try realm.write { try body(realm) }
            SubscriptionEvents.stateChanged(path: configuration.storageKey)
        } catch {
            report(SyncError(.clientInternalError, "the subscription state could not be saved: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    private func save() {
        guard let realm else { return }
        state.pending = merger.pending
        do {
            try realm.write {
                try realm.saveSyncState(state, includingPending: state.pending != savedPending)
                if pendingReset == nil, savedPendingReset != nil { try realm.savePendingReset(nil) }
            }
            savedPending = state.pending
            savedPendingReset = pendingReset
        } catch {
            report(SyncError(.clientInternalError, "the sync state could not be saved: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    private func report(_ error: SyncError) {
        // Connection failures are retried with backoff: logged, not alarming.
        guard error.code != .connectionFailed else {
            logger.info("\(error)")
            publicSession?.connectionFailed(error)
            return
        }
        if error.code == .tlsHandshakeFailed {
            // Retried with backoff too, but reported (as Realm does): retrying will not make the
            // certificate trusted. An asynchronous open that must not wait fails with it.
            publicSession?.connectionFailed(error)
        }
        logger.warning("\(error)")
        sync.user.core.syncManager.report(error, session: publicSession)
    }

    private func publish() {
        guard let session, !isStopped.load(ordering: .acquiring) else { return }
        var (state, connection): (SyncSession.State, SyncSession.ConnectionState) = switch session.state {
        case .inactive: (.inactive, .disconnected)
        case .waitingForConnection: (.active, .connecting)
        case .binding: (.active, .connecting)
        case .active: (.active, .connected)
        case .waitingForAccessToken: (.waitingForAccessToken, .connecting)
        case .waitingForReset: (.inactive, .connected)
        case .dying: (.dying, .connected)
        case .failed: (.inactive, .disconnected)
        }
        if userSuspended { state = .paused }
        publicSession?.update(state: state, connection: connection)
    }
}

extension SyncSession.Progress {
    init(_ progress: ClientSession.TransferProgress) {
        self.init(transferredBytes: Int(clamping: progress.transferredBytes), transferrableBytes: Int(clamping: progress.transferrableBytes))
    }
}

/// Carries a wait's id from the actor to the cancellation handler.
final class WaitBox: @unchecked Sendable {
    private let lock = NSLock()
    private var _id: ClientSession.WaitID?
    private var _cancelled = false
    var id: ClientSession.WaitID? {
        get { lock.withLock { _id } }
        set { lock.withLock { _id = newValue } }
    }
    var isCancelled: Bool {
        get { lock.withLock { _cancelled } }
        set { lock.withLock { _cancelled = newValue } }
    }
}

extension SyncSession {
    /// Tests only: runs `hook` once a client reset of that realm downloaded its fresh copy, before
    /// it changes the file (to commit writes that race the reset).
    @_spi(Testing)
    public static func whenFreshCopyDownloaded(for configuration: Realm.Configuration, _ hook: (@Sendable () -> Void)?) {
        SessionEngine.freshCopyHooks.withLock { $0[configuration.storageKey] = hook }
    }

    /// Tests only: makes the next download writes of the realm configured by `configuration` fail
    /// with `fault`'s error (nil removes it), as a full disk or an I/O error would.
    @_spi(Testing)
    public static func injectDownloadWriteFault(for configuration: Realm.Configuration, _ fault: (@Sendable () throws -> Void)?) {
        SessionEngine.downloadWriteFaults.withLock { $0[configuration.storageKey] = fault }
    }
}
