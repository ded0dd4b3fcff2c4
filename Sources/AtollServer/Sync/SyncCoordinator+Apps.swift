import AtollCore
import Foundation

extension SyncCoordinator {
    /// Replaces the settings of app `appID` with `install` (which puts the new settings in
    /// place), then ends the app's sessions bound here, in one turn of the coordinator: a bind
    /// after it reads the new rules, and a session bound before it may no longer write (its
    /// uploads are refused in the store's transaction once the generation changed, and it ends
    /// with `tryAgainLater`, so its client reconnects and binds under the new rules). Returns once
    /// the uploads that were being integrated when the settings changed are done, so after it
    /// returns only the new rules decide.
    func replaceApp(_ appID: String, install: @Sendable () -> Void) async {
        install()
        end(sessionsWhere: { $0.info.appID == appID }) { info in
            ErrorMessage(code: .tryAgainLater, message: "the configuration of app \"\(appID)\" was replaced; reconnect to sync under its new rules",
                         action: .retryLater, tryAgainAfterMilliseconds: 1_000, session: info.session, epoch: info.epoch)
        }
        // Bounded: an integration that hangs on the store must not hold the admin request forever.
        var waits = 0
        while (uploadsInFlight[appID] ?? 0) > 0, waits < 1_000 {
            waits += 1
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
