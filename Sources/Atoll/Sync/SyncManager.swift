import AtollCore
import Foundation

/// Sync settings and error reporting of one app (`app.syncManager`).
///
/// ```swift
/// app.syncManager.errorHandler = { error, session in print(error) }
/// app.syncManager.logLevel = .warn
/// ```
public final class SyncManager: @unchecked Sendable {
    private let lock = NSLock()
    private var _errorHandler: ErrorReportingBlock?
    /// Where the file actions of sync errors wait for the next app start (`nil` when the app's
    /// metadata store could not be opened: actions then run only through their tokens).
    let metadata: MetadataStore?

    /// Custom headers, user agent and app id of the app's requests.
    let settings: RequestSettings
    /// `timeoutOptions`.
    let timeouts: Locked<SyncTimeoutOptions?>
    /// `logger`, as set.
    let loggerFunction = Locked<(@Sendable (LogLevel, String) -> Void)?>(nil)
    /// The app's sync connection, which reads the timeouts.
    weak var connection: SyncConnection?

    init(metadata: MetadataStore?, settings: RequestSettings = RequestSettings(), timeouts: SyncTimeoutOptions? = nil,
         connection: SyncConnection? = nil) {
        self.metadata = metadata
        self.settings = settings
        self.timeouts = Locked(timeouts)
        self.connection = connection
    }

    /// Gets every sync error with the session it happened on (`nil` when none). A client reset
    /// goes to the configuration's `.manual(errorHandler:)` instead when it has one.
    public var errorHandler: ErrorReportingBlock? {
        get { lock.withLock { _errorHandler } }
        set { lock.withLock { _errorHandler = newValue } }
    }

    /// The SDK's log level: the same as `Logger.shared.level` (Realm's earlier spelling).
    public var logLevel: LogLevel {
        get { Logger.shared.level }
        set { Logger.shared.level = newValue }
    }

    func report(_ error: SyncError, session: SyncSession?) {
        if error.code == .permissionDeniedError, let session, let reported = permissionDenied(error, session: session) {
            // The session stops first, so that the handler may delete the file at once.
            session.enqueue { [self] engine in
                await engine.stop(.fileActionPending)
                errorHandler?(reported, session)
            }
            return
        }
        errorHandler?(error, session)
    }

    /// A permission denied error: the realm's file is marked for deletion; the error carries the
    /// token that deletes it now. `nil` for a realm without a file.
    private func permissionDenied(_ error: SyncError, session: SyncSession) -> SyncError? {
        let configuration = session.engine.configuration
        guard error.actionToken == nil, configuration.inMemoryIdentifier == nil, let url = configuration.fileURL else { return nil }
        return error.with(record(FileAction(kind: .delete, realmPath: url.standardizedFileURL.path, backupPath: nil)))
    }
}

extension App {
    /// The app's sync settings and error handler.
    public var syncManager: SyncManager { core.syncManager }
}
