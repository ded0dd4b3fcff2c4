import AtollCore
import Foundation

/// Integrating uploads: validated, rebased (mostly outside the store's write lock), checked by
/// the write rules, appended, and fanned out to the realm's sessions.
extension SyncCoordinator {
    /// Integrates an upload of one client file into a realm's history, then hands the appended
    /// entries to every session bound to the realm (the uploader's included: its own changesets come
    /// back in its downloads, which is how its merger recognises them as integrated).
    ///
    /// - Throws: `MergeError` (a base version outside the history, a missing own changeset, client
    ///   versions that do not increase) or the store's errors; nothing is written then.
    ///
    /// With `check`, the rebased changesets go through ``WriteCheck`` against the realm's state:
    /// what it refuses is left out, a compensating write (a changeset of the server's own, file
    /// ident 0) follows them, and the result lists the refused objects.
    ///
    /// With `stillCurrent`, the upload is integrated only if it says yes inside the store's
    /// transaction (else `StaleEpoch`): the rules `check` came from are still the app's.
    package func integrate(_ batch: UploadBatch, into realm: StoredRealm, check: WriteRule? = nil,
                          stillCurrent: (@Sendable () -> Bool)? = nil) async throws -> IntegrationResult {
        uploadsInFlight[realm.appID, default: 0] += 1
        defer { uploadsInFlight[realm.appID, default: 1] -= 1 }
        let clock = ContinuousClock()
        let start = clock.now
        // An upload that breaks the schema is refused before the store sees it. The schema only
        // grows, so the newest one holds everything the client's changesets were made on.
        var schema = try await currentSchema(of: realm, trustedFrom: batch.baseServerVersion)
        for changeset in batch.changesets { try schema.validate(changeset) }
        // The state uploads are validated against (every index, object and size) and checked by
        // the write rules against.
        let snapshot = try await snapshot(of: realm, atLeast: batch.baseServerVersion)
        // Rebased outside the store's write lock (which every app shares) over the history as it
        // is now; inside it, only over what other uploads integrated meanwhile. If they include
        // the uploader's own changesets the whole rebase runs again under the lock, once.
        // (A store that integrates outside its lock anyway does it in one go.)
        let early = store.integratesOutsideTheLock ? nil : try await rebaseEarly(batch, realm: realm)
        if early != nil { await interleaving.afterEarlyRebase(realmID: realm.id) }
        do {
            return try await integrate(batch, into: realm, check: check, stillCurrent: stillCurrent, snapshot: snapshot, early: early, start: start)
        } catch is RebaseAgain {
            rebasedAgain += 1
            return try await integrate(batch, into: realm, check: check, stillCurrent: stillCurrent, snapshot: snapshot, early: nil, start: start)
        }
    }

    /// An upload rebased before its transaction, over the history through `through`.
    struct EarlyRebase: Sendable {
        var changesets: [Changeset]
        var through: Int64
        var lastIntegratedClientVersion: Int64
    }

    /// The early rebase no longer fits the history found in the transaction.
    struct RebaseAgain: Error {}

    /// `batch` rebased over the realm's history after its base as the store has it now, or nil when
    /// there is nothing to rebase over (or the rebase refuses it: the transaction then decides).
    private func rebaseEarly(_ batch: UploadBatch, realm: StoredRealm) async throws -> EarlyRebase? {
        let latest = try await store.latestServerVersion(realmID: realm.id)
        guard batch.baseServerVersion >= 0, batch.baseServerVersion < latest else { return nil }
        var entries: [HistoryEntry] = []
        var cursor = batch.baseServerVersion
        while cursor < latest {
            let chunk = try await store.history(realmID: realm.id, after: cursor, maxBytes: 4 << 20)
            guard let last = chunk.last else { break }
            entries += chunk.lazy.filter { $0.serverVersion <= latest }
            cursor = last.serverVersion
        }
        let lastClient = try await store.lastClientVersion(realmID: realm.id, fileIdent: batch.fileIdent, atOrBefore: latest)
        guard let rebased = try? ServerIntegrator.integrate(
            batch, over: Self.skippingOwnPrefix(of: entries, for: batch), lastIntegratedClientVersion: lastClient)
        else { return nil }
        return EarlyRebase(changesets: rebased, through: latest, lastIntegratedClientVersion: lastClient)
    }

