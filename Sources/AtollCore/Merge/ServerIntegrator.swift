import Foundation

/// One changeset in the server's history: the server version it produced, and the changeset as
/// integrated (rebased), still stamped with its author's file ident, client version and timestamp.
package struct HistoryEntry: Hashable, Sendable {
    package var serverVersion: Int64
    /// Changing it (as a read rule's hiding of fields does) forgets ``encodedChangeset``.
    package var changeset: Changeset {
        didSet { encodedChangeset = nil }
    }
    /// The bytes `changeset` was decoded from or encoded to, when known: a realm's new entry is
    /// encoded once (by the store that writes it) and its bytes are shared by every session that
    /// downloads it unchanged. Never stale: any change of `changeset` drops them. Not part of equality.
    package private(set) var encodedChangeset: Data?

    package init(serverVersion: Int64, changeset: Changeset, encodedChangeset: Data? = nil) {
        self.serverVersion = serverVersion
        self.changeset = changeset
        self.encodedChangeset = encodedChangeset
    }

    /// The changeset's encoding: the known bytes, or encoded now.
    package var encoded: Data { encodedChangeset ?? changeset.encoded() }

    /// Encodes the changeset now, unless its bytes are known; returns them.
    @discardableResult
    package mutating func encodeOnce() -> Data {
        if let encodedChangeset { return encodedChangeset }
        let bytes = changeset.encoded()
        encodedChangeset = bytes
        return bytes
    }

    package static func == (a: Self, b: Self) -> Bool { a.serverVersion == b.serverVersion && a.changeset == b.changeset }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(serverVersion)
        hasher.combine(changeset)
    }
}

/// Changesets a client uploads together.
///
/// The batch carries every changeset of the client that was not yet in the server history the
/// client had integrated (`baseServerVersion`), in client-version order, each expressed on top of
/// that history and of the batch's changesets before it — exactly the client's
/// ``ClientMerger/pending`` list. Re-sending a batch (after a lost acknowledgement) is safe.
package struct UploadBatch: Hashable, Sendable {
    package var fileIdent: Int64
    package var baseServerVersion: Int64
    package var changesets: [Changeset]
    /// A client version of the file the history holds at or before ``baseServerVersion`` (the
    /// server's record of what the client integrated, e.g. at its ident): an uploaded changeset at
    /// or below it is a re-sent duplicate; one above it and at or below the file's newest
    /// integrated version must be among the file's entries after the base, or the client's copy
    /// went back in time. `nil`: not known (only commit times are compared).
    package var settledClientVersion: Int64?

    package init(fileIdent: Int64, baseServerVersion: Int64, changesets: [Changeset], settledClientVersion: Int64? = nil) {
        self.fileIdent = fileIdent
        self.baseServerVersion = baseServerVersion
        self.changesets = changesets
        self.settledClientVersion = settledClientVersion
    }
}

/// The server's half of the merge: rebases an upload over the history its client had not seen.
package enum ServerIntegrator {
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
    package static func integrate(
        _ upload: UploadBatch, over history: some Collection<HistoryEntry>, lastIntegratedClientVersion: Int64
    ) throws(MergeError) -> [Changeset] {
        let versions = upload.changesets.map(\.version)
        guard zip(versions, versions.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw MergeError(.nonIncreasingClientVersions, "client versions \(versions) of file \(upload.fileIdent) do not increase")
        }
        let ownAfterBase = Dictionary(
            history.lazy.filter { $0.changeset.fileIdent == upload.fileIdent }.map { ($0.changeset.version, $0.changeset.timestamp) },
            uniquingKeysWith: { first, _ in first })
        try checkSameHistory(upload, ownAfterBase: ownAfterBase, lastIntegratedClientVersion: lastIntegratedClientVersion)
        // Nothing new: a re-sent upload whose changesets are all integrated already.
        guard let newest = versions.last, newest > lastIntegratedClientVersion else { return [] }
        var remaining = upload.changesets.filter { $0.version > lastIntegratedClientVersion || ownAfterBase[$0.version] != nil }
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

    /// Throws ``MergeError/Code/clientHistoryDiverged`` when a changeset the upload carries at or
    /// below the file's newest integrated client version is not the one the server integrated
    /// under that version: a re-sent changeset keeps its commit time (rebasing changes only its
    /// instructions), a new commit that reuses the version has another; a version above
    /// ``UploadBatch/settledClientVersion`` that is not among the file's entries after the base
    /// was never integrated at all. Either way the client's copy went back in time.
    static func checkSameHistory(
        _ upload: UploadBatch, ownAfterBase: [Int64: Int64], lastIntegratedClientVersion: Int64
    ) throws(MergeError) {
        for changeset in upload.changesets where changeset.version <= lastIntegratedClientVersion {
            if let timestamp = ownAfterBase[changeset.version] {
                guard timestamp != changeset.timestamp else { continue }
                throw MergeError(.clientHistoryDiverged, """
                    file \(upload.fileIdent) uploaded client version \(changeset.version) committed at \(changeset.timestamp); \
                    the server integrated that version committed at \(timestamp): the client's copy went back in time
                    """)
            }
            if let settled = upload.settledClientVersion, changeset.version > settled {
                throw MergeError(.clientHistoryDiverged, """
                    file \(upload.fileIdent) uploaded client version \(changeset.version), which the server never integrated \
                    although it holds the file's versions up to \(lastIntegratedClientVersion): the client's copy went back in time
                    """)
            }
        }
    }
}

/// An in-memory server history: the append-only list of integrated changesets, for tests and
/// for servers that keep history in memory. Server versions start at 1.
package struct ServerHistory: Sendable {
    package private(set) var entries: [HistoryEntry] = []
    private var lastClientVersions: [Int64: Int64] = [:]

    package init() {}

    /// The newest server version (0 while the history is empty).
    package var version: Int64 { Int64(entries.count) }

    /// The newest client version of `fileIdent` integrated (0 for none).
    package func lastClientVersion(of fileIdent: Int64) -> Int64 { lastClientVersions[fileIdent] ?? 0 }

    /// Entries after `version`, in order.
    package func entries(after version: Int64) -> ArraySlice<HistoryEntry> {
        entries[Int(max(0, min(version, self.version)))...]
    }

    /// Integrates an upload and returns the entries it appended (none for a duplicate).
    @discardableResult
    package mutating func integrate(_ upload: UploadBatch) throws(MergeError) -> [HistoryEntry] {
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
