/// Writes of remote data access, computed against the collection's state: the instructions a
/// server write integrates (only what changes, so concurrent device edits of other fields keep
/// their values), each object checked by the app's write rules first. A refusal refuses the
/// whole request: nothing of it is written.
extension RemoteCollection {
    /// What a write does: the instructions, and each written object after it (nil: deleted).
    package struct Write: Sendable {
        package var instructions: [Instruction] = []
        package var after: [ObjectID: [String: Value]] = [:]
        /// Objects whose fields the write changed (``UpdateResult/modifiedCount``).
        package var modified = 0
    }

    package typealias Rule = WriteCheck.Rule

    var primaryKeyName: String { objectSchema.primaryKeyProperty?.name ?? "_id" }

    /// Documents to insert, with generated ObjectId primary keys where they have none.
    package func insert(_ documents: [JSONNode], rule: Rule?) throws(RemoteError) -> (ids: [JSONNode], write: Write) {
        guard documents.count <= limits.maxWritten else {
            throw RemoteError(.limitExceeded, "one request inserts at most \(limits.maxWritten) documents")
        }
        var write = Write()
        var ids: [JSONNode] = []
        var seen = Set<ObjectID>()
        for (index, document) in documents.enumerated() {
            guard case .object(var members) = document else { throw RemoteError(.badRequest, "document \(index) is not a document") }
            if !members.contains(where: { $0.0 == primaryKeyName }) {
                guard objectSchema.primaryKeyProperty?.type == .objectId else {
                    throw RemoteError(.invalidDocument, "document \(index) has no \(primaryKeyName)")
                }
                members.insert((primaryKeyName, .object([("$oid", .string(ObjectId.generate().stringValue))])), at: 0)
            }
            let (id, instructions, after) = try change(to: .object(members), creating: true, rule: rule, index: index)
            guard seen.insert(id).inserted else { throw RemoteError(.duplicateKey, "two documents have the same \(primaryKeyName)") }
            write.instructions += instructions
            write.after[id] = after
            write.modified += 1
            ids.append(members.first { $0.0 == primaryKeyName }!.1)
        }
        return (ids, write)
    }

    /// `update` (operators) applied to each object of `ids`.
    package func update(_ ids: [ObjectID], with update: JSONNode, rule: Rule?) throws(RemoteError) -> Write {
        guard RemoteUpdate.isOperatorDocument(update) else {
            throw RemoteError(.badRequest, "an update is a document of operators ($set, $unset, $inc, $push)")
        }
        try checkSize(update, what: "the update")
        return try writing(ids, rule: rule) { id throws(RemoteError) in
            guard let current = fullDocument(id) else { return nil }
            return try RemoteUpdate.apply(update, to: current, primaryKey: primaryKeyName)
        }
    }

    /// Each object of `ids` replaced by `replacement` (same primary key; absent fields take their
    /// defaults).
    package func replace(_ ids: [ObjectID], with replacement: JSONNode, rule: Rule?) throws(RemoteError) -> Write {
        guard case .object(let members) = replacement, !RemoteUpdate.isOperatorDocument(replacement) else {
            throw RemoteError(.badRequest, "a replacement is a document without operators")
        }
        try checkSize(replacement, what: "the replacement")
        return try writing(ids, rule: rule) { id throws(RemoteError) in
            guard let key = fullDocument(id)?[primaryKeyName] else { return nil }
            if let given = members.first(where: { $0.0 == primaryKeyName })?.1, given.literalValue != key.literalValue {
                throw RemoteError(.badRequest, "\(primaryKeyName) cannot change")
            }
            return Self.withDefaults(.object([(primaryKeyName, key)] + members.filter { $0.0 != primaryKeyName }), objectSchema, state.schema)
        }
    }

    /// Deletes each object of `ids`.
    package func delete(_ ids: [ObjectID], rule: Rule?) throws(RemoteError) -> Write {
        guard ids.count <= limits.maxWritten else {
            throw RemoteError(.limitExceeded, "one request deletes at most \(limits.maxWritten) documents")
        }
        var write = Write()
        for id in ids {
            if let reason = rule?(id, state.filledObject(id), nil, state) { throw RemoteError(.permissionDenied, reason) }
            write.instructions.append(.eraseObject(id))
            write.after[id] = nil
            write.modified += 1
        }
        return write
    }

