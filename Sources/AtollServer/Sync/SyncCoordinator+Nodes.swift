import AtollCore
import Foundation
import Logging
import ServiceLifecycle

/// Several server nodes on one store: what a node does with the changes the others make
/// (``StoreChange``), so a client may connect to any node and see every node's writes.
extension SyncCoordinator {
    /// Acts on a change another node made to the store.
    public func apply(_ change: StoreChange) async {
        switch change {
        case .history(let realmID, let latest):
            otherNodeAppended(realmID: realmID, latest: latest)
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
    /// needed, and the sessions bound here read what they lack from the store.
    func otherNodeAppended(realmID: Int64, latest: Int64) {
        if let known = materialized[realmID], known.version < latest, loads[realmID] == nil {
            materialized[realmID]?.isLoaded = false
        }
        guard let subscribed = subscribers[realmID] else { return }
        let advance = HistoryAdvance(realmID: realmID, entries: [], latestServerVersion: latest)
        for deliver in subscribed.values { deliver(advance) }
    }

    /// Another node replaced a realm's history (restore, schema change): what is cached goes and
    /// the sessions bound here reset, as on the node that did it.
    func otherNodeReplacedHistory(realmID: Int64) async {
        materialized[realmID] = nil
        schemas[realmID] = nil
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
    public func catchUpWithOtherNodes() async {
        syncEnabled = [:]
        storedApps = [:]
        for (key, cached) in realms where subscribers[cached.id] != nil {
            guard let current = try? await storedRealm(appID: key.appID, path: key.path) else { continue }
            if current.epoch != cached.epoch {
                await otherNodeReplacedHistory(realmID: cached.id)
            }
        }
        for realmID in Array(subscribers.keys) {
            guard let latest = try? await store.latestServerVersion(realmID: realmID) else { continue }
            otherNodeAppended(realmID: realmID, latest: latest)
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
        guard let changes = coordinator.store.changesFromOtherNodes() else {
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
