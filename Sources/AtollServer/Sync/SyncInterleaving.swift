/// Points in the coordinator's work where a test holds it, to force an interleaving the scheduler
/// seldom produces (a bind answered while sync is being terminated; another upload landing between
/// an upload's early rebase and its transaction). The server is given one when it is made
/// (``AtollServer``); in production it is ``NoInterleaving``, whose calls do nothing.
///
/// A collaborator rather than closures the coordinator stores: nothing a test sets can outlive
/// the server it was made for, and the coordinator holds no test-only state.
package protocol SyncInterleaving: Sendable {
    /// Inside ``SyncCoordinator/terminateSync(appID:)``, once the app's sessions ended and before
    /// its histories restart.
    func whileTerminating(appID: String) async
    /// Between an upload's early rebase (outside the store's write lock) and its transaction.
    func afterEarlyRebase(realmID: Int64) async
}

/// The production interleaving: none.
package struct NoInterleaving: SyncInterleaving {
    package init() {}
    package func whileTerminating(appID: String) async {}
    package func afterEarlyRebase(realmID: Int64) async {}
}
