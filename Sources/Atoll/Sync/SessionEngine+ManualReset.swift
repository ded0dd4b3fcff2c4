import AtollCore
import Foundation

extension SessionEngine {
    /// Manual client reset (docs/client-reset.md): marks the realm "back up then delete" in the app's
    /// metadata store, stops the session (the realm stays usable offline, it no longer syncs) and
    /// reports `clientResetError` with `clientResetInfo()` = (backup path, token). The copy is made
    /// only when the action runs: `SyncSession.immediatelyHandleError` or the next `App` start.
    ///
    /// The error goes to the configuration's `.manual(errorHandler:)` if it has one, else to
    /// `app.syncManager.errorHandler`; with neither the reset is not handled (only logged).
    func handleManualReset(message: String) async {
        let core = sync.user.core
        var error = SyncError(.clientResetError, message)
        if configuration.inMemoryIdentifier == nil, let url = configuration.fileURL {
            let path = url.standardizedFileURL.path
            let action = FileAction(kind: .backUpThenDelete, realmPath: path,
                                    backupPath: FileAction.backupPath(for: path, appFolder: core.folder))
            error = error.with(core.syncManager.record(action))
        }
        // Stopped before anyone hears of it: the session lets go of the file, which the handler
        // may then back up and delete at once.
        await stop(.fileActionPending)
        let session = publicSession
        let what = "client reset of \(configuration.fileURL?.path ?? configuration.storageKey)"
        if case .manual(let handler?) = sync.clientResetMode {
            Logger.log(.error, "\(what): \(error) (handled by the configuration's manual client reset handler)")
            handler(error, session)
        } else if let handler = core.syncManager.errorHandler {
            Logger.log(.error, "\(what): \(error)")
            handler(error, session)
        } else {
            Logger.log(.error, "\(what): \(error); no handler is set (neither .manual(errorHandler:) nor syncManager.errorHandler), so the "
                + "client reset is not handled: the session stays inactive until the realm is backed up and deleted at the next App start")
        }
    }
}
