import Foundation
import PostgresNIO

/// Backups kept in the PostgreSQL store's `backups` table, so a backup made through one node can
/// be listed and restored through any other (a ``BackupDirectory`` is one node's files). A backup
/// is its JSON, as in a backup file.
package struct PostgresBackups: BackupShelf {
    let store: PostgresServerStore

    package init(store: PostgresServerStore) { self.store = store }

    package func write(_ backup: ServerBackup) async throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let body = try encoder.encode(backup)
        try await store.client.query(
            """
            INSERT INTO backups (id, app_id, created_at, body)
            VALUES (\(backup.id), \(backup.appID), \(backup.createdAt.timeIntervalSince1970), \(body))
            """, logger: store.logger)
    }

    package func read(_ id: String) async throws -> ServerBackup? {
        let rows = try await store.client.query("SELECT body FROM backups WHERE id = \(id)", logger: store.logger).collect()
        return try rows.first.map { try Self.decode(try $0.decode(Data.self)) }
    }

    package func list(appID: String) async throws -> [ServerBackup] {
        try await store.client.query("SELECT body FROM backups WHERE app_id = \(appID) ORDER BY created_at, id", logger: store.logger)
            .collect().map { try Self.decode(try $0.decode(Data.self)) }
    }

    static func decode(_ body: Data) throws -> ServerBackup {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(ServerBackup.self, from: body)
    }
}
