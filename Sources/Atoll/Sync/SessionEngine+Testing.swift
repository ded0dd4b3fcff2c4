import AtollCore
import Foundation

/// What tests reach of a session's engine (SPI): its state in one line, and faults to inject.
extension SyncSession {
    /// Tests only: what the session's state machine holds, in one line, for a failure message.
    @_spi(Testing)
    public func diagnosticDescription() async -> String { await engine.diagnosticDescription() }

    /// Tests only: holds the session's commands (suspend, resume, local commits…) until the
    /// returned closure is called, as a busy engine would; they then run in the order given.
    @_spi(Testing)
    public func holdCommandsForTesting() -> @Sendable () -> Void {
        let (held, release) = AsyncStream<Void>.makeStream()
        enqueue { _ in for await _ in held {} }
        return { release.finish() }
    }

    /// Tests only: runs `hook` once a client reset of that realm downloaded its fresh copy, before
    /// it changes the file (to commit writes that race the reset).
    @_spi(Testing)
    public static func whenFreshCopyDownloaded(for configuration: Realm.Configuration, _ hook: (@Sendable () -> Void)?) {
        SessionEngine.freshCopyHooks.withLock { $0[configuration.storageKey] = hook }
    }

    /// Tests only: makes the next download writes of the realm configured by `configuration` fail
    /// with `fault`'s error (nil removes it), as a full disk or an I/O error would.
    @_spi(Testing)
    public static func injectDownloadWriteFault(for configuration: Realm.Configuration, _ fault: (@Sendable () throws -> Void)?) {
        SessionEngine.downloadWriteFaults.withLock { $0[configuration.storageKey] = fault }
    }
}

extension SessionEngine {
    /// What the state machine holds, in one line (tests print it when a wait times out).
    func diagnosticDescription() async -> String {
        guard let session else { return "no session (stopped: \(isStopped.load(ordering: .acquiring)))" }
        let connection = await connection.statusDescription
        return "\(session.state), connection \(connection), file \(session.checkpoint.fileIdent.ident) at server version "
            + "\(session.checkpoint.serverVersion) (merger \(session.merger.serverVersion)), acknowledged "
            + "\(session.acknowledgedClientVersion), queued \(session.queuedClientVersion), uploaded on this bind "
            + "\(session.uploadedOnBind), pending \(session.merger.pending.map(\.version))"
    }
}

extension App {
    /// Tests only: whether the app's sync connection is open, and how many attempts to open it
    /// were made since the app was made.
    @_spi(Testing)
    public func syncConnectionForTesting() async -> (isOpen: Bool, attempts: UInt64) {
        let (status, attempts) = await core.syncClient.connection.statusForTesting
        return (status == .open, attempts)
    }
}
