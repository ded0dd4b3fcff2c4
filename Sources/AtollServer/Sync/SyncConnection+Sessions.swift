import AtollCore
import Foundation

/// The session messages: bind, ident, upload, mark, token refresh, and the downloads they cause.
extension SyncConnection {
    // MARK: Bind

    func bind(_ bind: Bind) async throws {
        // One reading of the app's settings for the whole bind: its kind, its rules, their generation.
        let (app, appGeneration) = auth.apps.current(appID)
        let path: String
        switch BindPolicy.realmPath(bind, appKind: app.syncKind.map { $0 == .flexible ? .flexible : .partition }, appID: appID) {
        case .realm(let named): path = named
        case .refuse(let refusal): return try await endSession(refusal)
        }
        do {
            guard try await coordinator.isSyncEnabled(appID: appID) else {
                return try await endSession(BindPolicy.syncDisabled(bind, appID: appID))
            }
        } catch let close as Close {
            throw close
        } catch {
            try await storeFailed(error)
        }
        let user: StoredUser
        let deviceID: String?
        let tokenExpires: Date
        let ruleUser: RuleUser
        switch await auth.syncUser(accessToken: bind.accessToken, appID: appID, session: bind.session) {
        case .user(let found, let device, let expires, let customData):
            (user, deviceID, tokenExpires) = (found, device, expires)
            // Roles are chosen once, when the session binds (as App Services does).
            ruleUser = RuleUser(found, customData: customData)
        case .refused(let refusal):
            try await endSession(refusal)
            return
        }
        let rules = app.rules(for: ruleUser)
        if case .partition(let partition) = bind.target, !Permissions.canRead(partition, user: ruleUser, rules: rules) {
            return try await endSession(BindPolicy.partitionNotReadable(bind, partition: partition, userID: user.id, appID: appID))
        }
        if let refusal = admissionRefusal(user: user.id, session: bind.session) {
            try await endSession(refusal)
            return
        }
        let realm: StoredRealm
        do {
            realm = try await coordinator.realm(appID: appID, path: path, createdBy: user.id, maxPerUser: admission.limits.realmsPerUser)
        } catch let error as ServerStoreError where error.code == .limitExceeded {
            admission.releaseSession(bind.session, connection: id)
            metrics.countRefusal(limit: BindPolicy.Limit.realmsPerUser.rawValue)
            logger.notice("sync session refused", metadata: ["limit": "realmsPerUser", "user": "\(user.id)"])
            return try await endSession(BindPolicy.refusal(
                .realmsPerUser, value: admission.limits.realmsPerUser, userID: user.id, session: bind.session, detail: error.message))
        } catch {
            try await storeFailed(error)
        }
        if !isAuthenticated {
            isAuthenticated = true
            messageOwner = user.id
            reassembler.maxMessageBytes = admission.limits.maxMessageBytes
        }
        var session = Session(realm: realm, userID: user.id, deviceID: deviceID, ruleUser: ruleUser, rules: rules,
                              appGeneration: appGeneration)
        if bind.target == .flexible { session.flexible = FlexibleView() }
        sessions[bind.session] = session
        logic.update(bind.session) { $0.tokenExpires = tokenExpires }
        metrics.activeSessions.increment()
        scheduleTokenExpiry(bind.session)
    }

    /// Why the server may not bind another session of `user` on this connection, or nil.
    func admissionRefusal(user: String, session: SessionID) -> ErrorMessage? {
        let limit: BindPolicy.Limit
        if sessions.count >= admission.limits.sessionsPerConnection {
            limit = .sessionsPerConnection
        } else if let refused = admission.admitSession(session, user: user, connection: id) {
            limit = refused
        } else {
            return nil
        }
        metrics.countRefusal(limit: limit.rawValue)
        logger.notice("sync session refused", metadata: ["limit": "\(limit.rawValue)", "user": "\(user)"])
        let value = switch limit {
        case .sessionsPerConnection: admission.limits.sessionsPerConnection
        case .sessionsPerUser: admission.limits.sessionsPerUser
        case .connectionsPerUser: admission.limits.connectionsPerUser
        case .realmsPerUser: admission.limits.realmsPerUser
        }
        return BindPolicy.refusal(limit, value: value, userID: user, session: session)
    }

