import AsyncHTTPClient
@_exported import AtollAdminAPI
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A client of the admin API (`/api/admin/v1`), used by the `atoll` tool and by tests.
///
/// ```swift
/// let admin = AdminClient(server: URL(string: "http://127.0.0.1:9090")!, key: key)
/// try await admin.terminateSync(app: "tasks")
/// ```
public struct AdminClient: Sendable {
    public let server: URL
    public let key: String

    public init(server: URL, key: String) {
        self.server = server
        self.key = key
    }

    /// The file in a server's data folder that holds the admin key, unless the server's
    /// configuration sets one (the server writes it as `AdminKey.fileName`).
    public static let keyFileName = "admin-key"

    /// The admin key a server with this data folder made on first start.
    public static func key(dataDirectory: String) throws -> String {
        let file = URL(fileURLWithPath: dataDirectory).appendingPathComponent(keyFileName)
        do {
            return try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw AdminClientError(status: 0, message: "cannot read the admin key at \(file.path): \(error.localizedDescription)")
        }
    }

    public typealias App = AdminAPI.App
    public typealias User = AdminAPI.User
    public typealias Session = AdminAPI.Session

    public func apps() async throws -> [App] { try await request("GET", "apps", as: [App].self) }
    public func createApp(_ id: String) async throws -> App { try await request("POST", "apps/\(id)", as: App.self) }
    public func users(app: String) async throws -> [User] { try await request("GET", "apps/\(app)/users", as: [User].self) }
    public func setUserDisabled(app: String, user: String, _ disabled: Bool) async throws {
        try await request("POST", "apps/\(app)/users/\(user)/\(disabled ? "disable" : "enable")")
    }
    public func deleteUser(app: String, user: String) async throws { try await request("DELETE", "apps/\(app)/users/\(user)") }
    public func sessions(app: String) async throws -> [Session] { try await request("GET", "apps/\(app)/sessions", as: [Session].self) }
    public func terminateSync(app: String) async throws { try await request("POST", "apps/\(app)/sync/terminate") }
    public func enableSync(app: String) async throws { try await request("POST", "apps/\(app)/sync/enable") }

    // MARK: Operations that make clients reset

    /// A backup of one realm or of a whole app, kept by the server in `<data>/backups/<id>.json`.
    public typealias Backup = AdminAPI.Backup
    /// An app's client recovery and maximum offline time: in effect, and what operators set.
    public typealias Settings = AdminAPI.Settings
    /// What compaction did to one realm.
    public typealias Compaction = AdminAPI.Compaction

    /// Backs up one realm (`realm`, a partition's path such as `s:tasks`, or `flx`) or, when nil,
    /// every realm of the app.
    public func backup(app: String, realm: String? = nil) async throws -> Backup {
        try await request("POST", "apps/\(app)/backups", body: AdminAPI.BackupRequest(realm: realm), as: Backup.self)
    }
    /// The app's backups, oldest first.
    public func backups(app: String) async throws -> [Backup] { try await request("GET", "apps/\(app)/backups", as: [Backup].self) }
    /// Puts a backup back; every client of the restored realms resets (`historyRestored`). Returns the realms restored.
    @discardableResult
    public func restore(app: String, backup id: String) async throws -> [String] {
        try await request("POST", "apps/\(app)/backups/\(id)/restore", as: AdminAPI.Realms.self).realms
    }
    public func settings(app: String) async throws -> Settings { try await request("GET", "apps/\(app)/settings", as: Settings.self) }
    /// Turns client recovery on or off for the app (persisted; overrides the configuration).
    @discardableResult
    public func setClientRecovery(app: String, _ allowed: Bool) async throws -> Settings {
        try await request("PATCH", "apps/\(app)/settings", body: AdminAPI.SettingsChange(clientRecovery: allowed), as: Settings.self)
    }
    /// Sets the app's maximum offline time in seconds (0 keeps all history; persisted).
    @discardableResult
    public func setMaxOfflineTime(app: String, seconds: Double) async throws -> Settings {
        try await request("PATCH", "apps/\(app)/settings", body: AdminAPI.SettingsChange(maxOfflineTime: seconds), as: Settings.self)
    }
    /// Compacts the app's history now (only with a maximum offline time).
    @discardableResult
    public func compact(app: String) async throws -> [Compaction] { try await request("POST", "apps/\(app)/compact", as: [Compaction].self) }
    /// Removes a property from an object type: every client of the realms holding it resets (manual handler).
    @discardableResult
    public func removeProperty(app: String, type: String, property: String) async throws -> [String] {
        try await request("POST", "apps/\(app)/schema/remove-property", body: AdminAPI.PropertyChange(type: type, property: property), as: AdminAPI.Realms.self).realms
    }
    /// Changes a property's type (`int`, `string` …); values that do not convert become the default.
    @discardableResult
    public func changePropertyType(app: String, type: String, property: String, to newType: String) async throws -> [String] {
        try await request("POST", "apps/\(app)/schema/change-property-type",
                          body: AdminAPI.PropertyChange(type: type, property: property, newType: newType), as: AdminAPI.Realms.self).realms
    }

