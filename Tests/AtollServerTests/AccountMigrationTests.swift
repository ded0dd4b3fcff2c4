@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// A store written before passwords moved to e-mail identities (issue 21 §1) opens with every
/// account logging in as before: the user's password is now its e-mail identity's.
@Suite struct AccountMigrationTests {
    /// What the older server wrote: Ann with her e-mail and password, an anonymous user, a refresh token.
    static let rows = """
        INSERT INTO apps (id, created_at) VALUES ('tasks', 0);
        INSERT INTO users (id, app_id, email, password_hash, created_at) VALUES ('ann', 'tasks', 'ann@example.com', 'hash-ann', 1);
        INSERT INTO identities (app_id, provider_type, identity_id, user_id, position) VALUES ('tasks', 'local-userpass', 'ann@example.com', 'ann', 0);
        INSERT INTO identities (app_id, provider_type, identity_id, user_id, position) VALUES ('tasks', 'anon-user', 'a-1', 'ann', 1);
        INSERT INTO users (id, app_id, created_at) VALUES ('anon', 'tasks', 2);
        INSERT INTO identities (app_id, provider_type, identity_id, user_id, position) VALUES ('tasks', 'anon-user', 'a-2', 'anon', 0);
        INSERT INTO refresh_tokens (digest, user_id, app_id, device_id, created_at, expires_at) VALUES ('rt', 'ann', 'tasks', 'dev-1', 1, 9999999999);
        """

    static func expectMigrated(_ store: any ServerStore) async throws {
        let ann = try #require(try await store.user(id: "ann"))
        #expect(ann.identities == [StoredIdentity(id: "ann@example.com", providerType: "local-userpass", passwordHash: "hash-ann"),
                                   StoredIdentity(id: "a-1", providerType: "anon-user")])
        #expect(try await store.user(id: "anon")?.identities == [StoredIdentity(id: "a-2", providerType: "anon-user")])
        #expect(try await store.refreshToken(digest: "rt")?.apiKeyID == nil)
        #expect(try await store.liveDevices(["dev-1"]) == ["dev-1"])
    }

    @Test func sqliteMovesPasswordsToEmailIdentities() async throws {
        let folder = try TemporaryFolder("atoll-account-migration")
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("atoll.sqlite").path
        try SQLiteServerStore.prepareForTesting(
            path: path, upTo: "v6: pending e-mail registrations, confirmation and reset tokens", rows: Self.rows)
        let store = try SQLiteServerStore(path: path)
        do {
            try await Self.expectMigrated(store)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
    }

    @Test(postgresInstalled) func postgresMovesPasswordsToEmailIdentities() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let rows = Self.rows.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        try await PostgresServerStore.prepareForTesting(url: url, upTo: 3, rows: rows, logger: quietLogger)
        try await withPostgresStore(url: url) { store in try await Self.expectMigrated(store) }
    }
}
