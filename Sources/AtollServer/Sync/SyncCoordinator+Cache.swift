import AtollCore

/// What the coordinator keeps in memory per realm (a flexible-sync realm's state, a history's
/// schema), bounded by recency of use.
extension SyncCoordinator {
    /// The state of a flexible-sync realm (one per app), kept in memory once a session needs it:
    /// flexible-sync queries run against it.
    struct MaterializedRealm {
        var version: Int64 = 0
        var state = ReplicaState()
        /// Entries that arrived ahead of `version` (integrations finish in any order).
        var ahead: [Int64: HistoryEntry] = [:]
        var isLoaded = false

        /// Takes in entries after ``version``. Entries read from the store are the whole history
        /// after it, in order (a compacted prefix is one snapshot entry, so versions may jump) and
        /// apply at once; appended ones wait in ``ahead`` until the versions before them arrived.
        mutating func absorb(_ entries: some Sequence<HistoryEntry>, readFromStore: Bool = false) {
            for entry in entries where entry.serverVersion > version {
                if readFromStore {
                    state.apply(entry.changeset)
                    version = entry.serverVersion
                } else {
                    ahead[entry.serverVersion] = entry
                }
            }
            ahead = ahead.filter { $0.key > version }
            while let next = ahead.removeValue(forKey: version + 1) {
                state.apply(next.changeset)
                version = next.serverVersion
            }
        }
    }
    /// The schema of a realm's history up to `version`, which uploads are checked against.
    struct TrackedSchema {
        var epoch: SyncEpoch
        var version: Int64 = 0
        var schema = HistorySchema()

        /// Takes in entries after ``version``, in order. Entries read from the store are the whole
        /// history after it (where a compacted prefix is one snapshot entry, versions jump);
        /// appended ones are taken only when they directly follow, the rest is read later.
        /// `schemaInstructions`: only that many leading instructions of each are schema instructions.
        mutating func absorb(_ entries: [HistoryEntry], readFromStore: Bool, schemaInstructions: Int? = nil) {
            for entry in entries where readFromStore ? entry.serverVersion > version : entry.serverVersion == version + 1 {
                if let schemaInstructions {
                    schema.absorb(entry.changeset.instructions.prefix(schemaInstructions))
                } else {
                    schema.absorb(entry.changeset)
                }
                version = entry.serverVersion
            }
        }
    }
    /// Marks a realm's cached state as just used and, past ``cachedRealms``, drops the least
    /// recently used (those with bound sessions last, those being loaded never): memory does
    /// not grow with the number of realms ever touched. A dropped state is rebuilt from the
    /// store when it is needed again.
    func touch(_ realmID: Int64) {
        tick += 1
        recency[realmID] = tick
        guard recency.count > cachedRealms else { return }
        // A tenth at once, so the sort is paid rarely.
        let excess = recency.count - cachedRealms + cachedRealms / 10
        let victims = recency.filter { $0.key != realmID && loads[$0.key] == nil }
            .sorted { (subscribers[$0.key] != nil ? 1 : 0, $0.value) < (subscribers[$1.key] != nil ? 1 : 0, $1.value) }
            .prefix(excess).map(\.key)
        for victim in victims {
            recency[victim] = nil
            materialized[victim] = nil
            schemas[victim] = nil
            noteServed(victim)
        }
        let dropped = Set(victims)
        realms = realms.filter { !dropped.contains($0.value.id) }
    }

    /// The schema of the realm's history at its newest server version: read from the store on first
    /// use, then only what other integrations (here or on another node) appended since.
    ///
    /// With `trustedFrom` (an upload's base), no read when the schema already holds that version
    /// and every version this node has fanned out (its own appends, and other nodes' as their
    /// notifications arrive): an upload can only use what it was based on, and what the node does
    /// not know yet of another node's append a moment ago is what a read could not promise either.
    func currentSchema(of realm: StoredRealm, trustedFrom base: Int64? = nil) async throws -> HistorySchema {
        touch(realm.id)
        if let base, let tracked = schemas[realm.id], tracked.epoch == realm.epoch, tracked.version >= base,
           let known = fannedOut[realm.id], tracked.version >= known {
            return tracked.schema
        }
        while true {
            if schemas[realm.id]?.epoch != realm.epoch { schemas[realm.id] = TrackedSchema(epoch: realm.epoch) }
            let version = schemas[realm.id]!.version
            let entries = try await store.history(realmID: realm.id, after: version, maxBytes: 4 << 20)
            // Another call may have moved on meanwhile: take what follows its version, in order.
            guard schemas[realm.id]?.epoch == realm.epoch else { continue }
            schemas[realm.id]!.absorb(entries, readFromStore: true)
            let tracked = schemas[realm.id]!
            if entries.isEmpty || tracked.version == version { return tracked.schema }
        }
    }

    /// A flexible-sync realm's state at its newest server version, built from the store's history
    /// on first use and kept up to date by every integration after that.
    ///
    /// With `atLeast` (an upload's base), a state older than that version (another node's append
    /// not heard of yet) is brought up to date from the store first: an upload is checked against
    /// at least the state it was made on.
    func snapshot(of realm: StoredRealm, atLeast base: Int64 = 0) async throws -> (version: Int64, state: ReplicaState) {
        touch(realm.id)
        // A load that began before this call may have read before the base was committed: only
        // one this call started settles it (a base beyond the history is refused later).
        var readSinceCalled = false
        while true {
            if let known = materialized[realm.id], known.isLoaded, known.ahead.isEmpty {
                if known.version >= base || readSinceCalled { return (known.version, known.state) }
                if loads[realm.id] == nil { materialized[realm.id]!.isLoaded = false }  // read what follows it
            }
            if let load = loads[realm.id] {
                try await load.value
                continue
            }
            if materialized[realm.id] == nil {
                materialized[realm.id] = MaterializedRealm()
                noteServed(realm.id)  // before the load reads the history
            }
            let load = _Concurrency.Task { try await self.load(realm.id) }
            loads[realm.id] = load
            defer { loads[realm.id] = nil }
            do {
                try await load.value
                readSinceCalled = true
            } catch {
                materialized[realm.id] = nil
                noteServed(realm.id)
                throw error
            }
        }
    }

    /// Reads the history after what is materialized until the store has no more.
    func load(_ realmID: Int64) async throws {
        while true {
            let after = materialized[realmID]?.version ?? 0
            let entries = try await store.history(realmID: realmID, after: after, maxBytes: 4 << 20)
            materialized[realmID]?.absorb(entries, readFromStore: true)
            if entries.isEmpty {
                materialized[realmID]?.isLoaded = true
                return
            }
        }
    }
}
