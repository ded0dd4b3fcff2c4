extension ClientSession {
    /// Where a session is in its life. See docs/protocol.md §2.6 for the transitions.
    package enum State: Hashable, Sendable {
        /// Not started, or suspended.
        case inactive
        /// Wants a connection: one is being opened, or a reconnect timer is running.
        case waitingForConnection
        /// Bind and ident are sent; waiting for the server's ident answer.
        case binding
        /// Identified: uploads, downloads and marks flow.
        case active
        /// The server ended the session over its access token; waiting for ``ClientSession/accessTokenRefreshed(_:)``.
        case waitingForAccessToken
        /// The server cannot sync with the local copy; waiting for ``ClientSession/resetCompleted(_:)``.
        case waitingForReset(ResetRequest)
        /// Unbind is sent; waiting for the server's unbound answer.
        case dying
        /// Stopped by a fatal error until restarted.
        case failed(SessionError)
    }

    /// What the client persists about its place in the server's history.
    package struct Checkpoint: Hashable, Sendable {
        package var fileIdent: FileIdent
        /// The last server version integrated locally.
        package var serverVersion: Int64
        package var epoch: SyncEpoch
        /// Flexible sync: the query set version the local data reflects.
        package var querySetVersion: Int64

        package init(fileIdent: FileIdent = .unassigned, serverVersion: Int64 = 0, epoch: SyncEpoch = .none, querySetVersion: Int64 = 0) {
            self.fileIdent = fileIdent
            self.serverVersion = serverVersion
            self.epoch = epoch
            self.querySetVersion = querySetVersion
        }

        /// A copy that has never synced.
        package static let fresh = Checkpoint()
    }

    /// Server changesets to apply to the store in one write transaction, with the checkpoint to
    /// save in the same transaction.
    package struct DownloadBatch: Hashable, Sendable {
        package var changesets: [DownloadChangeset]
        package var checkpoint: Checkpoint
        package var progress: DownloadProgress
        /// Flexible sync: the query set whose bootstrap this batch completes, if any.
        package var completedQuerySetVersion: Int64?
        package init(changesets: [DownloadChangeset], checkpoint: Checkpoint, progress: DownloadProgress, completedQuerySetVersion: Int64? = nil) {
            self.changesets = changesets
            self.checkpoint = checkpoint
            self.progress = progress
            self.completedQuerySetVersion = completedQuerySetVersion
        }
    }

    /// The client must run a client reset (docs/client-reset.md) and then call ``ClientSession/resetCompleted(_:)``.
    package struct ResetRequest: Hashable, Sendable {
        package var reason: ResetReason
        package var message: String
        /// Whether the server accepts recovered changes.
        package var recoveryAllowed: Bool
        /// The server's epoch: the fresh copy belongs to it.
        package var serverEpoch: SyncEpoch
        package init(reason: ResetReason, message: String, recoveryAllowed: Bool, serverEpoch: SyncEpoch) {
            self.reason = reason
            self.message = message
            self.recoveryAllowed = recoveryAllowed
            self.serverEpoch = serverEpoch
        }
    }

    package enum Direction: Hashable, Sendable { case upload, download }

    /// A pending `wait(for:)`; completed or failed by an action.
    package struct WaitID: Hashable, Sendable {
        package var rawValue: UInt64
    }

    package enum Timer: Hashable, Sendable {
        /// Time to try connecting again.
        case reconnect
        /// Time to ask for an access token again after a failed refresh.
        case accessTokenRetry
    }

    /// A client reset applied to the file, not yet confirmed by the server. Until it is, a
    /// second reset of the same kind would loop (`resetPlan` hands it to the manual handler).
    package struct UnconfirmedReset: Hashable, Sendable {
        /// The local version holding the recovered changes: the server acknowledging it confirms
        /// the reset. nil when nothing was recovered: the server identifying the session with
        /// its new identity confirms it.
        package var recoveredVersion: Int64?
        package init(recoveredVersion: Int64?) {
            self.recoveredVersion = recoveredVersion
        }
    }

    /// What the session reports to the app: whether it syncs, and how its connection stands.
    package struct Status: Hashable, Sendable {
        package enum Connection: Hashable, Sendable { case disconnected, connecting, connected }
        package var isActive: Bool
        package var connection: Connection
        package init(isActive: Bool, connection: Connection) {
            self.isActive = isActive
            self.connection = connection
        }
    }

    /// Byte counts for progress notifications: `transferred` of `transferrable` so far.
    package struct TransferProgress: Hashable, Sendable {
        package var direction: Direction
        package var transferredBytes: UInt64
        package var transferrableBytes: UInt64
        package init(direction: Direction, transferredBytes: UInt64, transferrableBytes: UInt64) {
            self.direction = direction
            self.transferredBytes = transferredBytes
            self.transferrableBytes = transferrableBytes
        }
    }

    /// What the shell must do, in order.
    package enum Action: Hashable, Sendable {
        /// Open the connection (or tell the session ``ClientSession/connectionOpened()`` if it is open).
        case requestConnection
        case send(ClientMessage)
        /// Call ``ClientSession/timerFired(_:generation:)`` after the delay; a newer schedule of the
        /// same timer replaces it.
        case scheduleTimer(Timer, generation: UInt64, afterMilliseconds: Int64)
        case cancelTimer(Timer)
        /// Save the identity the server assigned or confirmed.
        case persistIdentity(FileIdent, SyncEpoch)
        /// Apply server changesets and save the session's state, in one transaction: see
        /// ``ClientSession/integrate(_:raced:)``.
        case integrate(DownloadBatch)
        /// Every local changeset up to this client version is integrated by the server; history
        /// before it may be trimmed.
        case uploadAcknowledged(clientVersion: Int64)
        /// The server confirmed the client reset applied to the file (``ClientSession/unconfirmedReset``
        /// is now nil): forget it in the file.
        case resetConfirmed
        case reportProgress(TransferProgress)
        case reportError(SessionError)
        /// Run a client reset.
        case requestClientReset(ResetRequest)
        /// Get a new access token over HTTP and call ``ClientSession/accessTokenRefreshed(_:)``.
        case refreshAccessToken
        /// The server refused a query set (the subscription set's state becomes error).
        case querySetRejected(version: Int64, message: String)
        case completeWait(WaitID)
        case failWait(WaitID, SessionError)
    }

    package struct Configuration: Hashable, Sendable {
        package var backoff: ReconnectBackoff
        package init(backoff: ReconnectBackoff = ReconnectBackoff(seed: 0)) {
            self.backoff = backoff
        }
    }
}
