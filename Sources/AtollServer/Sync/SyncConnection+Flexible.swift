import AtollCore
import Foundation

/// What the server knows of one flexible-sync session (docs/protocol.md §2.6, "Flexible sync").
struct FlexibleView {
    /// The objects the client holds as of the session's cursor; nil until `heldObjects`.
    var held: Set<ObjectID>?
    /// The objects of ``held`` the server has only the client's word for (`FlexibleSync.catchUp`).
    var unconfirmed: Set<ObjectID> = []
    /// The accepted query set; nil while none is (the client keeps what it holds, gets nothing new).
    var querySet: FlexibleQuerySet?
    /// The queries of ``querySet``, to check them again once the schema has their unknown types.
    var queries: [TypeQuery] = []
    /// Whether a query change arrived in this session (catching up waits for it).
    var hasQueryChange = false
    /// When the `heldObjects` claim arrived: claimed objects the server does not have are
    /// believed for ``FlexibleView/absentClaimLifetime`` after it.
    var claimedAt = Date.distantPast
    /// History fanned out to the session after its cursor and not sent yet: a catch-up that has
    /// every entry up to the newest version reads nothing from the store.
    var fannedOut: [HistoryEntry] = []
    /// The query set version downloads are tagged with (what the client's data reflects).
    var querySetVersion: Int64 = 0
    /// A query set version accepted but not yet tagged on a download: the next catch-up sends
    /// even when nothing changed, so the client learns its set is complete.
    var unannouncedVersion: Int64?

    var isEstablished: Bool { held != nil && hasQueryChange }

    /// How long objects a client claims to hold, which the server does not have, are believed:
    /// long enough for the client's own creations to be uploaded once it connected.
    static let absentClaimLifetime: TimeInterval = 600
    /// At most this many fanned-out entries wait for a catch-up (past it the store is read).
    static let fannedOutLimit = 1_024

    /// The entries of ``fannedOut`` that follow `cursor` without a gap, up to `version`.
    func fannedOutRun(after cursor: Int64, through version: Int64) -> [HistoryEntry] {
        var run: [HistoryEntry] = []
        var next = cursor + 1
        for entry in fannedOut where entry.serverVersion >= next && entry.serverVersion <= version {
            guard entry.serverVersion == next else { break }
            run.append(entry)
            next += 1
        }
        return run
    }
}

/// Flexible sync: held objects, query changes, and catching a session up to the app's history
/// as its subscriptions see it.
extension SyncConnection {
    /// How many instructions one view-change changeset carries at most.
    static let viewChangeChunk = 20_000

    /// The flexible-sync limits a `heldObjects` or `queryChange` message is checked against
    /// before it is decoded.
    var flexibleClaimLimits: FlexibleClaimLimits {
        FlexibleClaimLimits(heldObjects: admission.limits.heldObjectsPerSession, queries: admission.limits.queriesPerSubscriptionSet,
                            queryBytes: admission.limits.querySetBytes)
    }

    func heldObjects(_ message: HeldObjects) async throws {
        guard var session = sessions[message.session], session.flexible != nil else { return }
        guard admission.claimHeldObjects(message.objects.count, session: message.session, connection: id) else {
            metrics.countRefusal(limit: "heldObjectsPerUser")
            logger.notice("held objects refused", metadata: ["limit": "heldObjectsPerUser", "user": "\(session.userID)"])
            try await endSession(ErrorMessage(
                code: .tryAgainLater, message: """
                    the sessions of user \(session.userID) claim to hold more than \(admission.limits.heldObjectsPerUser) objects \
                    together (limits.heldObjectsPerUser)
                    """,
                action: .retryLater, tryAgainAfterMilliseconds: 60_000, session: message.session, epoch: session.realm.epoch))
            return
        }
        // The client's word only: `FlexibleSync.catchUp` checks it against what its user may read.
        session.flexible!.held = Set(message.objects)
        session.flexible!.unconfirmed = session.flexible!.held!
        session.flexible!.claimedAt = coordinator.now()
        sessions[message.session] = session
    }

    /// Refuses a `heldObjects` or `queryChange` message past a limit, found before decoding it:
    /// held objects end the session (try again later); a subscription set is refused like an
    /// invalid one (the session keeps what it has).
    func refuseClaim(_ refusal: FlexibleClaimLimits.Refusal) async throws {
        let id = refusal.session
        metrics.countRefusal(limit: refusal.excess.limitName)
        logger.notice("flexible sync message refused", metadata: ["limit": "\(refusal.excess.limitName)", "session": "\(id.rawValue)"])
        let epoch = sessions[id]?.realm.epoch ?? .none
        if let version = refusal.querySetVersion, var session = sessions[id], session.flexible?.held != nil, isIdentified(id) {
            session.flexible!.hasQueryChange = true
            sessions[id] = session
            try await send(.queryError(QuerySetError(
                session: id, epoch: epoch, querySetVersion: version, message: "\(refusal.excess) (limits.\(refusal.excess.limitName))")))
            try await flexibleCatchUp(id)
            return
        }
        try await endSession(ErrorMessage(
            code: .tryAgainLater, message: "\(refusal.excess) (limits.\(refusal.excess.limitName))", action: .retryLater,
            tryAgainAfterMilliseconds: 60_000, session: id, epoch: epoch))
    }