    func refreshAccessToken(_ refresh: RefreshAccessToken) async throws {
        guard let session = sessions[refresh.session] else { return }
        switch await auth.syncUser(accessToken: refresh.accessToken, appID: appID, session: refresh.session) {
        case .user(let user, let deviceID, let expires, _):
            if let refusal = BindPolicy.refresh(tokenUser: user.id, sessionUser: session.userID, session: refresh.session,
                                                epoch: session.realm.epoch) {
                return try await endSession(refusal)
            }
            sessions[refresh.session]?.deviceID = deviceID
            logic.update(refresh.session) { $0.tokenExpires = expires }
            scheduleTokenExpiry(refresh.session)
            // The coordinator ends sessions by device: tell it the new one.
            if isIdentified(refresh.session) { await coordinator.rebound(connection: id, session: refresh.session, deviceID: deviceID) }
        case .refused(var refusal):
            refusal.epoch = session.realm.epoch
            try await endSession(refusal)
        }
    }

    // MARK: Ident

    /// Gathers what the server knows, lets ``IdentPolicy`` decide, and carries the decision out.
    func ident(_ ident: Ident) async throws {
        guard var session = sessions[ident.session] else { return }
        let realm: StoredRealm
        let facts: IdentFacts
        do {
            (realm, facts) = try await coordinator.identFacts(appID: appID, path: session.realm.path, for: ident)
        } catch {
            try await storeFailed(error)
        }
        session.realm = realm
        sessions[ident.session] = session
        var file = ident.fileIdent
        var ownClientVersion: Int64 = 0
        switch IdentPolicy.decide(ident, facts: facts, now: coordinator.now()) {
        case .refuse(let error):
            return try await endSession(error)
        case .reset(let reset):
            logger.info("client reset required", metadata: ["realm": "\(realm.path)", "reason": "\(reset.reason)"])
            return try await endSession(ident.session, answer: .resetRequired(reset))
        case .accept(let assignFile):
            do {
                if assignFile {
                    file = try await coordinator.newClientFile(
                        realmID: realm.id, userID: session.userID, maxPerUser: admission.limits.clientFilesPerUser)
                }
                ownClientVersion = try await coordinator.lastClientVersion(
                    realmID: realm.id, fileIdent: file.ident, atOrBefore: ident.lastServerVersion)
            } catch let error as ServerStoreError where error.code == .limitExceeded {
                metrics.countRefusal(limit: "clientFilesPerUser")
                logger.notice("client file refused", metadata: ["user": "\(session.userID)", "error": "\(error.message)"])
                return try await endSession(IdentPolicy.clientFilesRefusal(ident, facts: facts, detail: error.message))
            } catch {
                try await storeFailed(error)
            }
        }
        sessions[ident.session] = session
        logic.update(ident.session) { $0.accept(file: file, ownClientVersion: ownClientVersion) }
        await seen(ident.session, integrated: ident.lastServerVersion)
        // Subscribed before the answer and before catching up: nothing integrated meanwhile is
        // missed (duplicates are skipped), and a logout, removal or disabling of the user from now
        // on finds the session. What the subscription delivers is queued for this connection's
        // loop, which handles it after this message, so it still follows the answer.
        let events = self.events
        let backlog = self.backlog
        let info = SessionInfo(appID: appID, userID: session.userID, path: realm.path, fileIdent: file.ident,
                               connection: id, session: ident.session, epoch: realm.epoch)
        await coordinator.subscribe(realmID: realm.id, connection: id, session: ident.session,
                                    bound: BoundSession(info: info, deviceID: session.deviceID, end: { events.yield(.end($0)) }, reset: { events.yield(.reset($0)) })) { advance in
            // A connection too far behind gets no more: it closes at the next one it handles.
            if backlog.admit() { events.yield(.history(ident.session, advance)) }
        }
        // One that happened between the bind's token check and the subscription ended nothing.
        if var revoked = await auth.revocation(userID: session.userID, deviceID: session.deviceID, appID: appID, session: ident.session) {
            revoked.epoch = realm.epoch
            logger.info("sync session ended at ident: \(revoked.message)", metadata: ["user": "\(session.userID)"])
            return try await endSession(revoked)
        }
        try await send(.identAnswer(IdentAnswer(
            session: ident.session, epoch: realm.epoch, fileIdent: file, latestServerVersion: facts.latestServerVersion)))
        // A flexible session catches up once it said what it holds and subscribes to.
        guard session.flexible == nil else { return }
        try await catchUp(ident.session, through: facts.latestServerVersion)
    }

