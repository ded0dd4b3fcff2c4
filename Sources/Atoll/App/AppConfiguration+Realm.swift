import Foundation

extension AppConfiguration {
    /// realm-swift's deprecated memberwise form with `localAppName` and `localAppVersion` (which
    /// are only reported); `nil` keeps a value's default.
    @available(*, deprecated, message: "localAppName and localAppVersion are not used for anything and should not be supplied")
    @_disfavoredOverload
    public init(baseURL: String? = nil, transport: (any Sendable)? = nil, localAppName: String?, localAppVersion: String?,
                defaultRequestTimeoutMS: UInt? = nil, enableSessionMultiplexing: Bool? = nil,
                syncTimeouts: SyncTimeoutOptions? = nil) {
        // `transport` is typed loosely here, so the designated initializer must be named by its
        // argument types: passed as it is, the call would resolve to this initializer again.
        self.init(baseURL: baseURL, transport: transport as? RLMNetworkTransport, localAppName: localAppName,
                  localAppVersion: localAppVersion, defaultRequestTimeoutMS: defaultRequestTimeoutMS ?? 60_000, rootDirectory: nil)
        if let enableSessionMultiplexing { self.enableSessionMultiplexing = enableSessionMultiplexing }
        self.syncTimeouts = syncTimeouts
    }
}
