import Atoll
import Foundation
import Testing

/// `SyncTimeoutOptions` and the `AppConfiguration` initializers that take it, as Realm apps call them.
@Suite struct SyncTimeoutOptionsTests {
    @Test func defaultsAreRealmsAndNilKeepsADefault() {
        let defaults = SyncTimeoutOptions()
        #expect(defaults.connectTimeout == 120_000)
        #expect(defaults.connectionLingerTime == 30_000)
        #expect(defaults.pingKeepalivePeriod == 60_000)
        #expect(defaults.pongKeepaliveTimeout == 120_000)
        #expect(defaults.fastReconnectLimit == 60_000)
        let some = SyncTimeoutOptions(connectTimeout: 30_000, pongKeepaliveTimeout: 10_000)
        #expect(some.connectTimeout == 30_000 && some.pongKeepaliveTimeout == 10_000)
        #expect(some.pingKeepalivePeriod == 60_000 && some.fastReconnectLimit == 60_000)
        #expect(SyncTimeoutOptions(connectTimeout: 120_000) == defaults)
        #expect(some != defaults)
    }

    @Test func optionsAreSetOnAConstantAsOnRealmsClass() {
        let options = SyncTimeoutOptions()
        options.pingKeepalivePeriod = 10_000
        options.pongKeepaliveTimeout = 5_000
        #expect(options == SyncTimeoutOptions(pingKeepalivePeriod: 10_000, pongKeepaliveTimeout: 5_000))
    }

    @Test func appConfigurationTakesThemAsRealmsDoes() {
        let timeouts = SyncTimeoutOptions(connectTimeout: 30_000, connectionLingerTime: 5_000, pingKeepalivePeriod: 10_000,
                                          pongKeepaliveTimeout: 10_000, fastReconnectLimit: 30_000)
        let configuration = AppConfiguration(syncTimeouts: timeouts)
        #expect(configuration.syncTimeouts == timeouts)
        #expect(configuration.baseURL == nil)
        let full = AppConfiguration(baseURL: "http://localhost:9090", transport: nil, defaultRequestTimeoutMS: 5_000,
                                    enableSessionMultiplexing: true, syncTimeouts: timeouts)
        #expect(full.defaultRequestTimeoutMS == 5_000 && full.enableSessionMultiplexing && full.syncTimeouts == timeouts)
        #expect(AppConfiguration(baseURL: nil).syncTimeouts == nil)
        #expect(AppConfiguration().defaultRequestTimeoutMS == 60_000)
    }
}

/// realm-swift's deprecated `AppConfiguration` initializer with `localAppName`: it called itself
/// (its loosely typed `transport` made the inner call resolve to it again) and never returned.
@Suite struct DeprecatedAppConfigurationTests {
    @available(*, deprecated)
    @Test func theDeprecatedMemberwiseFormReturnsWithItsValues() {
        let timeouts = SyncTimeoutOptions(connectTimeout: 30_000)
        let configuration = AppConfiguration(baseURL: "https://example.com", transport: nil, localAppName: "Tasks",
                                             localAppVersion: "1.2", defaultRequestTimeoutMS: 5_000,
                                             enableSessionMultiplexing: false, syncTimeouts: timeouts)
        #expect(configuration.baseURL == "https://example.com")
        #expect(configuration.localAppName == "Tasks" && configuration.localAppVersion == "1.2")
        #expect(configuration.defaultRequestTimeoutMS == 5_000)
        #expect(configuration.enableSessionMultiplexing == false)
        #expect(configuration.syncTimeouts == timeouts)
    }
}
