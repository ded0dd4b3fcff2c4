import AtollCore
import Foundation

/// A backup of one realm or of a whole app: what ``SyncCoordinator/backup(appID:path:id:)`` makes
/// and ``SyncCoordinator/restore(_:)`` puts back. ``BackupDirectory`` keeps them as JSON files.
package struct ServerBackup: Sendable, Hashable, Codable {
    package var id: String
    package var appID: String
    /// The realm backed up, or nil for every realm of the app.
    package var path: String?
    package var createdAt: Date
    package var realms: [RealmArchive]
}

extension SyncCoordinator {
    /// Backs up one realm (`path`) or every realm of an app (nil): their history, client files and
    /// epochs, each read in one transaction.
    ///
    /// - Throws: `ServerStoreError.notFound` when the app has no realm at `path`.
    package func backup(appID: String, path: String?, id: String) async throws -> ServerBackup {
        var realms = try await store.realms(appID: appID)
        if let path {
            realms = realms.filter { $0.path == path }
            guard !realms.isEmpty else { throw ServerStoreError(.notFound, "app \(appID) has no realm \(path)") }
        }
        var archives: [RealmArchive] = []
        for realm in realms { archives.append(try await store.archive(realmID: realm.id)) }
        logger.notice("backed up", metadata: ["app": "\(appID)", "backup": "\(id)", "realms": "\(archives.count)"])
        return ServerBackup(id: id, appID: appID, path: path, createdAt: now(), realms: archives)
    }

    /// Puts a backup's history back. Every restored realm starts under a **new epoch** with reason
    /// `historyRestored`: a client that synced after the backup (even one whose uploads were
    /// acknowledged since) resets instead of carrying on from a place the history no longer has, and
    /// recovery replays what it had not uploaded. An app backup also rolls back realms made after it:
    /// they start over empty. Bound sessions of those realms are told to reset at once.
    ///
    /// - Returns: the paths of the realms restored or emptied.
    @discardableResult
    package func restore(_ backup: ServerBackup) async throws -> [String] {
        let message = "the server's history was restored from backup \(backup.id) of \(backup.createdAt)"
        var touched: [String] = []
        for archive in backup.realms {
            let realm = try await store.restore(appID: backup.appID, archive, epoch: Self.randomEpoch(), reason: .historyRestored, now: now())
            try await historyReplaced(realm, reason: .historyRestored, message: message)
            touched.append(realm.path)
        }
        if backup.path == nil {
            let restored = Set(backup.realms.map(\.path))
            for realm in try await store.realms(appID: backup.appID) where !restored.contains(realm.path) {
                let epoch = Self.randomEpoch()
                try await store.restartHistory(realmID: realm.id, epoch: epoch, reason: .historyRestored,
                                               snapshot: Self.snapshot(of: ReplicaState(), timestamp: timestamp()))
                var emptied = realm
                emptied.epoch = epoch
                emptied.epochReason = .historyRestored
                emptied.compactedThrough = 0
                try await historyReplaced(emptied, reason: .historyRestored, message: message)
                touched.append(realm.path)
            }
        }
        logger.notice("restored", metadata: ["app": "\(backup.appID)", "backup": "\(backup.id)", "realms": "\(touched.count)"])
        return touched
    }
}
