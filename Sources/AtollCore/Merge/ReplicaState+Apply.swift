/// Applying instructions to a ``ReplicaState``. Nothing traps: an instruction that addresses a
/// missing object, an unknown type or property, a position out of range or a value of the wrong
/// kind changes nothing.
extension ReplicaState {
    /// Applies every instruction of `changeset`, in order.
    package mutating func apply(_ changeset: Changeset) {
        for instruction in changeset.instructions { apply(instruction) }
    }

    package mutating func apply(_ changesets: [Changeset]) {
        for changeset in changesets { apply(changeset) }
    }

    /// Applies one instruction; see docs/merge.md for what each one does to a missing target.
    package mutating func apply(_ instruction: Instruction) {
        switch instruction {
        case .addTable, .addColumn: schema.mergeSchema(instruction)
        case .createObject(let id):
            guard let s = schema[id.type], !s.isEmbedded, objects[id.type]?[id.primaryKey] == nil else { return }
            var fields: [String: Value] = [:]
            if let key = s.primaryKey { fields[key] = id.primaryKey }
            objects[id.type, default: [:]][id.primaryKey] = fields
        case .eraseObject(let id):
            guard objects[id.type]?[id.primaryKey] != nil else { return }
            objects[id.type]![id.primaryKey] = nil
            if objects[id.type]!.isEmpty { objects[id.type] = nil }
        case .set(let id, let path, let value):
            guard let last = path.last else { return }
            update(id, path.dropLast()) { container, kind, state in
                state.setChild(&container, kind, last, value)
            }
        case .addInteger(let id, let path, let delta):
            update(id, path[...]) { slot, _, _ in
                guard case .int(let n) = slot else { return false }
                slot = .int(n &+ delta)
                return true
            }
        case .listInsert(let id, let path, let index, let value):
            updateList(id, path) { items, p, state in
                guard index >= 0, index <= items.count else { return false }
                items.insert(state.normalize(value, .element(p)), at: index)
                return true
            }
        case .listErase(let id, let path, let index):
            updateList(id, path) { items, _, _ in
                guard items.indices.contains(index) else { return false }
                items.remove(at: index)
                return true
            }
        case .listMove(let id, let path, let from, let to):
            updateList(id, path) { items, _, _ in
                guard items.indices.contains(from), items.indices.contains(to), from != to else { return false }
                items.insert(items.remove(at: from), at: to)
                return true
            }
        case .clear(let id, let path):
            update(id, path[...]) { slot, _, _ in
                switch slot {
                case .list(let items) where !items.isEmpty: slot = .list([])
                case .set(let items) where !items.isEmpty: slot = .set([])
                case .map(let entries) where !entries.isEmpty: slot = .map([:])
                default: return false
                }
                return true
            }
        case .setInsert(let id, let path, let value):
            update(id, path[...]) { slot, kind, _ in
                guard case .field(let p) = kind, p.collection == .set, case .set(var items) = slot,
                      !items.contains(value) else { return false }
                items.append(value)
                slot = .set(items)
                return true
            }
        case .setErase(let id, let path, let value):
            update(id, path[...]) { slot, _, _ in
                guard case .set(var items) = slot, let i = items.firstIndex(of: value) else { return false }
                items.remove(at: i)
                slot = .set(items)
                return true
            }
        case .mapErase(let id, let path, let key):
            update(id, path[...]) { slot, _, _ in
                guard case .map(var entries) = slot, entries.removeValue(forKey: key) != nil else { return false }
                slot = .map(entries)
                return true
            }
        }
    }

    // MARK: - Schema

    // MARK: - Navigation

    typealias SlotBody = (inout Value, SlotKind, ReplicaState) -> Bool

