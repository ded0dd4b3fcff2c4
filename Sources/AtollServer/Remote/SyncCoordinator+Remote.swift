import AtollCore

extension SyncCoordinator {
    /// The flexible-sync realm of an app and its newest state, for remote data access; nil when
    /// no device has synced the app yet.
    func remoteSnapshot(appID: String) async throws -> (realm: StoredRealm, version: Int64, state: ReplicaState)? {
        guard let realm = try await storedRealm(appID: appID, path: FlexibleSync.realmPath) else { return nil }
        let snapshot = try await snapshot(of: realm)
        return (realm, snapshot.version, snapshot.state)
    }

    /// The history entries of `realm` after `version` (about a megabyte of them), for a change
    /// stream; none when there are none.
    func remoteHistory(of realm: StoredRealm, after version: Int64) async throws -> [HistoryEntry] {
        guard try await store.latestServerVersion(realmID: realm.id) > version else { return [] }
        return try await history(realmID: realm.id, after: version, maxBytes: 1 << 20)
    }

    /// A remote data access write integrated as a server write: one changeset from a client file
    /// of its own, through the upload path (schema check, rebase over concurrent uploads, the
    /// write rules once more, fan-out), so devices download it like any change.
    ///
    /// - Returns: the objects the write rules refused after the rebase (a concurrent upload
    ///   changed them meanwhile); their instructions were left out.
    /// With `stillCurrent`, as for an upload: written only if it still says yes in the transaction.
    func integrateRemoteWrite(_ instructions: [Instruction], into realm: StoredRealm, check: WriteRule?,
                              stillCurrent: (@Sendable () -> Bool)? = nil) async throws -> [CompensatingWrite] {
        let file = try await store.newClientFile(realmID: realm.id, salt: Int64.random(in: 1...Int64.max), now: now())
        let base = try await store.latestServerVersion(realmID: realm.id)
        let changeset = Changeset(version: 1, timestamp: timestamp(), fileIdent: file.ident.ident, instructions: instructions)
        let result = try await integrate(UploadBatch(fileIdent: file.ident.ident, baseServerVersion: base, changesets: [changeset]),
                                         into: realm, check: check, stillCurrent: stillCurrent)
        return result.rejected
    }
}
