import AtollCore
import Foundation

/// History retention: when clients were last seen, and compaction of the history no live client
/// needs (an app's maximum offline time).
extension SyncCoordinator {
    /// Records that a client file of a realm was seen now (and integrated `serverVersion`); see
    /// ``ServerStore/touchClientFiles(realmID:idents:serverVersion:now:)``. A failure is logged.
    func seen(realmID: Int64, fileIdent: Int64, integrated serverVersion: Int64? = nil) async {
        do {
            try await store.touchClientFiles(realmID: realmID, idents: [fileIdent], serverVersion: serverVersion, now: now())
        } catch {
            logger.warning("could not record a client file as seen", metadata: ["error": "\(error)"])
        }
    }

    /// Compacts the history of every realm of an app (or of every app) that has a maximum offline
    /// time: the prefix no client seen within that time still needs becomes one snapshot. Clients of
    /// sessions bound now count as seen now. Apps without a maximum offline time keep all history.
    ///
    /// - Returns: what was compacted, one result per realm looked at.
    @discardableResult
    package func compact(appID: String? = nil) async throws -> [(path: String, result: CompactionResult)] {
        let now = self.now()
        var apps = [appID].compactMap { $0 }
        if appID == nil { apps = try await store.apps().map(\.id) }
        var results: [(path: String, result: CompactionResult)] = []
        for app in apps {
            guard let maxOffline = try await maxOfflineTime(appID: app) else { continue }
            for realm in try await store.realms(appID: app) {
                let live = bound.values.filter { $0.info.appID == app && $0.info.path == realm.path }.map(\.info.fileIdent)
                try await store.touchClientFiles(realmID: realm.id, idents: live, serverVersion: nil, now: now)
                let result = try await store.compact(realmID: realm.id, liveSince: now.addingTimeInterval(-maxOffline)) { prefix in
                    var state = ReplicaState()
                    for entry in prefix { state.apply(entry.changeset) }
                    return Self.snapshot(of: state, timestamp: prefix.last?.changeset.timestamp ?? 0)
                }
                if result.removedEntries > 0 {
                    realms[RealmKey(appID: app, path: realm.path)]?.compactedThrough = result.compactedThrough
                    logger.info("history compacted", metadata: [
                        "app": "\(app)", "realm": "\(realm.path)", "through": "\(result.compactedThrough)", "removed": "\(result.removedEntries)",
                    ])
                }
                results.append((realm.path, result))
            }
        }
        return results
    }
}
