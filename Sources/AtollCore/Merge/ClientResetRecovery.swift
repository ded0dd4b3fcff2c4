/// Recovering unsynced local changes onto a fresh copy in a client reset (SPEC R-RESET-3).
///
/// The changes are replayed in order onto the fresh state; each instruction is kept when it still
/// means something there, so that what is recorded (and uploaded) is exactly what was applied:
/// - objects created locally and never synced are created again, with their fields;
/// - a change to an object the server deleted is dropped (the server's delete wins);
/// - a local delete of an object the server still has is kept;
/// - a local update of a field wins over the server's value (it is applied after the copy);
/// - a list insert past the end of the server's list is kept, at the end; list erases, moves and
///   element sets whose position no longer exists are dropped.
///
/// ```swift
/// let recovered = ClientResetRecovery.recover(unsynced, onto: fresh)
/// ```
package enum ClientResetRecovery {
    package static func recover(_ changesets: [Changeset], onto fresh: ReplicaState) -> [Instruction] {
        recovery(of: changesets, onto: fresh).kept
    }

    /// What recovery keeps (adjusted as applied) and what it drops, each in the order made.
    package struct Outcome: Hashable, Sendable {
        package var kept: [Instruction] = []
        /// The local changes that no longer apply to the fresh copy, as they were made.
        package var dropped: [Instruction] = []
    }

    /// Replays `changesets` onto `fresh` by the recovery rules, keeping account of what was dropped.
    package static func recovery(of changesets: [Changeset], onto fresh: ReplicaState) -> Outcome {
        var state = fresh
        var outcome = Outcome()
        for instruction in changesets.flatMap(\.instructions) {
            guard let kept = adjusted(instruction, in: state) else {
                outcome.dropped.append(instruction)
                continue
            }
            state.apply(kept)
            outcome.kept.append(kept)
        }
        return outcome
    }

    /// The instruction as it applies to `state`, or nil when it no longer does.
    static func adjusted(_ instruction: Instruction, in state: ReplicaState) -> Instruction? {
        switch instruction {
        case .addTable, .addColumn:
            return instruction
        case .createObject(let id):
            return state.object(id) == nil ? instruction : nil
        case .eraseObject(let id):
            return state.object(id) == nil ? nil : instruction
        case .listInsert(let id, let path, let index, let value):
            guard case .list(let items)? = state.value(id, path) else { return nil }
            return .listInsert(id, path: path, index: min(max(0, index), items.count), value: value)
        case .listErase(_, let path, let index), .listMove(_, let path, let index, _):
            guard let id = instruction.object, case .list(let items)? = state.value(id, path), items.indices.contains(index) else { return nil }
            if case .listMove(_, _, _, let to) = instruction, !items.indices.contains(to) { return nil }
            return instruction
        case .set(let id, let path, _), .addInteger(let id, let path, _), .clear(let id, let path),
             .setInsert(let id, let path, _), .setErase(let id, let path, _), .mapErase(let id, let path, _):
            // The object (and, inside it, the container addressed) must still be there.
            guard state.object(id) != nil else { return nil }
            if case .set = instruction, let last = path.last {
                switch last {
                case .property: return state.value(id, Array(path.dropLast())) == nil ? nil : instruction
                case .index(let i):
                    guard case .list(let items)? = state.value(id, Array(path.dropLast())), items.indices.contains(i) else { return nil }
                    return instruction
                case .key:
                    return state.value(id, Array(path.dropLast())) == nil ? nil : instruction
                }
            }
            return state.value(id, path) == nil ? nil : instruction
        }
    }
}
