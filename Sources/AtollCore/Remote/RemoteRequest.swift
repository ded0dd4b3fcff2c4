/// One remote data access request as the app API receives it (docs/protocol.md §1.6): the
/// action from the path, the rest from a JSON body read within ``RemoteLimits``.
///
/// ```swift
/// let request = try RemoteRequest(action: "find", body: bytes)
/// let answer = try collection.perform(request, rule: writeRule)
/// ```
package struct RemoteRequest: Sendable {
    package enum Action: String, Sendable, CaseIterable {
        case find, findOne, count, aggregate, insertOne, insertMany, updateOne, updateMany
        case deleteOne, deleteMany, findOneAndUpdate, findOneAndReplace, findOneAndDelete
        /// A change stream (server-sent events), served apart from ``RemoteCollection/perform(_:rule:)``.
        case watch

        package var writes: Bool {
            switch self {
            case .find, .findOne, .count, .aggregate, .watch: false
            default: true
            }
        }
    }

    package var action: Action
    package var service: String
    package var database: String
    package var collection: String
    /// The body's other members (`filter`, `update` …).
    package var body: JSONNode

    /// - Throws: ``RemoteError`` `unsupported` for an unknown action, `badRequest` for a body
    ///   that is not a JSON document naming `database` and `collection`, `limitExceeded` past
    ///   the limits (its size, nesting or elements).
    package init(action name: String, body bytes: some Collection<UInt8>, limits: RemoteLimits = RemoteLimits()) throws(RemoteError) {
        guard let action = Action(rawValue: name) else { throw RemoteError(.unsupported, "the action \(name.prefix(40))") }
        guard bytes.count <= limits.maxRequestBytes else {
            throw RemoteError(.limitExceeded, "the body has more than \(limits.maxRequestBytes) bytes")
        }
        let body: JSONNode
        do {
            body = try JSONNode.parse(bytes, limits: limits.json)
        } catch {
            throw RemoteError(error.code == .malformedJSON ? .badRequest : .limitExceeded, "the body: \(error)")
        }
        guard case .object = body else { throw RemoteError(.badRequest, "the body is a JSON document") }
        func named(_ key: String) throws(RemoteError) -> String {
            guard case .string(let s)? = body[key], !s.isEmpty, s.utf8.count <= 255 else {
                throw RemoteError(.badRequest, "the body names no \(key)")
            }
            return s
        }
        self.action = action
        service = (try? named("service")) ?? "mongodb-atlas"
        database = try named("database")
        collection = try named("collection")
        self.body = body
    }

    func integer(_ key: String) throws(RemoteError) -> Int {
        guard let node = body[key], node != .null else { return 0 }
        guard case .int(let n)? = node.literalValue, n >= 0, n <= Int64(Int32.max) else {
            throw RemoteError(.badRequest, "\(key) is not a non-negative integer")
        }
        return Int(n)
    }

    func flag(_ key: String) throws(RemoteError) -> Bool {
        switch body[key] {
        case nil, .null?: return false
        case .bool(let b)?: return b
        default: throw RemoteError(.badRequest, "\(key) is not true or false")
        }
    }

    func document(_ key: String) throws(RemoteError) -> JSONNode {
        guard let node = body[key], case .object = node else { throw RemoteError(.badRequest, "the body has no \(key) document") }
        return node
    }
}

