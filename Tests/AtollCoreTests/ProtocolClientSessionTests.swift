import AtollCore
import Testing

/// The client session state machine, driven through scripted scenarios.
@Suite struct ProtocolClientSessionTests {
    typealias Action = ClientSession.Action
    static let file = FileIdent(ident: 7, salt: 99)
    static let epoch: SyncEpoch = 5

    static func session(saved: ClientSyncState = ClientSyncState(), unqueued: [Changeset] = [],
                        target: SyncTarget = .partition(.string("tasks"))) -> ClientSession
    {
        ClientSession(id: 1, target: target, accessToken: "token", saved: saved, unqueued: unqueued,
                      configuration: .init(backoff: ReconnectBackoff(seed: 42, initialMilliseconds: 1000, maximumMilliseconds: 60_000)))
    }

    /// The client's own changeset `clientVersion` back from the server at `serverVersion`.
    static func echo(_ clientVersion: Int64, at serverVersion: Int64) -> DownloadChangeset {
        DownloadChangeset(serverVersion: serverVersion, originFileIdent: file.ident, originTimestamp: 1_700_000_000_000 + clientVersion,
                          lastClientVersion: clientVersion, changeset: ProtocolFixtures.changeset(clientVersion))
    }

    static func download(_ changesets: [DownloadChangeset], to serverVersion: Int64) -> ServerMessage {
        .download(Download(session: 1, epoch: epoch, changesets: changesets,
                           progress: DownloadProgress(serverVersion: serverVersion, latestServerVersion: serverVersion, downloadableBytes: 0)))
    }

    /// Carries out the `.integrate` of `actions` as a shell whose write commits: the actions that follow.
    static func applied(_ actions: [Action], to s: inout ClientSession, raced: [Changeset] = []) -> [Action] {
        guard let batch = actions.lazy.compactMap({ if case .integrate(let b) = $0 { b } else { nil } }).first else { return [] }
        var copy = s
        _ = copy.integrate(batch, raced: raced)
        s = copy
        return s.downloadApplied()
    }

    static func answer(latest: Int64 = 0, epoch: SyncEpoch = epoch) -> ServerMessage {
        .identAnswer(IdentAnswer(session: 1, epoch: epoch, fileIdent: file, latestServerVersion: latest))
    }

    static func ack(_ client: Int64, server: Int64 = 0, epoch: SyncEpoch = epoch) -> ServerMessage {
        .uploadAck(UploadAck(session: 1, epoch: epoch, clientVersion: client, serverVersion: server))
    }

    static func download(_ versions: [Int64], to serverVersion: Int64, epoch: SyncEpoch = epoch, last: Bool = true) -> ServerMessage {
        .download(Download(session: 1, epoch: epoch, changesets: versions.map { ProtocolFixtures.serverChangeset($0) },
                           progress: DownloadProgress(serverVersion: serverVersion, latestServerVersion: serverVersion, downloadableBytes: 0),
                           isLastInBatch: last))
    }

    static func uploads(_ versions: [Int64], base: Int64 = 0) -> Action {
        // Pending changesets are stamped with the client's file ident once it has one.
        .send(.upload(Upload(session: 1, changesets: versions.map { UploadChangeset(ProtocolFixtures.changeset($0), lastServerVersion: base) })))
    }

    /// A session that went through bind and ident on an open connection.
    static func activeSession() -> ClientSession {
        var s = session()
        _ = s.start(connectionIsOpen: true)
        _ = s.received(answer())
        return s
    }

    func sent(_ actions: [Action]) -> [ClientMessage] {
        actions.compactMap { if case .send(let m) = $0 { m } else { nil } }
    }

    func errors(_ actions: [Action]) -> [SessionError] {
        actions.compactMap { if case .reportError(let e) = $0 { e } else { nil } }
    }

    func delay(_ actions: [Action]) -> Int64? {
        actions.lazy.compactMap { if case .scheduleTimer(.reconnect, _, let d) = $0 { d } else { nil } }.first
    }

    // MARK: Scenarios