    func queryChange(_ change: QueryChange) async throws {
        guard var session = sessions[change.session], session.flexible != nil else { return }
        let snapshot: (version: Int64, state: ReplicaState)
        do {
            snapshot = try await coordinator.snapshot(of: session.realm)
        } catch {
            try await storeFailed(error)
        }
        session = sessions[change.session] ?? session
        session.flexible!.hasQueryChange = true
        do {
            let set = try FlexibleQuerySet(version: change.querySetVersion, queries: change.queries,
                                           schema: snapshot.state.schema, rules: rules(for: session),
                                           allowingUnknownTypes: app.developmentMode)
            session.flexible!.querySet = set
            session.flexible!.queries = change.queries
            session.flexible!.unannouncedVersion = change.querySetVersion
            sessions[change.session] = session
        } catch {
            sessions[change.session] = session
            logger.info("query set refused", metadata: ["version": "\(change.querySetVersion)", "error": "\(error.message)"])
            try await send(.queryError(QuerySetError(
                session: change.session, epoch: session.realm.epoch, querySetVersion: change.querySetVersion, message: error.message)))
        }
        try await flexibleCatchUp(change.session)
    }

    /// The app's query and read rules for the session's user: those of the roles that apply.
    func rules(for session: Session) -> FlexibleSync.Rules {
        app.flexibleRules(session.rules, user: session.ruleUser)
    }

