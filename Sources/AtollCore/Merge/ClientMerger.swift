/// The client's half of the merge: tracks the local changesets the server has not yet sent back
/// and rebases them over each download.
///
/// ```swift
/// var merger = ClientMerger(fileIdent: 7)
/// merger.recordLocal(changeset)                      // after each local commit
/// let batch = merger.upload()                        // send it; re-send after a reconnect
/// let toApply = merger.receive(downloadedEntries)    // apply these to the local store, in order
/// ```
/// The client's state is always the server's history up to ``serverVersion`` followed by
/// ``pending``. When a download brings one of the client's own changesets back, it is the
/// acknowledgement: the changeset leaves `pending` and is not applied again.
package struct ClientMerger: Hashable, Sendable {
    /// The file's ident, stamped on every pending changeset (again when the server assigns it).
    package var fileIdent: Int64 {
        didSet { for i in pending.indices { pending[i].fileIdent = fileIdent } }
    }
    /// The last server version integrated locally.
    package private(set) var serverVersion: Int64
    /// Local changesets the server has not sent back yet, rebased on top of ``serverVersion``.
    package private(set) var pending: [Changeset]
    /// Flexible sync: downloads skip the entries that hold nothing of the client's view, so server
    /// versions may jump; view changes (``FlexibleSync/viewChangeFileIdent``) are applied too.
    package var isFlexible: Bool

    package init(fileIdent: Int64, serverVersion: Int64 = 0, pending: [Changeset] = [], isFlexible: Bool = false) {
        self.fileIdent = fileIdent
        self.serverVersion = serverVersion
        self.pending = pending
        self.isFlexible = isFlexible
    }

    /// Records a committed local changeset (stamped with this file's ident) as pending.
    package mutating func recordLocal(_ changeset: Changeset) {
        var changeset = changeset
        changeset.fileIdent = fileIdent
        pending.append(changeset)
    }

    /// Everything pending, on top of ``serverVersion``; `nil` when nothing is pending.
    package func upload() -> UploadBatch? {
        pending.isEmpty ? nil : UploadBatch(fileIdent: fileIdent, baseServerVersion: serverVersion, changesets: pending)
    }

    /// Integrates downloaded history entries and returns the changesets to apply locally, in order.
    ///
    /// Entries at or before ``serverVersion`` are skipped (duplicates); integration stops at a gap
    /// (an entry after `serverVersion + 1`), so ``serverVersion`` tells where to resume. A file
    /// that has integrated nothing takes a server-made snapshot (origin file 0) at any version: a
    /// compacted history starts with one (docs/protocol.md §3). In
    /// flexible sync versions may jump, and a view change (stamped with
    /// ``FlexibleSync/viewChangeFileIdent``) at or after ``serverVersion`` is applied like a
    /// remote changeset without being a history entry.
    package mutating func receive(_ entries: some Sequence<HistoryEntry>) -> [Changeset] {
        var toApply: [Changeset] = []
        for entry in entries {
            if isFlexible && entry.changeset.fileIdent == FlexibleSync.viewChangeFileIdent {
                guard entry.serverVersion >= serverVersion else { continue }
                serverVersion = entry.serverVersion
                let (rebased, remote) = Merge.transform(local: pending, remote: [entry.changeset])
                pending = rebased
                toApply.append(contentsOf: remote)
                continue
            }
            if entry.serverVersion <= serverVersion { continue }
            let startsCompactedHistory = serverVersion == 0 && entry.changeset.fileIdent == 0
            // Versions come from the network: no arithmetic on them may trap.
            guard isFlexible || entry.serverVersion == serverVersion &+ 1 && serverVersion < .max || startsCompactedHistory else { break }
            serverVersion = entry.serverVersion
            if entry.changeset.fileIdent == fileIdent {
                // Our own changeset back from the server: the acknowledgement.
                if let i = pending.firstIndex(where: { $0.version == entry.changeset.version }) {
                    pending.removeSubrange(...i)
                }
                continue
            }
            let (rebased, remote) = Merge.transform(local: pending, remote: [entry.changeset])
            pending = rebased
            toApply.append(contentsOf: remote)
        }
        return toApply
    }

    /// The pure form of ``receive(_:)``: rebases `unuploaded` over `download` (entries that follow
    /// the client's last integrated server version, own ones included).
    package static func receive(download: [HistoryEntry], unuploaded: [Changeset], fileIdent: Int64)
        -> (toApplyLocally: [Changeset], rebasedUnuploaded: [Changeset])
    {
        var merger = ClientMerger(fileIdent: fileIdent, serverVersion: max(1, download.first?.serverVersion ?? 1) - 1, pending: unuploaded)
        let toApply = merger.receive(download)
        return (toApply, merger.pending)
    }
}
