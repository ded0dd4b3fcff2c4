import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

    /// The admin key a server with this data folder made on first start.
    public static func key(dataDirectory: String) throws -> String {
        let file = URL(fileURLWithPath: dataDirectory).appendingPathComponent(AdminKey.fileName)
        do {
            return try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw AdminClientError(status: 0, message: "cannot read the admin key at \(file.path): \(error.localizedDescription)")
        }
    }

    public struct App: Codable, Sendable, Hashable {
        public var id: String
        public var syncEnabled: Bool
    }

    public struct User: Codable, Sendable, Hashable {
        public var id: String
        public var email: String?
        public var disabled: Bool
        public var providers: [String]
    }

    public struct Session: Codable, Sendable, Hashable {
        public var user: String
        public var realm: String
        public var fileIdent: Int64
        public var connection: UInt64
        public var session: UInt64
    }

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

    private func request<T: Decodable>(_ method: String, _ path: String, as type: T.Type) async throws -> T {
        let data = try await request(method, path)
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw AdminClientError(status: 200, message: "the server's answer to \(method) \(path) is not what was expected: \(error)")
        }
    }

    @discardableResult
    private func request(_ method: String, _ path: String) async throws -> Data {
        var request = URLRequest(url: server.appendingPathComponent("api/admin/v1/\(path)"))
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            let message = (try? JSONDecoder().decode([String: String].self, from: data))?["error"] ?? String(decoding: data, as: UTF8.self)
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
