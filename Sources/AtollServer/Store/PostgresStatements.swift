import AtollCore
import Foundation
import PostgresNIO

/// The PostgreSQL store's hot statements, prepared: postgres-nio prepares one on a connection the
/// first time it runs there and reuses it after, so the server parses and plans it once per
/// connection instead of once per call. These are the statements of an upload's integration, of the
/// announcements to the other nodes, and of the reads every download makes.
///
/// With a pooler in front of PostgreSQL, it must support protocol-level prepared statements
/// (PgBouncer 1.21 and later, `max_prepared_statements` > 0) or pool by session.
enum PostgresStatements {
    /// A realm's latest version, epoch and compaction point, and the file `$2`'s last integrated
    /// version (null when the realm has no such file).
    static let realmAndFile = """
        SELECT r.latest_version, r.epoch, r.compacted_through, f.last_client_version
        FROM realms r LEFT JOIN client_files f ON f.realm_id = r.id AND f.ident = $2
        WHERE r.id = $1
        """

    /// Locks the realm's row for the transaction (every writer of its history takes this lock
    /// first, on every node) and reads, with it, the uploading client file's last integrated
    /// version (nil when the file is unknown).
    struct LockRealmForUpload: PostgresPreparedStatement {
        static let name = "atoll_lock_realm_for_upload_1"
        static let sql = realmAndFile + " FOR UPDATE OF r"
        typealias Row = (Int64, Int64, Int64, Int64?)
        var realmID: Int64
        var fileIdent: Int64

        func makeBindings() throws -> PostgresBindings { .integers(realmID, fileIdent) }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Appends one history entry.
    struct InsertEntry: PostgresPreparedStatement {
        static let name = "atoll_insert_entry_1"
        static let sql = """
            INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset)
            VALUES ($1, $2, $3, $4, $5, $6) RETURNING 1::int4
            """
        typealias Row = Int32
        var entry: Entry

