import Foundation
import GRDB

extension SQLiteServerStore {
    /// The tables of pending registrations and account tokens.
    static func registerEmailAccountMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v6: pending e-mail registrations, confirmation and reset tokens") { db in
            try db.execute(
                sql: """
                    CREATE TABLE pending_users (
                        app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                        email TEXT NOT NULL,
                        password_hash TEXT NOT NULL,
                        created_at DOUBLE NOT NULL,
                        PRIMARY KEY (app_id, email)
                    );
                    CREATE TABLE account_tokens (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                        email TEXT NOT NULL,
                        purpose TEXT NOT NULL,
                        digest TEXT NOT NULL,
                        created_at DOUBLE NOT NULL,
                        expires_at DOUBLE NOT NULL
                    );
                    CREATE INDEX account_tokens_owner ON account_tokens(app_id, email, purpose, created_at);
                    """)
        }
    }

    // MARK: Pending registrations

    package func insertPendingUser(_ user: StoredPendingUser, expiredBefore: Date) async throws {
        try await writer.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [user.appID]) == true else {
                throw ServerStoreError(.missingOwner, "no app \(user.appID)")
            }
            try db.execute(
                sql: """
                    DELETE FROM account_tokens WHERE app_id = ?1 AND purpose = ?2 AND email IN (
                        SELECT email FROM pending_users WHERE app_id = ?1 AND created_at < ?3)
                    """,
                arguments: [user.appID, AccountTokenPurpose.confirm.rawValue, expiredBefore.timeIntervalSince1970])
            try db.execute(sql: "DELETE FROM pending_users WHERE app_id = ? AND created_at < ?",
                           arguments: [user.appID, expiredBefore.timeIntervalSince1970])
            let taken = try Bool.fetchOne(
                db, sql: "SELECT 1 FROM identities WHERE app_id = ? AND provider_type = ? AND identity_id = ?",
                arguments: [user.appID, AuthProvider.emailPassword.rawValue, user.email]) == true
            guard !taken else { throw ServerStoreError(.duplicateIdentity, "the local-userpass identity is taken") }
            do {
                try db.execute(
                    sql: "INSERT INTO pending_users (app_id, email, password_hash, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [user.appID, user.email, user.passwordHash, user.createdAt.timeIntervalSince1970])
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                throw ServerStoreError(.duplicateIdentity, "the name is pending confirmation")
            }
        }
    }

    package func pendingUser(appID: String, email: String) async throws -> StoredPendingUser? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM pending_users WHERE app_id = ? AND email = ?", arguments: [appID, email]).map {
                StoredPendingUser(appID: $0["app_id"], email: $0["email"], passwordHash: $0["password_hash"],
                                  createdAt: Date(timeIntervalSince1970: $0["created_at"]))
            }
        }
    }

    package func deletePendingUser(appID: String, email: String) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM pending_users WHERE app_id = ? AND email = ?", arguments: [appID, email])
            let deleted = db.changesCount > 0
            try db.execute(sql: "DELETE FROM account_tokens WHERE app_id = ? AND email = ? AND purpose = ?",
                           arguments: [appID, email, AccountTokenPurpose.confirm.rawValue])
            return deleted
        }
    }

    package func confirmPendingUser(appID: String, email: String, as user: StoredUser, registered: ClosedRange<Date>) async throws
        -> StoredUser?
    {
        try await writer.write { db in
            guard let hash = try String.fetchOne(
                db, sql: "SELECT password_hash FROM pending_users WHERE app_id = ? AND email = ? AND created_at BETWEEN ? AND ?",
                arguments: [appID, email, registered.lowerBound.timeIntervalSince1970, registered.upperBound.timeIntervalSince1970])
            else { return nil }
            let user = user.withPendingPassword(hash, of: email, appID: appID)
            try db.execute(sql: "DELETE FROM pending_users WHERE app_id = ? AND email = ?", arguments: [appID, email])
            try db.execute(sql: "DELETE FROM account_tokens WHERE app_id = ? AND email = ? AND purpose = ?",
                           arguments: [appID, email, AccountTokenPurpose.confirm.rawValue])
            try db.execute(
                sql: "INSERT INTO users (id, app_id, email, name, disabled, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [user.id, appID, user.email, user.name, user.disabled, user.createdAt.timeIntervalSince1970])
            try Self.insertIdentities(db, of: user)
            return user
        }
    }

    // MARK: Account tokens

    package func insertAccountToken(_ token: StoredAccountToken, keepingAtMost: Int, now: Date) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO account_tokens (id, app_id, email, purpose, digest, created_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [token.id, token.appID, token.email, token.purpose.rawValue, token.digest,
                            token.createdAt.timeIntervalSince1970, token.expiresAt.timeIntervalSince1970])
            // Expired tokens of anyone go as new ones come; this owner keeps its newest few.
            try db.execute(sql: "DELETE FROM account_tokens WHERE expires_at <= ?", arguments: [now.timeIntervalSince1970])
            try db.execute(
                sql: """
                    DELETE FROM account_tokens WHERE app_id = ? AND email = ? AND purpose = ? AND id NOT IN (
                        SELECT id FROM account_tokens WHERE app_id = ? AND email = ? AND purpose = ?
                        ORDER BY created_at DESC, rowid DESC LIMIT ?)
                    """,
                arguments: [token.appID, token.email, token.purpose.rawValue, token.appID, token.email, token.purpose.rawValue,
                            max(1, keepingAtMost)])
        }
    }

    package func takeAccountToken(appID: String, tokenID: String, digest: String, purpose: AccountTokenPurpose, now: Date) async throws
        -> StoredAccountToken?
    {
        try await writer.write { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT * FROM account_tokens WHERE id = ? AND app_id = ? AND purpose = ? AND digest = ?",
                arguments: [tokenID, appID, purpose.rawValue, digest])
            else { return nil }
            try db.execute(sql: "DELETE FROM account_tokens WHERE id = ?", arguments: [tokenID])
            let token = StoredAccountToken(
                id: row["id"], appID: row["app_id"], email: row["email"], purpose: purpose, digest: row["digest"],
                createdAt: Date(timeIntervalSince1970: row["created_at"]), expiresAt: Date(timeIntervalSince1970: row["expires_at"]))
            return token.expiresAt > now ? token : nil
        }
    }

    package func deleteAccountTokens(appID: String, email: String, purpose: AccountTokenPurpose) async throws {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM account_tokens WHERE app_id = ? AND email = ? AND purpose = ?",
                           arguments: [appID, email, purpose.rawValue])
        }
    }

    package func setPasswordHash(appID: String, email: String, _ hash: String) async throws -> Bool {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE identities SET password_hash = ? WHERE app_id = ? AND provider_type = ? AND identity_id = ?",
                arguments: [hash, appID, AuthProvider.emailPassword.rawValue, email])
            return db.changesCount > 0
        }
    }
}