    /// Brings a flexible session to the newest server version: the history entries after its
    /// cursor that touch what it holds (its own whole), then the view change that makes it hold
    /// exactly what its subscriptions match, all in one download batch. Sends nothing when
    /// nothing changed and no new query set waits to be announced.
    ///
    /// What was fanned out to the session is used as it is; the store is read only for what is
    /// missing (another node's writes, a session that was not established yet).
    func flexibleCatchUp(_ id: SessionID) async throws {
        guard let start = sessions[id], let startRecord = sessionRecord(id), let view = start.flexible, view.isEstablished,
              let held = view.held else { return }
        let snapshot: (version: Int64, state: ReplicaState)
        var entries: [HistoryEntry] = []
        do {
            snapshot = try await coordinator.snapshot(of: start.realm)
            guard snapshot.version >= startRecord.cursor else { return }
            var history = view.fannedOutRun(after: startRecord.cursor, through: snapshot.version)
            var cursor = history.last?.serverVersion ?? startRecord.cursor
            if cursor < snapshot.version {
                // Entries matter only for objects the client holds, and for its own acknowledgements.
                var mustRead = !held.isEmpty
                if !mustRead, startRecord.file.isAssigned {
                    let ownKnown = history.filter { $0.changeset.fileIdent == startRecord.file.ident }.map(\.changeset.version).max() ?? 0
                    mustRead = try await coordinator.lastClientVersion(
                        realmID: start.realm.id, fileIdent: startRecord.file.ident, atOrBefore: snapshot.version)
                        > max(startRecord.lastOwnClientVersion, ownKnown)
                }
                while mustRead, cursor < snapshot.version {
                    let chunk = try await coordinator.history(realmID: start.realm.id, after: cursor, maxBytes: Self.downloadMessageBytes)
                    guard let last = chunk.last else { break }
                    history += chunk.filter { $0.serverVersion <= snapshot.version }
                    cursor = last.serverVersion
                }
            }
            for entry in history {
                if entry.changeset.fileIdent == startRecord.file.ident {
                    entries.append(entry)
                } else {
                    var filtered = entry
                    filtered.changeset = FlexibleSync.filter(entry.changeset, to: held)
                    if !filtered.changeset.instructions.isEmpty { entries.append(filtered) }
                }
            }
        } catch let close as Close {
            throw close
        } catch {
            try await storeFailed(error)
        }
        // The session may have changed while the store was read (messages are handled one at a
        // time, so only by this function's own earlier sends): take it again.
        guard var session = sessions[id], let current = sessionRecord(id), var flexible = session.flexible else { return }
        // In development mode a set may name types clients have not declared yet: once the
        // schema has them, check the set again.
        if let set = flexible.querySet, set.unknownTypes.contains(where: { snapshot.state.schema[$0] != nil }) {
            flexible.querySet = try? FlexibleQuerySet(version: set.version, queries: flexible.queries, schema: snapshot.state.schema,
                                                      rules: rules(for: session), allowingUnknownTypes: true)
        }
        // One evaluation of the query set per server version, shared by every session that has it.
        let userRules = rules(for: session)
        var matching: Set<ObjectID>?
        if let set = flexible.querySet {
            let state = snapshot.state
            let key = FlexibleEvaluations.Key(queries: flexible.queries, rules: userRules.visibility, unknownTypes: set.unknownTypes)
            matching = await coordinator.evaluations.matches(of: key, version: snapshot.version, realm: start.realm) {
                set.matches(in: state)
            }
        }
        // What the client says it holds is checked against what its user may read (docs/protocol.md §2.6).
        let plan = FlexibleSync.catchUp(
            held: held, unconfirmed: flexible.unconfirmed, entries: entries, ownFile: startRecord.file.ident, state: snapshot.state,
            matching: matching,
            keepingAbsent: coordinator.now().timeIntervalSince(flexible.claimedAt) < FlexibleView.absentClaimLifetime,
            mayRead: userRules.readAccess(in: snapshot.state))
        entries = plan.entries
        var change = plan.viewChange
        // Fields the user's role may not read never leave the server (the client's own changes
        // come back whole: it has them).
        let hidden = userRules.hiddenFields(in: snapshot.state.schema)
        if !hidden.isEmpty {
            for i in entries.indices where entries[i].changeset.fileIdent != startRecord.file.ident {
                entries[i].changeset.instructions = FlexibleSync.hiding(hidden, in: entries[i].changeset.instructions,
                                                                        schema: snapshot.state.schema)
            }
            change = FlexibleSync.hiding(hidden, in: change, schema: snapshot.state.schema)
        }
        flexible.held = plan.held
        flexible.unconfirmed = plan.unconfirmed
        flexible.fannedOut.removeAll { $0.serverVersion <= snapshot.version }
        // What is left of the claim is the client's word only: it counts against its user.
        _ = admission.claimHeldObjects(plan.unconfirmed.count, session: id, connection: self.id)
        let announce = flexible.unannouncedVersion
        if let announce { flexible.querySetVersion = announce }
        flexible.unannouncedVersion = nil
        let movesOn = snapshot.version > current.cursor
        session.flexible = flexible
        sessions[id] = session
        guard movesOn || !change.isEmpty || announce != nil else { return }

        var changesets: [DownloadChangeset] = []
        var lastOwn = current.lastOwnClientVersion
        for entry in entries {
            changesets.append(DownloadChangeset(
                serverVersion: entry.serverVersion, originFileIdent: entry.changeset.fileIdent,
                originTimestamp: entry.changeset.timestamp, lastClientVersion: lastOwn, changeset: entry.changeset,
                // Bytes survive only on an entry no filter or hiding changed (HistoryEntry.changeset).
                encodedChangeset: entry.encodedChangeset))
            if entry.changeset.fileIdent == current.file.ident { lastOwn = max(lastOwn, entry.changeset.version) }
        }
        var offset = 0
        repeat {
            let chunk = Array(change[offset..<min(change.count, offset + Self.viewChangeChunk)])
            changesets.append(DownloadChangeset(
                serverVersion: snapshot.version, originFileIdent: FlexibleSync.viewChangeFileIdent, originTimestamp: 0,
                lastClientVersion: lastOwn,
                changeset: Changeset(version: 0, timestamp: 0, fileIdent: FlexibleSync.viewChangeFileIdent, instructions: chunk)))
            offset += Self.viewChangeChunk
        } while offset < change.count
        try await sendBatch(id, changesets, serverVersion: snapshot.version, querySetVersion: flexible.querySetVersion)
        logic.update(id) { $0.delivered(snapshot.version, ownClientVersion: lastOwn) }
    }

    /// Sends `changesets` as one download batch (split into messages of about
    /// ``downloadMessageBytes``; the client integrates them together).
    private func sendBatch(_ id: SessionID, _ changesets: [DownloadChangeset], serverVersion: Int64, querySetVersion: Int64) async throws {
        guard let session = sessions[id] else { return }
        var messages: [(changesets: [DownloadChangeset], bytes: Int)] = [([], 0)]
        for var changeset in changesets {
            let encoded = changeset.encodedChangeset ?? changeset.changeset.encoded()
            changeset.encodedChangeset = encoded
            let size = encoded.count
            if !messages[messages.count - 1].changesets.isEmpty && messages[messages.count - 1].bytes + size > Self.downloadMessageBytes {
                messages.append(([], 0))
            }
            messages[messages.count - 1].changesets.append(changeset)
            messages[messages.count - 1].bytes += size
        }
        var remaining = messages.reduce(0) { $0 + $1.bytes }
        for (i, (message, bytes)) in messages.enumerated() {
            remaining -= bytes
            try await send(.download(Download(
                session: id, epoch: session.realm.epoch, changesets: message,
                progress: DownloadProgress(serverVersion: serverVersion, latestServerVersion: serverVersion,
                                           downloadableBytes: UInt64(max(0, remaining))),
                querySetVersion: querySetVersion, isLastInBatch: i == messages.count - 1)))
            metrics.downloads.increment(by: Int64(message.count))
        }
    }
}
