/// Size limits on what one changeset may write; see ``ReplicaState/validate(_:limits:)``.
package struct ChangesetLimits: Hashable, Sendable {
    /// The most bytes one string (UTF-8) or data value may have, primary keys and map keys
    /// included: 16 MiB by default, Realm's limit.
    package var maximumValueSize: Int
    /// The most elements a list, set or map may hold, after the changeset as in a value it writes:
    /// 1,000,000 by default.
    package var maximumCollectionCount: Int

    package init(maximumValueSize: Int = 16 << 20, maximumCollectionCount: Int = 1_000_000) {
        self.maximumValueSize = maximumValueSize
        self.maximumCollectionCount = maximumCollectionCount
    }
}

/// Checking untrusted changesets against the state they will apply to, before they enter history.
extension ReplicaState {
    /// Checks `changesets`, rebased onto this state, in order: each instruction against the state
    /// the instructions before it leave (applied to a copy; `self` does not change).
    ///
    /// ```swift
    /// let rebased = try ServerIntegrator.integrate(batch, over: entries, lastIntegratedClientVersion: last)
    /// try state.validate(rebased)   // MergeError(.invalidInstruction, "instruction 2 of client version 7 …")
    /// ```
    /// First the schema, as ``HistorySchema/validate(_:)`` checks it (types, properties, value
    /// types). Then what only the state can tell, refusing what can never be right *after rebasing
    /// onto this exact state* (the merge has already dropped what a concurrent erase, clear or
    /// replacement made moot):
    /// - the object an instruction changes exists (`createObject` of an existing object and
    ///   `eraseObject` of a missing one are idempotent and allowed);
    /// - the path leads to an existing field, list element, map value or embedded object, of the
    ///   kind the instruction needs (a list for list instructions, a set, a map, an int or null for
    ///   `addInteger`, a collection for `clear`);
    /// - list positions are in range: insert `0...count`, set and erase `0..<count`, move both ends
    ///   in `0..<count`;
    /// - strings, data, primary keys and map keys are at most `limits.maximumValueSize` bytes;
    ///   collections hold at most `limits.maximumCollectionCount` elements.
    ///
    /// Erasing a missing set value or map key, and links to missing objects, are allowed.
    /// - Throws: ``MergeError`` with ``MergeError/Code/schemaViolation`` or
    ///   ``MergeError/Code/invalidInstruction``, naming the instruction and what is wrong.
    /// - Complexity: O(*n* × *d*) for *n* instructions with paths *d* deep, plus the cost of
    ///   applying them.
    package func validate(_ changesets: [Changeset], limits: ChangesetLimits = ChangesetLimits()) throws(MergeError) {
        var state = self
        var schema = HistorySchema(types: schema)
        for changeset in changesets {
            try schema.validate(changeset)
            for (index, instruction) in changeset.instructions.enumerated() {
                if let problem = state.problem(with: instruction, limits: limits) {
                    throw MergeError(.invalidInstruction,
                        "instruction \(index) of client version \(changeset.version) cannot apply to the realm: \(problem)")
                }
                state.apply(instruction)
            }
        }
    }
}

// MARK: - Checks