    @Test func normalBindIdentUploadAckDownloadMark() {
        var s = Self.session()
        #expect(s.start(connectionIsOpen: false) == [.requestConnection])
        #expect(s.state == .waitingForConnection)
        #expect(s.connectionOpened() == [
            .cancelTimer(.reconnect),
            .send(.bind(Bind(session: 1, target: .partition(.string("tasks")), accessToken: "token"))),
            .send(.ident(Ident(session: 1, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none))),
        ])
        #expect(s.state == .binding)

        // A write while binding waits for the ident answer.
        let committed = s.localChangesetCommitted(ProtocolFixtures.changeset(1))
        #expect(sent(committed).isEmpty)
        #expect(s.received(Self.answer()) == [.persistIdentity(Self.file, Self.epoch), Self.uploads([1])])
        #expect(s.state == .active)
        #expect(s.checkpoint.fileIdent == Self.file)

        // Within one bind the server takes each client version once: 2 waits for 1 to come back.
        #expect(sent(s.localChangesetCommitted(ProtocolFixtures.changeset(2))).isEmpty)
        let (upload, none) = s.wait(for: .upload)
        #expect(none.isEmpty)
        #expect(s.received(Self.ack(1, server: 1)).first == .uploadAcknowledged(clientVersion: 1))
        let echoed = Self.applied(s.received(Self.download([Self.echo(1, at: 1)], to: 1)), to: &s)
        #expect(sent(echoed) == [.upload(Upload(session: 1, changesets: [UploadChangeset(ProtocolFixtures.changeset(2), lastServerVersion: 1)]))])
        let acked = s.received(Self.ack(2, server: 3))
        #expect(acked.first == .uploadAcknowledged(clientVersion: 2))
        #expect(acked.last == .completeWait(upload))
        #expect(s.unacknowledged.isEmpty && s.uploadProgress.transferredBytes == s.uploadProgress.transferrableBytes)

        let downloaded = s.received(Self.download([2, 3], to: 3))
        guard case .integrate(let batch) = downloaded.first else { Issue.record("no integrate: \(downloaded)"); return }
        #expect(batch.changesets.map(\.serverVersion) == [2, 3])
        #expect(batch.checkpoint == ClientSession.Checkpoint(fileIdent: Self.file, serverVersion: 3, epoch: Self.epoch))
        // The checkpoint moves once the download is written, not when it arrives.
        #expect(s.checkpoint.serverVersion == 1)
        _ = Self.applied(downloaded, to: &s)
        #expect(s.checkpoint.serverVersion == 3)
        #expect(s.savedState.serverVersion == 3)

        let (download, mark) = s.wait(for: .download)
        #expect(mark == [.send(.mark(Mark(session: 1, requestID: 1)))])
        #expect(s.received(.markAnswer(MarkAnswer(session: 1, epoch: Self.epoch, requestID: 1, serverVersion: 3))) == [.completeWait(download)])
    }

    @Test func uploadWaitCompletesAtOnceWhenNothingIsPending() {
        var s = Self.activeSession()
        let (id, actions) = s.wait(for: .upload)
        #expect(actions == [.completeWait(id)])
    }

    @Test func uploadWaitCoversOnlyWhatWasCommittedBeforeIt() {
        var s = Self.activeSession()
        _ = s.localChangesetCommitted(ProtocolFixtures.changeset(1))
        let (id, _) = s.wait(for: .upload)
        _ = s.localChangesetCommitted(ProtocolFixtures.changeset(2))
        #expect(s.received(Self.ack(1)).last == .completeWait(id))
    }

    @Test func disconnectMidUploadResendsFromTheLastAckAfterReconnect() {
        var s = Self.activeSession()
        for v in Int64(1)...3 { _ = s.localChangesetCommitted(ProtocolFixtures.changeset(v)) }
        _ = s.received(Self.ack(1))
        let closed = s.connectionClosed(error: "connection reset by peer")
        #expect(errors(closed) == [SessionError(code: .connectionFailed, message: "connection reset by peer", action: .retryLater, isFatal: false)])
        #expect(s.state == .waitingForConnection)
        guard case .scheduleTimer(.reconnect, let generation, _) = closed.last else { Issue.record("\(closed)"); return }
        #expect(s.timerFired(.reconnect, generation: generation) == [.requestConnection])
        let bound = s.connectionOpened()
        #expect(sent(bound).last == .ident(Ident(session: 1, fileIdent: Self.file, lastServerVersion: 0, epoch: Self.epoch)))
        // Everything not yet back in a download goes on the new bind; the server skips 1, which
        // it acknowledged.
        #expect(s.received(Self.answer()) == [Self.uploads([1, 2, 3])])
        // The server had integrated 2 before the drop: its ack of 2 and then 3 is idempotent.
        #expect(s.received(Self.ack(2)).first == .uploadAcknowledged(clientVersion: 2))
        #expect(s.received(Self.ack(2)) == [])
        #expect(s.received(Self.ack(3)).first == .uploadAcknowledged(clientVersion: 3))
        #expect(s.unacknowledged.isEmpty)
    }

    /// What a bind sent dies with it: a session stopped by an error and started again on the
    /// still open connection (no close in between) sends its unacknowledged changesets again.
    /// Found by the chaos test: the upload wait stalled on a live connection until it was cut.
    @Test func aSessionRestartedAfterAFailureResendsWhatItsLastBindDidNotGetAcknowledged() {
        var s = Self.activeSession()
        #expect(sent(s.localChangesetCommitted(ProtocolFixtures.changeset(1))) == sent([Self.uploads([1])]))
        #expect(sent(s.localChangesetCommitted(ProtocolFixtures.changeset(2))).isEmpty)  // after 1's echo
        _ = s.received(Self.ack(1))
        let failed = s.received(Self.ack(9))  // a protocol violation: the session stops, the connection stays
        #expect(errors(failed).map(\.code) == [.clientSessionError])
        #expect(sent(s.start(connectionIsOpen: true)).count == 2)
        let (wait, _) = s.wait(for: .upload)
        #expect(s.received(Self.answer()) == [Self.uploads([1, 2])])
        #expect(s.received(Self.ack(2)).last == .completeWait(wait))
    }

    /// The same for a flexible session's query set: the new bind sends it again after ident.
    @Test func aFlexibleSessionRestartedAfterAFailureSendsItsQuerySetAgain() {
        var s = Self.session(target: .flexible)
        _ = s.changeQuerySet(version: 1, queries: [])
        _ = s.start(connectionIsOpen: true)
        #expect(sent(s.received(Self.answer())) == [.queryChange(QueryChange(session: 1, querySetVersion: 1, queries: []))])
        _ = s.received(Self.ack(9))
        _ = s.start(connectionIsOpen: true)
        #expect(sent(s.received(Self.answer())) == [.queryChange(QueryChange(session: 1, querySetVersion: 1, queries: []))])
    }

    /// Every pending changeset goes in one upload on one base (docs/merge.md): the server
    /// integrates an upload whole, so no part of it sits on a base the rest does not share.
    @Test func everyPendingChangesetGoesInOneUploadOnOneBase() {
        let pending = (1...5).map { ProtocolFixtures.changeset($0) }
        var s = ClientSession(id: 1, target: .flexible, accessToken: "t",
                              saved: ClientSyncState(fileIdent: Self.file, serverVersion: 4, epoch: Self.epoch, queuedClientVersion: 5, pending: pending))
        _ = s.start(connectionIsOpen: true)
        let messages = sent(s.received(Self.answer(latest: 4)))
        // A flexible session always sends its query set (version 0, no queries: nothing yet),
        // after the uploads, which may declare the types it names.
        #expect(messages == [
            .upload(Upload(session: 1, changesets: pending.map { UploadChangeset($0, lastServerVersion: 4) })),
            .queryChange(QueryChange(session: 1, querySetVersion: 0, queries: [])),
        ])
    }

    /// A backlog goes up in parts of at most `maxUploadChangesets`: each is integrated in bounded
    /// time, and the next part follows the previous one's echo, on the new base.
    @Test func aLongBacklogIsUploadedInParts() {
        let total = Int64(ClientSession.maxUploadChangesets + 44)
        let pending = (1...total).map { ProtocolFixtures.changeset($0) }
        var s = ClientSession(id: 1, target: .partition(.string("tasks")), accessToken: "t",
                              saved: ClientSyncState(fileIdent: Self.file, serverVersion: 4, epoch: Self.epoch, queuedClientVersion: total, pending: pending))
        _ = s.start(connectionIsOpen: true)
        let first = Int64(ClientSession.maxUploadChangesets)
        #expect(sent(s.received(Self.answer(latest: 4))) == [
            .upload(Upload(session: 1, changesets: pending[0..<Int(first)].map { UploadChangeset($0, lastServerVersion: 4) })),
        ])
        #expect(sent(s.received(Self.ack(first, server: 4 + first))).isEmpty, "the next part waits for the echo")
        let echo = Self.download((1...first).map { Self.echo($0, at: 4 + $0) }, to: 4 + first)
        let next = sent(Self.applied(s.received(echo), to: &s))
        #expect(next == [.upload(Upload(session: 1, changesets: pending[Int(first)...].map { UploadChangeset($0, lastServerVersion: 4 + first) }))])
    }

    /// Parts also stop at about `maxUploadBytes`; a changeset larger than that goes alone.
    @Test func largeChangesetsAreUploadedInPartsOfAboutAMebibyte() {
        let big = String(repeating: "x", count: ClientSession.maxUploadBytes * 6 / 10)
        let pending = (1...3).map { ProtocolFixtures.changeset(Int64($0), name: $0 == 3 ? "small" : big) }
        var s = ClientSession(id: 1, target: .partition(.string("tasks")), accessToken: "t",
                              saved: ClientSyncState(fileIdent: Self.file, serverVersion: 4, epoch: Self.epoch, queuedClientVersion: 3, pending: pending))
        _ = s.start(connectionIsOpen: true)
        let uploads = sent(s.received(Self.answer(latest: 4))).compactMap { if case .upload(let u) = $0 { u } else { nil } }
        #expect(uploads.map { $0.changesets.map(\.changeset.version) } == [[1]])
        let echo = Self.download([Self.echo(1, at: 5)], to: 5)
        let next = sent(Self.applied(s.received(echo), to: &s)).compactMap { if case .upload(let u) = $0 { u } else { nil } }
        #expect(next.map { $0.changesets.map(\.changeset.version) } == [[2, 3]])
    }

    /// A session starting from a saved state uploads its pending list plus what was committed
    /// after it was saved, and never a changeset that came back already (found by the client
    /// kill test: one re-sent out of order was refused forever).
    @Test func aSessionStartedFromItsSavedStateUploadsWhatTheServerDoesNotHave() {
        // 1 came back in a download (it left the pending list) before its ack was saved; 2 and 3
        // are pending; 4 was committed after the state was saved.
        let saved = ClientSyncState(fileIdent: Self.file, serverVersion: 9, epoch: Self.epoch, acknowledgedClientVersion: 0,
                                    queuedClientVersion: 3, pending: [ProtocolFixtures.changeset(2), ProtocolFixtures.changeset(3)])
        var s = Self.session(saved: saved, unqueued: [ProtocolFixtures.changeset(4)])
        #expect(s.savedState.pending.map(\.version) == [2, 3, 4])
        _ = s.start(connectionIsOpen: true)
        #expect(s.received(Self.answer(latest: 9)) == [Self.uploads([2, 3, 4], base: 9)])
        let (wait, _) = s.wait(for: .upload)
        #expect(s.received(Self.ack(4)).last == .completeWait(wait))
    }

    /// A download's write that fails leaves the session where the file is: the server sends it
    /// again on a new bind, and nothing of it counts as integrated.
    @Test func aDownloadNotWrittenIsAskedForAgain() {
        var s = Self.activeSession()
        _ = s.localChangesetCommitted(ProtocolFixtures.changeset(1))
        let downloaded = s.received(Self.download([Self.echo(1, at: 1)], to: 1))
        #expect(downloaded.contains { if case .integrate = $0 { true } else { false } })
        #expect(s.downloadNotApplied() == [.send(.unbind(1))])
        #expect(s.checkpoint.serverVersion == 0 && s.savedState.pending.map(\.version) == [1])
        _ = s.received(.unbound(Unbound(session: 1, epoch: Self.epoch)))
        #expect(s.state == .binding)
        // The same download again is not "going back".
        _ = s.received(Self.answer())
        let again = s.received(Self.download([Self.echo(1, at: 1)], to: 1))
        #expect(errors(again).isEmpty)
        _ = Self.applied(again, to: &s)
        #expect(s.checkpoint.serverVersion == 1 && s.savedState.pending.isEmpty)
    }

    /// Commits the download's write found (made on another thread after the last hand-over) are
    /// rebased with the pending list and uploaded once the write committed.
    @Test func commitsRacingADownloadAreUploadedAfterIt() {
        var s = Self.activeSession()
        let downloaded = s.received(Self.download([1], to: 1))
        let after = Self.applied(downloaded, to: &s, raced: [ProtocolFixtures.changeset(1)])
        #expect(s.queuedClientVersion == 1)
        #expect(sent(after).count == 1)
        guard case .upload(let upload) = sent(after).first else { Issue.record("\(after)"); return }
        #expect(upload.changesets.map(\.clientVersion) == [1] && upload.changesets[0].lastServerVersion == 1)
    }

    @Test func aFailedTLSHandshakeIsReportedAsCode13AndRetriedWithBackoff() {
        var s = Self.session()
        _ = s.start(connectionIsOpen: false)
        let failed = s.connectionClosed(error: "certificate not trusted", code: .tlsHandshakeFailed)
        #expect(errors(failed) == [SessionError(code: .tlsHandshakeFailed, message: "certificate not trusted", action: .retryLater, isFatal: false)])
        #expect(s.state == .waitingForConnection)
        guard case .scheduleTimer(.reconnect, let generation, _) = failed.last else { Issue.record("\(failed)"); return }
        #expect(s.timerFired(.reconnect, generation: generation) == [.requestConnection])
    }

    @Test func backoffDelaysGrowAndResetAfterSuccess() {
        var s = Self.session()
        _ = s.start(connectionIsOpen: false)
        var delays: [Int64] = []
        var generation: UInt64 = 0
        for _ in 0..<8 {
            let actions = s.connectionClosed(error: "refused")
            delays.append(delay(actions)!)
            if case .scheduleTimer(_, let g, _) = actions.last { generation = g }
            #expect(s.timerFired(.reconnect, generation: generation) == [.requestConnection])
        }
        #expect(zip(delays, delays.dropFirst()).allSatisfy { $0 < $1 || $1 > 45_000 }, "\(delays)")
        #expect(delays[0] <= 1000 && delays[0] >= 750)
        #expect(delays.last! <= 60_000 && delays.last! >= 45_000)
        // A stale timer does nothing.
        #expect(s.timerFired(.reconnect, generation: generation - 1) == [])
        // Success resets the backoff.
        _ = s.connectionOpened()
        _ = s.received(Self.answer())
        #expect(delay(s.connectionClosed(error: "drop"))! <= 1000)
    }

    @Test func backoffIsReproducibleFromItsSeed() {
        var a = ReconnectBackoff(seed: 7), b = ReconnectBackoff(seed: 7), c = ReconnectBackoff(seed: 8)
        let da = (0..<10).map { _ in a.nextDelay() }, db = (0..<10).map { _ in b.nextDelay() }, dc = (0..<10).map { _ in c.nextDelay() }
        #expect(da == db)
        #expect(da != dc)
    }

    @Test func resetRequiredAnswerAsksForAClientResetThenResumes() {
        var s = Self.session(saved: ClientSyncState(fileIdent: Self.file, serverVersion: 30, epoch: 4, queuedClientVersion: 1,
                                                    pending: [ProtocolFixtures.changeset(1)]))
        _ = s.start(connectionIsOpen: true)
        let actions = s.received(.resetRequired(ResetRequired(session: 1, epoch: 6, reason: .epochChanged, recoveryAllowed: true,
                                                              message: "sync was terminated")))
        let request = ClientSession.ResetRequest(reason: .epochChanged, message: "sync was terminated", recoveryAllowed: true, serverEpoch: 6)
        #expect(actions == [.cancelTimer(.reconnect), .requestClientReset(request)])
        #expect(s.state == .waitingForReset(request))
        // Nothing uploads while waiting.
        #expect(sent(s.localChangesetCommitted(ProtocolFixtures.changeset(2))).isEmpty)

        // The reset settles every local version up to 2; its own commit (3) holds what it recovered.
        let fresh = ClientSyncState(fileIdent: FileIdent(ident: 8, salt: 1), serverVersion: 3, epoch: 6,
                                    acknowledgedClientVersion: 2, queuedClientVersion: 2)
        let resumed = s.resetCompleted(fresh)
        #expect(sent(resumed).last == .ident(Ident(session: 1, fileIdent: fresh.fileIdent, lastServerVersion: 3, epoch: 6)))
        var recovered = ProtocolFixtures.changeset(3)
        recovered.fileIdent = 8
        _ = s.localChangesetCommitted(recovered)
        let active = s.received(.identAnswer(IdentAnswer(session: 1, epoch: 6, fileIdent: fresh.fileIdent, latestServerVersion: 3)))
        #expect(sent(active) == [.upload(Upload(session: 1, changesets: [UploadChangeset(recovered, lastServerVersion: 3)]))])
    }

    @Test func anIdentAnswerWithAnotherEpochIsAReset() {
        var s = Self.session(saved: ClientSyncState(fileIdent: Self.file, serverVersion: 30, epoch: 4))
        _ = s.start(connectionIsOpen: true)
        let actions = s.received(Self.answer(latest: 40, epoch: 5))
        #expect(actions.last == .requestClientReset(.init(reason: .epochChanged, message: "the server's history changed (epoch 5, client has epoch 4)",
                                                          recoveryAllowed: true, serverEpoch: 5)))
    }

    @Test func aServerBehindTheClientIsAReset() {
        var s = Self.session(saved: ClientSyncState(fileIdent: Self.file, serverVersion: 30, epoch: Self.epoch))
        _ = s.start(connectionIsOpen: true)
        guard case .requestClientReset(let r) = s.received(Self.answer(latest: 20)).last else { Issue.record(); return }
        #expect(r.reason == .historyRestored)
    }

    @Test func aDownloadFromAnotherEpochIsAReset() {
        var s = Self.activeSession()
        guard case .requestClientReset(let r) = s.received(Self.download([1], to: 1, epoch: 9)).last else { Issue.record(); return }
        #expect(r.serverEpoch == 9)
    }

    @Test func downloadsGoingBackAreAProtocolViolation() {
        var s = Self.activeSession()
        _ = s.received(Self.download([1, 2], to: 2))
        let (wait, _) = s.wait(for: .download)
        let actions = s.received(Self.download([2], to: 2))
        #expect(errors(actions).map(\.code) == [.clientSessionError])
        #expect(actions.contains(.send(.unbind(1))))
        #expect(actions.contains { if case .failWait(wait, _) = $0 { true } else { false } })
        guard case .failed = s.state else { Issue.record("\(s.state)"); return }
    }

    /// A partition's history comes whole: a download that skips versions (or whose progress runs
    /// past its last changeset) is a protocol violation, not a checkpoint the file would claim.
    @Test func aDownloadWithMissingVersionsIsAProtocolViolation() {
        var gap = Self.activeSession()
        #expect(errors(gap.received(Self.download([1, 3], to: 3))).map(\.code) == [.clientSessionError])
        var late = Self.activeSession()
        _ = late.received(Self.download([1], to: 1))
        #expect(errors(late.received(Self.download([3], to: 3))).map(\.code) == [.clientSessionError])
        var ahead = Self.activeSession()
        #expect(errors(ahead.received(Self.download([1], to: 2))).map(\.code) == [.clientSessionError])
        // A new file's download of a compacted history starts with the server's snapshot.
        var fresh = Self.activeSession()
        let snapshot = DownloadChangeset(serverVersion: 40, originFileIdent: 0, originTimestamp: 0, lastClientVersion: 0,
                                         changeset: Changeset(version: 0, timestamp: 0, fileIdent: 0, instructions: []))
        let actions = fresh.received(Self.download([snapshot, ProtocolFixtures.serverChangeset(41)], to: 41))
        #expect(errors(actions).isEmpty && actions.contains { if case .integrate = $0 { true } else { false } })
    }

    @Test func bootstrapsAreIntegratedWhole() {
        var s = Self.activeSession()
        let first = s.received(Self.download([1, 2], to: 2, last: false))
        #expect(!first.contains { if case .integrate = $0 { true } else { false } })
        guard case .integrate(let batch) = s.received(Self.download([3], to: 3)).first else { Issue.record(); return }
        #expect(batch.changesets.map(\.serverVersion) == [1, 2, 3])
    }

    @Test func downloadWaitsSurviveAReconnect() {
        var s = Self.activeSession()
        let (wait, _) = s.wait(for: .download)
        _ = s.connectionClosed(error: nil)
        _ = s.connectionOpened()
        #expect(s.received(Self.answer()) == [.send(.mark(Mark(session: 1, requestID: 1)))])
        #expect(s.received(.markAnswer(MarkAnswer(session: 1, epoch: Self.epoch, requestID: 1, serverVersion: 0))) == [.completeWait(wait)])
    }

    @Test func messagesOutOfOrderFailTheSession() {
        var s = Self.session()
        _ = s.start(connectionIsOpen: true)
        let actions = s.received(Self.ack(1))
        #expect(errors(actions).first?.message == "upload ack received while the session is binding")
    }

    @Test func suspendUnbindsAndResumeBindsAgain() {
        var s = Self.activeSession()
        #expect(s.suspend() == [.send(.unbind(1))])
        #expect(s.state == .dying)
        // What the server sent before it read the unbind arrives still, and is dropped.
        #expect(s.received(Self.download([1], to: 1)) == [])
        #expect(s.received(Self.ack(1)) == [])
        #expect(s.state == .dying)
        #expect(s.received(.unbound(Unbound(session: 1, epoch: Self.epoch))) == [])
        #expect(s.state == .inactive)
        // Suspended by the app: a start (a login, a realm opened again) does not bind.
        #expect(s.start(connectionIsOpen: true) == [])
        #expect(s.status == .init(isActive: false, connection: .disconnected))
        #expect(sent(s.resume(connectionIsOpen: true)).count == 2)
        #expect(s.state == .binding)
        #expect(s.status == .init(isActive: true, connection: .connecting))
    }

    @Test func aSuspendedSessionStaysInactiveThroughAResetTokenAndRestart() {
        var s = Self.activeSession()
        _ = s.received(.error(ErrorMessage(code: .accessTokenExpired, message: "expired", action: .refreshAccessToken, session: 1, epoch: Self.epoch)))
        #expect(s.state == .waitingForAccessToken)
        _ = s.suspend()
        #expect(s.accessTokenRefreshed("new") == [])
        #expect(s.state == .inactive)

        var r = Self.activeSession()
        _ = r.received(.resetRequired(ResetRequired(session: 1, epoch: Self.epoch, reason: .historyRestored, recoveryAllowed: true, message: "m")))
        _ = r.suspend()
        // The reset completes while suspended: nothing binds until resume.
        let completed = r.resetCompleted(ClientSyncState(fileIdent: Self.file, serverVersion: 3, epoch: Self.epoch))
        #expect(sent(completed).isEmpty)
        #expect(r.state == .inactive)
        #expect(sent(r.resume(connectionIsOpen: true)).count == 2)
    }

    @Test func aWithheldUploadIsSentAgainOnTheSameBind() {
        var s = Self.activeSession()
        let first = s.localChangesetCommitted(ProtocolFixtures.changeset(1))
        #expect(sent(first).count == 1)
        // The shell withheld it (the app suspended on another thread), then the app resumed
        // before the machine took the suspension: the next upload starts with version 1 again.
        s.withheld(uploadFrom: 1, querySet: false)
        _ = s.localChangesetCommitted(ProtocolFixtures.changeset(2))
        // Nothing goes until version 1's upload is sent: it is the next upload.
        let ups = sent(s.received(Self.download([], to: 0))).compactMap { if case .upload(let u) = $0 { u } else { nil } }
        #expect(ups.isEmpty || ups.first?.changesets.first?.changeset.version == 1)
    }

    @Test func reconnectNowSkipsTheDelayAndStaleTimersAreIgnored() {
        var s = Self.session()
        _ = s.start(connectionIsOpen: true)
        let closed = s.connectionClosed(error: "reset")
        guard case .scheduleTimer(.reconnect, let generation, _)? = closed.last else {
            Issue.record("no reconnect timer: \(closed)")
            return
        }
        #expect(s.reconnectNow() == [.cancelTimer(.reconnect), .requestConnection])
        #expect(s.timerFired(.reconnect, generation: generation) == [])
        _ = s.connectionOpened()
        #expect(s.state == .binding)
        #expect(s.reconnectNow() == [])
    }

    @Test func aFailedTokenRefreshIsRetriedWithAGrowingDelay() {
        var s = Self.activeSession()
        _ = s.received(.error(ErrorMessage(code: .accessTokenExpired, message: "expired", action: .refreshAccessToken, session: 1, epoch: Self.epoch)))
        var delays: [Int64] = []
        for _ in 0..<8 {
            guard case .scheduleTimer(.accessTokenRetry, let generation, let delay)? = s.accessTokenRefreshFailed().first else {
                Issue.record("no retry timer")
                return
            }
            delays.append(delay)
            #expect(s.timerFired(.accessTokenRetry, generation: generation) == [.refreshAccessToken])
        }
        #expect(delays == [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000])
        #expect(sent(s.accessTokenRefreshed("new")).count == 2)  // bind and ident with the new token
        #expect(s.accessTokenRefreshFailures == 0)
    }

    @Test func aResetIsConfirmedByTheAckOfItsRecoveredChangesOrByIdent() {
        // Nothing recovered: the first ident confirms.
        var s = Self.session(saved: ClientSyncState(fileIdent: Self.file, serverVersion: 0, epoch: Self.epoch))
        s = ClientSession(id: 1, target: s.target, accessToken: "t", saved: s.savedState, unconfirmedReset: .init(recoveredVersion: nil))
        _ = s.start(connectionIsOpen: true)
        #expect(s.received(Self.answer()).contains(.resetConfirmed))
        #expect(s.unconfirmedReset == nil)
        // Recovered changes at version 2: acknowledging 1 does not confirm, 2 does.
        var r = ClientSession(id: 1, target: .partition(.string("tasks")), accessToken: "t",
                              saved: ClientSyncState(fileIdent: Self.file, serverVersion: 0, epoch: Self.epoch),
                              unqueued: [ProtocolFixtures.changeset(1), ProtocolFixtures.changeset(2)],
                              unconfirmedReset: .init(recoveredVersion: 2))
        _ = r.start(connectionIsOpen: true)
        #expect(!r.received(Self.answer()).contains(.resetConfirmed))
        #expect(!r.received(Self.ack(1)).contains(.resetConfirmed))
        #expect(r.received(Self.ack(2)).contains(.resetConfirmed))
        #expect(r.unconfirmedReset == nil)
    }

    @Test func flexibleSyncSendsTheQuerySetAfterIdentAndReportsRefusals() {
        var s = Self.session(target: .flexible)
        _ = s.changeQuerySet(version: 1, queries: [TypeQuery(objectType: "Task", query: "secret == 1")])
        _ = s.start(connectionIsOpen: true)
        #expect(sent(s.received(Self.answer())) == [.queryChange(QueryChange(session: 1, querySetVersion: 1,
                                                                                queries: [TypeQuery(objectType: "Task", query: "secret == 1")]))])
        let refused = s.received(.queryError(QuerySetError(session: 1, epoch: Self.epoch, querySetVersion: 1, message: "secret is not queryable")))
        #expect(refused.first == .querySetRejected(version: 1, message: "secret is not queryable"))
        #expect(errors(refused).map(\.code) == [.invalidFlexibleSyncSubscriptions])
        #expect(s.state == .active)
    }

    /// An older query set never follows a newer one: the server refuses versions that go back.
    @Test func anOlderQuerySetDoesNotReplaceANewerOne() {
        var s = Self.session(target: .flexible)
        _ = s.start(connectionIsOpen: true)
        _ = s.received(Self.answer())
        #expect(sent(s.changeQuerySet(version: 2, queries: [])).count == 1)
        #expect(s.changeQuerySet(version: 1, queries: []).isEmpty)
        #expect(sent(s.changeQuerySet(version: 3, queries: [])).count == 1)
    }

    /// A query set goes to the server after the writes committed before it (the server checks
    /// each write against the set the session has when it arrives) and before those after it,
    /// even when an upload in flight holds the earlier writes back until its echo.
    @Test func aQuerySetFollowsTheWritesCommittedBeforeItAndPrecedesTheLaterOnes() {
        var s = Self.session(target: .flexible)
        _ = s.start(connectionIsOpen: true)
        _ = s.received(Self.answer())
        let query = QueryChange(session: 1, querySetVersion: 1, queries: [TypeQuery(objectType: "Task", query: "TRUEPREDICATE")])
        // Committed: 1 (sent at once), 2 (waits for 1's echo), the set at version 3, then 4.
        #expect(sent(s.localChangesetCommitted(ProtocolFixtures.changeset(1))) == [.upload(Upload(session: 1, changesets: [
            UploadChangeset(ProtocolFixtures.changeset(1), lastServerVersion: 0)]))])
        #expect(sent(s.localChangesetCommitted(ProtocolFixtures.changeset(2))).isEmpty)
        #expect(sent(s.changeQuerySet(version: 1, queries: query.queries, after: 3)).isEmpty, "2 was written under the old set")
        #expect(sent(s.localChangesetCommitted(ProtocolFixtures.changeset(4))).isEmpty)
        // 1's echo lets 2 go, alone, then the set; 4 follows 2's echo.
        let afterOne = sent(Self.applied(s.received(Self.download([Self.echo(1, at: 1)], to: 1)), to: &s))
        #expect(afterOne == [.upload(Upload(session: 1, changesets: [UploadChangeset(ProtocolFixtures.changeset(2), lastServerVersion: 1)])),
                             .queryChange(query)])
        let afterTwo = sent(Self.applied(s.received(Self.download([Self.echo(2, at: 2)], to: 2)), to: &s))
        #expect(afterTwo == [.upload(Upload(session: 1, changesets: [UploadChangeset(ProtocolFixtures.changeset(4), lastServerVersion: 2)]))])
    }

    /// With nothing written before it unsent, a set goes at once, and what follows it goes after.
    @Test func aQuerySetWithNothingUnsentBeforeItGoesAtOnce() {
        var s = Self.session(target: .flexible)
        _ = s.start(connectionIsOpen: true)
        _ = s.received(Self.answer())
        _ = s.localChangesetCommitted(ProtocolFixtures.changeset(1))
        _ = Self.applied(s.received(Self.download([Self.echo(1, at: 1)], to: 1)), to: &s)
        _ = s.localChangesetCommitted(ProtocolFixtures.changeset(3))  // already queued, after the set
        let actions = sent(s.changeQuerySet(version: 1, queries: [], after: 2))
        #expect(actions.first == .queryChange(QueryChange(session: 1, querySetVersion: 1, queries: [])))
        #expect(actions.count == 1 || actions.dropFirst().allSatisfy { if case .upload = $0 { true } else { false } })
    }

    /// After ident the set follows the first upload even when more written before it remain: the
    /// server sends no echo (which would let the next upload go) before it has a set.
    @Test func afterIdentTheQuerySetFollowsTheFirstUploadOfALongBacklog() {
        let total = Int64(ClientSession.maxUploadChangesets + 4)
        let pending = (1...total).map { ProtocolFixtures.changeset($0) }
        var s = ClientSession(id: 1, target: .flexible, accessToken: "t",
                              saved: ClientSyncState(fileIdent: Self.file, serverVersion: 4, epoch: Self.epoch, queuedClientVersion: total, pending: pending))
        _ = s.changeQuerySet(version: 2, queries: [], after: total + 1)
        _ = s.start(connectionIsOpen: true)
        let messages = sent(s.received(Self.answer(latest: 4)))
        #expect(messages.count == 2)
        #expect(messages.last == .queryChange(QueryChange(session: 1, querySetVersion: 2, queries: [])))
    }

    // MARK: Error actions

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var code: ServerErrorCode
        var action: ErrorAction?
        var reported: SyncErrorCode?
        var stays: ClientSession.State?
        var testDescription: String { "\(code)" }
    }

    @Test(arguments: [
        ErrorCase(code: .badChangeset, reported: .clientSessionError),
        ErrorCase(code: .userLoggedOut, reported: .clientUserError),
        ErrorCase(code: .permissionDenied, reported: .permissionDeniedError),
        ErrorCase(code: .compensatingWrite, reported: .writeRejected, stays: .active),
        ErrorCase(code: .serverWarning, reported: .serverWarning, stays: .active),
        ErrorCase(code: .syncDisabled, reported: .serverWarning, stays: .active),
        ErrorCase(code: .tryAgainLater, reported: .connectionFailed, stays: .waitingForConnection),
        ErrorCase(code: .accessTokenExpired, reported: nil, stays: .waitingForAccessToken),
    ])
    func sessionErrorsMapToSDKCodesAndActions(_ c: ErrorCase) {
        var s = Self.activeSession()
        let (wait, _) = s.wait(for: .download)
        let writes = c.code == .compensatingWrite ? [CompensatingWrite(objectType: "Task", primaryKey: .int(1), reason: "no permission")] : []
        let actions = s.received(.error(ErrorMessage(code: c.code, message: "m", action: c.action, tryAgainAfterMilliseconds: 5000,
                                                     session: 1, epoch: Self.epoch, compensatingWrites: writes)))
        #expect(errors(actions).map(\.code) == (c.reported.map { [$0] } ?? []))
        #expect(errors(actions).first?.compensatingWrites ?? [] == writes)
        if let stays = c.stays {
            #expect(s.state == stays)
            #expect(!actions.contains { if case .failWait = $0 { true } else { false } })
        } else {
            #expect(s.state == .failed(errors(actions)[0]))
            #expect(actions.contains { if case .failWait(wait, _) = $0 { true } else { false } })
        }
        if c.code == .tryAgainLater { #expect(delay(actions) == 5000) }
        if c.code == .accessTokenExpired {
            #expect(actions == [.refreshAccessToken])
            #expect(sent(s.accessTokenRefreshed("fresh")).first == .bind(Bind(session: 1, target: .partition(.string("tasks")), accessToken: "fresh")))
        }
    }

    @Test func aResetErrorRequestsAClientReset() {
        var s = Self.activeSession()
        let actions = s.received(.error(ErrorMessage(code: .clientResetRequired, message: "history compacted", session: 1, epoch: Self.epoch)))
        guard case .requestClientReset(let r) = actions.last else { Issue.record("\(actions)"); return }
        #expect(r.message == "history compacted")
        #expect(SyncErrorCode(serverCode: .clientResetRequired, action: .clientReset) == .clientResetError)
    }

    @Test func aConnectionLevelRetryLaterDelaysTheNextReconnect() {
        var s = Self.activeSession()
        let actions = s.received(.error(ErrorMessage(code: .serverShuttingDown, message: "bye", tryAgainAfterMilliseconds: 90_000)))
        #expect(errors(actions).map(\.code) == [.connectionFailed])
        #expect(s.state == .active)
        #expect(delay(s.connectionClosed(error: nil)) == 90_000)
    }

    @Test func aTokenRefreshOnABoundSessionIsSent() {
        var s = Self.activeSession()
        #expect(s.accessTokenRefreshed("new") == [.send(.refreshAccessToken(RefreshAccessToken(session: 1, accessToken: "new")))])
    }
}