    /// The document an upsert inserts when nothing matched: the filter's equalities (top-level
    /// `field: value` and `field: {$eq: value}`), then `update` applied (or the replacement).
    package func upsertDocument(filter: JSONNode?, update: JSONNode, replacing: Bool) throws(RemoteError) -> JSONNode {
        if replacing { return update }
        var base: [(String, JSONNode)] = []
        if case .object(let members)? = filter {
            for (key, value) in members where !key.hasPrefix("$") {
                if case .object(let inner) = value, let first = inner.first?.0, first.hasPrefix("$") {
                    if inner.count == 1, first == "$eq" { base.append((key, inner[0].1)) }
                    if !MongoExpression<JSONNode>.extendedJSONTypes.contains(first) { continue }
                }
                if !base.contains(where: { $0.0 == key }) { base.append((key, value)) }
            }
        }
        var document = JSONNode.object(base.filter { !$0.0.contains(".") })
        var operators = update
        // The primary key may come from the filter; $set of it is a change only for existing ones.
        if case .object(let ops) = update {
            operators = .object(ops.map { (entry: (String, JSONNode)) -> (String, JSONNode) in
                let (op, operand) = entry
                guard op == "$set", case .object(let fields) = operand, let key = fields.first(where: { $0.0 == primaryKeyName }) else { return (op, operand) }
                document = (try? RemoteUpdate.setting([primaryKeyName], to: key.1, in: document)) ?? document
                return (op, .object(fields.filter { $0.0 != primaryKeyName }))
            })
        }
        return try RemoteUpdate.apply(operators, to: document, primaryKey: primaryKeyName)
    }

    // MARK: Helpers

    func checkSize(_ node: JSONNode, what: String) throws(RemoteError) {
        guard node.nodeCount <= limits.maxFilterNodes else {
            throw RemoteError(.limitExceeded, "\(what) has more than \(limits.maxFilterNodes) values")
        }
    }

    /// The object in canonical Extended JSON with every field (hidden ones too: rules decide writes).
    func fullDocument(_ id: ObjectID) -> JSONNode? {
        guard let fields = state.object(id) else { return nil }
        let text = ExtendedJSON.canonical(fields, of: objectSchema, schema: state.schema)
        var limits = JSONLimits()
        (limits.maxDocumentBytes, limits.maxStringBytes, limits.maxElements, limits.maxDepth) = (.max, .max, .max, 10_000)
        return try? JSONNode.parse(Array(text.utf8), limits: limits)
    }

    /// A replacement with every property the document lacks at its default.
    static func withDefaults(_ document: JSONNode, _ type: ObjectSchema, _ schema: [String: ObjectSchema]) -> JSONNode {
        guard case .object(var members) = document else { return document }
        for property in type.properties where !members.contains(where: { $0.0 == property.name }) {
            let text = ExtendedJSON.canonical(ExtendedJSON.defaultValue(property), schema: schema)
            if let node = try? JSONNode.parse(Array(text.utf8)) { members.append((property.name, node)) }
        }
        return .object(members)
    }

    private func writing(_ ids: [ObjectID], rule: Rule?, _ make: (ObjectID) throws(RemoteError) -> JSONNode?) throws(RemoteError) -> Write {
        guard ids.count <= limits.maxWritten else {
            throw RemoteError(.limitExceeded, "one request changes at most \(limits.maxWritten) documents")
        }
        var write = Write()
        for id in ids {
            guard let document = try make(id) else { continue }
            let (_, instructions, after) = try change(to: document, creating: false, rule: rule, index: 0)
            write.instructions += instructions
            write.after[id] = after
            if !instructions.isEmpty { write.modified += 1 }
        }
        return write
    }

    /// The instructions that make the object `document` describes (all of it), checked by `rule`.
    func change(to document: JSONNode, creating: Bool, rule: Rule?, index: Int) throws(RemoteError) -> (ObjectID, [Instruction], [String: Value]) {
        let typed: TypedDocument
        do {
            typed = try DocumentTyping(schema: state.schema).type(document, as: type)
        } catch {
            throw RemoteError(.invalidDocument, "\(creating ? "document \(index)" : "the result"): \(error)")
        }
        if let field = typed.ignoredFields.first {
            throw RemoteError(.invalidDocument, "\(type) has no field \(field.prefix(60))")
        }
        let id = typed.id
        if creating, state.object(id) != nil {
            throw RemoteError(.duplicateKey, "a \(type) with this \(primaryKeyName) exists")
        }
        let before = state.restricted(to: [id])
        var after = before
        after.apply(Changeset(version: 0, timestamp: 0, instructions: typed.instructions))
        let instructions = before.instructions(becoming: after).filter { $0.object != nil }
        guard let fields = after.object(id) else { throw RemoteError(.invalidDocument, "the document does not make an object") }
        if !instructions.isEmpty, let reason = rule?(id, state.filledObject(id), after.filledObject(id), state) {
            throw RemoteError(.permissionDenied, reason)
        }
        return (id, instructions, fields)
    }
}
