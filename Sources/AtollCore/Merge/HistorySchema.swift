/// The schema a realm's history has built: the types and properties its `addTable` and `addColumn`
/// instructions created, merged additively as ``ReplicaState`` merges them. The server keeps one
/// per realm to refuse uploads that break it (see ``validate(_:)``).
///
/// ```swift
/// var schema = HistorySchema()
/// for entry in history { schema.absorb(entry.changeset) }
/// try schema.validate(upload)   // MergeError(.schemaViolation, "Task.title is a string; …")
/// ```
package struct HistorySchema: Hashable, Sendable {
    /// Object types by name.
    package private(set) var types: [String: ObjectSchema] = [:]

    package init() {}

    /// The schema of `types`, as ``ReplicaState/schema`` holds it.
    init(types: [String: ObjectSchema]) {
        self.types = types
    }

    /// Takes in the schema instructions of a changeset already in history (never fails: history
    /// is trusted as it stands).
    package mutating func absorb(_ changeset: Changeset) {
        absorb(changeset.instructions[...])
    }

    /// ``absorb(_:)-(Changeset)`` of some of a changeset's instructions (those that can be schema instructions).
    package mutating func absorb(_ instructions: ArraySlice<Instruction>) {
        for instruction in instructions { absorb(instruction) }
    }

    mutating func absorb(_ instruction: Instruction) {
        types.mergeSchema(instruction)
    }

    /// Checks that every instruction of `changeset` fits the schema (types and properties exist,
    /// values have the property's type, schema instructions do not redefine a property), then takes
    /// in its schema instructions, so the next changeset of a batch is checked against them.
    ///
    /// Paths into embedded objects and collections are checked as far as their first property; what
    /// lies deeper is left to the merge, which ignores what does not fit.
    /// - Throws: ``MergeError`` with ``MergeError/Code/schemaViolation``, naming the instruction.
    /// - Complexity: O(*n* × *p*) for *n* instructions on types of *p* properties.
    package mutating func validate(_ changeset: Changeset) throws(MergeError) {
        // Asymmetric objects created by this changeset: the only ones of their types it may set.
        var created: Set<ObjectID> = []
        for (index, instruction) in changeset.instructions.enumerated() {
            if let problem = problem(with: instruction) ?? asymmetricProblem(with: instruction, created: &created) {
                throw MergeError(
                    .schemaViolation,
                    "instruction \(index) of client version \(changeset.version) breaks the realm's schema: \(problem)")
            }
            absorb(instruction)
        }
    }
}

// MARK: - Checks

extension HistorySchema {
    /// What is wrong with `instruction`, or nil when it fits.
    func problem(with instruction: Instruction) -> String? {
        switch instruction {
        case .addTable(let table):
            guard let known = types[table.name] else { return nil }
            if known.isEmbedded != table.isEmbedded {
                return "\(table.name) is \(known.isEmbedded ? "" : "not ")embedded in the realm, the upload declares the opposite"
            }
            if known.isAsymmetric != table.isAsymmetric {
                return "\(table.name) is \(known.isAsymmetric ? "" : "not ")asymmetric in the realm, the upload declares the opposite"
            }
            for property in table.properties { if let conflict = conflict(table.name, property) { return conflict } }
            return nil
        case .addColumn(let type, let property):
            guard types[type] != nil else { return "a column \(property.name) added to \(type), a type the realm does not have" }
            return conflict(type, property)
        case .createObject(let id):
            guard let type = types[id.type] else { return unknownType(id.type) }
            if type.isEmbedded { return "\(id.type) is embedded: it has no objects of its own to create" }
            if let key = type.primaryKeyProperty, !fits(id.primaryKey, key, element: false) {
                return "the primary key \(key.name) of \(id.type) is \(key.typeDescription), the upload gives a \(id.primaryKey.kindName)"
            }
            return nil
        case .eraseObject(let id):
            return types[id.type] == nil ? unknownType(id.type) : nil
        case .set(let id, let path, let value):
            return check(id, path) { property in
                switch (path.count, path.last) {
                case (1, _): // the field itself
                    let fitting = property.isSingle ? fits(value, property, element: false) : fitsCollection(value, property)
                    return fitting ? nil : mismatch(id.type, property, value)
                case (2, .index?) where property.collection == .list, (2, .key?) where property.collection == .map:
                    // A list element or map value.
                    return fits(value, property, element: true) ? nil : mismatch(id.type, property, value)
                default:
                    return nil
                }
            }
        case .addInteger(let id, let path, _):
            return check(id, path) { property in
                guard path.count == 1 else { return nil }
                return property.type == .int && property.isSingle ? nil : "\(id.type).\(property.name) is \(property.typeDescription), not an int to add to"
            }
        case .listInsert(let id, let path, _, let value):
            return check(id, path) { property in
                guard path.count == 1 else { return nil }
                guard property.collection == .list else { return "\(id.type).\(property.name) is \(property.typeDescription), not a list" }
                return fits(value, property, element: true) ? nil : mismatch(id.type, property, value)
            }
        case .setInsert(let id, let path, let value), .setErase(let id, let path, let value):
            return check(id, path) { property in
                guard path.count == 1 else { return nil }
                guard property.collection == .set else { return "\(id.type).\(property.name) is \(property.typeDescription), not a set" }
                return fits(value, property, element: true) ? nil : mismatch(id.type, property, value)
            }
        case .listErase(let id, let path, _), .listMove(let id, let path, _, _):
            return check(id, path) { property in
                guard path.count == 1, property.collection != .list else { return nil }
                return "\(id.type).\(property.name) is \(property.typeDescription), not a list"
            }
        case .mapErase(let id, let path, _):
            return check(id, path) { property in
                guard path.count == 1, property.collection != .map else { return nil }
                return "\(id.type).\(property.name) is \(property.typeDescription), not a map"
            }
        case .clear(let id, let path):
            return check(id, path) { _ in nil }
        }
    }

