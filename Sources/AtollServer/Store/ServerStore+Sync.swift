import AtollCore
import Foundation

/// One synced realm: a partition of an app, with the epoch of its history.
///
/// The store gives each realm a numeric ``id`` that history rows and client files refer to.
public struct StoredRealm: Sendable, Hashable {
    public var id: Int64
    public var appID: String
    /// The partition's `PartitionValue.path` (`s:tasks`, `i:42`, `n:` …).
    public var path: String
    /// Made at random when the realm is created; changes when its history is terminated or restored.
    public var epoch: SyncEpoch
    public var createdAt: Date

    public init(id: Int64, appID: String, path: String, epoch: SyncEpoch, createdAt: Date) {
        self.id = id
        self.appID = appID
        self.path = path
        self.epoch = epoch
        self.createdAt = createdAt
    }
}

/// A client's copy of a realm, known by the file ident the server gave it.
public struct StoredClientFile: Sendable, Hashable {
    public var realmID: Int64
    /// The ident and the random salt handed out with it.
    public var ident: FileIdent
    /// The newest client version of this file in the realm's history (0 for none).
    public var lastIntegratedClientVersion: Int64
    public var createdAt: Date

    public init(realmID: Int64, ident: FileIdent, lastIntegratedClientVersion: Int64, createdAt: Date) {
        self.realmID = realmID
        self.ident = ident
        self.lastIntegratedClientVersion = lastIntegratedClientVersion
        self.createdAt = createdAt
    }
}

/// What ``ServerStore/integrate(realmID:fileIdent:baseServerVersion:_:)`` reads, inside its transaction,
/// for the pure integration step (`ServerIntegrator.integrate`).
public struct IntegrationInput: Sendable {
    /// Every history entry after the upload's base version, in order.
    public var historyAfterBase: [HistoryEntry]
    /// The newest client version of the uploading file already in the history (0 for none).
    public var lastIntegratedClientVersion: Int64
    /// The newest server version before this upload.
    public var latestServerVersion: Int64
}

/// What one integrated upload changed.
public struct IntegrationResult: Sendable {
    /// The entries appended (none when the upload was already integrated).
    public var appended: [HistoryEntry]
    /// The newest server version after the upload.
    public var latestServerVersion: Int64
    /// The newest client version of the uploading file in the history after the upload.
    public var lastIntegratedClientVersion: Int64
    /// Objects whose changes the server refused (a compensating write follows them).
    public var rejected: [CompensatingWrite] = []
}
