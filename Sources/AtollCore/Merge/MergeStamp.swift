/// Where and when a changeset was made: the total order that decides last-writer-wins conflicts.
///
/// Stamps compare by timestamp, then by file ident. Two changesets of one file are never
/// concurrent, so two concurrent changesets from different files always compare unequal; when
/// they do not (two files both still at ident 0), the side already in the server's history wins.
///
/// ```swift
/// MergeStamp(timestamp: 10, fileIdent: 2) > MergeStamp(timestamp: 10, fileIdent: 1)   // true
/// ```
package struct MergeStamp: Hashable, Sendable, Comparable {
    package var timestamp: Int64
    package var fileIdent: Int64

    package init(timestamp: Int64, fileIdent: Int64) {
        self.timestamp = timestamp
        self.fileIdent = fileIdent
    }

    package init(_ changeset: Changeset) {
        self.init(timestamp: changeset.timestamp, fileIdent: changeset.fileIdent)
    }

    package static func < (a: MergeStamp, b: MergeStamp) -> Bool {
        (a.timestamp, a.fileIdent) < (b.timestamp, b.fileIdent)
    }
}

/// One side of a pairwise transformation: an instruction, its changeset's stamp, and whether it
/// comes from the server's history (`remote`) or from the changes being rebased (`local`).
struct MergeSide {
    var instruction: Instruction
    var stamp: MergeStamp
    var isRemote: Bool

    /// Whether this side wins a last-writer-wins conflict against `other`.
    func beats(_ other: MergeSide) -> Bool {
        if stamp != other.stamp { return stamp > other.stamp }
        return isRemote && !other.isRemote
    }
}
