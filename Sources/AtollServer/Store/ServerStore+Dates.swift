import AtollCore
import Foundation
import GRDB
import Logging
import PostgresNIO

/// History written before protocol version 2 holds dates as seconds since 1970 (value tag 7);
/// since then a date is `Date`'s own seconds since 2001 (tag 16), exact. Both stores re-encode
/// their history once, in a migration, so every row carries what a version-2 peer sends. Old tags
/// still decode as the old server read them (backups made before keep working), so this changes
/// no value: it only makes the bytes the new encoding's.
enum HistoryDateUpgrade {
    /// History rows read per round.
    static let batch = 500

    /// `data` re-encoded, or nil when it needs no change: it holds no old date tag, or does not
    /// decode (left as it is, for the reader to report).
    static func reencoded(_ data: Data) -> Data? {
        guard data.contains(7), let changeset = try? Changeset(decoding: data) else { return nil }
        let new = changeset.encoded()
        return new == data ? nil : new
    }
}

extension RealmArchive.Entry {
    /// The changeset as a store keeps it now: a backup made before protocol version 2 is restored
    /// with its dates re-encoded, as the migration left the rest of the history.
    var storedChangeset: Data { HistoryDateUpgrade.reencoded(changeset) ?? changeset }
}

extension SQLiteServerStore {
    /// Step 9's rewrite: every history row re-encoded (``HistoryDateUpgrade``).
    static func reencodeHistoryDates(_ db: Database) throws {
        var after: (realm: Int64, version: Int64) = (.min, .min)
        while true {
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT realm_id, server_version, changeset FROM history
                    WHERE (realm_id, server_version) > (?, ?) ORDER BY realm_id, server_version LIMIT ?
                    """,
                arguments: [after.realm, after.version, HistoryDateUpgrade.batch])
            guard let last = rows.last else { break }
            after = (last["realm_id"], last["server_version"])
            for row in rows {
                guard let new = HistoryDateUpgrade.reencoded(row["changeset"]) else { continue }
                try db.execute(sql: "UPDATE history SET changeset = ? WHERE realm_id = ? AND server_version = ?",
                               arguments: [new, row["realm_id"] as Int64, row["server_version"] as Int64])
            }
        }
    }
}

extension PostgresMigrations {
    /// Migration 6's step: every history row re-encoded (``HistoryDateUpgrade``).
    static func reencodeHistoryDates(_ connection: PostgresConnection, logger: Logger) async throws {
        var after: (realm: Int64, version: Int64) = (.min, .min)
        while true {
            let rows = try await connection.query(
                """
                SELECT realm_id, server_version, changeset FROM history
                WHERE (realm_id, server_version) > (\(after.realm), \(after.version))
                ORDER BY realm_id, server_version LIMIT \(HistoryDateUpgrade.batch)
                """, logger: logger
            ).collect().map { try $0.decode((Int64, Int64, Data).self) }
            guard let last = rows.last else { return }
            after = (last.0, last.1)
            for (realm, version, data) in rows {
                guard let new = HistoryDateUpgrade.reencoded(data) else { continue }
                try await connection.query(
                    "UPDATE history SET changeset = \(new) WHERE realm_id = \(realm) AND server_version = \(version)", logger: logger)
            }
        }
    }
}
