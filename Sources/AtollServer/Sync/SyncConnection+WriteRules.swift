import AtollCore

/// Who may write what (R-ERR-4): the app's write rules, and in flexible sync the session's
/// subscriptions. What an upload may not do is reverted with a compensating write
/// (``SyncCoordinator/integrate(_:into:check:)``, docs/protocol.md §2.7).
extension SyncConnection {
    /// The check for uploads of `session`, or nil when it may write anything. The rules are those
    /// of the roles that apply to the session's user (``ServerConfiguration/App/rules(for:)``):
    /// the write rule holds for the object before and after the change, creating needs `insert`,
    /// deleting `delete`, and a field the rule's field permissions do not let the user write
    /// keeps its value (on a creation: its initial value).
    func writeRule(for session: Session) -> WriteRule? {
        let user = session.ruleUser
        let userID = session.userID
        let path = session.realm.path
        guard let flexible = session.flexible else {
            guard let partition = PartitionValue(path: path), let rule = session.rules.first(where: { $0.type == nil }) else { return nil }
            guard Permissions.canWrite(partition, user: user, rules: session.rules) else {
                let reason = "user \(userID) may not write partition \(path) of app \"\(appID)\" (\(rule.label)'s write rule says no)"
                return { _, _, _, _ in reason }
            }
            guard !rule.insert || !rule.delete || rule.fields != nil else { return nil }
            return { id, before, after, state in
                if let refusal = Self.creationOrDeletionRefusal(id, before: before, after: after, rule: rule, userID: userID) { return refusal }
                return Self.fieldRefusal(id, before: before, after: after, state: state, rule: rule, userID: userID)
            }
        }
        let querySet = flexible.querySet
        // A client sends its pending uploads before its query set when it binds (they may declare
        // the types the set names): until the set arrived, only the write rules can be checked.
        let checksView = flexible.hasQueryChange
        let ruleCheck = Self.flexibleWriteRule(session.rules, user: user)
        guard checksView || ruleCheck != nil else { return nil }
        return { id, before, after, state in
            // In the view as it was (or, for a new object, as created): else it is not the
            // session's to write. Types the set names before the schema has them can't be checked.
            // Asymmetric objects are never in a view: their types cannot be subscribed to.
            if checksView, state.schema[id.type]?.isAsymmetric != true, querySet?.unknownTypes.contains(id.type) != true,
               let fields = before ?? after,
               querySet?.contains(id, fields: fields, in: state) != true {
                return "\(id.type) \(id.primaryKey) is outside the session's subscriptions (no subscription of the session matches it)"
            }
            return ruleCheck?(id, before, after, state)
        }
    }

    /// The app's write rules in flexible sync for a user (`rules`: the roles that apply to the
    /// user), or nil when they let it write anything: the write rule holds for the object before
    /// and after the change, creating needs `insert`, deleting `delete`, and a field the rule's
    /// field permissions do not let the user write keeps its value (on a creation: its initial
    /// value). Sync uploads and remote data access writes are checked by the same function.
    static func flexibleWriteRule(_ rules: [ServerConfiguration.PermissionRule], user: RuleUser) -> WriteRule? {
        guard rules.contains(where: { $0.write != "true" || !$0.insert || !$0.delete || $0.fields != nil }) else { return nil }
        let userID = user.id
        // "" for the rule of every type without its own; one rule per type applies to the user.
        let rules = Dictionary(rules.map { ($0.type ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        // Each type's rule is bound once per upload (binding builds a schema); nil: it fits no one.
        let bound = Locked<[String: BoundQuery?]>([:])
        return { id, before, after, state in
            guard let rule = rules[id.type] ?? rules[""], state.schema[id.type] != nil else { return nil }
            if let refusal = Self.creationOrDeletionRefusal(id, before: before, after: after, rule: rule, userID: userID) { return refusal }
            let query = bound.withLock { cache in
                if let known = cache[id.type] { return known }
                let made = FlexibleSync.Rules.bindWrite(rule.write, user: user, type: id.type, in: state)
                cache[id.type] = made
                return made
            }
            for fields in [before, after].compactMap({ $0 }) where query?.evaluate(on: fields, in: state) != true {
                return "user \(userID) may not write \(id.type) \(id.primaryKey) (\(rule.label)'s write rule \"\(rule.write)\" says no)"
            }
            return Self.fieldRefusal(id, before: before, after: after, state: state, rule: rule, userID: userID)
        }
    }

    /// Why the change writes a field `rule`'s field permissions do not let the user write (a
    /// field it may not write keeps its value; on a creation, its initial value), or nil.
    static func fieldRefusal(
        _ id: ObjectID, before: [String: Value]?, after: [String: Value]?, state: ReplicaState,
        rule: ServerConfiguration.PermissionRule, userID: String
    ) -> String? {
        guard let access = rule.fields, let after, let schema = state.schema[id.type] else { return nil }
        for property in schema.properties where !property.isPrimaryKey && !access.mayWrite(property.name)
            && (before?[property.name] ?? state.defaultValue(property)) != (after[property.name] ?? state.defaultValue(property)) {
            return "user \(userID) may not write field \(property.name) of \(id.type) \(id.primaryKey) (\(rule.label)'s field permissions say no)"
        }
        return nil
    }

    /// Why creating or deleting the object is refused by `rule`'s `insert` and `delete`, or nil.
    static func creationOrDeletionRefusal(
        _ id: ObjectID, before: [String: Value]?, after: [String: Value]?, rule: ServerConfiguration.PermissionRule, userID: String
    ) -> String? {
        if before == nil, after != nil, !rule.insert {
            return "user \(userID) may not create \(id.type) \(id.primaryKey) (\(rule.label) may not insert)"
        }
        if before != nil, after == nil, !rule.delete {
            return "user \(userID) may not delete \(id.type) \(id.primaryKey) (\(rule.label) may not delete)"
        }
        return nil
    }

    /// Tells the client which objects the server reverted (SDK error `writeRejected`). In flexible
    /// sync the compensating write reaches the session for the reverted objects it may read (they
    /// join what it holds; those outside its subscriptions leave again at the next catch-up) and
    /// for those the server does not have (it erases the client's copy); an object the user may
    /// not read is simply not there for it: nothing of it is sent.
    func reportCompensatingWrite(_ rejected: [CompensatingWrite], session id: SessionID) async throws {
        guard !rejected.isEmpty, let session = sessions[id] else { return }
        if session.flexible?.held != nil {
            let state: ReplicaState
            do { state = try await coordinator.snapshot(of: session.realm).state } catch { try await storeFailed(error) }
            let mayRead = rules(for: session).readAccess(in: state)
            let visible = rejected.map { ObjectID(type: $0.objectType, primaryKey: $0.primaryKey) }
                .filter { state.object($0) == nil || mayRead($0) }
            sessions[id]?.flexible?.held?.formUnion(visible)
        }
        let list = rejected.prefix(5).map { "\($0.objectType) \($0.primaryKey): \($0.reason)" }.joined(separator: "; ")
        let more = rejected.count > 5 ? " and \(rejected.count - 5) more" : ""
        logger.info("compensating write", metadata: ["realm": "\(session.realm.path)", "objects": "\(rejected.count)"])
        try await send(.error(ErrorMessage(
            code: .compensatingWrite, message: "the server reverted writes to \(rejected.count) object(s): \(list)\(more)",
            session: id, epoch: session.realm.epoch, compensatingWrites: rejected)))
    }
}
