import AtollCore
import Foundation
import Logging

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
    private var realm: Realm?
    private var waits: [ClientSession.WaitID: CheckedContinuation<Void, Swift.Error>] = [:]
    private var timers: [ClientSession.Timer: _Concurrency.Task<Void, Never>] = [:]
    private var logger = Logger(label: "atoll.sync.session")

    init(id: SessionID, configuration: Realm.Configuration, sync: SyncConfiguration, connection: SyncConnection) {
        self.id = id
        self.configuration = configuration
        self.sync = sync
        self.connection = connection
        logger.logLevel = .warning
    }

    // MARK: Life cycle

    func start() async {
        do {
            if realm == nil {
                let realm = try Realm(configuration: configuration, confinement: .actor(self))
                realm.autorefresh = false
                self.realm = realm
                state = try realm.loadSyncState()
                merger = ClientMerger(fileIdent: state.fileIdent.ident, serverVersion: state.serverVersion, pending: state.pending)
            }
            if session == nil {
                let token = try await sync.user.validAccessToken()
                let pending = try unacknowledgedUploads()
                session = ClientSession(
                    id: id, target: sync.target, accessToken: token,
                    checkpoint: ClientSession.Checkpoint(fileIdent: state.fileIdent, serverVersion: state.serverVersion, epoch: state.epoch),
                    pending: pending,
                    configuration: ClientSession.Configuration(backoff: ReconnectBackoff(seed: UInt64.random(in: 0...UInt64.max))))
                await connection.register(self, id: id)
            }
            let isOpen = await connection.status == .open
            await run { $0.start(connectionIsOpen: isOpen) }
        } catch {
            report(SyncError(.clientInternalError, "the sync session of \(configuration.storageKey) could not start: \(error)",
                             underlying: error as? any Swift.Error & Sendable))
        }
    }

    /// The local changesets the server has not acknowledged, for (re)upload.
    private func unacknowledgedUploads() throws -> [UploadChangeset] {
        guard let realm else { return [] }
        realm.refresh()
        let changesets = try realm.localChangesets(after: state.acknowledgedClientVersion)
        state.queuedClientVersion = max(state.queuedClientVersion, changesets.last?.version ?? state.acknowledgedClientVersion)
        for changeset in changesets where !merger.pending.contains(where: { $0.version == changeset.version }) {
            merger.recordLocal(changeset)
        }
        return changesets.map { UploadChangeset($0, lastServerVersion: state.serverVersion) }
    }

    func suspend() async { await run { $0.suspend() } }

    /// Ends the session for good: unbinds, cancels timers, fails waits.
    func stop() async {
        await run { $0.suspend() }
        for timer in timers.values { timer.cancel() }
        timers = [:]
        for (_, wait) in waits { wait.resume(throwing: SyncError(.clientUserError, "the user logged out")) }
        waits = [:]
        await connection.unregister(id)
        session = nil
        realm = nil
    }

    func reconnect() async {
        await connection.close()
    }

    // MARK: Inputs

    func connectionOpened() async { await run { $0.connectionOpened() } }

    func connectionClosed(error: String?) async { await run { $0.connectionClosed(error: error) } }

    func received(_ message: ServerMessage) async { await run { $0.received(message) } }

    /// A local write committed: queue its changeset.
    func localCommitted() async {
        guard let realm, session != nil else { return }
        realm.refresh()
        do {
            for changeset in try realm.localChangesets(after: state.queuedClientVersion) {
                state.queuedClientVersion = changeset.version
                merger.recordLocal(changeset)
                await run { $0.localChangesetCommitted(changeset) }
            }
        } catch {
            report(SyncError(.clientInternalError, "cannot read local history: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    func wait(for direction: ClientSession.Direction) async throws {
        if session == nil { await start() }
        guard session != nil else { throw SyncError(.clientInternalError, "the sync session could not start") }
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
                // The session decides when to upload; what to upload is the merger's: every
                // pending changeset, rebased over every download, on one base (docs/merge.md).
                // Re-sending is safe: the server integrates each client version once.
                guard let batch = merger.upload() else { continue }
                await connection.send(.upload(Upload(
                    session: id, changesets: batch.changesets.map { UploadChangeset($0, lastServerVersion: batch.baseServerVersion) })))
            case .send(let message):
                await connection.send(message)
            case .scheduleTimer(let timer, let generation, let delay):
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
                integrate(batch)
            case .uploadAcknowledged(let clientVersion):
                state.acknowledgedClientVersion = max(state.acknowledgedClientVersion, clientVersion)
                save()
            case .reportProgress:
                break
            case .reportError(let error):
                report(SyncError(error))
            case .requestClientReset(let request):
                report(SyncError(.clientResetError, "the server requires a client reset (\(request.reason)): \(request.message)"))
            case .refreshAccessToken:
                do {
                    let token = try await sync.user.validAccessToken(forceRefresh: true)
                    await run { $0.accessTokenRefreshed(token) }
                } catch {
                    report(SyncError(.clientUserError, "the access token could not be refreshed: \(error)", underlying: error as? any Swift.Error & Sendable))
                }
            case .querySetRejected(_, let message):
                report(SyncError(.invalidFlexibleSyncSubscriptions, message))
            case .completeWait(let wait):
                waits.removeValue(forKey: wait)?.resume()
            case .failWait(let wait, let error):
                waits.removeValue(forKey: wait)?.resume(throwing: SyncError(error))
            }
        }
        publish()
    }

    /// Applies a download: the merger rebases the pending local changes and says what to apply.
    private func integrate(_ batch: ClientSession.DownloadBatch) {
        guard let realm else { return }
        let entries = batch.changesets.map { download -> HistoryEntry in
            var changeset = download.changeset
            changeset.fileIdent = download.originFileIdent
            changeset.timestamp = download.originTimestamp
            return HistoryEntry(serverVersion: download.serverVersion, changeset: changeset)
        }
        let toApply = merger.receive(entries)
        state.serverVersion = max(merger.serverVersion, batch.checkpoint.serverVersion)
        state.epoch = batch.checkpoint.epoch
        state.pending = merger.pending
        do {
            try realm.write {
                try realm.integrateRemoteInWrite(toApply)
                try realm.saveSyncState(state)
            }
        } catch {
            report(SyncError(.clientInternalError, "a download could not be integrated: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    private func save() {
        guard let realm else { return }
        state.pending = merger.pending
        do {
            try realm.write { try realm.saveSyncState(state) }
        } catch {
            report(SyncError(.clientInternalError, "the sync state could not be saved: \(error)", underlying: error as? any Swift.Error & Sendable))
        }
    }

    private func report(_ error: SyncError) {
        // Connection failures are retried with backoff: logged, not alarming.
        guard error.code != .connectionFailed else {
            logger.info("\(error)")
            return
        }
        logger.warning("\(error)")
        sync.user.core.syncManager.report(error, session: publicSession)
    }

    private func publish() {
        guard let session else { return }
        let (state, connection): (SyncSession.State, SyncSession.ConnectionState) = switch session.state {
        case .inactive: (.inactive, .disconnected)
        case .waitingForConnection: (.active, .connecting)
        case .binding: (.active, .connecting)
        case .active: (.active, .connected)
        case .waitingForAccessToken: (.waitingForAccessToken, .connecting)
        case .waitingForReset: (.inactive, .connected)
        case .dying: (.dying, .connected)
        case .failed: (.inactive, .disconnected)
        }
        publicSession?.update(state: state, connection: connection)
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
