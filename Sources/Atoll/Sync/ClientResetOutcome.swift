import AtollCore
import Foundation

/// What an automatic client reset did, for the after block and for later inspection:
/// `after.clientResetOutcome` (or `session.lastClientReset`).
///
/// ```swift
/// .recoverOrDiscardUnsyncedChanges(afterReset: { before, after in
///     guard let outcome = after.clientResetOutcome, !outcome.didRecover else { return }
///     print("\(outcome.discardedChangeCount) offline changes were dropped; see \(outcome.discardedChangesArchive!.path)")
/// })
/// ```
public struct ClientResetOutcome: Sendable, Hashable {
    /// The mode that ran (`recoverUnsyncedChanges`, `recoverOrDiscardUnsyncedChanges`, `discardUnsyncedChanges`).
    public let mode: String
    /// Whether the unsynced local changes were replayed onto the server's data; false when they
    /// were discarded.
    public let didRecover: Bool
    /// How many unsynced changes were not carried over: all of them when discarding, those the
    /// recovery rules dropped (e.g. updates of objects the server deleted) when recovering.
    public let discardedChangeCount: Int
    /// A readable JSON file with every change that was not carried over, next to the manual
    /// reset backups (`<app folder>/recovered-realms/`); nil when nothing was discarded.
    public let discardedChangesArchive: URL?
    /// Why the server required the reset.
    public let reason: String
    public let date: Date
}

extension SyncSession {
    /// The outcome of the session's last automatic client reset in this process, if any.
    public var lastClientReset: ClientResetOutcome? { engine.resetOutcome.withLock { $0 } }
}

extension Realm {
    /// For a synced realm: what its last automatic client reset did (set before the after block runs).
    public var clientResetOutcome: ClientResetOutcome? { syncSession?.lastClientReset }
}

// MARK: The archive of discarded changes

/// The unsynced changes a client reset did not carry over, written as JSON for people and tools:
///
/// ```json
/// {"realm": ".../s_shire.realm", "mode": "discardUnsyncedChanges", "reason": "...", "date": "2026-11-23T22:10:04Z",
///  "changes": [{"clientVersion": 7, "time": "2026-11-23T22:09:58Z", "instructions": ["set Task(...).owner = \"x\""]}]}
/// ```
struct DiscardedChangesArchive: Codable {
    struct Change: Codable {
        var clientVersion: Int64
        var time: Date
        var instructions: [String]
    }

    var realm: String
    var mode: String
    var reason: String
    var date: Date
    var changes: [Change]

    /// Writes the archive next to where a manual reset would put the backup of `realmPath`.
    static func write(realmPath: String, appFolder: URL, mode: String, reason: String, date: Date,
                      changes: [Changeset], dropped: [Instruction]?) throws -> URL {
        let archived: [Change]
        if let dropped {
            // Recovery kept some: archive just what it dropped, under the changeset it came from.
            var remaining = dropped[...]
            archived = changes.compactMap { changeset in
                var lines: [String] = []
                for instruction in changeset.instructions where remaining.first == instruction {
                    lines.append(instruction.description)
                    remaining.removeFirst()
                }
                return lines.isEmpty ? nil : Change(clientVersion: changeset.version, time: Self.date(changeset.timestamp), instructions: lines)
            }
        } else {
            archived = changes.map {
                Change(clientVersion: $0.version, time: Self.date($0.timestamp), instructions: $0.instructions.map(\.description))
            }
        }
        let archive = DiscardedChangesArchive(realm: realmPath, mode: mode, reason: reason, date: date, changes: archived)
        let backup = URL(fileURLWithPath: FileAction.backupPath(for: realmPath, appFolder: appFolder, date: date))
        let url = backup.deletingPathExtension().appendingPathExtension("discarded.json")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(archive).write(to: url, options: .atomic)
        return url
    }

    /// Changeset timestamps are milliseconds since 1970.
    private static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

// MARK: The pending reset record

/// An automatic reset applied to the file and not yet acknowledged by the server
/// (`_atoll_pending_reset`, docs/client-reset.md). A second reset needing the same action while one is
/// recorded would loop: the session gives that action up instead.
struct PendingReset: Equatable {
    /// `recover` or `discard`.
    var action: String
    var date: Date
    /// The local version holding the recovered changes, whose acknowledgement settles the reset;
    /// nil when nothing was recovered (the server accepting the new identity settles it).
    var recoveredVersion: Int64?
}
