/// What a synced file keeps about its place in the server's history, saved in the same write
/// transaction as the data it describes (a download, an acknowledgement, a client reset).
///
/// ``ClientSession`` starts from it and hands back the current one as ``ClientSession/savedState``.
package struct ClientSyncState: Hashable, Sendable {
    package var fileIdent: FileIdent
    /// The last server version integrated into the file.
    package var serverVersion: Int64
    package var epoch: SyncEpoch
    /// The newest local version the server acknowledged.
    package var acknowledgedClientVersion: Int64
    /// The newest local version handed to the session; later commits are read from the file.
    package var queuedClientVersion: Int64
    /// Local changesets the server has not sent back yet, rebased over every download since.
    package var pending: [Changeset]

    package init(fileIdent: FileIdent = .unassigned, serverVersion: Int64 = 0, epoch: SyncEpoch = .none,
                acknowledgedClientVersion: Int64 = 0, queuedClientVersion: Int64 = 0, pending: [Changeset] = []) {
        self.fileIdent = fileIdent
        self.serverVersion = serverVersion
        self.epoch = epoch
        self.acknowledgedClientVersion = acknowledgedClientVersion
        self.queuedClientVersion = queuedClientVersion
        self.pending = pending
    }
}