extension RemoteCollection {
    /// Carries out `request`: the answer (canonical Extended JSON), and for writes what to
    /// integrate. `rule` checks every object written (nil: the user may write anything).
    /// - Throws: ``RemoteError``, or `CancellationError` when the task is cancelled.
    package func perform(_ request: RemoteRequest, rule: Rule?) throws -> (answer: JSONNode, write: Write?) {
        let body = request.body
        func number(_ n: Int) -> JSONNode { .number(String(n), isInteger: true) }
        switch request.action {
        case .find:
            let limit = try request.integer("limit")
            let ids = try find(filter: filter(body["filter"]), sort: sort(body["sort"]), limit: limit)
            let projection = try projection(body["projection"])
            return (.array(try answer(ids).compactMap { document($0, projection: projection) }), nil)
        case .findOne:
            let ids = try find(filter: filter(body["filter"]), sort: sort(body["sort"]), limit: 1)
            let projection = try projection(body["projection"])
            return (ids.first.flatMap { document($0, projection: projection) } ?? .null, nil)
        case .count:
            let limit = try request.integer("limit")
            return (number(try find(filter: filter(body["filter"]), limit: limit).count), nil)
        case .aggregate:
            return (.array(try aggregate(body["pipeline"])), nil)
        case .insertOne:
            let (ids, write) = try insert([try request.document("document")], rule: rule)
            return (.object([("insertedId", ids[0])]), write)
        case .insertMany:
            guard case .array(let documents)? = body["documents"], !documents.isEmpty else {
                throw RemoteError(.badRequest, "the body has no documents array")
            }
            let (ids, write) = try insert(documents, rule: rule)
            return (.object([("insertedIds", .array(ids))]), write)
        case .updateOne, .updateMany:
            let update = try request.document("update")
            let matched = try find(filter: filter(body["filter"]), limit: request.action == .updateOne ? 1 : 0)
            if matched.isEmpty, try request.flag("upsert") {
                let (ids, write) = try insert([try upsertDocument(filter: body["filter"], update: update, replacing: false)], rule: rule)
                return (.object([("matchedCount", number(0)), ("modifiedCount", number(0)), ("upsertedId", ids[0])]), write)
            }
            let write = try self.update(matched, with: update, rule: rule)
            return (.object([("matchedCount", number(matched.count)), ("modifiedCount", number(write.modified))]), write)
        case .deleteOne, .deleteMany:
            let matched = try find(filter: filter(body["filter"]), limit: request.action == .deleteOne ? 1 : 0)
            let write = try delete(matched, rule: rule)
            return (.object([("deletedCount", number(matched.count))]), write)
        case .findOneAndUpdate, .findOneAndReplace:
            let replacing = request.action == .findOneAndReplace
            let change = try request.document(replacing ? "replacement" : "update")
            let projection = try projection(body["projection"])
            let returnNew = try request.flag("returnNewDocument")
            let matched = try find(filter: filter(body["filter"]), sort: sort(body["sort"]), limit: 1)
            guard let id = matched.first else {
                guard try request.flag("upsert") else { return (.null, nil) }
                var created = try upsertDocument(filter: body["filter"], update: change, replacing: replacing)
                if replacing { created = Self.withDefaults(created, objectSchema, state.schema) }
                let (_, write) = try insert([created], rule: rule)
                let after = write.after.first?.value
                return (returnNew ? after.map { document($0, projection: projection) } ?? .null : .null, write)
            }
            let write = replacing ? try replace([id], with: change, rule: rule) : try update([id], with: change, rule: rule)
            let shown = returnNew ? write.after[id] ?? state.object(id) : state.object(id)
            return (shown.map { document($0, projection: projection) } ?? .null, write)
        case .watch:
            throw RemoteError(.unsupported, "watch is a change stream, not a request")
        case .findOneAndDelete:
            let projection = try projection(body["projection"])
            let matched = try find(filter: filter(body["filter"]), sort: sort(body["sort"]), limit: 1)
            guard let id = matched.first else { return (.null, nil) }
            let shown = document(id, projection: projection)
            return (shown ?? .null, try delete([id], rule: rule))
        }
    }

    /// `ids` when they fit in one answer.
    func answer(_ ids: [ObjectID]) throws(RemoteError) -> [ObjectID] {
        guard ids.count <= limits.maxReturned else {
            throw RemoteError(.limitExceeded, "\(ids.count) documents match, more than one answer carries (\(limits.maxReturned)): add a limit")
        }
        return ids
    }

    /// An aggregation pipeline of the stages `$match $sort $skip $limit $project` (`$match` and
    /// `$sort` before any `$project`).
    func aggregate(_ pipeline: JSONNode?) throws -> [JSONNode] {
        guard case .array(let stages)? = pipeline else { throw RemoteError(.badRequest, "the body has no pipeline array") }
        guard stages.count <= limits.maxStages else { throw RemoteError(.limitExceeded, "a pipeline has at most \(limits.maxStages) stages") }
        var ids = try find(filter: nil)
        var projection: Projection?
        for stage in stages {
            guard case .object(let members) = stage, members.count == 1 else {
                throw RemoteError(.badRequest, "a stage is a document with one operator")
            }
            let (name, argument) = members[0]
            switch name {
            case "$match", "$sort":
                guard projection == nil else { throw RemoteError(.unsupported, "\(name) after $project") }
                if name == "$sort" {
                    ids = sorted(ids, by: try sort(argument))
                } else if let query = try filter(argument) {
                    ids = ids.filter { id in state.filledObject(id).map { query.evaluate(on: $0, in: state) } ?? false }
                }
            case "$skip", "$limit":
                guard case .int(let n)? = argument.literalValue, n >= 0 else { throw RemoteError(.badRequest, "\(name) takes a non-negative integer") }
                let count = Int(min(n, Int64(ids.count)))
                ids = name == "$skip" ? Array(ids.dropFirst(count)) : Array(ids.prefix(count))
            case "$project":
                guard projection == nil else { throw RemoteError(.unsupported, "a second $project") }
                projection = try self.projection(argument)
            default:
                throw RemoteError(.unsupported, "the stage \(name.prefix(40)) (supported: $match $sort $skip $limit $project)")
            }
        }
        return try answer(ids).compactMap { document($0, projection: projection) }
    }
}
