import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A small JSON client over URLSession, as the SDK talks to the server.
struct HTTP: Sendable {
    let baseURL: URL

    struct Answer: Sendable {
        let status: Int
        let body: Data
        let contentType: String?
        var retryAfter: String? = nil

        /// The body as a JSON object (empty when it is not one).
        var object: [String: Any] {
            ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:]
        }

        /// `error_code` of an error answer.
        var errorCode: String? { object["error_code"] as? String }

        var text: String { String(decoding: body, as: UTF8.self) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONDecoder().decode(T.self, from: body)
        }
    }

    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        // Tests run in parallel and some wait on slow webhooks: 6 connections per host (the
        // default) would queue every other test's requests behind them.
        configuration.httpMaximumConnectionsPerHost = 64
        return URLSession(configuration: configuration)
    }()

    func send(_ method: String, _ path: String, bearer: String? = nil, body: String? = nil, headers: [String: String] = [:]) async throws
        -> Answer
    {
        var request = URLRequest(url: URL(string: path, relativeTo: baseURL)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Self.session.data(for: request)
        let http = response as! HTTPURLResponse
        return Answer(
            status: http.statusCode, body: data, contentType: http.value(forHTTPHeaderField: "Content-Type"),
            retryAfter: http.value(forHTTPHeaderField: "Retry-After"))
    }

    func post(_ path: String, bearer: String? = nil, json: [String: String] = [:]) async throws -> Answer {
        try await send("POST", path, bearer: bearer, body: Self.encode(json))
    }

    static func encode(_ json: [String: String]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: json), as: UTF8.self)
    }

    // MARK: The API's calls

    static func loginPath(app: String, provider: String) -> String {
        "/api/client/v1/app/\(app)/auth/providers/\(provider)/login"
    }

    struct Login: Decodable, Sendable {
        let access_token: String
        let refresh_token: String
        let user_id: String
        let device_id: String
    }

    func logIn(app: String = "tasks", provider: String, json: [String: String] = [:]) async throws -> Answer {
        try await post(Self.loginPath(app: app, provider: provider), json: json)
    }

    func anonymousLogin(app: String = "tasks") async throws -> Login {
        try await logIn(app: app, provider: "anon-user").decode(Login.self)
    }

    func register(app: String = "tasks", email: String, password: String) async throws -> Answer {
        try await post(
            "/api/client/v1/app/\(app)/auth/providers/local-userpass/register",
            json: ["email": email, "password": password])
    }

    func emailLogin(app: String = "tasks", email: String, password: String) async throws -> Answer {
        try await logIn(app: app, provider: "local-userpass", json: ["username": email, "password": password])
    }

    func profile(_ accessToken: String) async throws -> Answer {
        try await send("GET", "/api/client/v1/auth/profile", bearer: accessToken)
    }

    func refresh(_ refreshToken: String) async throws -> Answer {
        try await send("POST", "/api/client/v1/auth/session", bearer: refreshToken)
    }
}
