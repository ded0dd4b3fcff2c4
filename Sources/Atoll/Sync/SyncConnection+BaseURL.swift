import Foundation

extension SyncConnection {
    /// The sync endpoint (`ws://`, `wss://`) of an app on the server at `baseURL` (`http://`, `https://`).
    static func syncURL(baseURL: String, appId: String) -> String {
        var ws = baseURL
        if ws.hasPrefix("https://") { ws = "wss://" + ws.dropFirst(8) } else if ws.hasPrefix("http://") { ws = "ws://" + ws.dropFirst(7) }
        return ws + "/api/client/v1/app/\(appId)/sync"
    }

    /// Moves the connection to the server at `baseURL` (`App.updateBaseUrl(to:)`): a connection
    /// open or opening to the old address is dropped, and the sessions reconnect to the new one
    /// as after any lost connection.
    func move(toBaseURL baseURL: String) {
        let url = Self.syncURL(baseURL: baseURL, appId: appId)
        guard url != self.url else { return }
        self.url = url
        if status != .closed {
            close()
            dropped(reason: "the app's base URL changed to \(baseURL)")
        }
        // Sessions waiting out a reconnect delay (the old address was gone) try the new one now.
        for engine in registeredSessions { _Concurrency.Task { await engine.reconnect() } }
    }
}
