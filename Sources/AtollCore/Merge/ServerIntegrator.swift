/// One changeset in the server's history: the server version it produced, and the changeset as
/// integrated (rebased), still stamped with its author's file ident, client version and timestamp.
public struct HistoryEntry: Hashable, Sendable {
    public var serverVersion: Int64
    public var changeset: Changeset

    public init(serverVersion: Int64, changeset: Changeset) {
        self.serverVersion = serverVersion
        self.changeset = changeset
    }
}

/// Changesets a client uploads together.
///
/// The batch carries every changeset of the client that was not yet in the server history the
/// client had integrated (`baseServerVersion`), in client-version order, each expressed on top of
/// that history and of the batch's changesets before it — exactly the client's
/// ``ClientMerger/pending`` list. Re-sending a batch (after a lost acknowledgement) is safe.
public struct UploadBatch: Hashable, Sendable {
    public var fileIdent: Int64
    public var baseServerVersion: Int64
    public var changesets: [Changeset]

    public init(fileIdent: Int64, baseServerVersion: Int64, changesets: [Changeset]) {
        self.fileIdent = fileIdent
        self.baseServerVersion = baseServerVersion
        self.changesets = changesets
    }
}

/// The server's half of the merge: rebases an upload over the history its client had not seen.
public enum ServerIntegrator {
    /// The changesets to append to the history for `upload`, rebased and in order (empty when the
    /// upload holds nothing new: a duplicate is applied once).
    ///
    /// ```swift
    /// let new = try ServerIntegrator.integrate(batch, over: history.entries(after: batch.baseServerVersion),
    ///                                          lastIntegratedClientVersion: history.lastClientVersion(of: batch.fileIdent))
    /// ```
    /// - Parameters:
    ///   - history: every entry after `upload.baseServerVersion`, in server-version order.
    ///   - lastIntegratedClientVersion: the newest client version of `upload.fileIdent` the history
    ///     holds (0 for none).
    /// - Complexity: O(*u* × *h*) in the instructions of the upload and of `history`.
    public static func integrate(
        _ upload: UploadBatch, over history: some Collection<HistoryEntry>, lastIntegratedClientVersion: Int64
    ) throws(MergeError) -> [Changeset] {
        let versions = upload.changesets.map(\.version)
        guard zip(versions, versions.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw MergeError(.nonIncreasingClientVersions, "client versions \(versions) of file \(upload.fileIdent) do not increase")
        }
        // Nothing new: a re-sent upload whose changesets are all integrated already.
        guard let newest = versions.last, newest > lastIntegratedClientVersion else { return [] }
        let ownAfterBase = Set(history.lazy.filter { $0.changeset.fileIdent == upload.fileIdent }.map(\.changeset.version))
        var remaining = upload.changesets.filter { $0.version > lastIntegratedClientVersion || ownAfterBase.contains($0.version) }
        for entry in history {
            if entry.changeset.fileIdent == upload.fileIdent {
                // The client's own changeset, integrated after the upload's base: the upload carries
                // it, rebased exactly as the server rebased it; the rest of the upload sits on top.
                guard remaining.first?.version == entry.changeset.version else {
                    throw MergeError(.missingOwnChangeset,
                        "file \(upload.fileIdent) uploaded on top of server version \(upload.baseServerVersion) without its client version \(entry.changeset.version), integrated at \(entry.serverVersion)")
                }
                remaining.removeFirst()
            } else {
                remaining = Merge.transform(local: remaining, remote: [entry.changeset]).local
            }
        }
        return remaining
    }
}

/// An in-memory server history: the append-only list of integrated changesets, for tests and
/// for servers that keep history in memory. Server versions start at 1.
public struct ServerHistory: Sendable {
    public private(set) var entries: [HistoryEntry] = []
    private var lastClientVersions: [Int64: Int64] = [:]

    public init() {}

    /// The newest server version (0 while the history is empty).
    public var version: Int64 { Int64(entries.count) }

    /// The newest client version of `fileIdent` integrated (0 for none).
    public func lastClientVersion(of fileIdent: Int64) -> Int64 { lastClientVersions[fileIdent] ?? 0 }

    /// Entries after `version`, in order.
    public func entries(after version: Int64) -> ArraySlice<HistoryEntry> {
        entries[Int(max(0, min(version, self.version)))...]
    }

    /// Integrates an upload and returns the entries it appended (none for a duplicate).
    @discardableResult
    public mutating func integrate(_ upload: UploadBatch) throws(MergeError) -> [HistoryEntry] {
        guard upload.baseServerVersion >= 0, upload.baseServerVersion <= version else {
            throw MergeError(.badBaseVersion, "base server version \(upload.baseServerVersion) is outside 0...\(version)")
        }
        let new = try ServerIntegrator.integrate(upload, over: entries(after: upload.baseServerVersion),
                                                 lastIntegratedClientVersion: lastClientVersion(of: upload.fileIdent))
        var appended: [HistoryEntry] = []
        for var changeset in new {
            changeset.fileIdent = upload.fileIdent
            let entry = HistoryEntry(serverVersion: version + 1, changeset: changeset)
            entries.append(entry)
            appended.append(entry)
            lastClientVersions[upload.fileIdent] = changeset.version
        }
        return appended
    }
}