    private func integrate(
        _ batch: UploadBatch, into realm: StoredRealm, check: WriteRule?, stillCurrent: (@Sendable () -> Bool)?, snapshot: (version: Int64, state: ReplicaState),
        early: EarlyRebase?, start: ContinuousClock.Instant
    ) async throws -> IntegrationResult {
        let clock = ContinuousClock()
        let refused = Locked<[CompensatingWrite]>([])
        // What the transaction reads: from the early rebase on, and from the snapshot on (the write
        // rules check against the snapshot plus what came after it).
        let readFrom = early.map { min($0.through, snapshot.version) } ?? batch.baseServerVersion
        var result = try await store.integrate(
            realmID: realm.id, fileIdent: batch.fileIdent, baseServerVersion: batch.baseServerVersion, historyAfter: readFrom
        ) { input in
            // A store may run this more than once (PostgreSQL: again under the lock when what it
            // read first went stale); only the last run's refusals count.
            refused.withLock { $0 = [] }
            guard input.epoch == realm.epoch, stillCurrent?() ?? true else { throw StaleEpoch() }
            // A compacted prefix is gone: only a client that has nothing of the history (base 0, a new
            // file) may upload on a base before its end; it merges against the snapshot as a whole.
            guard batch.baseServerVersion == 0 || batch.baseServerVersion >= input.compactedThrough,
                  batch.baseServerVersion >= 0, batch.baseServerVersion <= input.latestServerVersion else {
                throw MergeError(
                    .badBaseVersion,
                    "base server version \(batch.baseServerVersion) is outside \(input.compactedThrough)...\(input.latestServerVersion)")
            }
            let rebased: [Changeset]
            if let early {
                let since = input.historyAfterBase.filter { $0.serverVersion > early.through }
                guard input.lastIntegratedClientVersion == early.lastIntegratedClientVersion,
                      !since.contains(where: { $0.changeset.fileIdent == batch.fileIdent })
                else { throw RebaseAgain() }
                rebased = since.isEmpty ? early.changesets : try ServerIntegrator.integrate(
                    UploadBatch(fileIdent: batch.fileIdent, baseServerVersion: early.through, changesets: early.changesets),
                    over: since, lastIntegratedClientVersion: input.lastIntegratedClientVersion)
            } else {
                rebased = try ServerIntegrator.integrate(
                    batch, over: Self.skippingOwnPrefix(of: input.historyAfterBase, for: batch),
                    lastIntegratedClientVersion: input.lastIntegratedClientVersion)
            }
            guard !rebased.isEmpty else { return rebased }
            // The state the changesets were rebased onto: the snapshot, plus what was integrated
            // since it was taken (the snapshot is never older than the upload's base). Validation
            // needs only the objects the upload touches.
            let touched = Set(rebased.flatMap { $0.instructions.compactMap(\.object) })
            var affected = snapshot.state.restricted(to: touched)
            for entry in input.historyAfterBase where entry.serverVersion > snapshot.version { affected.apply(entry.changeset) }
            try affected.validate(rebased, limits: limits)
            guard let check else { return rebased }
            var state = snapshot.state
            for entry in input.historyAfterBase where entry.serverVersion > snapshot.version { state.apply(entry.changeset) }
            let outcome = WriteCheck.check(rebased, over: state, rule: check)
            guard !outcome.rejected.isEmpty else { return rebased }
            refused.withLock { $0 = outcome.rejected }
            let compensation = Changeset(version: 0, timestamp: 0, fileIdent: IntegrationInput.serverAuthored, instructions: outcome.compensation)
            return outcome.allowed + [compensation]
        }
        result.rejected = refused.withLock { $0 }
        metrics.integrationLatency.record(clock.now - start)
        integrated(result, into: realm)
        return result
    }

    /// What follows a committed integration: the cached state and schema take in the appended
    /// entries, and every session bound to the realm gets them. `schemaInstructions`: every
    /// appended changeset's schema instructions are known to be its first that many (an
    /// import's), so the schema reads no others.
    func integrated(_ result: IntegrationResult, into realm: StoredRealm, schemaInstructions: Int? = nil) {
        guard !result.appended.isEmpty else { return }
        materialized[realm.id]?.absorb(result.appended)
        // So the next upload's schema check need not read this upload back from the store.
        if schemas[realm.id]?.epoch == realm.epoch {
            schemas[realm.id]!.absorb(result.appended, readFromStore: false, schemaInstructions: schemaInstructions)
        }
        // Encoded once for all the realm's sessions (a store that wrote them encoded has their bytes).
        var appended = result.appended
        for i in appended.indices { appended[i].encodeOnce() }
        let advance = HistoryAdvance(realmID: realm.id, entries: appended, latestServerVersion: result.latestServerVersion)
        if let subscribed = subscribers[realm.id] {
            for deliver in subscribed.values { deliver(advance) }
            fannedOut[realm.id] = max(fannedOut[realm.id] ?? 0, result.latestServerVersion)
        }
    }

    /// The history after an upload's base without its leading run of the uploader's own changesets
    /// that the upload does not carry.
    ///
    /// A client that committed on top of a changeset it had already sent, before that changeset came
    /// back in a download, uploads the newer one alone on the older base. When nothing of another
    /// client sits between the base and those own entries, each of them is exactly what the client
    /// has locally (both sides rebased it over the same entries up to the base), so the upload is
    /// written on top of them and they can be skipped. Otherwise `ServerIntegrator` refuses the
    /// upload (`missingOwnChangeset`) and the client must download first.
    static func skippingOwnPrefix(of history: [HistoryEntry], for batch: UploadBatch) -> ArraySlice<HistoryEntry> {
        let carried = Set(batch.changesets.map(\.version))
        let prefix = history.prefix { $0.changeset.fileIdent == batch.fileIdent && !carried.contains($0.changeset.version) }
        return history.dropFirst(prefix.count)
    }
}
