import Foundation

extension AppConfiguration {
    /// realm-swift's deprecated memberwise form with `localAppName` and `localAppVersion` (which
    /// are only reported); `nil` keeps a value's default.
    @available(*, deprecated, message: "localAppName and localAppVersion are not used for anything and should not be supplied")
    @_disfavoredOverload
    public init(baseURL: String? = nil, transport: (any Sendable)? = nil, localAppName: String?, localAppVersion: String?,
                defaultRequestTimeoutMS: UInt? = nil, enableSessionMultiplexing: Bool? = nil,
                syncTimeouts: SyncTimeoutOptions? = nil) {
        self.init(baseURL: baseURL, transport: transport, localAppName: localAppName, localAppVersion: localAppVersion)
        if let defaultRequestTimeoutMS { self.defaultRequestTimeoutMS = defaultRequestTimeoutMS }
        if let enableSessionMultiplexing { self.enableSessionMultiplexing = enableSessionMultiplexing }
        self.syncTimeouts = syncTimeouts
    }
}