        func makeBindings() throws -> PostgresBindings { try entry.bindings(capacity: 6) }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int32.self) }
    }

    /// Appends an upload's last history entry and, in the same round trip, moves the realm's
    /// latest version and the client file's last integrated version.
    struct AppendLastEntry: PostgresPreparedStatement {
        static let name = "atoll_append_last_entry_2"
        static let sql = """
            WITH entry AS (
                INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset)
                VALUES ($1, $2, $3, $4, $5, $6)
            ), realm AS (
                UPDATE realms SET latest_version = $2 WHERE id = $1
            ), file AS (
                UPDATE client_files SET last_client_version = $7 WHERE realm_id = $1 AND ident = $8
            )
            SELECT 1::int4
            """
        typealias Row = Int32
        var entry: Entry
        var uploaderFileIdent: Int64
        var uploaderClientVersion: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = try entry.bindings(capacity: 8)
            bindings.append(uploaderClientVersion)
            bindings.append(uploaderFileIdent)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int32.self) }
    }

    /// What an upload's integration is checked against, read without a lock: the realm's latest
    /// version, epoch and compaction point, and the uploading file's last integrated version.
    struct ReadUploadFence: PostgresPreparedStatement {
        static let name = "atoll_read_upload_fence_1"
        static let sql = realmAndFile
        typealias Row = (Int64, Int64, Int64, Int64?)
        var realmID: Int64
        var fileIdent: Int64

        func makeBindings() throws -> PostgresBindings { .integers(realmID, fileIdent) }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// An upload's one entry appended in one statement, outside a transaction, if and only if the
    /// realm and the uploading file are still as the integration read them (`fence`): the realm's
    /// row update takes its lock, and a writer that committed first (on any node) makes the
    /// condition false, so nothing is written. Moves the file's last integrated version with it.
    /// Returns a row when it appended.
    struct AppendIfUnchanged: PostgresPreparedStatement {
        static let name = "atoll_append_if_unchanged_2"
        static let sql = """
            WITH realm AS (
                UPDATE realms SET latest_version = $2
                WHERE id = $1 AND latest_version = $9 AND epoch = $10 AND compacted_through = $11
                  AND EXISTS (SELECT 1 FROM client_files WHERE realm_id = $1 AND ident = $8 AND last_client_version = $12)
                RETURNING id
            ), file AS (
                UPDATE client_files SET last_client_version = $7
                WHERE realm_id = (SELECT id FROM realm) AND ident = $8
            ), entry AS (
                INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset)
                SELECT $1, $2, $3, $4, $5, $6 FROM realm
                RETURNING server_version
            )
            SELECT 1::int4 FROM entry
            """
        typealias Row = Int32
        var entry: Entry
        var uploaderFileIdent: Int64
        var uploaderClientVersion: Int64
        var fence: PostgresUploadFence

        func makeBindings() throws -> PostgresBindings {
            var bindings = try entry.bindings(capacity: 12)
            bindings.append(uploaderClientVersion)
            bindings.append(uploaderFileIdent)
            bindings.append(fence.latestServerVersion)
            bindings.append(Int64(bitPattern: fence.epoch.rawValue))
            bindings.append(fence.compactedThrough)
            bindings.append(fence.lastClientVersion)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int32.self) }
    }

    /// Sends announcements on the change channel, in order, in one transaction that does not wait
    /// for its commit to be flushed (a notification is not data: one lost in a crash only delays
    /// the other nodes until their periodic check). Kept apart from the transactions that write
    /// history: PostgreSQL serialises the commits of notifying transactions, flush included.
    struct Announce: PostgresPreparedStatement {
        static let name = "atoll_announce_1"
        static let sql = """
            SELECT count(*)::int4
            FROM (SELECT set_config('synchronous_commit', 'off', true)) AS unflushed,
                 unnest($2::text[]) AS payload, LATERAL (SELECT pg_notify($1, payload)) AS sent
            """
        typealias Row = Int32
        var channel: String
        var payloads: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(channel)
            bindings.append(payloads)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int32.self) }
    }

    /// One history row's values.
    struct Entry: Sendable {
        /// The row of `entry` in `realmID`, its changeset encoded.
        init(realmID: Int64, _ entry: HistoryEntry) {
            self.init(realmID: realmID, serverVersion: entry.serverVersion, originFileIdent: entry.changeset.fileIdent,
                      originClientVersion: entry.changeset.version, originTimestamp: entry.changeset.timestamp,
                      changeset: entry.encoded)
        }

        init(realmID: Int64, serverVersion: Int64, originFileIdent: Int64, originClientVersion: Int64, originTimestamp: Int64,
             changeset: Data) {
            self.realmID = realmID
            self.serverVersion = serverVersion
            self.originFileIdent = originFileIdent
            self.originClientVersion = originClientVersion
            self.originTimestamp = originTimestamp
            self.changeset = changeset
        }

        var realmID: Int64
        var serverVersion: Int64
        var originFileIdent: Int64
        var originClientVersion: Int64
        var originTimestamp: Int64
        var changeset: Data

        func bindings(capacity: Int) throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: capacity)
            bindings.append(realmID)
            bindings.append(serverVersion)
            bindings.append(originFileIdent)
            bindings.append(originClientVersion)
            bindings.append(originTimestamp)
            try bindings.append(changeset)
            return bindings
        }
    }

    /// A page of a realm's history after a version, in order.
    struct HistoryPage: PostgresPreparedStatement {
        static let name = "atoll_history_page_1"
        static let sql = """
            SELECT server_version, changeset FROM history
            WHERE realm_id = $1 AND server_version > $2
            ORDER BY server_version LIMIT $3
            """
        typealias Row = (Int64, Data)
        var realmID: Int64
        var after: Int64
        var limit: Int64

        func makeBindings() throws -> PostgresBindings { .integers(realmID, after, limit) }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The newest server versions of a set of realms.
    struct LatestVersions: PostgresPreparedStatement {
        static let name = "atoll_latest_versions_1"
        static let sql = "SELECT id, latest_version FROM realms WHERE id = ANY($1)"
        typealias Row = (Int64, Int64)
        var realmIDs: [Int64]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(realmIDs)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A realm's newest server version.
    struct LatestVersion: PostgresPreparedStatement {
        static let name = "atoll_latest_version_1"
        static let sql = "SELECT latest_version FROM realms WHERE id = $1"
        typealias Row = Int64
        var realmID: Int64

        func makeBindings() throws -> PostgresBindings { .integers(realmID) }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }
}

extension PostgresBindings {
    /// Bindings of `values`, in order (the statements' ids and versions).
    static func integers(_ values: Int64...) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        return bindings
    }
}
