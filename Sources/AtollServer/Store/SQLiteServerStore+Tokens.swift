import Foundation
import GRDB

extension SQLiteServerStore {
    // MARK: Refresh tokens

    package func insertRefreshToken(_ token: StoredRefreshToken) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO refresh_tokens (digest, user_id, app_id, device_id, created_at, expires_at, revoked, api_key_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    token.digest, token.userID, token.appID, token.deviceID, token.createdAt.timeIntervalSince1970,
                    token.expiresAt.timeIntervalSince1970, token.revoked, token.apiKeyID,
                ])
        }
    }

    package func refreshToken(digest: String) async throws -> StoredRefreshToken? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM refresh_tokens WHERE digest = ?", arguments: [digest]).map {
                StoredRefreshToken(
                    digest: $0["digest"], userID: $0["user_id"], appID: $0["app_id"], deviceID: $0["device_id"],
                    createdAt: Date(timeIntervalSince1970: $0["created_at"]),
                    expiresAt: Date(timeIntervalSince1970: $0["expires_at"]), revoked: $0["revoked"], apiKeyID: $0["api_key_id"])
            }
        }
    }

    package func revokeRefreshToken(digest: String) async throws -> Bool {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE refresh_tokens SET revoked = 1 WHERE digest = ? AND revoked = 0", arguments: [digest])
            return db.changesCount > 0
        }
    }

    package func revokeRefreshTokens(userID: String) async throws {
        try await writer.write { db in
            try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE user_id = ?", arguments: [userID])
        }
    }

    package func revokeRefreshTokens(apiKeyID: String) async throws -> [String] {
        try await writer.write { db in
            let devices = try String.fetchAll(
                db, sql: "SELECT device_id FROM refresh_tokens WHERE api_key_id = ? AND revoked = 0", arguments: [apiKeyID])
            try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE api_key_id = ?", arguments: [apiKeyID])
            return devices
        }
    }

    package func liveDevices(_ deviceIDs: [String]) async throws -> Set<String> {
        try await pool.read { db in
            var live = Set<String>()
            // Bounded statements: SQLite takes at most 32,766 parameters.
            for start in stride(from: 0, to: deviceIDs.count, by: 500) {
                let chunk = Array(deviceIDs[start..<min(start + 500, deviceIDs.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                live.formUnion(try String.fetchAll(
                    db,
                    sql: """
                        SELECT t.device_id FROM refresh_tokens t JOIN users u ON u.id = t.user_id
                        LEFT JOIN api_keys k ON k.id = t.api_key_id
                        WHERE t.device_id IN (\(marks)) AND t.revoked = 0 AND u.disabled = 0
                            AND (t.api_key_id IS NULL OR k.disabled = 0)
                        """,
                    arguments: StatementArguments(chunk)))
            }
            return live
        }
    }

    // MARK: API keys

    package func insertAPIKey(_ key: StoredAPIKey) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO api_keys (id, user_id, app_id, name, digest, disabled, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    key.id, key.userID, key.appID, key.name, key.digest, key.disabled,
                    key.createdAt.timeIntervalSince1970,
                ])
        }
    }

    package func apiKeys(userID: String) async throws -> [StoredAPIKey] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id", arguments: [userID]
            ).map(Self.apiKey(from:))
        }
    }

    package func apiKey(id: String, userID: String) async throws -> StoredAPIKey? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM api_keys WHERE id = ? AND user_id = ?", arguments: [id, userID]
            ).map(Self.apiKey(from:))
        }
    }

    package func apiKey(appID: String, digest: String) async throws -> StoredAPIKey? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM api_keys WHERE app_id = ? AND digest = ?", arguments: [appID, digest]
            ).map(Self.apiKey(from:))
        }
    }

    package func setAPIKeyDisabled(id: String, userID: String, disabled: Bool) async throws -> Bool {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE api_keys SET disabled = ? WHERE id = ? AND user_id = ?", arguments: [disabled, id, userID])
            return db.changesCount > 0
        }
    }

    package func deleteAPIKey(id: String, userID: String) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM api_keys WHERE id = ? AND user_id = ?", arguments: [id, userID])
            return db.changesCount > 0
        }
    }

    static func apiKey(from row: Row) -> StoredAPIKey {
        StoredAPIKey(
            id: row["id"], userID: row["user_id"], appID: row["app_id"], name: row["name"], digest: row["digest"],
            disabled: row["disabled"], createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }
}
