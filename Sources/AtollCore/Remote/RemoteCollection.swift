import Foundation

/// One collection of remote data access: the objects of one type of a realm's state, as a user
/// may see them by the app's read rules (``FlexibleSync/Rules``: the type's read rule and field
/// permissions), queried with MongoDB filters. Pure: the state is a snapshot the caller took.
///
/// ```swift
/// let tasks = try RemoteCollection(state: state, type: "Task", rules: rules)
/// let ids = try tasks.find(filter: JSONNode.parse(Array(#"{"done": false}"#.utf8)))
/// ```
package struct RemoteCollection {
    package let state: ReplicaState
    package let type: String
    package let objectSchema: ObjectSchema
    package let limits: RemoteLimits
    let schema: Schema
    let rules: FlexibleSync.Rules
    let mayRead: (ObjectID) -> Bool
    /// Fields the user may not read: never in answers, filters, sorts or projections.
    let hidden: Set<String>

    /// - Throws: ``RemoteError/Code/collectionNotFound`` when `type` is not a top-level type of
    ///   the state's schema.
    package init(state: ReplicaState, type: String, rules: FlexibleSync.Rules, limits: RemoteLimits = RemoteLimits()) throws(RemoteError) {
        guard let objectSchema = state.schema[type], !objectSchema.isEmbedded, !objectSchema.isAsymmetric,
              objectSchema.primaryKeyProperty != nil,
              let schema = try? Schema(state.schema.keys.sorted().map { state.schema[$0]! })
        else { throw RemoteError(.collectionNotFound, "the app has no collection \(type.prefix(60))") }
        self.state = state
        self.type = type
        self.objectSchema = objectSchema
        self.limits = limits
        self.schema = schema
        self.rules = rules
        mayRead = rules.readAccess(in: state)
        hidden = rules.fieldAccess(for: type)?.hidden(in: objectSchema) ?? []
    }

    // MARK: Filters

    /// A MongoDB filter as a query bound to the type; nil for the empty filter (everything).
    /// - Throws: `unsupported` for operators outside `$eq $ne $gt $gte $lt $lte $in $nin $exists
    ///   $and $or $nor`, `permissionDenied` for a field the user may not read, `badRequest` for
    ///   a field the type lacks or a value its type cannot be compared with.
    package func filter(_ node: JSONNode?) throws(RemoteError) -> BoundQuery? {
        guard let node, case .object(let members) = node else {
            if node == nil || node == .null { return nil }
            throw RemoteError(.badRequest, "a filter is a document")
        }
        guard !members.isEmpty else { return nil }
        guard node.nodeCount <= limits.maxFilterNodes else {
            throw RemoteError(.limitExceeded, "the filter has more than \(limits.maxFilterNodes) values")
        }
        let arguments = MongoExpression<JSONNode>.Arguments()
        let predicate: MongoPredicate
        do {
            predicate = try MongoExpression<JSONNode>(placeholders: false, arguments: arguments).predicate(node)
        } catch {
            throw RemoteError(.unsupported, "the filter: \(error.reason)")
        }
        for field in predicate.fields { try checkReadable(field, what: "the filter") }
        let text: String
        switch predicate.kind {
        case .constant(let b): text = b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .text(let t): text = t
        }
        do {
            return try BoundQuery(parsing: text, arguments: arguments.values, objectType: type, schema: schema)
        } catch {
            throw RemoteError(.badRequest, "the filter does not fit \(type): \(error)")
        }
    }

    /// Refuses a field path whose first name the type lacks or the user may not read.
    func checkReadable(_ path: String, what: String) throws(RemoteError) {
        let head = String(path.split(separator: ".").first ?? "")
        guard objectSchema[property: head] != nil else {
            throw RemoteError(.badRequest, "\(what) names \(path.prefix(60)), which \(type) does not have")
        }
        guard !hidden.contains(head) else {
            throw RemoteError(.permissionDenied, "\(what) reads \(head), which the user may not read")
        }
    }

    // MARK: Finding

    /// The objects the user may read that match `filter`, in primary key order, at most `limit`
    /// (0: no limit) after sorting by `sort`.
    /// - Throws: `limitExceeded` past ``RemoteLimits/maxExamined`` objects; `CancellationError`
    ///   when the task is cancelled (the server's time limit).
    package func find(filter: BoundQuery?, sort: [(field: String, ascending: Bool)] = [], limit: Int = 0) throws -> [ObjectID] {
        let objects = state.objects[type] ?? [:]
        guard objects.count <= limits.maxExamined else {
            throw RemoteError(.limitExceeded, "\(type) has \(objects.count) objects, more than one request may examine (\(limits.maxExamined))")
        }
        // Every object looked at once, in the dictionary's order; only the matches are ordered.
        let resolver = ReplicaResolver(state: state)
        var matched: [(key: Value, bytes: [UInt8])] = []
        var examined = 0
        for (key, fields) in objects {
            examined += 1
            if examined % 1024 == 0 { try Task.checkCancellation() }
            let id = ObjectID(type: type, primaryKey: key)
            guard mayRead(id) else { continue }
            if let filter, !filter.evaluate(on: resolver.filled(fields, objectSchema), resolver: resolver) { continue }
            matched.append((key, key.canonicalBytes))
        }
        matched.sort { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        var out = matched.map { ObjectID(type: type, primaryKey: $0.key) }
        if !sort.isEmpty { out = sorted(out, by: sort) }
        if limit > 0, out.count > limit { out.removeLast(out.count - limit) }
        return out
    }

    /// A sort specification: a document `{"field": 1 | -1, …}` or an array of them.
    package func sort(_ node: JSONNode?) throws(RemoteError) -> [(field: String, ascending: Bool)] {
        guard let node, node != .null else { return [] }
        var keys: [(String, Bool)] = []
        let documents: [JSONNode]
        if case .array(let items) = node { documents = items } else { documents = [node] }
        for document in documents {
            guard case .object(let members) = document else { throw RemoteError(.badRequest, "a sort is a document of fields and 1 or -1") }
            for (field, direction) in members {
                guard MongoPredicate.isFieldPath(field), !field.contains(".") else {
                    throw RemoteError(.unsupported, "sorting by \(field.prefix(60)) (only a top-level field)")
                }
                try checkReadable(field, what: "the sort")
                guard let property = objectSchema[property: field], property.collection == .single, property.type != .object else {
                    throw RemoteError(.unsupported, "sorting by \(field), which is not a single value")
                }
                switch direction.literalValue {
                case .int(1)?, .double(1)?: keys.append((field, true))
                case .int(-1)?, .double(-1)?: keys.append((field, false))
                default: throw RemoteError(.badRequest, "the sort direction of \(field) is not 1 or -1")
                }
            }
        }
        guard keys.count <= 8 else { throw RemoteError(.limitExceeded, "a sort has at most 8 fields") }
        return keys
    }

    func sorted(_ ids: [ObjectID], by keys: [(field: String, ascending: Bool)]) -> [ObjectID] {
        let rows = ids.map { id in (id, keys.map { state.filledObject(id)?[$0.field] ?? .null }) }
        // Stable: ties keep primary key order.
        return rows.enumerated().sorted { a, b in
            for (i, key) in keys.enumerated() {
                let order = a.element.1[i].compare(to: b.element.1[i]) ?? .orderedSame
                if order != .orderedSame { return (order == .orderedAscending) == key.ascending }
            }
            return a.offset < b.offset
        }.map(\.element.0)
    }

    // MARK: Documents

    /// A projection: `{"field": 1, …}` (those fields and `_id`) or `{"field": 0, …}` (all but
    /// those); `_id: 0` leaves the primary key out.
    package struct Projection: Sendable {
        var fields: Set<String>
        var including: Bool
        var primaryKey: Bool
    }

    package func projection(_ node: JSONNode?) throws(RemoteError) -> Projection? {
        guard let node, node != .null else { return nil }
        guard case .object(let members) = node else { throw RemoteError(.badRequest, "a projection is a document") }
        guard !members.isEmpty else { return nil }
        let key = objectSchema.primaryKeyProperty?.name ?? "_id"
        var fields = Set<String>()
        var including: Bool?
        var primaryKey = true
        for (field, flag) in members {
            let on: Bool
            switch flag {
            case .bool(let b): on = b
            case .number(let n, _): on = Double(n) != 0
            default: throw RemoteError(.unsupported, "the projection of \(field.prefix(60)) is not 1, 0, true or false")
            }
            if field == key { primaryKey = on; continue }
            guard MongoPredicate.isFieldPath(field), !field.contains(".") else {
                throw RemoteError(.unsupported, "projecting \(field.prefix(60)) (only top-level fields)")
            }
            guard objectSchema[property: field] != nil else {
                throw RemoteError(.badRequest, "the projection names \(field.prefix(60)), which \(type) does not have")
            }
            if let including, including != on { throw RemoteError(.badRequest, "a projection either includes or excludes fields") }
            including = on
            fields.insert(field)
        }
        return Projection(fields: fields, including: including ?? false, primaryKey: primaryKey)
    }

    /// An object as the user may see it: canonical Extended JSON without the fields it may not
    /// read, projected.
    package func document(_ fields: [String: Value], projection: Projection? = nil) -> JSONNode {
        let text = ExtendedJSON.canonical(fields, of: objectSchema, schema: state.schema)
        // The server's own canonical output parses (no user limits apply to it).
        var limits = JSONLimits()
        limits.maxDocumentBytes = Int.max
        limits.maxStringBytes = Int.max
        limits.maxElements = Int.max
        limits.maxDepth = 10_000
        guard case .object(let members)? = try? JSONNode.parse(Array(text.utf8), limits: limits) else { return .object([]) }
        let key = objectSchema.primaryKeyProperty?.name ?? "_id"
        return .object(members.filter { name, _ in
            if name == key { return projection?.primaryKey ?? true }
            if hidden.contains(name) { return false }
            guard let projection else { return true }
            return projection.fields.contains(name) == projection.including
        })
    }

    /// The object `id` as the user may see it, nil when it does not exist.
    package func document(_ id: ObjectID, projection: Projection? = nil) -> JSONNode? {
        state.object(id).map { document($0, projection: projection) }
    }
}
