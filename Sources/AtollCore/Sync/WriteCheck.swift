/// The server's check of what a client may write (R-ERR-4, docs/merge.md): an upload's changes to
/// objects the user may not write (by the app's write rules), or, in flexible sync, to objects
/// outside the session's subscriptions, are not integrated. The changesets keep their other
/// instructions (and their client versions, so they still acknowledge the upload), and a
/// *compensating write* — server-authored instructions that put the refused objects back as the
/// server has them — brings the client (and only it has anything to undo) back in line.
///
/// ```swift
/// let outcome = WriteCheck.check(rebased, over: state) { id, before, after, state in
///     after.map { rule.evaluate(on: $0, resolver: ...) } == false ? "owner is not you" : nil
/// }
/// // append outcome.allowed, then outcome.compensation as a changeset of its own
/// ```
package enum WriteCheck {
    /// The file ident of the server's own changesets in a history (compensating writes); client
    /// files start at 1.
    package static let serverFileIdent: Int64 = 0

    /// Why the change of object `id` is refused, or nil when it is allowed. `before` and `after`
    /// are the object's fields (defaults filled in) before and after the changeset; nil when the
    /// object does not exist then. `state` resolves links.
    package typealias Rule = (_ id: ObjectID, _ before: [String: Value]?, _ after: [String: Value]?, _ state: ReplicaState) -> String?

    package struct Outcome: Hashable, Sendable {
        /// The changesets without the refused objects' instructions, in order (possibly empty).
        package var allowed: [Changeset] = []
        /// The refused objects, first refusal first, each once.
        package var rejected: [CompensatingWrite] = []
        /// What makes the uploading client's copy of the refused objects equal to the server's.
        package var compensation: [Instruction] = []
    }

    /// Splits `changesets` (rebased onto `state`, in order) into what `rule` allows and what it
    /// refuses, and computes the compensating write for the refused objects.
    ///
    /// - Complexity: O(*i* + *t*) in the instructions and the objects they touch; `state` is only read.
    package static func check(_ changesets: [Changeset], over state: ReplicaState, rule: Rule) -> Outcome {
        let touched = Set(changesets.flatMap { $0.instructions.compactMap(\.object) })
        guard !touched.isEmpty else { return Outcome(allowed: changesets) }
        // The server's and the client's copy of just the objects concerned.
        var server = state.restricted(to: touched)
        var client = server
        var outcome = Outcome()
        // The rule reads the schema too: types the upload declares are in it (an upload that
        // declares a type and creates its first objects). Copied only when there are such types.
        let declared = changesets.flatMap(\.instructions).filter { instruction in
            if case .addTable(let table) = instruction { return state.schema[table.name] == nil }
            return false
        }
        var ruleState = state
        if !declared.isEmpty { ruleState.apply(Changeset(version: 0, timestamp: 0, instructions: declared)) }
        var refusedIDs = Set<ObjectID>()
        for changeset in changesets {
            var after = server
            after.apply(changeset)
            var refused: [ObjectID: String] = [:]
            for id in Set(changeset.instructions.compactMap(\.object)).sorted(by: ObjectID.canonicalOrder) {
                if let reason = rule(id, server.filledObject(id), after.filledObject(id), ruleState) { refused[id] = reason }
            }
            var allowed = changeset
            if !refused.isEmpty {
                allowed.instructions = changeset.instructions.filter { instruction in instruction.object.map { refused[$0] == nil } ?? true }
                for id in refused.keys.sorted(by: ObjectID.canonicalOrder) where refusedIDs.insert(id).inserted {
                    outcome.rejected.append(CompensatingWrite(objectType: id.type, primaryKey: id.primaryKey, reason: refused[id]!))
                }
            }
            server.apply(allowed)
            client.apply(changeset)
            outcome.allowed.append(allowed)
        }
        if !refusedIDs.isEmpty {
            outcome.compensation = client.restricted(to: refusedIDs).instructions(becoming: server.restricted(to: refusedIDs))
                .filter { $0.object != nil }
        }
        return outcome
    }
}

extension ReplicaState {
    /// The schema with only the objects `ids` (those that exist).
    package func restricted(to ids: Set<ObjectID>) -> ReplicaState {
        var out = ReplicaState()
        out.schema = schema
        for id in ids {
            if let fields = object(id) { out.objects[id.type, default: [:]][id.primaryKey] = fields }
        }
        return out
    }

    /// An object's fields with every property's default filled in, or nil when it does not exist.
    package func filledObject(_ id: ObjectID) -> [String: Value]? {
        guard let fields = object(id) else { return nil }
        guard let type = schema[id.type] else { return fields }
        return ReplicaResolver(state: self).filled(fields, type)
    }
}
