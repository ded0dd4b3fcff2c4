import AtollCore
import Foundation

/// Everything the store keeps about one realm's sync state, read in one transaction: what a backup
/// holds for each realm and what a restore puts back (docs/protocol.md §3).
public struct RealmArchive: Sendable, Hashable, Codable {
    /// The realm's path (`s:tasks`, `flx` …).
    public var path: String
    public var epoch: UInt64
    public var epochReason: UInt8
    public var latestServerVersion: Int64
    public var nextFileIdent: Int64
    public var compactedThrough: Int64
    public var clientFiles: [ClientFile]
    /// In server-version order.
    public var history: [Entry]

    public struct ClientFile: Sendable, Hashable, Codable {
        public var ident: Int64
        public var salt: Int64
        public var lastClientVersion: Int64
        public var compactedClientVersion: Int64
        public var lastServerVersion: Int64
        public var createdAt: Double
        public var lastSeen: Double
    }

    public struct Entry: Sendable, Hashable, Codable {
        public var serverVersion: Int64
        public var originFileIdent: Int64
        public var originClientVersion: Int64
        public var originTimestamp: Int64
        /// The encoded changeset (`Changeset.encoded()`).
        public var changeset: Data
    }

    /// The realm's data at its newest version, built by replaying the history.
    public func state() throws -> ReplicaState {
        var state = ReplicaState()
        for entry in history { state.apply(try Changeset(decoding: entry.changeset)) }
        return state
    }
}

/// What one compaction did to a realm's history.
public struct CompactionResult: Sendable, Hashable, Codable {
    public var realmID: Int64
    /// The history is one snapshot up to this version now (unchanged when nothing was compacted).
    public var compactedThrough: Int64
    /// How many history entries were replaced by the snapshot.
    public var removedEntries: Int
}