    /// Records the session's client file as seen now, when ``ServerSession/recordsSeen(now:integrated:fromUpload:)``
    /// says so (with what the client `integrated`, at an ident or an upload).
    func seen(_ id: SessionID, integrated serverVersion: Int64? = nil, fromUpload: Bool = false) async {
        guard let session = sessions[id],
              logic.update(id, { $0.recordsSeen(now: coordinator.now(), integrated: serverVersion != nil, fromUpload: fromUpload) }) == true,
              let file = sessionRecord(id)?.file
        else { return }
        await coordinator.seen(realmID: session.realm.id, fileIdent: file.ident, integrated: serverVersion)
    }

    // MARK: Upload

    func upload(_ upload: Upload) async throws {
        guard let session = sessions[upload.session], let record = sessionRecord(upload.session), record.state == .identified,
              !upload.changesets.isEmpty else { return }
        let epoch = session.realm.epoch
        let prepared: PreparedUpload
        switch record.prepare(upload, flexible: session.flexible != nil, epoch: epoch) {
        case .ready(let ready): prepared = ready
        case .refused(let refusal): return try await endSession(refusal)
        }
        let (base, changesets) = (prepared.base, prepared.changesets)
        metrics.uploads.increment(by: Int64(changesets.count))
        let result: IntegrationResult
        do {
            result = try await coordinator.integrate(
                UploadBatch(fileIdent: record.file.ident, baseServerVersion: base, changesets: changesets,
                            settledClientVersion: record.settledClientVersion),
                into: session.realm, check: writeRule(for: session),
                // Decided in the store's transaction: an upload of a session bound under an app's
                // replaced settings is not integrated (the session is ending; the client uploads
                // again under the new rules).
                stillCurrent: { [apps = auth.apps, appID, generation = session.appGeneration] in
                    apps.generation(of: appID) == generation
                })
        } catch let error as MergeError where error.code == .clientHistoryDiverged {
            // Taken as a duplicate, the upload's new commits would be dropped: the client resets,
            // recovering (or archiving) what the server does not have.
            logger.notice("client copy went back in time", metadata: ["realm": "\(session.realm.path)", "error": "\(error)"])
            let recovery: Bool
            do { recovery = try await coordinator.clientRecoveryAllowed(appID: appID) } catch { try await storeFailed(error) }
            try await endSession(upload.session, answer: .resetRequired(ResetRequired(
                session: upload.session, epoch: epoch, reason: .historyRestored, recoveryAllowed: recovery, message: error.message)))
            return
        } catch let error as MergeError {
            logger.notice("upload refused", metadata: ["realm": "\(session.realm.path)", "error": "\(error)"])
            try await endSession(ServerSession.answer(to: error, session: upload.session, epoch: epoch))
            return
        } catch is StaleEpoch {
            return  // the realm's history was replaced: the session's reset is on its way
        } catch {
            try await storeFailed(error)
        }
        try await send(.uploadAck(UploadAck(
            session: upload.session, epoch: epoch, clientVersion: prepared.lastClientVersion, serverVersion: result.latestServerVersion)))
        try await reportCompensatingWrite(result.rejected, session: upload.session)
        // After the answer: what the client had integrated only holds compaction back (recorded
        // late or not at all, less is compacted, never too much).
        await seen(upload.session, integrated: base, fromUpload: true)
    }

    // MARK: Mark

    func mark(_ mark: Mark) async throws {
        guard let session = sessions[mark.session], isIdentified(mark.session) else { return }
        if session.flexible != nil {
            try await flexibleCatchUp(mark.session)
            guard let caughtUp = sessions[mark.session] else { return }
            try await send(.markAnswer(MarkAnswer(
                session: mark.session, epoch: caughtUp.realm.epoch, requestID: mark.requestID, serverVersion: sessionRecord(mark.session)?.cursor ?? 0)))
            return
        }
        do {
            let latest = try await coordinator.latestServerVersion(realmID: session.realm.id)
            try await catchUp(mark.session, through: latest)
        } catch let close as Close {
            throw close
        } catch {
            try await storeFailed(error)
        }
        guard let caughtUp = sessions[mark.session] else { return }
        try await send(.markAnswer(MarkAnswer(
            session: mark.session, epoch: caughtUp.realm.epoch, requestID: mark.requestID, serverVersion: sessionRecord(mark.session)?.cursor ?? 0)))
    }
}
