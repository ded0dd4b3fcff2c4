/// A change stream of remote data access (`collection.watch()`): the change events between two
/// states of a collection that the user may see, as MongoDB change events (`operationType`
/// `insert`, `update`, `delete`; `documentKey`, `fullDocument`, `ns`). Pure: the server takes
/// the states as the history grows.
///
/// ```swift
/// let watch = try RemoteWatch(matchFilter: json(#"{"operationType": "insert"}"#), ids: nil, in: collection)
/// let events = try watch.events(from: before, to: after, database: "tracker", version: 12)
/// ```
package struct RemoteWatch: Sendable {
    /// The operation types wanted; nil: all.
    package var operations: Set<String>?
    /// What the object must match (`fullDocument.<field>` members of the match filter).
    package var documentFilter: JSONNode?
    /// The primary keys wanted (`watch(filterIds:)`); nil: all.
    package var ids: Set<Value>?

    /// - Throws: `unsupported` for match filter members other than `operationType` and
    ///   `fullDocument.<field>`, and what ``RemoteCollection/filter(_:)`` throws for those.
    package init(matchFilter: JSONNode?, ids: JSONNode?, in collection: RemoteCollection) throws(RemoteError) {
        if case .object(let members)? = matchFilter {
            var documentMembers: [(String, JSONNode)] = []
            for (key, value) in members {
                if key == "operationType" {
                    switch value {
                    case .string(let s): operations = [s]
                    case .object(let inner) where inner.count == 1 && inner[0].0 == "$in":
                        guard case .array(let items) = inner[0].1 else { throw RemoteError(.badRequest, "operationType $in takes an array") }
                        operations = Set(items.compactMap { if case .string(let s) = $0 { s } else { nil } })
                    default: throw RemoteError(.unsupported, "operationType is matched by a string or $in")
                    }
                } else if key.hasPrefix("fullDocument."), key.count > 13 {
                    documentMembers.append((String(key.dropFirst(13)), value))
                } else {
                    throw RemoteError(.unsupported, "a match filter on \(key.prefix(60)) (supported: operationType, fullDocument.<field>)")
                }
            }
            if !documentMembers.isEmpty {
                documentFilter = .object(documentMembers)
                _ = try collection.filter(documentFilter)
            }
        } else if let matchFilter, matchFilter != .null {
            throw RemoteError(.badRequest, "a match filter is a document")
        }
        if case .array(let items)? = ids {
            guard items.count <= collection.limits.maxFilterNodes else { throw RemoteError(.limitExceeded, "too many ids") }
            var keys = Set<Value>()
            for item in items {
                guard let value = item.literalValue else { throw RemoteError(.badRequest, "an id is not a value") }
                keys.insert(value)
            }
            self.ids = keys
        }
    }

    /// The events that take `old` to `new` (two states of the same collection for the same
    /// user), in primary key order; `touched`: only those primary keys can have changed.
    /// `version` names the change in each event's `_id`.
    /// - Throws: `limitExceeded` when the objects to compare are more than one request may examine.
    package func events(from old: RemoteCollection, to new: RemoteCollection, database: String, version: Int64,
                       touched: Set<Value>? = nil) throws(RemoteError) -> [JSONNode] {
        let before = old.state.objects[new.type] ?? [:]
        let after = new.state.objects[new.type] ?? [:]
        guard touched.map({ $0.count <= new.limits.maxExamined }) ?? (before.count + after.count <= 2 * new.limits.maxExamined) else {
            throw RemoteError(.limitExceeded, "\(new.type) has more changed objects than a change stream may examine")
        }
        let oldFilter = try old.filter(documentFilter)
        let newFilter = try new.filter(documentFilter)
        var changed: [Value] = []
        if let touched {
            changed = touched.filter { before[$0] != after[$0] }
        } else {
            for (key, fields) in after where before[key] != fields { changed.append(key) }
            for key in before.keys where after[key] == nil { changed.append(key) }
        }
        changed.sort { $0.canonicalBytes.lexicographicallyPrecedes($1.canonicalBytes) }
        var events: [JSONNode] = []
        for key in changed {
            if let ids, !ids.contains(key) { continue }
            let id = ObjectID(type: new.type, primaryKey: key)
            let wasVisible = before[key] != nil && old.mayRead(id) && Self.matches(oldFilter, id, old.state)
            let isVisible = after[key] != nil && new.mayRead(id) && Self.matches(newFilter, id, new.state)
            let operation: String
            switch (wasVisible, isVisible) {
            case (_, true): operation = before[key] == nil ? "insert" : "update"
            case (true, false) where after[key] == nil: operation = "delete"
            default: continue
            }
            if let operations, !operations.contains(operation) { continue }
            let keyNode = Self.node(key, new.state)
            var event: [(String, JSONNode)] = [
                ("_id", .object([("_data", .string("\(version)-\(events.count)"))])),
                ("operationType", .string(operation)),
                ("ns", .object([("db", .string(database)), ("coll", .string(new.type))])),
                ("documentKey", .object([(new.primaryKeyName, keyNode)])),
            ]
            if operation != "delete", let document = new.document(id) { event.append(("fullDocument", document)) }
            events.append(.object(event))
        }
        return events
    }

    static func matches(_ filter: BoundQuery?, _ id: ObjectID, _ state: ReplicaState) -> Bool {
        guard let filter else { return true }
        return state.filledObject(id).map { filter.evaluate(on: $0, in: state) } ?? false
    }

    static func node(_ value: Value, _ state: ReplicaState) -> JSONNode {
        (try? JSONNode.parse(Array(ExtendedJSON.canonical(value, schema: state.schema).utf8))) ?? .null
    }
}