extension ReplicaState {
    /// What makes `instruction` wrong on this state, or nil when it may apply.
    func problem(with instruction: Instruction, limits: ChangesetLimits) -> String? {
        if let problem = Self.sizeProblem(instruction, limits) { return problem }
        switch instruction {
        case .addTable, .addColumn, .createObject, .eraseObject:
            return nil
        case .set(let id, let path, let value):
            guard let last = path.last else { return "a set with an empty path" }
            let parentPath = Array(path.dropLast())
            let parent: Value
            switch resolve(id, parentPath) {
            case .failure(let problem): return problem.message
            case .success(let found): parent = found
            }
            switch (last, parent) {
            case (.index(let i), .list(let items)):
                guard items.indices.contains(i) else { return outOfRange("set", i, items.count, 0..<items.count, path) }
            case (.key(let key), .map(let entries)):
                if entries[key] == nil, entries.count >= limits.maximumCollectionCount {
                    return tooMany(entries.count, id, parentPath, limits)
                }
            case (.property, .object):
                break
            default:
                return "\(describe(id, parentPath)) is not \(last.container)"
            }
            return nil
        case .addInteger(let id, let path, _):
            return expect(id, path, "an int or null") { value in
                switch value {
                case .int, .null: nil
                default: ""
                }
            }
        case .listInsert(let id, let path, let index, _):
            return expectList(id, path) { items in
                guard index >= 0, index <= items.count else { return outOfRange("insert", index, items.count, nil, path) }
                return items.count >= limits.maximumCollectionCount ? tooMany(items.count, id, path, limits) : nil
            }
        case .listErase(let id, let path, let index):
            return expectList(id, path) { items in
                items.indices.contains(index) ? nil : outOfRange("erase", index, items.count, 0..<items.count, path)
            }
        case .listMove(let id, let path, let from, let to):
            return expectList(id, path) { items in
                for i in [from, to] where !items.indices.contains(i) {
                    return outOfRange("move", i, items.count, 0..<items.count, path)
                }
                return nil
            }
        case .clear(let id, let path):
            return expect(id, path, "a list, set or map") { value in
                switch value {
                case .list, .set, .map: nil
                default: ""
                }
            }
        case .setInsert(let id, let path, let value):
            return expect(id, path, "a set") { current in
                guard case .set(let items) = current else { return "" }
                guard !items.contains(value), items.count >= limits.maximumCollectionCount else { return nil }
                return tooMany(items.count, id, path, limits)
            }
        case .setErase(let id, let path, _):
            return expect(id, path, "a set") { current in
                if case .set = current { return nil }
                return ""
            }
        case .mapErase(let id, let path, _):
            return expect(id, path, "a map") { current in
                if case .map = current { return nil }
                return ""
            }
        }
    }

    struct PathProblem: Error {
        var message: String
    }

    /// The value at `path` in object `id` (defaults filled in), or where the path stops leading anywhere.
    func resolve(_ id: ObjectID, _ path: [PathElement]) -> Result<Value, PathProblem> {
        guard let fields = object(id) else {
            return .failure(PathProblem(message: "the \(id.type) object it changes does not exist"))
        }
        var current = Value.object(fields)
        var kind = SlotKind.embedded(id.type)
        for (depth, element) in path.enumerated() {
            guard let (next, nextKind) = child(of: current, kind, element) else {
                let place = describe(id, Array(path[..<depth]))
                switch (element, current) {
                case (.index(let i), .list(let items)):
                    return .failure(PathProblem(message: "the path goes through index \(i) of \(place), out of range 0..<\(items.count)"))
                case (.key, .map):
                    return .failure(PathProblem(message: "the path goes through a key \(place) does not have"))
                default:
                    return .failure(PathProblem(message: "the path goes through \(place), which is not \(element.container)"))
                }
            }
            current = next
            kind = nextKind
        }
        return .success(current)
    }

    /// Runs `check` on the value at `path`; an empty string from it means "not `what`".
    private func expect(_ id: ObjectID, _ path: [PathElement], _ what: String, _ check: (Value) -> String?) -> String? {
        switch resolve(id, path) {
        case .failure(let problem): return problem.message
        case .success(let value):
            guard let problem = check(value) else { return nil }
            return problem.isEmpty ? "\(describe(id, path)) is not \(what)" : problem
        }
    }

    private func expectList(_ id: ObjectID, _ path: [PathElement], _ check: ([Value]) -> String?) -> String? {
        expect(id, path, "a list") { value in
            guard case .list(let items) = value else { return "" }
            return check(items)
        }
    }

