import Foundation
import GRDB
import PostgresNIO

/// Where the apps added while the server runs are kept: the `runtime_apps` table of both stores
/// (``ServerSchema``), one row of JSON per app. The rows hold the operator's secrets (JWT keys,
/// webhook secrets): the SQLite file is the server's user's alone (``SQLiteServerStore``), and on
/// PostgreSQL whoever may read the table may read them (docs/server.md, "Runtime apps").
extension SQLiteServerStore {
    package func runtimeApps() async throws -> [StoredRuntimeApp] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, configuration, updated_at FROM runtime_apps ORDER BY id").map(Self.runtimeApp)
        }
    }

    package func runtimeApp(id: String) async throws -> StoredRuntimeApp? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT id, configuration, updated_at FROM runtime_apps WHERE id = ?", arguments: [id]).map(Self.runtimeApp)
        }
    }

    package func putRuntimeApp(_ app: StoredRuntimeApp, ifAbsent: Bool) async throws -> Bool {
        try await writer.write { db in
            try db.execute(
                sql: ifAbsent
                    ? "INSERT OR IGNORE INTO runtime_apps (id, configuration, updated_at) VALUES (?, ?, ?)"
                    : """
                        INSERT INTO runtime_apps (id, configuration, updated_at) VALUES (?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET configuration = excluded.configuration, updated_at = excluded.updated_at
                        """,
                arguments: [app.id, app.configuration, app.updatedAt.timeIntervalSince1970])
            return db.changesCount > 0
        }
    }

    private static func runtimeApp(_ row: Row) -> StoredRuntimeApp {
        StoredRuntimeApp(id: row["id"], configuration: row["configuration"], updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    /// Makes the database file at `path` (and its log, when there) readable and writable by the
    /// server's user alone, as the runtime apps' secrets it holds need: created so when missing,
    /// tightened when an older server left it open to others. SQLite gives the log and shared
    /// memory files it creates the database file's mode.
    static func protectFile(at path: String) throws {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            guard manager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
        }
        for file in [path, path + "-wal", path + "-shm"] where manager.fileExists(atPath: file) {
            try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
    }
}

extension PostgresServerStore {
    package func runtimeApps() async throws -> [StoredRuntimeApp] {
        try await client.query("SELECT id, configuration, updated_at FROM runtime_apps ORDER BY id", logger: logger)
            .collect().map { row in
                let (id, configuration, updatedAt) = try row.decode((String, String, Double).self)
                return StoredRuntimeApp(id: id, configuration: configuration, updatedAt: Date(timeIntervalSince1970: updatedAt))
            }
    }

    package func runtimeApp(id: String) async throws -> StoredRuntimeApp? {
        try await client.query("SELECT id, configuration, updated_at FROM runtime_apps WHERE id = \(id)", logger: logger)
            .collect().first.map { row in
                let (id, configuration, updatedAt) = try row.decode((String, String, Double).self)
                return StoredRuntimeApp(id: id, configuration: configuration, updatedAt: Date(timeIntervalSince1970: updatedAt))
            }
    }

    /// Written and announced in one transaction: the other nodes hear of it when, and only when,
    /// it commits.
    package func putRuntimeApp(_ app: StoredRuntimeApp, ifAbsent: Bool) async throws -> Bool {
        let updatedAt = app.updatedAt.timeIntervalSince1970
        return try await transaction { connection in
            let rows = if ifAbsent {
                try await connection.query(
                    """
                    INSERT INTO runtime_apps (id, configuration, updated_at) VALUES (\(app.id), \(app.configuration), \(updatedAt))
                    ON CONFLICT (id) DO NOTHING RETURNING 1
                    """, logger: logger)
            } else {
                try await connection.query(
                    """
                    INSERT INTO runtime_apps (id, configuration, updated_at) VALUES (\(app.id), \(app.configuration), \(updatedAt))
                    ON CONFLICT (id) DO UPDATE SET configuration = EXCLUDED.configuration, updated_at = EXCLUDED.updated_at
                    RETURNING 1
                    """, logger: logger)
            }
            let written = try await count(rows) > 0
            if written { try await announce(.runtimeAppChanged(appID: app.id), on: connection) }
            return written
        }
    }
}
