import AtollCore
import Foundation

/// An upload was meant for an epoch the realm no longer has (a restore or schema change ran since
/// its session bound); it is dropped, and the session is being told to reset.
struct StaleEpoch: Error {}

/// What operators change at runtime, and what every history-rewriting operation shares.
extension SyncCoordinator {
    // MARK: Runtime settings

    /// The app as the store has it (its operator overrides), read once.
    func storedApp(_ appID: String) async throws -> StoredApp? {
        if let known = storedApps[appID] { return known }
        let app = try await store.app(id: appID)
        if let app { storedApps[appID] = app }
        return app
    }

    /// Whether clients of an app may recover unsynced changes on a reset: the operator's setting,
    /// else the configuration's `clientRecovery`.
    package func clientRecoveryAllowed(appID: String) async throws -> Bool {
        try await storedApp(appID)?.clientRecovery ?? appSettings(appID).clientRecovery
    }

    /// Turns client recovery on or off for an app (nil: as the configuration says); persisted.
    package func setClientRecovery(appID: String, _ allowed: Bool?) async throws {
        guard try await store.setClientRecovery(appID: appID, allowed) else { throw ServerStoreError(.missingOwner, "no app \(appID)") }
        storedApps[appID] = nil
        try await store.publish(.appChanged(appID: appID))
        logger.notice("client recovery set", metadata: ["app": "\(appID)", "allowed": "\(allowed.map { "\($0)" } ?? "as configured")"])
    }

    /// How long a client of the app may stay away before it must reset, in seconds; nil keeps all
    /// history. The operator's setting (0 meaning "keep all"), else the configuration's.
    package func maxOfflineTime(appID: String) async throws -> TimeInterval? {
        let seconds = try await storedApp(appID)?.maxOfflineTime ?? appSettings(appID).maxOfflineTime
        guard let seconds, seconds > 0 else { return nil }
        return seconds
    }

    /// Sets an app's maximum offline time in seconds (0 keeps all history; nil: as configured); persisted.
    package func setMaxOfflineTime(appID: String, _ seconds: TimeInterval?) async throws {
        guard try await store.setMaxOfflineTime(appID: appID, seconds) else { throw ServerStoreError(.missingOwner, "no app \(appID)") }
        storedApps[appID] = nil
        try await store.publish(.appChanged(appID: appID))
        logger.notice("maximum offline time set", metadata: ["app": "\(appID)", "seconds": "\(seconds.map { "\($0)" } ?? "as configured")"])
    }

    // MARK: Shared by restore, schema changes and compaction

    /// A realm's data at its newest server version, replayed from the store's history.
    func currentState(of realmID: Int64) async throws -> ReplicaState {
        var state = ReplicaState()
        var version: Int64 = 0
        while true {
            let entries = try await store.history(realmID: realmID, after: version, maxBytes: 4 << 20)
            guard let last = entries.last else { return state }
            for entry in entries { state.apply(entry.changeset) }
            version = last.serverVersion
        }
    }

    /// One server changeset that creates `state` from nothing: the first entry of a history that
    /// starts over, or a compacted prefix.
    static func snapshot(of state: ReplicaState, timestamp: Int64) -> Changeset {
        Changeset(version: 0, timestamp: timestamp, fileIdent: 0, instructions: ReplicaState().instructions(becoming: state))
    }

    /// Milliseconds since 1970 by the server's clock, the changesets' clock.
    func timestamp() -> Int64 { Int64(now().timeIntervalSince1970 * 1000) }

    /// After a realm's history was replaced under a new epoch: forgets what is cached about it and
    /// ends its bound sessions with "reset required" for `reason`, so their clients reset now.
    func historyReplaced(_ realm: StoredRealm, reason: ResetReason, message: String, announce: Bool = true) async throws {
        if announce { try await store.publish(.historyReplaced(realmID: realm.id)) }
        let key = RealmKey(appID: realm.appID, path: realm.path)
        realms[key] = realm
        materialized[realm.id] = nil
        fannedOut[realm.id] = nil
        noteServed(realm.id)
        let recovery = try await clientRecoveryAllowed(appID: realm.appID)
        for (subscriber, session) in bound where session.info.appID == realm.appID && session.info.path == realm.path {
            session.reset(ResetRequired(session: session.info.session, epoch: realm.epoch, reason: reason,
                                        recoveryAllowed: recovery, message: message))
            forget(subscriber, of: realm.id)
        }
    }

    /// The realm of `appID` at `path` as the store has it now, or nil.
    func storedRealm(appID: String, path: String) async throws -> StoredRealm? {
        try await store.realms(appID: appID).first { $0.path == path }
    }
}
