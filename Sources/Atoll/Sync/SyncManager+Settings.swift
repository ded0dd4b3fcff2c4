import AtollCore
import Foundation

/// What an app adds to its requests: custom headers and the user agent, read by every HTTP
/// request and every sync connection of the app when it is made.
final class RequestSettings: Sendable {
    private struct Values {
        var headers: [String: String] = [:]
        var userAgent: String?
        var appID: String?
        var authorizationHeaderName: String?
        /// Counts changes of the headers: the sync connection reconnects to send new ones.
        var generation: UInt64 = 0
    }
    private let values = Locked(Values())
    /// Called when the headers change (the app's sync connection reconnects with them).
    let headersChanged = Locked<(@Sendable () -> Void)?>(nil)

    /// The headers every request and connection of the app carries.
    var headers: [String: String] { values.withLock { $0.headers } }
    var generation: UInt64 { values.withLock { $0.generation } }

    func setHeaders(_ headers: [String: String]) {
        let changed = values.withLock { values in
            guard values.headers != headers else { return false }
            values.headers = headers
            values.generation &+= 1
            return true
        }
        if changed { headersChanged.withLock { $0 }?() }
    }

    var userAgent: String? {
        get { values.withLock { $0.userAgent } }
        set { values.withLock { $0.userAgent = newValue } }
    }

    var appID: String? {
        get { values.withLock { $0.appID } }
        set { values.withLock { $0.appID = newValue } }
    }

    /// The header the app's requests carry their bearer token in (`Authorization` by default).
    var authorizationHeaderName: String? {
        get { values.withLock { $0.authorizationHeaderName } }
        set { values.withLock { $0.authorizationHeaderName = newValue } }
    }

    /// The `User-Agent` of the app's requests and connections: the SDK, plus the app's own.
    var userAgentHeader: String {
        let sdk = "Atoll/\(AtollVersion.string) Swift"
        guard let app = userAgent?.trimmingCharacters(in: .whitespacesAndNewlines), !app.isEmpty else { return sdk }
        return "\(sdk) \(app)"
    }

    /// Headers an app may not set: they are the protocol's own.
    static let reservedHeaders: Set<String> = [
        "authorization", "content-type", "content-length", "accept", "host", "connection", "upgrade",
        "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol", "transfer-encoding",
    ]

    /// The custom headers that may be sent: valid names and values, none of the reserved ones.
    /// Bounded too (the server refuses huge request heads): at most 64 headers of 8 KB each.
    static func sendable(_ headers: [String: String]) -> [(String, String)] {
        headers.sorted { $0.key < $1.key }.prefix(64).map { ($0.key, $0.value) }.filter { name, value in
            !name.isEmpty && name.utf8.count <= 256 && value.utf8.count <= 8 * 1024
                && !reservedHeaders.contains(name.lowercased())
                && name.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 32 && $0.value < 127 && $0 != ":" }
                && value.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 32 && $0.value != 127) }
        }
    }
}

/// The SDK's version, as the user agent says it.
enum AtollVersion {
    static let string = "0.13"
}

extension SyncManager {
    /// Headers added to every HTTP request of the app and to the upgrade request of its sync
    /// connection. Setting them while syncing reconnects the connection with the new ones.
    /// Names the protocol uses itself (`Authorization`, `Content-Type`, the WebSocket's) are not
    /// sent; nor is a name or value that is not valid in HTTP.
    ///
    /// ```swift
    /// app.syncManager.customRequestHeaders = ["X-Device-Model": "Pixel 9"]
    /// ```
    public var customRequestHeaders: [String: String]? {
        get {
            let headers = settings.headers
            return headers.isEmpty ? nil : headers
        }
        set { settings.setHeaders(newValue ?? [:]) }
    }

    /// Identifies the app in the `User-Agent` of its requests and sync connection (after the
    /// SDK's own name). Set it before the first login or sync: the connection reads it when it opens.
    public var userAgent: String? {
        get { settings.userAgent }
        set { settings.userAgent = newValue }
    }

    /// The header the app's requests send their bearer token in, for a server (or a proxy in
    /// front of it) that expects another than `Authorization` (the Atoll server's
    /// `authorizationHeaderName` setting). `nil`: `Authorization`.
    public var authorizationHeaderName: String? {
        get { settings.authorizationHeaderName }
        set { settings.authorizationHeaderName = newValue }
    }

    /// A reverse-DNS name of the application, kept for source compatibility (the bundle
    /// identifier, where there is one).
    public var appID: String {
        get { settings.appID ?? Bundle.main.bundleIdentifier ?? "" }
        set { settings.appID = newValue }
    }

    /// A function to get the SDK's log lines instead of the default logger; `nil` restores the
    /// default. The same as setting `Logger.shared` (Realm's earlier spelling).
    ///
    /// ```swift
    /// app.syncManager.logger = { level, message in print(level, message) }
    /// ```
    public var logger: (@Sendable (LogLevel, String) -> Void)? {
        get { loggerFunction.withLock { $0 } }
        set {
            loggerFunction.withLock { $0 = newValue }
            let level = Logger.shared.level
            if let newValue {
                Logger.shared = Logger(level: level, logFunction: newValue)
            } else {
                let standard = Logger.standardError()
                standard.level = level
                Logger.shared = standard
            }
        }
    }

    /// The timeouts and intervals of the app's sync connection (at first the app configuration's
    /// `syncTimeouts`). Set them before opening a synced realm: an open connection keeps the ones
    /// it opened with until it reconnects.
    public var timeoutOptions: SyncTimeoutOptions? {
        get { timeouts.withLock { $0 } }
        set {
            timeouts.withLock { $0 = newValue }
            let snapshot = (newValue ?? SyncTimeoutOptions()).snapshot
            let connection = connection
            _Concurrency.Task { await connection?.setTimeouts(snapshot) }
        }
    }
}
