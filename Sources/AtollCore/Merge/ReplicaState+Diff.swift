/// The instructions that turn one replica's data into another's: what a client reset applies to
/// the live realm so that it holds the fresh copy's data, object identities kept (docs/merge.md).
extension ReplicaState {
    /// Instructions that, applied to `self`, give a state whose canonical dump equals `target`'s.
    ///
    /// Objects only here are erased, objects only in `target` created whole, and an object in both
    /// gets a `set` for each scalar field that differs and, for a collection that differs, a
    /// `clear` and its elements. Types of `target` come first (`addTable`, merged additively).
    ///
    /// ```swift
    /// var live = localState
    /// live.apply(Changeset(version: 0, timestamp: 0, instructions: localState.instructions(becoming: fresh)))
    /// // live.canonicalDump() == fresh.canonicalDump()
    /// ```
    package func instructions(becoming target: ReplicaState) -> [Instruction] {
        var out: [Instruction] = target.schema.keys.sorted().map { .addTable(target.schema[$0]!) }
        let types = Set(objects.keys).union(target.objects.keys).sorted()
        for type in types {
            let here = objects[type] ?? [:]
            let there = target.objects[type] ?? [:]
            for key in primaryKeys(of: type) where there[key] == nil {
                out.append(.eraseObject(ObjectID(type: type, primaryKey: key)))
            }
            for key in target.primaryKeys(of: type) {
                let id = ObjectID(type: type, primaryKey: key)
                guard here[key] != nil else {
                    out.append(contentsOf: FlexibleSync.instructions(creating: id, in: target))
                    continue
                }
                // Most objects are unchanged: equal stored fields need no look at each property.
                if here[key] == there[key] { continue }
                out.append(contentsOf: fieldChanges(id, becoming: target))
            }
        }
        return out
    }

    /// The changes to the fields of an object both states hold.
    private func fieldChanges(_ id: ObjectID, becoming target: ReplicaState) -> [Instruction] {
        guard let schema = target.schema[id.type] else { return [] }
        var out: [Instruction] = []
        for p in schema.properties where !p.isPrimaryKey {
            let path: [PathElement] = [.property(p.name)]
            let old = value(id, path) ?? defaultValue(p)
            let new = target.value(id, path) ?? target.defaultValue(p)
            guard old != new else { continue }
            switch (p.collection, new) {
            case (.single, _):
                out.append(.set(id, path: path, value: new))
            case (.list, .list(let items)):
                out.append(.clear(id, path: path))
                for (i, item) in items.enumerated() { out.append(.listInsert(id, path: path, index: i, value: item)) }
            case (.set, .set(let items)):
                out.append(.clear(id, path: path))
                for item in items { out.append(.setInsert(id, path: path, value: item)) }
            case (.map, .map(let entries)):
                out.append(.clear(id, path: path))
                for key in entries.keys.sorted() { out.append(.set(id, path: path + [.key(key)], value: entries[key]!)) }
            default:
                continue
            }
        }
        return out
    }
}
