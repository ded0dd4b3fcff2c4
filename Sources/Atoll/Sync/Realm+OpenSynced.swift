import AtollCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Realm {
    /// When an asynchronous open of a synced realm waits for the server's data.
    ///
    /// ```swift
    /// let realm = try await Realm(configuration: config, downloadBeforeOpen: .once)
    /// ```
    public enum OpenBehavior: Sendable {
        /// Open at once, with what is on the device; changes download in the background.
        case never
        /// Download everything before the first open of the file; later opens are immediate.
        case once
        /// Download every change before opening (needs a connection).
        case always
    }
}

/// Internal code may say `OpenBehavior`; apps say `Realm.OpenBehavior`, as in realm-swift.
typealias OpenBehavior = Realm.OpenBehavior

extension Realm {
    /// Opens a realm, for a synced realm first downloading the server's changes as `downloadBeforeOpen`
    /// says. Offline, `.always` fails within the connect timeout with `POSIXError(.ETIMEDOUT)`
    /// instead of waiting for a connection.
    ///
    /// ```swift
    /// let realm = try await Realm(configuration: user.configuration(partitionValue: "tasks"), downloadBeforeOpen: .always)
    /// ```
    public static func open(configuration: Configuration = .defaultConfiguration, downloadBeforeOpen: OpenBehavior,
                            _ isolation: isolated (any Actor)? = #isolation) async throws -> Realm {
        let opened = try await downloadIfNeeded(configuration, downloadBeforeOpen)
        defer { withExtendedLifetime(opened) {} }
        return try instance(configuration, confinedTo: isolation.map { .actor($0) } ?? .thread(pthread_self()))
    }

    /// Returns the realm it opened to start the session: the caller keeps it until its own realm
    /// is open, so the file stays open in between (initial subscriptions run once per open).
    @discardableResult
    static func downloadIfNeeded(_ configuration: Configuration, _ behavior: OpenBehavior,
                                 sessionStarted: (SyncSession) -> Void = { _ in }) async throws -> Realm? {
        guard let sync = configuration.syncConfiguration else { return nil }
        let exists = configuration.fileURL.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
        let download: Bool = switch behavior {
        case .never: false
        case .always: true
        case .once: !exists
        }
        // Opening the file applies a flexible-sync configuration's initial subscriptions (so the
        // download brings their objects) and starts the session; it stays open while waiting.
        // With `rerunOnOpen` every asynchronous open runs them again, even while other `Realm`s
        // keep the file open (the first synchronous open of the file runs them too).
        let (opened, initialSet) = try openRunningInitialSubscriptions(configuration, sync)
        guard download, let session = opened.syncSession ?? sync.user.core.syncClient.session(for: configuration) else { return opened }
        sessionStarted(session)
        let timeout = sync.user.core.configuration.syncConnectTimeout
        let clock = sync.user.core.clock
        // The download waits for the initial subscriptions' objects too: the set is complete
        // once the server sent everything it selects.
        let subscriptionWait = initialSet.map { opened.subscriptions.box.wait(for: $0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await session.wait(for: .download)
                try await subscriptionWait?.run(timeout: nil)
            }
            if sync.cancelAsyncOpenOnNonFatalErrors {
                // Fail on the first connection failure instead of retrying until the timeout.
                group.addTask { try await session.nextConnectionFailure() }
            }
            group.addTask {
                try await clock.sleep(for: timeout)
                throw POSIXError(.ETIMEDOUT)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
        return opened
    }
}

extension Realm {
    /// Opens the realm of an asynchronous open and runs the configuration's initial subscriptions
    /// when they are due: on the first open of the file in the process, or on every asynchronous
    /// open with `rerunOnOpen`. Returns the version of the set they committed, if they did.
    fileprivate static func openRunningInitialSubscriptions(_ configuration: Configuration,
                                                            _ sync: SyncConfiguration) throws -> (Realm, Int64?) {
        guard sync.enableFlexibleSync, sync.initialSubscriptions != nil, !configuration.readOnly else {
            return (try Realm(configuration: configuration, confinement: .thread(pthread_self())), nil)
        }
        // Claimed here, before the `Realm` opens, so that opening it does not run them as well.
        let coordinator = try RealmCoordinator.coordinator(for: configuration)
        let firstOpen = coordinator.claimInitialSubscriptions()
        let realm = try Realm(configuration: configuration, confinement: .thread(pthread_self()))
        withExtendedLifetime(coordinator) {}
        guard firstOpen || sync.rerunOnOpen else { return (realm, nil) }
        return (realm, try sync.applyInitialSubscriptions(realm))
    }
}

