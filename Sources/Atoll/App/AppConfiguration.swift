import Foundation

/// How an `App` reaches its server and where it keeps its files.
///
/// ```swift
/// let app = App(id: "tasks", configuration: AppConfiguration(baseURL: "http://192.168.1.20:9090"))
/// ```
public struct AppConfiguration: Sendable, Equatable {
    /// The server's address (`http://` or `https://`; sync uses `ws://` or `wss://` to match). `nil` means `http://localhost:9090`, where `swift run atoll-server`
    /// listens, so the Realm samples run unchanged against a local server.
    public var baseURL: String?
    /// The time after which an HTTP request fails.
    public var defaultRequestTimeoutMS: UInt
    /// Reported to the server with logins.
    public var localAppName: String?
    public var localAppVersion: String?
    /// The folder holding the app's metadata and synced realms (`<root>/atoll/<app id>/…`);
    /// `nil` means `Realm.defaultDirectory`.
    public var rootDirectory: URL?
    /// How long an open that must download (`.always`, a first `.once`) waits for the server
    /// before failing with `POSIXError(.ETIMEDOUT)`, in seconds.
    public var syncConnectTimeout: TimeInterval = 30
    /// PEM certificates the app trusts besides the system's roots: a private CA, or a development
    /// server's self-signed certificate. One trust for everything the app sends: its HTTPS requests
    /// (logins, token refreshes, API keys… through the default transport) and its sync connection
    /// (`wss://`). A transport of your own decides for itself; one that hands the request to
    /// `super.sendRequest(toServer:completion:)` keeps this trust.
    ///
    /// ```swift
    /// var configuration = AppConfiguration(baseURL: "https://sync.example.lan:9443")
    /// configuration.trustedRootCertificates = [try String(contentsOfFile: "ca.pem", encoding: .utf8)]
    /// ```
    public var trustedRootCertificates: [String] = []
    /// Timeouts and intervals of the sync connection; `nil` means ``SyncTimeoutOptions``' defaults.
    public var syncTimeouts: SyncTimeoutOptions?
    /// Kept for source compatibility: an app always shares one sync connection among its realms.
    public var enableSessionMultiplexing = true
    /// What sends the app's HTTP requests; `nil`: `RLMNetworkTransport` (URLSession on Apple
    /// platforms, an HTTP/1.1 client on SwiftNIO elsewhere).
    public var transport: RLMNetworkTransport?

    public static let defaultBaseURL = "http://localhost:9090"

    public init(baseURL: String? = nil, transport: RLMNetworkTransport? = nil, localAppName: String? = nil,
                localAppVersion: String? = nil, defaultRequestTimeoutMS: UInt = 60_000, rootDirectory: URL? = nil) {
        self.baseURL = baseURL
        self.transport = transport
        self.localAppName = localAppName
        self.localAppVersion = localAppVersion
        self.defaultRequestTimeoutMS = defaultRequestTimeoutMS
        self.rootDirectory = rootDirectory
    }

    /// An app configuration with the given values; `nil` keeps a value's default.
    @_disfavoredOverload  // `AppConfiguration(baseURL: nil)` means the initializer above
    public init(baseURL: String? = nil, transport: RLMNetworkTransport? = nil, defaultRequestTimeoutMS: UInt? = nil,
                enableSessionMultiplexing: Bool? = nil, syncTimeouts: SyncTimeoutOptions? = nil) {
        self.init(baseURL: baseURL, transport: transport)
        if let defaultRequestTimeoutMS { self.defaultRequestTimeoutMS = defaultRequestTimeoutMS }
        if let enableSessionMultiplexing { self.enableSessionMultiplexing = enableSessionMultiplexing }
        self.syncTimeouts = syncTimeouts
    }

    var resolvedBaseURL: String {
        var url = baseURL ?? Self.defaultBaseURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    var resolvedRoot: URL {
        rootDirectory ?? URL(fileURLWithPath: Realm.defaultDirectory, isDirectory: true)
    }
}
