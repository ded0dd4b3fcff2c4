import AtollCore
import Foundation
import GRDB

extension SQLiteServerStore {
    // MARK: Runtime settings

    package func setClientRecovery(appID: String, _ allowed: Bool?) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "UPDATE apps SET client_recovery = ? WHERE id = ?", arguments: [allowed, appID])
            return db.changesCount > 0
        }
    }

    package func setMaxOfflineTime(appID: String, _ seconds: TimeInterval?) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "UPDATE apps SET max_offline_time = ? WHERE id = ?", arguments: [seconds, appID])
            return db.changesCount > 0
        }
    }

    // MARK: Backup and restore

    package func archive(realmID: Int64) async throws -> RealmArchive {
        try await pool.read { db in
            guard let realm = try Row.fetchOne(db, sql: "SELECT * FROM realms WHERE id = ?", arguments: [realmID]) else {
                throw ServerStoreError(.notFound, "no realm \(realmID)")
            }
            let files = try Row.fetchAll(db, sql: "SELECT * FROM client_files WHERE realm_id = ? ORDER BY ident", arguments: [realmID]).map {
                RealmArchive.ClientFile(
                    ident: $0["ident"], salt: $0["salt"], lastClientVersion: $0["last_client_version"],
                    compactedClientVersion: $0["compacted_client_version"], lastServerVersion: $0["last_server_version"],
                    createdAt: $0["created_at"], lastSeen: $0["last_seen"] ?? $0["created_at"])
            }
            let history = try Row.fetchAll(
                db, sql: "SELECT * FROM history WHERE realm_id = ? ORDER BY server_version", arguments: [realmID]
            ).map {
                RealmArchive.Entry(
                    serverVersion: $0["server_version"], originFileIdent: $0["origin_file_ident"],
                    originClientVersion: $0["origin_client_version"], originTimestamp: $0["origin_timestamp"],
                    changeset: $0["changeset"])
            }
            return RealmArchive(
                path: realm["path"], epoch: UInt64(bitPattern: realm["epoch"]), epochReason: realm["epoch_reason"],
                latestServerVersion: realm["latest_version"], nextFileIdent: realm["next_file_ident"],
                compactedThrough: realm["compacted_through"], clientFiles: files, history: history)
        }
    }

    package func restore(appID: String, _ archive: RealmArchive, epoch: SyncEpoch, reason: ResetReason, now: Date) async throws -> StoredRealm {
        try await writer.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [appID]) == true else {
                throw ServerStoreError(.missingOwner, "no app \(appID)")
            }
            if try Self.fetchRealm(db, appID: appID, path: archive.path) == nil {
                try db.execute(
                    sql: "INSERT INTO realms (app_id, path, epoch, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [appID, archive.path, Int64(bitPattern: epoch.rawValue), now.timeIntervalSince1970])
            }
            let realmID = try Self.fetchRealm(db, appID: appID, path: archive.path)!.id
            try db.execute(sql: "DELETE FROM history WHERE realm_id = ?", arguments: [realmID])
            try db.execute(sql: "DELETE FROM client_files WHERE realm_id = ?", arguments: [realmID])
            for file in archive.clientFiles {
                try db.execute(
                    sql: """
                        INSERT INTO client_files (realm_id, ident, salt, last_client_version, compacted_client_version,
                                                  last_server_version, created_at, last_seen)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [realmID, file.ident, file.salt, file.lastClientVersion, file.compactedClientVersion,
                                file.lastServerVersion, file.createdAt, file.lastSeen])
            }
            for entry in archive.history {
                try db.execute(
                    sql: """
                        INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [realmID, entry.serverVersion, entry.originFileIdent, entry.originClientVersion,
                                entry.originTimestamp, entry.storedChangeset])
            }
            try db.execute(
                sql: """
                    UPDATE realms SET epoch = ?, epoch_reason = ?, latest_version = ?, compacted_through = ?,
                                      next_file_ident = MAX(next_file_ident, ?)
                    WHERE id = ?
                    """,
                arguments: [Int64(bitPattern: epoch.rawValue), reason.rawValue, archive.latestServerVersion,
                            archive.compactedThrough, archive.nextFileIdent, realmID])
            return try Self.fetchRealm(db, appID: appID, path: archive.path)!
        }
    }

    // MARK: Retention

    package func touchClientFiles(realmID: Int64, idents: [Int64], serverVersion: Int64?, now: Date) async throws {
        guard !idents.isEmpty else { return }
        try await writer.write { db in
            for ident in idents {
                try db.execute(
                    sql: """
                        UPDATE client_files SET last_seen = MAX(COALESCE(last_seen, created_at), ?),
                                                last_server_version = MAX(last_server_version, ?)
                        WHERE realm_id = ? AND ident = ?
                        """,
                    arguments: [now.timeIntervalSince1970, serverVersion ?? 0, realmID, ident])
            }
        }
    }

    package func compact(realmID: Int64, liveSince: Date,
                        _ snapshot: @Sendable ([HistoryEntry]) throws -> Changeset) async throws -> CompactionResult {
        try await writer.write { db in
            guard let realm = try Row.fetchOne(db, sql: "SELECT latest_version, compacted_through FROM realms WHERE id = ?", arguments: [realmID])
            else { throw ServerStoreError(.notFound, "no realm \(realmID)") }
            let latest: Int64 = realm["latest_version"]
            let compacted: Int64 = realm["compacted_through"]
            let oldestLive = try Int64.fetchOne(
                db,
                sql: "SELECT MIN(last_server_version) FROM client_files WHERE realm_id = ? AND COALESCE(last_seen, created_at) >= ?",
                arguments: [realmID, liveSince.timeIntervalSince1970])
            let through = min(latest, oldestLive ?? latest)
            let unchanged = CompactionResult(realmID: realmID, compactedThrough: compacted, removedEntries: 0)
            let count = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM history WHERE realm_id = ? AND server_version > ? AND server_version <= ?",
                arguments: [realmID, compacted, through]) ?? 0
            guard through > compacted, count + (compacted > 0 ? 1 : 0) >= 2 else { return unchanged }

            let rows = try Row.fetchCursor(
                db, sql: "SELECT server_version, changeset FROM history WHERE realm_id = ? AND server_version <= ? ORDER BY server_version",
                arguments: [realmID, through])
            var prefix: [HistoryEntry] = []
            while let row = try rows.next() { prefix.append(try HistoryEntry.stored(serverVersion: row["server_version"], row["changeset"])) }
            let made = try snapshot(prefix)
            // Each file keeps its newest client version of the prefix before the prefix goes.
            try db.execute(
                sql: """
                    UPDATE client_files SET compacted_client_version = MAX(compacted_client_version, COALESCE((
                        SELECT MAX(h.origin_client_version) FROM history h
                        WHERE h.realm_id = client_files.realm_id AND h.origin_file_ident = client_files.ident
                          AND h.server_version <= ?), 0))
                    WHERE realm_id = ?
                    """,
                arguments: [through, realmID])
            try db.execute(sql: "DELETE FROM history WHERE realm_id = ? AND server_version <= ?", arguments: [realmID, through])
            try db.execute(
                sql: """
                    INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset)
                    VALUES (?, ?, 0, 0, ?, ?)
                    """,
                arguments: [realmID, through, made.timestamp, made.encoded()])
            try db.execute(sql: "UPDATE realms SET compacted_through = ? WHERE id = ?", arguments: [through, realmID])
            return CompactionResult(realmID: realmID, compactedThrough: through, removedEntries: prefix.count)
        }
    }
}