    private func outOfRange(_ operation: String, _ index: Int, _ count: Int, _ range: Range<Int>?, _ path: [PathElement]) -> String {
        let valid = range.map { $0.isEmpty ? "none (the list is empty)" : "0..<\(count)" } ?? "0...\(count)"
        return "list \(operation) at index \(index) of \(pathText(path)), a list of \(count); valid: \(valid)"
    }

    private func tooMany(_ count: Int, _ id: ObjectID, _ path: [PathElement], _ limits: ChangesetLimits) -> String {
        "\(describe(id, path)) would hold more than \(limits.maximumCollectionCount) elements"
    }

    /// `Item.address.lines[2]`, with map keys elided: messages carry no user data.
    func describe(_ id: ObjectID, _ path: [PathElement]) -> String {
        path.isEmpty ? "the \(id.type) object" : "\(id.type).\(pathText(path))"
    }

    private func pathText(_ path: [PathElement]) -> String {
        var text = ""
        for element in path {
            switch element {
            case .property(let name): text += (text.isEmpty ? "" : ".") + name
            case .index(let i): text += "[\(i)]"
            case .key: text += "[…]"
            }
        }
        return text
    }

    // MARK: - Sizes

    /// What makes `instruction` too large (its values, primary key and map keys), or nil.
    static func sizeProblem(_ instruction: Instruction, _ limits: ChangesetLimits) -> String? {
        // Keys first, then the primary key, then the value: the first problem is the one named.
        // No arrays gathered: this runs for every instruction of every upload and import.
        func keyProblem(_ key: String) -> String? {
            key.utf8.count > limits.maximumValueSize ? "a map key of \(key.utf8.count) bytes, more than \(limits.maximumValueSize)" : nil
        }
        if case .mapErase(_, _, let key) = instruction, let problem = keyProblem(key) { return problem }
        if let path = instruction.fieldPath {
            for case .key(let key) in path { if let problem = keyProblem(key) { return problem } }
        }
        if let id = instruction.object, let problem = Self.sizeProblem(id.primaryKey, limits) { return problem }
        switch instruction {
        case .set(_, _, let v), .listInsert(_, _, _, let v), .setInsert(_, _, let v), .setErase(_, _, let v): return Self.sizeProblem(v, limits)
        default: return nil
        }
    }

    /// Strings, data and collections inside `value` over the limits. Recurses once per level of
    /// nesting, which decoding bounds (``Value/decode(from:depth:)``).
    private static func sizeProblem(_ value: Value, _ limits: ChangesetLimits) -> String? {
        func tooBig(_ kind: String, _ size: Int) -> String {
            "a \(kind) value of \(size) bytes, more than \(limits.maximumValueSize)"
        }
        func tooMany(_ count: Int) -> String {
            "a collection value of \(count) elements, more than \(limits.maximumCollectionCount)"
        }
        switch value {
        case .string(let s):
            let size = s.utf8.count
            return size > limits.maximumValueSize ? tooBig("string", size) : nil
        case .data(let d):
            return d.count > limits.maximumValueSize ? tooBig("data", d.count) : nil
        case .link(let link):
            return sizeProblem(link.primaryKey, limits)
        case .list(let items), .set(let items):
            if items.count > limits.maximumCollectionCount { return tooMany(items.count) }
            for item in items { if let problem = sizeProblem(item, limits) { return problem } }
            return nil
        case .map(let entries):
            if entries.count > limits.maximumCollectionCount { return tooMany(entries.count) }
            for (key, item) in entries {
                if key.utf8.count > limits.maximumValueSize { return "a map key of \(key.utf8.count) bytes, more than \(limits.maximumValueSize)" }
                if let problem = sizeProblem(item, limits) { return problem }
            }
            return nil
        case .object(let fields):
            for item in fields.values { if let problem = sizeProblem(item, limits) { return problem } }
            return nil
        default:
            return nil
        }
    }
}

extension PathElement {
    /// What a value must be for this element to lead into it.
    var container: String {
        switch self {
        case .property: "an object"
        case .index: "a list"
        case .key: "a map"
        }
    }
}