    /// Asymmetric objects are insert-only: a changeset creates them and sets their fields, and
    /// never changes or erases one it did not create.
    func asymmetricProblem(with instruction: Instruction, created: inout Set<ObjectID>) -> String? {
        guard let id = instruction.object, types[id.type]?.isAsymmetric == true else { return nil }
        switch instruction {
        case .createObject:
            guard created.insert(id).inserted else { return "\(id.type) \(id.primaryKey) is created twice" }
            return nil
        case .eraseObject:
            return "\(id.type) is asymmetric (insert-only): its objects cannot be erased"
        default:
            return created.contains(id) ? nil : "\(id.type) is asymmetric (insert-only): \(id.primaryKey) can only be set by the changeset that creates it"
        }
    }

    /// Checks the object's type and the path's first property, then runs `body` with that property.
    private func check(_ id: ObjectID, _ path: [PathElement], _ body: (Property) -> String?) -> String? {
        guard let type = types[id.type] else { return unknownType(id.type) }
        if type.isEmbedded { return "\(id.type) is embedded: its objects are reached through their owner" }
        guard case .property(let name)? = path.first else { return "a path into \(id.type) that does not start with a property" }
        guard let property = type[property: name] else {
            return "\(id.type) has no property \(name) (the realm's history never added it)"
        }
        // A mixed value changes whole: no instruction reaches into a list or map it holds.
        if property.type == .any && property.isSingle && path.count > 1 {
            return "\(id.type).\(property.name) is AnyRealmValue: its nested collections are set whole, not edited in place"
        }
        return body(property)
    }

    private func unknownType(_ name: String) -> String {
        "the realm has no type \(name) (the realm's history never added it)"
    }

    private func mismatch(_ type: String, _ property: Property, _ value: Value) -> String {
        "\(type).\(property.name) is \(property.typeDescription), the upload gives a \(value.kindName)"
    }

    /// A redefinition of an existing property with another type or kind of collection.
    private func conflict(_ type: String, _ property: Property) -> String? {
        guard let known = types[type]?[property: property.name] else { return nil }
        guard known.type != property.type || known.collection != property.collection || known.objectType != property.objectType
        else { return nil }
        return "\(type).\(property.name) is \(known.typeDescription) in the realm, the upload redefines it as \(property.typeDescription)"
    }

    /// Whether `value` may be stored in `property` (as a whole single value, or as one element).
    private func fits(_ value: Value, _ property: Property, element: Bool) -> Bool {
        guard element || property.collection == .single else { return false }
        if property.type == .any { return value.isMixedStorable }
        switch value {
        case .null:
            return property.isOptional || property.type == .object
        case .link(let link):
            return property.type == .object && (property.objectType == nil || property.objectType == link.objectType)
        case .object:
            return property.type == .object && property.objectType.map { types[$0]?.isEmbedded ?? true } ?? true
        case .list, .set, .map:
            return false
        default:
            return value.propertyType == property.type
        }
    }

    /// Whether `value` is a whole collection that `property` may hold.
    private func fitsCollection(_ value: Value, _ property: Property) -> Bool {
        switch (property.collection, value) {
        case (.list, .list(let items)), (.set, .set(let items)):
            return items.allSatisfy { fits($0, property, element: true) }
        case (.map, .map(let entries)):
            return entries.values.allSatisfy { fits($0, property, element: true) }
        default:
            return false
        }
    }
}
