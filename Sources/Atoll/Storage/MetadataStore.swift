import Foundation
import GRDB

/// The app's small database on the device (`<root>/atoll/<app id>/metadata/metadata.sqlite`):
/// users with their tokens and profile, and which user is current, so an app restarted offline
/// gets `app.currentUser` back; and the file actions sync errors left pending (a realm to back up
/// and delete after a client reset, or to delete after a permission error), which the next `App`
/// start carries out.
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
            migrator.registerMigration("v2 file actions") { db in
                try db.execute(sql: """
                    CREATE TABLE file_action (realm_path TEXT PRIMARY KEY, action TEXT NOT NULL, backup_path TEXT);
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

    // MARK: File actions

    /// Records what to do with a realm file; replaces an action pending for the same file.
    func record(_ action: FileAction) throws {
        try queue.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO file_action (realm_path, action, backup_path) VALUES (?, ?, ?)",
                           arguments: [action.realmPath, action.kind.rawValue, action.backupPath])
        }
    }

    /// The action pending for the realm file at `path`, if any.
    func fileAction(forPath path: String) -> FileAction? {
        fileActions(where: "WHERE realm_path = ?", [path]).first
    }

    /// Every pending action, by file path.
    func fileActions() -> [FileAction] { fileActions(where: "ORDER BY realm_path", []) }

    /// Forgets the action pending for the file at `path` (it ran).
    func removeFileAction(forPath path: String) {
        try? queue.write { db in try db.execute(sql: "DELETE FROM file_action WHERE realm_path = ?", arguments: [path]) }
    }

    private func fileActions(where clause: String, _ arguments: StatementArguments) -> [FileAction] {
        let rows = (try? queue.read { db in
            try Row.fetchAll(db, sql: "SELECT realm_path, action, backup_path FROM file_action \(clause)", arguments: arguments)
        }) ?? []
        return rows.compactMap { row in
            guard let kind = FileAction.Kind(rawValue: row["action"]) else { return nil }
            return FileAction(kind: kind, realmPath: row["realm_path"], backupPath: row["backup_path"])
        }
    }
}

/// What a sync error asks to do with a realm file once no `Realm` of it is open: back it up and
/// delete it (a manual client reset), or delete it (the user may not sync it).
struct FileAction: Sendable, Hashable {
    enum Kind: String, Sendable {
        case backUpThenDelete = "back up then delete"
        case delete
    }

    var kind: Kind
    /// The realm file (standardized path).
    var realmPath: String
    /// With `.backUpThenDelete`: where the copy goes.
    var backupPath: String?
}
