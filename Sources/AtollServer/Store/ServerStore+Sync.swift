import AtollCore
import Foundation

/// One synced realm: a partition of an app, with the epoch of its history.
///
/// The store gives each realm a numeric ``id`` that history rows and client files refer to.
package struct StoredRealm: Sendable, Hashable {
    package var id: Int64
    package var appID: String
    /// The partition's `PartitionValue.path` (`s:tasks`, `i:42`, `n:` …).
    package var path: String
    /// Made at random when the realm is created; changes when its history is terminated or restored.
    package var epoch: SyncEpoch
    package var createdAt: Date
    /// Why the epoch last changed: the reason a client holding an older epoch is told when it must
    /// reset (`epochChanged` after terminate and enable, `historyRestored`, `breakingSchemaChange`).
    package var epochReason: ResetReason
    /// The server version the history is compacted through: entries up to it are one snapshot at
    /// this version (0 when nothing is compacted). A client that had integrated less must reset.
    package var compactedThrough: Int64

    package init(id: Int64, appID: String, path: String, epoch: SyncEpoch, createdAt: Date,
                epochReason: ResetReason = .epochChanged, compactedThrough: Int64 = 0) {
        self.id = id
        self.appID = appID
        self.path = path
        self.epoch = epoch
        self.createdAt = createdAt
        self.epochReason = epochReason
        self.compactedThrough = compactedThrough
    }
}

/// A client's copy of a realm, known by the file ident the server gave it.
package struct StoredClientFile: Sendable, Hashable {
    package var realmID: Int64
    /// The ident and the random salt handed out with it.
    package var ident: FileIdent
    /// The newest client version of this file in the realm's history (0 for none).
    package var lastIntegratedClientVersion: Int64
    package var createdAt: Date
    /// When the client last identified, uploaded, downloaded or left (its creation until then).
    package var lastSeen: Date
    /// The newest server version the client is known to have integrated (from its ident and uploads).
    package var lastServerVersion: Int64

    package init(realmID: Int64, ident: FileIdent, lastIntegratedClientVersion: Int64, createdAt: Date,
                lastSeen: Date? = nil, lastServerVersion: Int64 = 0) {
        self.realmID = realmID
        self.ident = ident
        self.lastIntegratedClientVersion = lastIntegratedClientVersion
        self.createdAt = createdAt
        self.lastSeen = lastSeen ?? createdAt
        self.lastServerVersion = lastServerVersion
    }
}

/// What ``ServerStore/integrate(realmID:fileIdent:baseServerVersion:_:)`` reads, inside its transaction,
/// for the pure integration step (`ServerIntegrator.integrate`).
package struct IntegrationInput: Sendable {
    /// The file ident an integration returns a changeset of the server's own with (a compensating
    /// write): the store records it under ``WriteCheck/serverFileIdent`` and does not count it as
    /// the uploader's.
    package static let serverAuthored: Int64 = -1

    /// Every history entry after ``historyAfter`` (the upload's base version unless the caller
    /// asked for less), in order.
    package var historyAfterBase: [HistoryEntry]
    /// The server version ``historyAfterBase`` starts after.
    package var historyAfter: Int64 = 0
    /// The newest client version of the uploading file already in the history (0 for none).
    package var lastIntegratedClientVersion: Int64
    /// The newest server version before this upload.
    package var latestServerVersion: Int64
    /// The realm's epoch now: an upload meant for an older epoch (a restore or schema change ran
    /// since the session bound) must not be integrated.
    package var epoch: SyncEpoch = .none
    /// The realm's ``StoredRealm/compactedThrough``: an upload based on an older version cannot be
    /// transformed against history that is gone.
    package var compactedThrough: Int64 = 0
}

/// What one integrated upload changed.
package struct IntegrationResult: Sendable {
    /// The entries appended (none when the upload was already integrated).
    package var appended: [HistoryEntry]
    /// The newest server version after the upload.
    package var latestServerVersion: Int64
    /// The newest client version of the uploading file in the history after the upload.
    package var lastIntegratedClientVersion: Int64
    /// Objects whose changes the server refused (a compensating write follows them).
    package var rejected: [CompensatingWrite] = []
}

extension IntegrationResult {
    /// What appending `changesets` (an integration's answer) after `latestServerVersion` makes,
    /// as every store stamps it: the next server versions, the uploader's file ident (the
    /// server's for a compensating write, ``IntegrationInput/serverAuthored``), and the uploader's
    /// newest client version.
    static func stamping(_ changesets: [Changeset], fileIdent: Int64, after latestServerVersion: Int64,
                         lastIntegratedClientVersion: Int64) -> IntegrationResult {
        var result = IntegrationResult(appended: [], latestServerVersion: latestServerVersion,
                                       lastIntegratedClientVersion: lastIntegratedClientVersion)
        for var changeset in changesets {
            let isServers = changeset.fileIdent == IntegrationInput.serverAuthored
            changeset.fileIdent = isServers ? WriteCheck.serverFileIdent : fileIdent
            result.latestServerVersion += 1
            if !isServers { result.lastIntegratedClientVersion = max(result.lastIntegratedClientVersion, changeset.version) }
            result.appended.append(HistoryEntry(serverVersion: result.latestServerVersion, changeset: changeset))
        }
        return result
    }
}

extension HistoryEntry {
    /// A history row read back from a store: a changeset that does not decode is `.notFound`.
    static func stored(serverVersion: Int64, _ data: Data) throws -> HistoryEntry {
        do {
            // The bytes go with it: a catch-up sends them as read (the client decodes the same changeset).
            return HistoryEntry(serverVersion: serverVersion, changeset: try Changeset(decoding: data), encodedChangeset: data)
        } catch {
            throw ServerStoreError(.notFound, "history entry \(serverVersion) does not decode: \(error)")
        }
    }
}
