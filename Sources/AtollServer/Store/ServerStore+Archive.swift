import AtollCore
import Foundation

/// Everything the store keeps about one realm's sync state, read in one transaction: what a backup
/// holds for each realm and what a restore puts back (docs/protocol.md §3).
package struct RealmArchive: Sendable, Hashable, Codable {
    /// The realm's path (`s:tasks`, `flx` …).
    package var path: String
    package var epoch: UInt64
    package var epochReason: UInt8
    package var latestServerVersion: Int64
    package var nextFileIdent: Int64
    package var compactedThrough: Int64
    package var clientFiles: [ClientFile]
    /// In server-version order.
    package var history: [Entry]

    package struct ClientFile: Sendable, Hashable, Codable {
        package var ident: Int64
        package var salt: Int64
        package var lastClientVersion: Int64
        package var compactedClientVersion: Int64
        package var lastServerVersion: Int64
        package var createdAt: Double
        package var lastSeen: Double
    }

    package struct Entry: Sendable, Hashable, Codable {
        package var serverVersion: Int64
        package var originFileIdent: Int64
        package var originClientVersion: Int64
        package var originTimestamp: Int64
        /// The encoded changeset (`Changeset.encoded()`).
        package var changeset: Data
    }

    /// The realm's data at its newest version, built by replaying the history.
    package func state() throws -> ReplicaState {
        var state = ReplicaState()
        for entry in history { state.apply(try Changeset(decoding: entry.changeset)) }
        return state
    }
}

/// What one compaction did to a realm's history.
package struct CompactionResult: Sendable, Hashable, Codable {
    package var realmID: Int64
    /// The history is one snapshot up to this version now (unchanged when nothing was compacted).
    package var compactedThrough: Int64
    /// How many history entries were replaced by the snapshot.
    package var removedEntries: Int
}
