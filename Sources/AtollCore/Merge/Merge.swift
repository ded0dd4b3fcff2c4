/// Operational transformation of concurrent changesets: the pure core of sync's merge.
///
/// Two sequences of changesets made on the same state are rewritten so that each applies after
/// the other and both orders give the same state:
/// ```swift
/// let (local2, remote2) = Merge.transform(local: unuploaded, remote: downloaded)
/// // state + remote + local2  ==  state + local + remote2
/// ```
/// The server rebases an upload over the history the client had not seen (``ServerHistory``); a
/// client rebases its unuploaded changes over each download (``ClientMerger``). The rules are
/// listed in docs/merge.md.
package enum Merge {
    /// Rewrites `local` to apply after `remote` and `remote` to apply after `local`.
    ///
    /// Within the `remote` side, the server's history wins ties between equal stamps.
    /// - Complexity: O(*l* × *r*) in the numbers of instructions on each side.
    package static func transform(local: [Changeset], remote: [Changeset]) -> (local: [Changeset], remote: [Changeset]) {
        var local = local
        var rebasedRemote: [Changeset] = []
        rebasedRemote.reserveCapacity(remote.count)
        for var r in remote {
            for i in local.indices {
                transform(&local[i], &r)
            }
            rebasedRemote.append(r)
        }
        return (local, rebasedRemote)
    }

    /// Rewrites one local and one remote changeset against each other, instruction by instruction.
    ///
    /// Two instructions that address different objects, or of which one addresses none (schema
    /// instructions), pass each other unchanged (the first rule of `MergeRules.rebase`). So when
    /// no object is addressed on both sides, both changesets stay as they are, with no pass over
    /// every pair: what a fresh device's download meets (its own schema changeset, not yet
    /// acknowledged, against every downloaded object).
    static func transform(_ local: inout Changeset, _ remote: inout Changeset) {
        guard !local.instructions.isEmpty, !remote.instructions.isEmpty else { return }
        var localObjects = Set<ObjectID>()
        for instruction in local.instructions { if let object = instruction.object { localObjects.insert(object) } }
        if localObjects.isEmpty { return }
        if !remote.instructions.contains(where: { $0.object.map(localObjects.contains) ?? false }) { return }
        transformEveryPair(&local, &remote)
    }

    /// ``transform(_:_:)`` without its shortcut: every local instruction against every remote one.
    static func transformEveryPair(_ local: inout Changeset, _ remote: inout Changeset) {
        guard !local.instructions.isEmpty, !remote.instructions.isEmpty else { return }
        let localStamp = MergeStamp(local), remoteStamp = MergeStamp(remote)
        var ys = remote.instructions
        var out: [Instruction] = []
        out.reserveCapacity(local.instructions.count)
        for x in local.instructions {
            var current: Instruction? = x
            var next: [Instruction] = []
            next.reserveCapacity(ys.count)
            for y in ys {
                guard let c = current else {
                    next.append(y)
                    continue
                }
                let xs = MergeSide(instruction: c, stamp: localStamp, isRemote: false)
                let yside = MergeSide(instruction: y, stamp: remoteStamp, isRemote: true)
                current = MergeRules.rebase(xs, over: yside)
                if let y2 = MergeRules.rebase(yside, over: xs) { next.append(y2) }
            }
            ys = next
            if let c = current { out.append(c) }
        }
        local.instructions = out
        remote.instructions = ys
    }
}
