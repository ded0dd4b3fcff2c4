import AtollCore
import Foundation
import Logging
import ServiceLifecycle

/// Several server nodes on one store: what a node does with the changes the others make
/// (``StoreChange``), so a client may connect to any node and see every node's writes.
extension SyncCoordinator {
    /// Acts on a change another node made to the store.
    package func apply(_ change: StoreChange) async {
        switch change {
        case .history(let realmID, let latest, let entries, let epoch):
            // Announced after its commit, so possibly after the history was replaced (a restore,
            // a restart): then it names versions of a history that is gone.
            // (The listener drops most of the others: ``interest``. One may still come by that
            // was admitted just before the realm stopped being served here.)
            guard subscribers[realmID] != nil || materialized[realmID] != nil else { return }
            if let epoch, let known = realms.values.first(where: { $0.id == realmID })?.epoch, known != epoch { return }
            otherNodeAppended(realmID: realmID, latest: latest, entries: entries)
        case .historyReplaced(let realmID):
            await otherNodeReplacedHistory(realmID: realmID)
        case .syncTerminated(let appID):
            syncEnabled[appID] = false
            storedApps[appID] = nil
            endAndForgetSessions(ofApp: appID)
        case .appChanged(let appID):
            syncEnabled[appID] = nil
            storedApps[appID] = nil
        case .sessionsEnded(let userID, let deviceID, let reason):
            endSessionsHere(userID: userID, deviceID: deviceID, reason: reason)
        case .missed:
            await catchUpWithOtherNodes()
        }
    }

    /// Another node appended history up to `latest`: the cached state is read again when next
    /// needed, and the entries are read from the store once, here, and fanned out to the sessions
    /// bound here (not read by each session: a realm with many sessions on this node would cost
    /// a query per session per write).
    ///
    /// `entries`, when the notification carried them, are what was appended up to `latest`: when
    /// they follow what was fanned out here, they go to the sessions without a read.
    func otherNodeAppended(realmID: Int64, latest: Int64, entries: [HistoryEntry] = []) {
        let carried = entries.last?.serverVersion == latest ? entries : []
        if let known = materialized[realmID], known.version < latest, loads[realmID] == nil {
            if known.isLoaded, carried.first?.serverVersion == known.version + 1 {
                materialized[realmID]?.absorb(carried, readFromStore: true)
            } else {
                materialized[realmID]?.isLoaded = false
            }
        }
        guard let subscribed = subscribers[realmID] else { return }
        if let first = carried.first, first.serverVersion == (fannedOut[realmID] ?? -1) + 1, announcedReads[realmID] == nil {
            fannedOut[realmID] = latest
            let advance = HistoryAdvance(realmID: realmID, entries: carried, latestServerVersion: latest)
            for deliver in subscribed.values { deliver(advance) }
            return
        }
        guard let from = fannedOut[realmID], from <= latest else {
            // Nothing fanned out here yet (or a history that restarted unseen): each session
            // reads what it lacks.
            fannedOut[realmID] = latest
            let advance = HistoryAdvance(realmID: realmID, entries: [], latestServerVersion: latest)
            for deliver in subscribed.values { deliver(advance) }
            return
        }
        guard latest > from else { return }
        if let reading = announcedReads[realmID] {
            announcedReads[realmID] = max(reading, latest)
            return
        }
        announcedReads[realmID] = latest
        _Concurrency.Task { await self.readAnnounced(realmID: realmID, after: from) }
    }

    /// Reads what other nodes appended to `realmID` after `after` up to the newest announced
    /// version, and fans it out; a read that fails leaves each session to read what it lacks.
    private func readAnnounced(realmID: Int64, after: Int64) async {
        defer { announcedReads[realmID] = nil }
        var after = after
        while let target = announcedReads[realmID], after < target, subscribers[realmID] != nil {
            let entries: [HistoryEntry]
            do {
                metrics.countHistoryRead(for: "node")
                entries = try await store.history(realmID: realmID, after: after, maxBytes: 1 << 20)
            } catch {
                logger.warning("could not read another node's history; sessions read it themselves",
                               metadata: ["realm": "\(realmID)", "error": "\(error)"])
                entries = []
            }
            let latest = max(target, entries.last?.serverVersion ?? 0)
            let advance = HistoryAdvance(realmID: realmID, entries: entries, latestServerVersion: latest)
            for deliver in (subscribers[realmID] ?? [:]).values { deliver(advance) }
            guard let last = entries.last else { return }
            after = last.serverVersion
            if subscribers[realmID] != nil { fannedOut[realmID] = max(fannedOut[realmID] ?? 0, after) }
        }
    }

