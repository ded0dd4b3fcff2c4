import AtollCore
import Foundation

/// The SQL of the local history (`_atoll_history`, one record per local commit) and of the
/// file's version.
///
/// ```swift
/// let version = try realm.history.currentVersion()
/// try realm.history.append(changeset)        // inside the commit's transaction
/// ```
struct HistoryStore {
    let connection: Connection

    /// The file's newest committed version: the last history record, or the version recorded in
    /// `_atoll_meta`. A commit of changes downloaded from the server (`integrateRemote`) writes no
    /// history record and sets `version` in `_atoll_meta` instead, so the newest version is the
    /// larger of the two.
    static let currentVersionSQL = "SELECT MAX(COALESCE((SELECT MAX(version) FROM _atoll_history), 0), COALESCE((SELECT value FROM _atoll_meta WHERE key = 'version'), 0))"

    func currentVersion() throws -> Int64 {
        try connection.fetchInt(Self.currentVersionSQL) ?? 0
    }

    /// Records a local commit.
    func append(_ changeset: Changeset) throws {
        try connection.execute("INSERT INTO _atoll_history (version, timestamp, changeset) VALUES (?, ?, ?)",
                               [.integer(changeset.version), .integer(changeset.timestamp), .blob(changeset.encoded())])
    }

    /// Records the version of a commit that has no history record (changes from the server, and
    /// every commit of a local realm).
    func setVersion(_ version: Int64) throws {
        try connection.execute("INSERT OR REPLACE INTO _atoll_meta (key, value) VALUES ('version', ?)", [.integer(version)])
    }

    /// Whether any commit has a history record.
    func hasRecords() throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM _atoll_history LIMIT 1") != nil
    }

    /// Remembers that a local commit changed data without a history record: the file's history
    /// no longer describes its data, so it must not be synced as it is (see `Realm.init`).
    func noteUnrecordedCommit() throws {
        try connection.execute("INSERT OR IGNORE INTO _atoll_meta (key, value) VALUES ('unrecorded_commits', 1)")
    }

    /// Whether a local commit changed data without a history record.
    func hasUnrecordedCommits() throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM _atoll_meta WHERE key = 'unrecorded_commits'") != nil
    }

    /// The encoded records after `version`, oldest first (`nil` for a record that is not a blob).
    func records(after version: Int64) throws -> [Data?] {
        try connection.fetchAll("SELECT changeset FROM _atoll_history WHERE version > ? ORDER BY version", [.integer(version)]).map { row in
            if case .blob(let data) = row[0] { return data }
            return nil
        }
    }
}
