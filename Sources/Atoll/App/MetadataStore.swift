import Foundation
import GRDB

/// The app's small database on the device (`<root>/atoll/<app id>/metadata/metadata.sqlite`):
/// users with their tokens and profile, and which user is current, so an app restarted offline
/// gets `app.currentUser` back.
final class MetadataStore: @unchecked Sendable {
    struct UserRecord: Codable, Equatable, Sendable {
        var id: String
        var accessToken: String?
        var refreshToken: String?
        var state: String
        var provider: String
        var profile: [String: String]
        var identities: [[String: String]]
        var lastUsed: Double
    }

    private let queue: DatabaseQueue

    init(folder: URL) throws {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var config = GRDB.Configuration()
            config.busyMode = .timeout(10)
            queue = try DatabaseQueue(path: folder.appendingPathComponent("metadata.sqlite").path, configuration: config)
            var migrator = DatabaseMigrator()
            migrator.registerMigration("v1") { db in
                try db.execute(sql: """
                    CREATE TABLE user (id TEXT PRIMARY KEY, record BLOB NOT NULL);
                    CREATE TABLE setting (key TEXT PRIMARY KEY, value TEXT);
                    """)
            }
            try migrator.migrate(queue)
        } catch {
            throw AppError(.unknown, "cannot open the app's metadata store in \(folder.path): \(error)",
                           underlying: error as? any Error & Sendable)
        }
    }

    func users() -> [UserRecord] {
        let rows = (try? queue.read { db in try Data.fetchAll(db, sql: "SELECT record FROM user") }) ?? []
        return rows.compactMap { try? JSONDecoder().decode(UserRecord.self, from: $0) }
    }

    func save(_ record: UserRecord) {
        guard let data = try? JSONEncoder().encode(record) else { return }
        try? queue.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO user (id, record) VALUES (?, ?)", arguments: [record.id, data])
        }
    }

    func deleteUser(_ id: String) {
        try? queue.write { db in try db.execute(sql: "DELETE FROM user WHERE id = ?", arguments: [id]) }
    }

    var currentUserId: String? {
        get { try? queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'current_user'") } }
        set {
            try? queue.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO setting (key, value) VALUES ('current_user', ?)", arguments: [newValue])
            }
        }
    }
}
