import AtollCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// JSON over HTTP to the server's app API (docs/protocol.md §1).
struct HTTPClient: Sendable {
    /// The server's address; `App.updateBaseUrl(to:)` moves it for every copy of the client.
    var baseURL: String { location.url.withLock { $0 } }
    let location: Location
    let timeout: TimeInterval
    /// Custom headers and user agent (`app.syncManager`), read at every request.
    let settings: RequestSettings

    /// The base URL, shared by the copies of one app's client.
    final class Location: Sendable {
        let url: Locked<String>
        init(_ url: String) { self.url = Locked(url) }
    }

    /// What sends the requests (`AppConfiguration.transport`).
    let transport: RLMNetworkTransport
    /// `AppConfiguration.trustedRootCertificates`, handed to the transport with every request.
    let trustedRootCertificates: [String]

    init(configuration: AppConfiguration, settings: RequestSettings = RequestSettings()) {
        location = Location(configuration.resolvedBaseURL)
        timeout = TimeInterval(configuration.defaultRequestTimeoutMS) / 1000
        self.settings = settings
        transport = configuration.transport ?? RLMNetworkTransport()
        trustedRootCertificates = configuration.trustedRootCertificates
    }

    struct ErrorBody: Decodable {
        let error: String?
        let error_code: String?
    }

    /// Sends a request and returns the answer's body, or throws the server's error as an `AppError`.
    /// `body` is JSON already encoded, for bodies that are not all strings.
    func send(_ method: String, _ path: String, bearer: String? = nil, json: [String: String]? = nil, body: Data? = nil) async throws -> Data {
        guard let url = URL(string: baseURL + path) else {
            throw AppError(.invalidParameter, "'\(baseURL + path)' is not a valid URL")
        }
        let request = RLMRequest()
        request.method = RLMHTTPMethod(name: method)
        request.url = url.absoluteString
        request.timeout = timeout
        request.trustedRootCertificates = trustedRootCertificates
        for (name, value) in RequestSettings.sendable(settings.headers) { request.headers[name] = value }
        request.headers["User-Agent"] = settings.userAgentHeader
        request.headers["Accept"] = "application/json"
        if let bearer { request.headers[settings.authorizationHeaderName ?? "Authorization"] = "Bearer " + bearer }
        if let json {
            request.headers["Content-Type"] = "application/json"
            request.body = String(decoding: try JSONEncoder().encode(json), as: UTF8.self)
        } else if let body {
            request.headers["Content-Type"] = "application/json"
            request.body = String(decoding: body, as: UTF8.self)
        }
        // The line names the request, never its headers or body (tokens, passwords).
        let started = Date()
        // Realm logs each app request and its answer at the detail level.
        Logger.log(.detail, Category.app, "HTTP \(method) \(url.absoluteString)")
        let transport = transport
        let response: RLMResponse = await withCheckedContinuation { continuation in
            transport.sendRequest(toServer: request) { continuation.resume(returning: $0) }
        }
        guard response.customStatusCode == 0 else {
            Logger.log(.error, Category.app, "HTTP \(method) \(url.absoluteString) failed: \(response.body)")
            throw AppError(.httpRequestFailed, "\(method) \(url.absoluteString) failed: \(response.body)")
        }
        let data = Data(response.body.utf8)
        Logger.log(.detail, Category.app, "HTTP \(method) \(url.absoluteString) -> \(response.httpStatusCode) (\(data.count) bytes, "
                   + "\(Int(Date().timeIntervalSince(started) * 1000)) ms)")
        guard (200..<300).contains(response.httpStatusCode) else {
            let body = try? JSONDecoder().decode(ErrorBody.self, from: data)
            let code = body?.error_code.map(AppError.code(forServerCode:))
                ?? (response.httpStatusCode == 401 ? .invalidSession : .httpRequestFailed)
            throw AppError(code, body?.error ?? "the server answered \(response.httpStatusCode) to \(method) \(path)",
                           httpStatusCode: response.httpStatusCode)
        }
        return data
    }

    func decode<T: Decodable>(_ type: T.Type, from data: Data, _ what: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw AppError(.httpRequestFailed, "the server's answer to \(what) is not what the protocol says: \(error)")
        }
    }
}

/// Reads the expiry of a JWT without checking its signature (the server checks it).
enum JWTPayload {
    static func expiry(of token: String) -> Date? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let exp = object["exp"] as? Double ?? (object["exp"] as? Int).map(Double.init) else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}
