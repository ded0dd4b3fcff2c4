import AtollCore
import Foundation

extension SessionEngine {
    /// Downloads the server's current data for this realm into an in-memory side realm (a client
    /// file of its own, whose identity this file adopts), with this file's subscriptions for
    /// flexible sync.
    func downloadFreshCopy() async throws -> (state: ReplicaState, sync: SyncState) {
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
        let clock = sync.user.core.clock
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await session.wait(for: .upload)
                try await session.wait(for: .download)
            }
            group.addTask {
                try await clock.sleep(for: timeout)
                throw SyncError(.connectionFailed, "the fresh copy for the client reset did not download within \(Int(timeout)) s")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
        sideRealm.refresh()
        return (try sideRealm.replicaState(), try sideRealm.loadSyncState())
    }
}
