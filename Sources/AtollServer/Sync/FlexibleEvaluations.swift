import AtollCore

/// The matches of flexible-sync query sets in a realm's state, evaluated once per distinct set
/// (its queries and the rules as they decide visibility) and server version, and shared by every
/// session that has that set: a write costs one evaluation per distinct set, not one per session.
///
/// Sessions asking at the same time wait for the one evaluation under way. Only the newest
/// version of each realm is kept, and at most `capacity` sets of it.
///
/// ```swift
/// let matching = await evaluations.matches(of: key, version: 42, realmID: 7) { querySet.matches(in: state) }
/// ```
final class FlexibleEvaluations: Sendable {
    /// What decides a set's matches, besides the state.
    struct Key: Hashable, Sendable {
        var queries: [TypeQuery]
        var rules: FlexibleSync.Rules
        /// Types the set named that the schema lacked when it was checked (development mode).
        var unknownTypes: Set<String>
    }

    private struct RealmEvaluations {
        var epoch: SyncEpoch
        var version: Int64
        var byKey: [Key: Task<Set<ObjectID>, Never>] = [:]
    }

    let capacity: Int
    private let realms = Locked<[Int64: RealmEvaluations]>([:])
    /// Counts each evaluation run.
    private let counter: (@Sendable () -> Void)?

    init(capacity: Int = 1_024, counter: (@Sendable () -> Void)? = nil) {
        self.capacity = capacity
        self.counter = counter
    }

    /// The matches of the set `key` at `version` of `realm`: `evaluate()` runs once for them
    /// (older versions are not kept: a caller at an older version evaluates on its own).
    func matches(of key: Key, version: Int64, realm: StoredRealm, evaluate: @escaping @Sendable () -> Set<ObjectID>) async -> Set<ObjectID> {
        let counter = self.counter
        let counted: @Sendable () -> Set<ObjectID> = {
            counter?()
            return evaluate()
        }
        let shared = realms.withLock { realms -> Task<Set<ObjectID>, Never>? in
            var evaluations = realms[realm.id] ?? RealmEvaluations(epoch: realm.epoch, version: version)
            if evaluations.epoch != realm.epoch || evaluations.version < version {
                evaluations = RealmEvaluations(epoch: realm.epoch, version: version)
            }
            guard evaluations.version == version else { return nil }
            if let running = evaluations.byKey[key] { return running }
            guard evaluations.byKey.count < capacity else { return nil }
            let task = Task { counted() }
            evaluations.byKey[key] = task
            realms[realm.id] = evaluations
            return task
        }
        if let shared { return await shared.value }
        return counted()
    }
}