    /// Runs `body` on the value at `path` in object `id`; writes back only what `body` changed.
    private mutating func update(_ id: ObjectID, _ path: ArraySlice<PathElement>, _ body: SlotBody) {
        guard let fields = objects[id.type]?[id.primaryKey] else { return }
        var root = Value.object(fields)
        objects[id.type]![id.primaryKey] = [:]   // keep the tree uniquely referenced while it changes
        _ = descend(&root, .embedded(id.type), path, body)
        guard case .object(let changed) = root else { return }
        objects[id.type]![id.primaryKey] = changed
    }

    private mutating func updateList(_ id: ObjectID, _ path: [PathElement], _ body: (inout [Value], Property, ReplicaState) -> Bool) {
        update(id, path[...]) { slot, kind, state in
            guard case .field(let p) = kind, p.collection == .list, case .list(var items) = slot else { return false }
            slot = .null
            let changed = body(&items, p, state)
            slot = .list(items)
            return changed
        }
    }

    private func descend(_ value: inout Value, _ kind: SlotKind, _ path: ArraySlice<PathElement>, _ body: SlotBody) -> Bool {
        guard let first = path.first else { return body(&value, kind, self) }
        let rest = path.dropFirst()
        switch (kind, first, value) {
        case (.field(let p), .index(let i), .list(var items)) where p.collection == .list:
            guard items.indices.contains(i) else { return false }
            value = .null
            let changed = descend(&items[i], .element(p), rest, body)
            value = .list(items)
            return changed
        case (.field(let p), .key(let k), .map(var entries)) where p.collection == .map:
            guard var child = entries[k] else { return false }
            value = .null
            let changed = descend(&child, .element(p), rest, body)
            entries[k] = child
            value = .map(entries)
            return changed
        case (_, .property(let name), .object(var fields)):
            guard let type = embeddedType(kind), let p = property(type, name) else { return false }
            var child = fields[name] ?? defaultValue(p)
            guard descend(&child, .field(p), rest, body) else { return false }
            fields[name] = child
            value = .object(fields)
            return true
        default:
            return false
        }
    }

    /// Sets the child `element` of `container` (a field, a list element or a map value).
    private func setChild(_ container: inout Value, _ kind: SlotKind, _ element: PathElement, _ value: Value) -> Bool {
        switch (kind, element, container) {
        case (.field(let p), .index(let i), .list(var items)) where p.collection == .list:
            guard items.indices.contains(i) else { return false }
            items[i] = normalize(value, .element(p))
            container = .list(items)
        case (.field(let p), .key(let k), .map(var entries)) where p.collection == .map:
            entries[k] = normalize(value, .element(p))
            container = .map(entries)
        case (_, .property(let name), .object(var fields)):
            guard let type = embeddedType(kind), let p = property(type, name), !p.isPrimaryKey else { return false }
            switch (p.collection, value) {
            case (.single, _), (.list, .list), (.set, .set), (.map, .map): break
            default: return false
            }
            fields[name] = normalize(value, .field(p))
            container = .object(fields)
        default:
            return false
        }
        return true
    }

    /// `value` as a slot of `kind` holds it: embedded objects keep only their schema's fields and
    /// sets hold each value once.
    func normalize(_ value: Value, _ kind: SlotKind) -> Value {
        if case .field(let p) = kind, p.collection != .single {
            switch value {
            case .list(let items): return .list(items.map { normalize($0, .element(p)) })
            case .set(let items):
                // A hash set, not `Array.contains`: a set written whole may be long (client input).
                var seen = Set<Value>()
                var kept: [Value] = []
                for item in items.map({ normalize($0, .element(p)) }) where seen.insert(item).inserted { kept.append(item) }
                return .set(kept)
            case .map(let entries): return .map(entries.mapValues { normalize($0, .element(p)) })
            default: return value
            }
        }
        guard let type = embeddedType(kind), case .object(let fields) = value else { return value }
        var kept: [String: Value] = [:]
        for (name, v) in fields {
            guard let p = property(type, name) else { continue }
            kept[name] = normalize(v, .field(p))
        }
        return .object(kept)
    }
}
