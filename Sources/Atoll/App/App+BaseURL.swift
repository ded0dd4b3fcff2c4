import Foundation

extension App {
    /// The server the app talks to now: the configuration's `baseURL` until ``updateBaseUrl(to:)``.
    public var baseUrl: String { core.http.baseURL }

    /// The same as ``baseUrl``.
    public var baseURL: String { baseUrl }

    /// Moves the app to another address of its server (another node or port of the same
    /// deployment, an edge server sharing its data): the new server is asked for the app first,
    /// then logins, token refreshes and the sync connection go there. Logged-in users stay logged
    /// in (their tokens are the deployment's) and their sync sessions reconnect to the new address.
    /// `nil` goes back to ``AppConfiguration/defaultBaseURL``. The new address holds for this
    /// process; the next `App` start reads the configuration's.
    ///
    /// ```swift
    /// try await app.updateBaseUrl(to: "https://sync-2.example.com")
    /// ```
    /// - Throws: `AppError`: `.invalidParameter` for an address that is not `http(s)://host[:port]`,
    ///   `.httpRequestFailed` when the new server cannot be reached, `.badRequest` when it does not
    ///   know the app. The app keeps its old address then.
    public func updateBaseUrl(to url: String?) async throws {
        var base = (url?.isEmpty ?? true) ? AppConfiguration.defaultBaseURL : url!
        while base.hasSuffix("/") { base.removeLast() }
        guard let parsed = URL(string: base), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
              let host = parsed.host, !host.isEmpty, parsed.query == nil, parsed.fragment == nil else {
            throw AppError(.invalidParameter, "'\(url ?? "")' is not an http:// or https:// server address")
        }
        let probe = HTTPClient(baseURL: base, timeout: core.http.timeout, settings: core.http.settings, transport: core.http.transport,
                               trustedRootCertificates: core.http.trustedRootCertificates)
        _ = try await probe.send("GET", "/api/client/v1/app/\(core.id)/location")
        core.http.location.url.withLock { $0 = base }
        await core.syncClient.connection.move(toBaseURL: base)
    }

    /// ``updateBaseUrl(to:)`` calling `completion` with nil or the error.
    @preconcurrency
    public func updateBaseUrl(to url: String?, _ completion: @escaping @Sendable (Swift.Error?) -> Void) {
        _Concurrency.Task {
            do { try await updateBaseUrl(to: url); completion(nil) } catch { completion(error) }
        }
    }

    /// ``updateBaseUrl(to:)`` calling `completion` with the result.
    @preconcurrency
    public func updateBaseUrl(to url: String?, _ completion: @escaping @Sendable (Result<Void, Swift.Error>) -> Void) {
        _Concurrency.Task {
            do { try await updateBaseUrl(to: url); completion(.success(())) } catch { completion(.failure(error)) }
        }
    }
}

extension HTTPClient {
    /// A client of another address (a probe before moving an app there).
    init(baseURL: String, timeout: TimeInterval, settings: RequestSettings, transport: RLMNetworkTransport,
         trustedRootCertificates: [String]) {
        location = Location(baseURL)
        self.timeout = timeout
        self.settings = settings
        self.transport = transport
        self.trustedRootCertificates = trustedRootCertificates
    }
}
