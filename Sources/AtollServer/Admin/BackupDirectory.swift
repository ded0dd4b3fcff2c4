import Foundation

/// Where backups live: `<dataDirectory>/backups/<id>.json`, one ``ServerBackup`` per file.
///
/// ```swift
/// let backups = BackupDirectory(dataDirectory: "atoll-data")
/// let id = backups.newID(appID: "tasks", now: coordinator.now())
/// try backups.write(try await coordinator.backup(appID: "tasks", path: nil, id: id))
/// ```
/// Where backups are kept: files of one node's data folder (``BackupDirectory``, the embedded
/// store's), or a table every node on a shared store reads (``PostgresBackups``).
package protocol BackupShelf: Sendable {
    /// Keeps a backup.
    func write(_ backup: ServerBackup) async throws
    /// The backup with this id, or nil when there is none.
    func read(_ id: String) async throws -> ServerBackup?
    /// The backups of an app, oldest first.
    func list(appID: String) async throws -> [ServerBackup]
}

extension BackupShelf {
    /// A new backup id: the app, the time (UTC) and a random suffix, e.g. `tasks-20260101T120000Z-3fa2c1`.
    package func newID(appID: String, now: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let safeApp = String(appID.unicodeScalars.map { BackupDirectory.allowed($0) ? Character($0) : "_" })
        return "\(safeApp)-\(formatter.string(from: now))-\(String(UInt32.random(in: 0...0xFFFFFF), radix: 16))"
    }
}

package struct BackupDirectory: BackupShelf {
    package let url: URL

    package init(dataDirectory: String) {
        url = URL(fileURLWithPath: dataDirectory, isDirectory: true).appendingPathComponent("backups", isDirectory: true)
    }

    /// Writes a backup (creating the folder), readable by the server's user only.
    package func write(_ backup: ServerBackup) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let file = try self.file(backup.id)
        try encoder.encode(backup).write(to: file, options: .atomic)
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }

    /// The backup with this id, or nil when there is none (or the id could not name one).
    package func read(_ id: String) throws -> ServerBackup? {
        guard let file = try? self.file(id), FileManager.default.fileExists(atPath: file.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(ServerBackup.self, from: Data(contentsOf: file))
    }

    /// The backups of an app, oldest first.
    package func list(appID: String) throws -> [ServerBackup] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return try names.filter { $0.hasSuffix(".json") }
            .compactMap { try read(String($0.dropLast(".json".count))) }
            .filter { $0.appID == appID }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// The file of a backup id; ids are letters, digits, `-`, `_` and `.` only (never a path).
    private func file(_ id: String) throws -> URL {
        guard !id.isEmpty, !id.hasPrefix("."), id.unicodeScalars.allSatisfy(Self.allowed) else {
            throw ServerError(.notFound, "there is no backup \(id)")
        }
        return url.appendingPathComponent("\(id).json")
    }

    static func allowed(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_" || scalar == ".")
    }
}
