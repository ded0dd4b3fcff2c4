import Foundation
import GRDB

extension SQLiteServerStore {
    package func addIdentity(_ identity: StoredIdentity, toUser userID: String, absorbing: String?) async throws -> StoredUser {
        try await writer.write { db in
            guard let user = try Self.fetchUser(db, id: userID) else {
                throw ServerStoreError(.notFound, "no user \(userID)")
            }
            let owner = try String.fetchOne(
                db, sql: "SELECT user_id FROM identities WHERE app_id = ? AND provider_type = ? AND identity_id = ?",
                arguments: [user.appID, identity.providerType, identity.id])
            let position = (try Int.fetchOne(db, sql: "SELECT MAX(position) FROM identities WHERE user_id = ?", arguments: [userID]) ?? -1) + 1
            if let owner {
                guard owner == absorbing, owner != userID, let absorbed = try Self.fetchUser(db, id: owner),
                      absorbed.identities.count == 1, !absorbed.disabled,
                      try !Self.everLoggedIn(db, userID: owner)
                else { throw ServerStoreError(.duplicateIdentity, "the \(identity.providerType) identity belongs to a user") }
                try db.execute(
                    sql: "UPDATE identities SET user_id = ?, position = ? WHERE app_id = ? AND provider_type = ? AND identity_id = ?",
                    arguments: [userID, position, user.appID, identity.providerType, identity.id])
                // The identity moves with its own password; the user's other identities keep theirs.
                try db.execute(sql: "UPDATE users SET email = COALESCE(email, ?) WHERE id = ?", arguments: [absorbed.email, userID])
                try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [owner])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO identities (app_id, provider_type, identity_id, user_id, position, password_hash)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [user.appID, identity.providerType, identity.id, userID, position, identity.passwordHash])
            }
            guard let linked = try Self.fetchUser(db, id: userID) else { throw ServerStoreError(.notFound, "no user \(userID)") }
            return linked
        }
    }

    /// Whether a user ever had a session (refresh tokens are kept, revoked, until the user goes),
    /// an API key or a sync client file.
    private static func everLoggedIn(_ db: Database, userID: String) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (SELECT 1 FROM refresh_tokens WHERE user_id = ?1)
                    OR EXISTS (SELECT 1 FROM api_keys WHERE user_id = ?1)
                    OR EXISTS (SELECT 1 FROM client_files WHERE user_id = ?1)
                """,
            arguments: [userID]) ?? true
    }
}
