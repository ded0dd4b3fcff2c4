/// Applying instructions to a ``ReplicaState``. Nothing traps: an instruction that addresses a
/// missing object, an unknown type or property, a position out of range or a value of the wrong
/// kind changes nothing.
extension ReplicaState {
    /// Applies every instruction of `changeset`, in order.
    ///
    /// A run of instructions that change one object (an object created with all its fields, as
    /// an upload or an import writes it) is applied to that object's fields taken out once and
    /// stored back once, not looked up and stored again for every instruction: the same result as
    /// applying them one by one, since an instruction on an object's fields reads nothing but
    /// them and the schema.
    package mutating func apply(_ changeset: Changeset) {
        let instructions = changeset.instructions
        var start = instructions.startIndex
        while start < instructions.endIndex {
            guard let id = instructions[start].fieldTarget else {
                apply(instructions[start])
                start += 1
                continue
            }
            var end = start + 1
            while end < instructions.endIndex, instructions[end].fieldTarget == id { end += 1 }
            applyFields(instructions[start..<end], to: id)
            start = end
        }
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
        case .set, .addInteger, .listInsert, .listErase, .listMove, .clear, .setInsert, .setErase, .mapErase:
            guard let id = instruction.fieldTarget else { return }
            applyFields(CollectionOfOne(instruction), to: id)
        }
    }

    /// Instructions that all change fields of object `id`, applied to its fields taken out of
    /// ``objects`` (so they are uniquely referenced while they change) and stored back once.
    private mutating func applyFields(_ run: some Sequence<Instruction>, to id: ObjectID) {
        guard var fields = objects[id.type]?[id.primaryKey] else { return }
        objects[id.type]![id.primaryKey] = [:]
        for instruction in run { applyField(instruction, of: id.type, to: &fields) }
        objects[id.type]![id.primaryKey] = fields
    }

    /// One instruction on the fields of a top-level object of `type`.
    private func applyField(_ instruction: Instruction, of type: String, to fields: inout [String: Value]) {
        switch instruction {
        case .set(_, let path, let value):
            guard let last = path.last else { return }
            if path.count == 1 {
                // A field of the object itself: what `setChild` does to an object, on its dictionary.
                guard case .property(let name) = last, let p = property(type, name), !p.isPrimaryKey else { return }
                switch (p.collection, value) {
                case (.single, _), (.list, .list), (.set, .set), (.map, .map): break
                default: return
                }
                fields[name] = normalize(value, .field(p))
                return
            }
            update(type, &fields, path.dropLast()) { container, kind, state in
                state.setChild(&container, kind, last, value)
            }
        case .addInteger(_, let path, let delta):
            update(type, &fields, path[...]) { slot, _, _ in
                guard case .int(let n) = slot else { return false }
                slot = .int(n &+ delta)
                return true
            }
        case .listInsert(_, let path, let index, let value):
            updateList(type, &fields, path) { items, p, state in
                guard index >= 0, index <= items.count else { return false }
                items.insert(state.normalize(value, .element(p)), at: index)
                return true
            }
        case .listErase(_, let path, let index):
            updateList(type, &fields, path) { items, _, _ in
                guard items.indices.contains(index) else { return false }
                items.remove(at: index)
                return true
            }
        case .listMove(_, let path, let from, let to):
            updateList(type, &fields, path) { items, _, _ in
                guard items.indices.contains(from), items.indices.contains(to), from != to else { return false }
                items.insert(items.remove(at: from), at: to)
                return true
            }
        case .clear(_, let path):
            update(type, &fields, path[...]) { slot, _, _ in
                switch slot {
                case .list(let items) where !items.isEmpty: slot = .list([])
                case .set(let items) where !items.isEmpty: slot = .set([])
                case .map(let entries) where !entries.isEmpty: slot = .map([:])
                default: return false
                }
                return true
            }
        case .setInsert(_, let path, let value):
            update(type, &fields, path[...]) { slot, kind, _ in
                guard case .field(let p) = kind, p.collection == .set, case .set(var items) = slot,
                      !items.contains(value) else { return false }
                items.append(value)
                slot = .set(items)
                return true
            }
        case .setErase(_, let path, let value):
            update(type, &fields, path[...]) { slot, _, _ in
                guard case .set(var items) = slot, let i = items.firstIndex(of: value) else { return false }
                items.remove(at: i)
                slot = .set(items)
                return true
            }
        case .mapErase(_, let path, let key):
            update(type, &fields, path[...]) { slot, _, _ in
                guard case .map(var entries) = slot, entries.removeValue(forKey: key) != nil else { return false }
                slot = .map(entries)
                return true
            }
        case .addTable, .addColumn, .createObject, .eraseObject:
            return
        }
    }

    // MARK: - Navigation

    typealias SlotBody = (inout Value, SlotKind, ReplicaState) -> Bool

    /// Runs `body` on the value at `path` in an object of `type` whose fields are `fields`;
    /// writes back only what `body` changed. An empty path is the object itself, which no
    /// instruction's body changes (they change fields, elements and entries).
    private func update(_ type: String, _ fields: inout [String: Value], _ path: ArraySlice<PathElement>, _ body: SlotBody) {
        guard case .property(let name)? = path.first, let p = property(type, name) else { return }
        // The field taken out, so a list or map in it is uniquely referenced while it changes.
        var child: Value
        let present: Bool
        if let stored = fields.removeValue(forKey: name) {
            child = stored
            present = true
        } else {
            child = defaultValue(p)
            present = false
        }
        // A body that reports no change leaves the value as it was: put back only what was there.
        if descend(&child, .field(p), path.dropFirst(), body) || present { fields[name] = child }
    }

    private func updateList(_ type: String, _ fields: inout [String: Value], _ path: [PathElement],
                            _ body: (inout [Value], Property, ReplicaState) -> Bool) {
        update(type, &fields, path[...]) { slot, kind, state in
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

extension Instruction {
    /// The object whose fields this instruction changes; nil for schema, create and erase instructions.
    var fieldTarget: ObjectID? {
        switch self {
        case .set(let o, _, _), .addInteger(let o, _, _), .listInsert(let o, _, _, _), .listErase(let o, _, _),
             .listMove(let o, _, _, _), .clear(let o, _), .setInsert(let o, _, _), .setErase(let o, _, _), .mapErase(let o, _, _):
            o
        case .addTable, .addColumn, .createObject, .eraseObject:
            nil
        }
    }
}