    func request<T: Decodable>(_ method: String, _ path: String, as type: T.Type) async throws -> T {
        try await request(method, path, body: Optional<AdminAPI.Realms>.none, as: type)
    }

    func request<T: Decodable>(_ method: String, _ path: String, body: (some Encodable)?, as type: T.Type) async throws -> T {
        try decodeAnswer(T.self, from: try await request(method, path, body: body), to: method, path)
    }

    /// The server's answer as `type` (the shared ``AdminAPI`` bodies).
    func decodeAnswer<T: Decodable>(_ type: T.Type, from data: Data, to method: String, _ path: String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw AdminClientError(status: 200, message: "the server's answer to \(method) \(path) is not what was expected: \(error)")
        }
    }

    @discardableResult
    func request(_ method: String, _ path: String) async throws -> Data {
        try await request(method, path, body: Optional<AdminAPI.Realms>.none)
    }

    @discardableResult
    func request(_ method: String, _ path: String, body: (some Encodable)?) async throws -> Data {
        try await request(method, path, bodyData: try body.map { try JSONEncoder().encode($0) })
    }

    /// The longest an admin request may take (a data import batch, an export page).
    static let requestTimeout: Int64 = 300
    /// The largest answer read (an export page of 5,000 documents stays well below).
    static let maxAnswerBytes = 512 << 20

    func request(_ method: String, _ path: String, bodyData: Data?) async throws -> Data {
        try await request(method, path, body: bodyData.map { ByteBuffer(data: $0) }, contentType: "application/json")
    }

    func request(_ method: String, _ path: String, body: ByteBuffer?, contentType: String) async throws -> Data {
        // A query (`?realm=…`) is kept as written; the path's components are appended.
        let parts = path.split(separator: "?", maxSplits: 1)
        var url = server.appendingPathComponent("api/admin/v1/\(parts[0])")
        if parts.count == 2, let withQuery = URL(string: url.absoluteString + "?" + parts[1]) { url = withQuery }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(body)
        }
        let status: Int
        let data: Data
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Self.requestTimeout))
            status = Int(response.status.code)
            data = Data(buffer: try await response.body.collect(upTo: Self.maxAnswerBytes))
        } catch let error as NIOTooManyBytesError {
            throw AdminClientError(status: 0, message: "the answer to \(method) \(path) is larger than \(Self.maxAnswerBytes) bytes: \(error)")
        } catch {
            throw AdminClientError(status: 0, message: "\(method) \(url.absoluteString) failed: \(error)")
        }
        guard (200..<300).contains(status) else {
            let message = (try? JSONDecoder().decode(AdminAPI.ErrorAnswer.self, from: data))?.error ?? String(decoding: data, as: UTF8.self)
            throw AdminClientError(status: status, message: message)
        }
        return data
    }
}

/// The admin API refused a request (or could not be reached).
public struct AdminClientError: Error, Sendable, CustomStringConvertible {
    public let status: Int
    public let message: String
    public var description: String { status == 0 ? message : "HTTP \(status): \(message)" }
}
