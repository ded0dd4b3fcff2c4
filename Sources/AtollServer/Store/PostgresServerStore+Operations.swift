import AtollCore
import Foundation
import Logging
import PostgresNIO

extension PostgresServerStore {
    // MARK: Backup and restore

    package func archive(realmID: Int64) async throws -> RealmArchive {
        // One snapshot for the realm row, its client files and its history.
        try await client.withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let archive = try await Self.readArchive(connection, realmID: realmID, logger: logger)
                try await connection.query("COMMIT", logger: logger)
                return archive
            } catch {
                try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    static func readArchive(_ connection: PostgresConnection, realmID: Int64, logger: Logger) async throws -> RealmArchive {
        var realm: (String, Int64, Int16, Int64, Int64, Int64)?
        for row in try await connection.query(
            "SELECT path, epoch, epoch_reason, latest_version, next_file_ident, compacted_through FROM realms WHERE id = \(realmID)",
            logger: logger
        ).collect().map({ try $0.decode((String, Int64, Int16, Int64, Int64, Int64).self) }) { realm = row }
        guard let realm else { throw ServerStoreError(.notFound, "no realm \(realmID)") }
        var files: [RealmArchive.ClientFile] = []
        for row in try await connection.query(
            """
            SELECT ident, salt, last_client_version, compacted_client_version, last_server_version, created_at, last_seen
            FROM client_files WHERE realm_id = \(realmID) ORDER BY ident
            """, logger: logger
        ).collect().map({ try $0.decode((Int64, Int64, Int64, Int64, Int64, Double, Double?).self) }) {
            files.append(RealmArchive.ClientFile(
                ident: row.0, salt: row.1, lastClientVersion: row.2, compactedClientVersion: row.3, lastServerVersion: row.4,
                createdAt: row.5, lastSeen: row.6 ?? row.5))
        }
        var history: [RealmArchive.Entry] = []
        for row in try await connection.query(
            """
            SELECT server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset
            FROM history WHERE realm_id = \(realmID) ORDER BY server_version
            """, logger: logger
        ).collect().map({ try $0.decode((Int64, Int64, Int64, Int64, Data).self) }) {
            history.append(RealmArchive.Entry(
                serverVersion: row.0, originFileIdent: row.1, originClientVersion: row.2, originTimestamp: row.3, changeset: row.4))
        }
        return RealmArchive(
            path: realm.0, epoch: UInt64(bitPattern: realm.1), epochReason: UInt8(clamping: realm.2), latestServerVersion: realm.3,
            nextFileIdent: realm.4, compactedThrough: realm.5, clientFiles: files, history: history)
    }

    package func restore(appID: String, _ archive: RealmArchive, epoch: SyncEpoch, reason: ResetReason, now: Date) async throws -> StoredRealm {
        try await transaction { connection in
            guard try await Self.appExists(connection, appID, logger: logger) else {
                throw ServerStoreError(.missingOwner, "no app \(appID)")
            }
            try await connection.query(
                """
                INSERT INTO realms (app_id, path, epoch, created_at)
                VALUES (\(appID), \(archive.path), \(Int64(bitPattern: epoch.rawValue)), \(now.timeIntervalSince1970))
                ON CONFLICT (app_id, path) DO NOTHING
                """, logger: logger)
            guard let realmID = try await Self.fetchRealm(connection, appID: appID, path: archive.path, logger: logger)?.id else {
                throw ServerStoreError(.notFound, "the realm \(archive.path) of \(appID) went away as it was restored")
            }
            _ = try await Self.lockRealm(connection, realmID, logger: logger)
            try await connection.query("DELETE FROM history WHERE realm_id = \(realmID)", logger: logger)
            try await connection.query("DELETE FROM client_files WHERE realm_id = \(realmID)", logger: logger)
            for file in archive.clientFiles {
                try await connection.query(
                    """
                    INSERT INTO client_files (realm_id, ident, salt, last_client_version, compacted_client_version,
                                              last_server_version, created_at, last_seen)
                    VALUES (\(realmID), \(file.ident), \(file.salt), \(file.lastClientVersion), \(file.compactedClientVersion),
                            \(file.lastServerVersion), \(file.createdAt), \(file.lastSeen))
                    """, logger: logger)
            }
            for entry in archive.history {
                try await Self.insertEntry(
                    connection, realmID: realmID, serverVersion: entry.serverVersion, fileIdent: entry.originFileIdent,
                    clientVersion: entry.originClientVersion, timestamp: entry.originTimestamp, changeset: entry.storedChangeset, logger: logger)
            }
            try await connection.query(
                """
                UPDATE realms SET epoch = \(Int64(bitPattern: epoch.rawValue)), epoch_reason = \(Int16(reason.rawValue)),
                                  latest_version = \(archive.latestServerVersion), compacted_through = \(archive.compactedThrough),
                                  next_file_ident = GREATEST(next_file_ident, \(archive.nextFileIdent))
                WHERE id = \(realmID)
                """, logger: logger)
            guard let restored = try await Self.fetchRealm(connection, appID: appID, path: archive.path, logger: logger) else {
                throw ServerStoreError(.notFound, "the realm \(archive.path) of \(appID) went away as it was restored")
            }
            return restored
        }
    }

    // MARK: Retention

    package func touchClientFiles(realmID: Int64, idents: [Int64], serverVersion: Int64?, now: Date) async throws {
        guard !idents.isEmpty else { return }
        try await client.query(
            """
            UPDATE client_files SET last_seen = GREATEST(COALESCE(last_seen, created_at), \(now.timeIntervalSince1970)),
                                    last_server_version = GREATEST(last_server_version, \(serverVersion ?? 0))
            WHERE realm_id = \(realmID) AND ident = ANY(\(idents))
            """, logger: logger)
    }

    package func compact(realmID: Int64, liveSince: Date,
                        _ snapshot: @Sendable ([HistoryEntry]) throws -> Changeset) async throws -> CompactionResult {
        try await transaction { connection in
            let realm = try await Self.lockRealm(connection, realmID, logger: logger)
            var oldestLive: Int64?
            for version in try await connection.query(
                """
                SELECT MIN(last_server_version) FROM client_files
                WHERE realm_id = \(realmID) AND COALESCE(last_seen, created_at) >= \(liveSince.timeIntervalSince1970)
                """, logger: logger
            ).collect().map({ try $0.decode(Int64?.self) }) { oldestLive = version }
            let through = min(realm.latest, oldestLive ?? realm.latest)
            let compacted = realm.compactedThrough
            let unchanged = CompactionResult(realmID: realmID, compactedThrough: compacted, removedEntries: 0)
            var count = 0
            for n in try await connection.query(
                """
                SELECT COUNT(*) FROM history
                WHERE realm_id = \(realmID) AND server_version > \(compacted) AND server_version <= \(through)
                """, logger: logger
            ).collect().map({ try $0.decode(Int.self) }) { count = n }
            guard through > compacted, count + (compacted > 0 ? 1 : 0) >= 2 else { return unchanged }

            let prefix = try await Self.readHistory(connection, realmID: realmID, after: 0, through: through, logger: logger)
            let made = try snapshot(prefix)
            // Each file keeps its newest client version of the prefix before the prefix goes.
            try await connection.query(
                """
                UPDATE client_files f SET compacted_client_version = GREATEST(f.compacted_client_version, COALESCE((
                    SELECT MAX(h.origin_client_version) FROM history h
                    WHERE h.realm_id = f.realm_id AND h.origin_file_ident = f.ident AND h.server_version <= \(through)), 0))
                WHERE f.realm_id = \(realmID)
                """, logger: logger)
            try await connection.query("DELETE FROM history WHERE realm_id = \(realmID) AND server_version <= \(through)", logger: logger)
            try await Self.insertEntry(connection, realmID: realmID, serverVersion: through, fileIdent: 0, clientVersion: 0,
                                       timestamp: made.timestamp, changeset: made.encoded(), logger: logger)
            try await connection.query("UPDATE realms SET compacted_through = \(through) WHERE id = \(realmID)", logger: logger)
            return CompactionResult(realmID: realmID, compactedThrough: through, removedEntries: prefix.count)
        }
    }

    // MARK: Pending registrations

    package func insertPendingUser(_ user: StoredPendingUser, expiredBefore: Date) async throws {
        try await transaction { connection in
            guard try await Self.appExists(connection, user.appID, logger: logger) else {
                throw ServerStoreError(.missingOwner, "no app \(user.appID)")
            }
            let cutoff = expiredBefore.timeIntervalSince1970
            try await connection.query(
                """
                DELETE FROM account_tokens WHERE app_id = \(user.appID) AND purpose = \(AccountTokenPurpose.confirm.rawValue) AND email IN (
                    SELECT email FROM pending_users WHERE app_id = \(user.appID) AND created_at < \(cutoff))
                """, logger: logger)
            try await connection.query(
                "DELETE FROM pending_users WHERE app_id = \(user.appID) AND created_at < \(cutoff)", logger: logger)
            let taken = try await connection.query(
                """
                SELECT 1 FROM identities
                WHERE app_id = \(user.appID) AND provider_type = \(AuthProvider.emailPassword.rawValue) AND identity_id = \(user.email)
                """, logger: logger
            ).collect()
            guard taken.isEmpty else { throw ServerStoreError(.duplicateIdentity, "the local-userpass identity is taken") }
            do {
                try await connection.query(
                    """
                    INSERT INTO pending_users (app_id, email, password_hash, created_at)
                    VALUES (\(user.appID), \(user.email), \(user.passwordHash), \(user.createdAt.timeIntervalSince1970))
                    """, logger: logger)
            } catch where Self.isUniqueViolation(error) {
                throw ServerStoreError(.duplicateIdentity, "the name is pending confirmation")
            }
        }
    }

    package func pendingUser(appID: String, email: String) async throws -> StoredPendingUser? {
        for (hash, created) in try await client.query(
            "SELECT password_hash, created_at FROM pending_users WHERE app_id = \(appID) AND email = \(email)", logger: logger
        ).collect().map({ try $0.decode((String, Double).self) }) {
            return StoredPendingUser(appID: appID, email: email, passwordHash: hash, createdAt: Date(timeIntervalSince1970: created))
        }
        return nil
    }

    package func deletePendingUser(appID: String, email: String) async throws -> Bool {
        try await transaction { connection in
            let deleted = try await count(connection.query(
                "DELETE FROM pending_users WHERE app_id = \(appID) AND email = \(email) RETURNING 1", logger: logger))
            try await connection.query(
                """
                DELETE FROM account_tokens
                WHERE app_id = \(appID) AND email = \(email) AND purpose = \(AccountTokenPurpose.confirm.rawValue)
                """, logger: logger)
            return deleted > 0
        }
    }

    package func confirmPendingUser(appID: String, email: String, as user: StoredUser, registered: ClosedRange<Date>) async throws
        -> StoredUser?
    {
        try await transaction { connection in
            var hash: String?
            for found in try await connection.query(
                """
                DELETE FROM pending_users
                WHERE app_id = \(appID) AND email = \(email)
                    AND created_at BETWEEN \(registered.lowerBound.timeIntervalSince1970) AND \(registered.upperBound.timeIntervalSince1970)
                RETURNING password_hash
                """, logger: logger
            ).collect().map({ try $0.decode(String.self) }) { hash = found }
            guard let hash else { return nil }
            let user = user.withPendingPassword(hash, of: email, appID: appID)
            try await connection.query(
                """
                DELETE FROM account_tokens
                WHERE app_id = \(appID) AND email = \(email) AND purpose = \(AccountTokenPurpose.confirm.rawValue)
                """, logger: logger)
            try await Self.insertUser(connection, user, logger: logger)
            return user
        }
    }

    // MARK: Account tokens

    package func insertAccountToken(_ token: StoredAccountToken, keepingAtMost: Int, now: Date) async throws {
        try await transaction { connection in
            try await connection.query(
                """
                INSERT INTO account_tokens (id, app_id, email, purpose, digest, created_at, expires_at)
                VALUES (\(token.id), \(token.appID), \(token.email), \(token.purpose.rawValue), \(token.digest),
                        \(token.createdAt.timeIntervalSince1970), \(token.expiresAt.timeIntervalSince1970))
                """, logger: logger)
            // Expired tokens of anyone go as new ones come; this owner keeps its newest few.
            try await connection.query("DELETE FROM account_tokens WHERE expires_at <= \(now.timeIntervalSince1970)", logger: logger)
            try await connection.query(
                """
                DELETE FROM account_tokens
                WHERE app_id = \(token.appID) AND email = \(token.email) AND purpose = \(token.purpose.rawValue) AND id NOT IN (
                    SELECT id FROM account_tokens
                    WHERE app_id = \(token.appID) AND email = \(token.email) AND purpose = \(token.purpose.rawValue)
                    ORDER BY created_at DESC, seq DESC LIMIT \(max(1, keepingAtMost)))
                """, logger: logger)
        }
    }

    package func takeAccountToken(appID: String, tokenID: String, digest: String, purpose: AccountTokenPurpose, now: Date) async throws
        -> StoredAccountToken?
    {
        // One statement: of two requests with the same token, one deletes it and the other finds nothing.
        for (email, created, expires) in try await client.query(
            """
            DELETE FROM account_tokens
            WHERE id = \(tokenID) AND app_id = \(appID) AND purpose = \(purpose.rawValue) AND digest = \(digest)
            RETURNING email, created_at, expires_at
            """, logger: logger
        ).collect().map({ try $0.decode((String, Double, Double).self) }) {
            let token = StoredAccountToken(
                id: tokenID, appID: appID, email: email, purpose: purpose, digest: digest,
                createdAt: Date(timeIntervalSince1970: created), expiresAt: Date(timeIntervalSince1970: expires))
            return token.expiresAt > now ? token : nil
        }
        return nil
    }

    package func deleteAccountTokens(appID: String, email: String, purpose: AccountTokenPurpose) async throws {
        try await client.query(
            "DELETE FROM account_tokens WHERE app_id = \(appID) AND email = \(email) AND purpose = \(purpose.rawValue)", logger: logger)
    }

    package func setPasswordHash(appID: String, email: String, _ hash: String) async throws -> Bool {
        try await count(client.query(
            """
            UPDATE identities SET password_hash = \(hash)
            WHERE app_id = \(appID) AND provider_type = \(AuthProvider.emailPassword.rawValue) AND identity_id = \(email)
            RETURNING 1
            """, logger: logger)) > 0
    }
}
