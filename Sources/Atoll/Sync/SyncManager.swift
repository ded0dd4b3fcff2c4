import Foundation

/// Sync settings and error reporting of one app (`app.syncManager`).
///
/// ```swift
/// app.syncManager.errorHandler = { error, session in print(error) }
/// ```
public final class SyncManager: @unchecked Sendable {
    private let lock = NSLock()
    private var _errorHandler: (@Sendable (Swift.Error, SyncSession?) -> Void)?

    /// Gets every sync error with the session it happened on (`nil` when none).
    public var errorHandler: (@Sendable (Swift.Error, SyncSession?) -> Void)? {
        get { lock.withLock { _errorHandler } }
        set { lock.withLock { _errorHandler = newValue } }
    }

    func report(_ error: SyncError, session: SyncSession?) {
        errorHandler?(error, session)
    }
}

extension App {
    /// The app's sync settings and error handler.
    public var syncManager: SyncManager { core.syncManager }
}
