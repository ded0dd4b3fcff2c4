extension ClientSession {
    /// Integrates a download batch (from an ``Action/integrate(_:)``): records `raced`, the local
    /// changesets the shell's write transaction found committed but not yet handed over, rebases
    /// the pending changesets over the batch and returns the changesets to apply to the file.
    ///
    /// Call it inside the write transaction that applies them, on a copy of the session: the
    /// shell keeps the copy (and saves its ``savedState`` in that transaction) only when the
    /// transaction commits, then calls ``downloadApplied()``; otherwise ``downloadNotApplied()``.
    /// Memory never runs ahead of the file.
    package mutating func integrate(_ batch: DownloadBatch, raced: [Changeset]) -> [Changeset] {
        for changeset in raced where changeset.version > queuedClientVersion { record(changeset) }
        let entries = batch.changesets.map { download -> HistoryEntry in
            var changeset = download.changeset
            changeset.fileIdent = download.originFileIdent
            changeset.timestamp = download.originTimestamp
            return HistoryEntry(serverVersion: download.serverVersion, changeset: changeset)
        }
        let own = checkpoint.fileIdent.ident
        echoedClientVersion = max(echoedClientVersion,
                                  batch.changesets.lazy.filter { $0.originFileIdent == own }.map(\.changeset.version).max() ?? 0)
        let before = merger.pending
        let toApply = merger.receive(entries)
        // Saved again only when it changed (raced commits bumped it already).
        if merger.pending != before { pendingGeneration &+= 1 }
        checkpoint.serverVersion = max(merger.serverVersion, batch.checkpoint.serverVersion)
        checkpoint.epoch = batch.checkpoint.epoch
        checkpoint.querySetVersion = max(checkpoint.querySetVersion, batch.checkpoint.querySetVersion)
        settleUploadedBytes()
        return toApply
    }

    /// The download's transaction committed: upload what waited for it (an echo, or commits the
    /// transaction found) and complete the upload waits its echoes settled.
    package mutating func downloadApplied() -> [Action] {
        acknowledge(upTo: echoedClientVersion) + [.reportProgress(uploadProgress)] + completeUploadWaits() + uploadsAndQuerySet()
    }
}
