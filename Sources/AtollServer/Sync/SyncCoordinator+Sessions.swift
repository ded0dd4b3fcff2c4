import AtollCore
import Foundation

/// What a ``SyncConnection`` asks of storage, all through the coordinator: the facts an ident is
/// decided on, client files, history reads, and leaving.
extension SyncCoordinator {
    /// The realm at `path` as it is now (an operator may have replaced its history since the
    /// bind) and what ``IdentPolicy`` needs to answer `ident`.
    func identFacts(appID: String, path: String, for ident: Ident) async throws -> (realm: StoredRealm, facts: IdentFacts) {
        let enabled = try await isSyncEnabled(appID: appID)
        let realm = try await realm(appID: appID, path: path)
        var known: IdentFacts.KnownFile?
        if ident.fileIdent.isAssigned, let file = try await store.clientFile(realmID: realm.id, ident: ident.fileIdent.ident) {
            known = IdentFacts.KnownFile(salt: file.ident.salt, lastSeen: file.lastSeen, integratedServerVersion: file.lastServerVersion)
        }
        let facts = IdentFacts(
            appID: appID, syncEnabled: enabled, epoch: realm.epoch, epochReason: realm.epochReason,
            compactedThrough: realm.compactedThrough, latestServerVersion: try await store.latestServerVersion(realmID: realm.id),
            knownFile: known, recoveryAllowed: try await clientRecoveryAllowed(appID: appID),
            maxOfflineTime: try await maxOfflineTime(appID: appID))
        return (realm, facts)
    }

    /// Registers a new client file of `realmID` for `userID`, seen now.
    ///
    /// - Throws: `ServerStoreError.limitExceeded` when the user has `maxPerUser` already.
    func newClientFile(realmID: Int64, userID: String, maxPerUser: Int?) async throws -> FileIdent {
        try await store.newClientFile(realmID: realmID, salt: Int64.random(in: 1...Int64.max), now: now(), userID: userID,
                                      maxPerUser: maxPerUser).ident
    }

    /// The newest client version of `fileIdent` integrated at or before `serverVersion`.
    func lastClientVersion(realmID: Int64, fileIdent: Int64, atOrBefore serverVersion: Int64) async throws -> Int64 {
        try await store.lastClientVersion(realmID: realmID, fileIdent: fileIdent, atOrBefore: serverVersion)
    }

    func latestServerVersion(realmID: Int64) async throws -> Int64 {
        try await store.latestServerVersion(realmID: realmID)
    }

    /// History entries after `serverVersion`, about `maxBytes` of them (at least one).
    func history(realmID: Int64, after serverVersion: Int64, maxBytes: Int) async throws -> [HistoryEntry] {
        metrics.countHistoryRead(for: "session")
        return try await store.history(realmID: realmID, after: serverVersion, maxBytes: maxBytes)
    }

    /// A session went: no more history for it, and its client file (if it identified) seen now.
    /// The file is recorded before the session leaves the operators' list, so a session gone
    /// from ``sessions(appID:)`` has its last-seen time written.
    func leave(realmID: Int64, connection: UInt64, session: SessionID, fileIdent: FileIdent) async {
        if fileIdent.isAssigned { await seen(realmID: realmID, fileIdent: fileIdent.ident) }
        unsubscribe(realmID: realmID, connection: connection, session: session)
    }
}