    /// Another node replaced a realm's history (restore, schema change): what is cached goes and
    /// the sessions bound here reset, as on the node that did it.
    func otherNodeReplacedHistory(realmID: Int64) async {
        materialized[realmID] = nil
        schemas[realmID] = nil
        fannedOut[realmID] = nil
        noteServed(realmID)
        guard let key = realms.first(where: { $0.value.id == realmID })?.key else { return }
        realms[key] = nil
        do {
            guard let realm = try await storedRealm(appID: key.appID, path: key.path) else { return }
            try await historyReplaced(realm, reason: realm.epochReason,
                                      message: "the realm's history was replaced on another server node", announce: false)
        } catch {
            logger.error("could not reset the sessions of a realm replaced on another node", metadata: ["realm": "\(realmID)", "error": "\(error)"])
        }
    }

    /// Checks what this node holds against the store: run periodically, and when the change feed
    /// was interrupted, so a lost notification only delays what it announced.
    package func catchUpWithOtherNodes() async {
        syncEnabled = [:]
        storedApps = [:]
        // One read of each app's realms and one of every watched realm's version, whatever the
        // number of realms.
        let watched = realms.filter { subscribers[$0.value.id] != nil }
        for appID in Set(watched.keys.map(\.appID)) {
            guard let current = try? await store.realms(appID: appID) else { continue }
            let epochs = Dictionary(current.map { ($0.path, $0.epoch) }, uniquingKeysWith: { first, _ in first })
            for (key, cached) in watched where key.appID == appID {
                if let epoch = epochs[key.path], epoch != cached.epoch { await otherNodeReplacedHistory(realmID: cached.id) }
            }
        }
        await endSessionsOfRevokedLogins()
        guard let versions = try? await store.latestServerVersions(realmIDs: Array(subscribers.keys)) else { return }
        for (realmID, latest) in versions { otherNodeAppended(realmID: realmID, latest: latest) }
    }

    /// Ends the sessions bound here whose login is no longer live (logged out, revoked, its user
    /// disabled or deleted on another node): a lost "sessions ended" announcement only delays
    /// their end until this check. One store read for every bound login.
    func endSessionsOfRevokedLogins() async {
        let devices = Set(bound.values.compactMap(\.deviceID))
        guard !devices.isEmpty else { return }
        let live: Set<String>
        do {
            live = try await store.liveDevices(Array(devices))
        } catch {
            logger.warning("could not check the logins of the sessions bound here", metadata: ["error": "\(error)"])
            return
        }
        let revoked = devices.subtracting(live)
        guard !revoked.isEmpty else { return }
        for device in revoked { liveLogins?.forget(deviceID: device) }
        end(sessionsWhere: { session in session.deviceID.map { revoked.contains($0) } ?? false }) { info in
            ErrorMessage(code: .userLoggedOut, message: "the login of user \(info.userID) was revoked", session: info.session, epoch: info.epoch)
        }
    }
}

/// Follows the changes other nodes make to a shared store, and checks against the store every
/// ``interval`` besides (a lost notification only delays a download). Does nothing on a store no
/// other node uses.
struct StoreChangeFollower: Service {
    let coordinator: SyncCoordinator
    let interval: Duration
    let metrics: ServerMetrics
    let logger: Logger

    func run() async throws {
        guard let changes = coordinator.store.changesFromOtherNodes(servedBy: coordinator.interest) else {
            try? await gracefulShutdown()
            return
        }
        try? await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await change in changes { await coordinator.apply(change) }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        let started = ContinuousClock.now
                        if (try? await coordinator.store.checkReachable()) != nil {
                            metrics.storeLatency.record(ContinuousClock.now - started)
                        }
                        await coordinator.catchUpWithOtherNodes()
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }
}
