import Foundation

/// Flexible sync, the pure part: which objects a client's subscriptions (and its read permissions)
/// select in the server's state, and what a client must receive to go from the objects it holds to
/// exactly those (docs/protocol.md §2.6).
///
/// The server keeps one history per app. A flexible-sync client holds a *view*: the objects its
/// subscriptions matched when it last caught up, plus objects it created that the server has not
/// seen yet. To catch a client up from server version *c* to *S*, the server sends
///
/// 1. every history entry after *c*, keeping only the instructions on objects of the old view
///    (schema instructions always; the client's own entries whole, as their acknowledgement); then
/// 2. a **view change** at *S*: erase objects of the old view that exist at *S* but no longer match,
///    and the whole state of objects that match but were not in the old view.
///
/// A view change travels as a changeset stamped with ``FlexibleSync/viewChangeFileIdent`` (no
/// client has it): the client rebases its pending changes over it like any remote change but does
/// not count it as a history entry.
///
/// ```swift
/// let set = try FlexibleQuerySet(version: 3, queries: [TypeQuery(objectType: "Task", query: "owner == 'Ann'")],
///                                schema: state.schema, rules: FlexibleSync.Rules(queryableFields: ["owner"]))
/// let matching = set.matches(in: state)
/// let change = FlexibleSync.viewChange(from: heldView, to: matching, in: state)
/// ```
package enum FlexibleSync {
    /// The file ident of view-change changesets (server file idents start at 1).
    package static let viewChangeFileIdent: Int64 = 0

    /// The realm path of an app's single flexible-sync history.
    package static let realmPath = "flx"

    /// What the server allows an app's flexible-sync queries to do and whom it lets read what.
    package struct Rules: Sendable, Hashable {
        /// Fields queries may use: `"owner"` (any type) or `"Task.owner"`. Empty allows every field.
        package var queryableFields: [String]
        /// Read rules as query text per type (`nil` type: every type without its own rule), with
        /// `%user.id` standing for the user. A type with no rule at all is readable by everyone.
        package var readRules: [(type: String?, query: String)]
        /// The user `%user.…` placeholders stand for.
        package var user: RuleUser
        /// Field-level permissions of the rule that applies to a type (`""`: the rule of every type
        /// without its own read rule); a type without an entry may read all its fields.
        package var fieldAccess: [String: FieldAccess]

        /// The id `%user.id` stands for.
        package var userID: String { user.id }

        package init(queryableFields: [String] = [], readRules: [(type: String?, query: String)] = [], userID: String = "") {
            self.init(queryableFields: queryableFields, readRules: readRules, user: RuleUser(id: userID))
        }

        package init(queryableFields: [String] = [], readRules: [(type: String?, query: String)] = [], user: RuleUser,
                    fieldAccess: [String: FieldAccess] = [:]) {
            self.queryableFields = queryableFields
            self.readRules = readRules
            self.user = user
            self.fieldAccess = fieldAccess
        }

        package static func == (a: Rules, b: Rules) -> Bool {
            a.queryableFields == b.queryableFields && a.user == b.user && a.fieldAccess == b.fieldAccess
                && a.readRules.map(\.type) == b.readRules.map(\.type) && a.readRules.map(\.query) == b.readRules.map(\.query)
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(queryableFields)
            hasher.combine(user)
            hasher.combine(fieldAccess)
            for rule in readRules { hasher.combine(rule.type); hasher.combine(rule.query) }
        }

        /// The read rule of `type` bound to the schema; `.constant(false)` when a rule exists but
        /// cannot apply to the type (an unknown property, a placeholder the user has no value
        /// for): what cannot be checked is not readable.
        func readRule(for type: String, in schema: Schema) -> BoundQuery? {
            guard let rule = readRules.first(where: { $0.type == type }) ?? readRules.first(where: { $0.type == nil }) else {
                return nil
            }
            return Self.bind(rule.query, user: user, objectType: type, schema: schema)
                ?? (try? BoundQuery(parsing: "FALSEPREDICATE", objectType: type, schema: schema))
        }

        /// The field-level permissions that apply to `type`, nil when every field is readable.
        package func fieldAccess(for type: String) -> FieldAccess? {
            readRules.contains(where: { $0.type == type }) ? fieldAccess[type] : fieldAccess[""]
        }

        /// The fields of each type of `schema` the user may not read (types with none left out).
        package func hiddenFields(in schema: [String: ObjectSchema]) -> [String: Set<String>] {
            guard !fieldAccess.isEmpty else { return [:] }
            var out: [String: Set<String>] = [:]
            for (name, type) in schema {
                guard let access = fieldAccess(for: name) else { continue }
                let hidden = access.hidden(in: type)
                if !hidden.isEmpty { out[name] = hidden }
            }
            return out
        }

        /// The write rule `rule` bound to `type` of `state`'s schema for `userID`; nil when it does
        /// not fit the type (an unknown property): then no one may write the type. Bind once per
        /// upload and evaluate with ``BoundQuery/evaluate(on:in:)``: binding builds a schema.
        package static func bindWrite(_ rule: String, userID: String, type: String, in state: ReplicaState) -> BoundQuery? {
            bindWrite(rule, user: RuleUser(id: userID), type: type, in: state)
        }

        /// The write rule `rule` bound to `type` of `state`'s schema for `user`.
        package static func bindWrite(_ rule: String, user: RuleUser, type: String, in state: ReplicaState) -> BoundQuery? {
            guard let schema = try? Schema(state.schema.keys.sorted().map { state.schema[$0]! }) else { return nil }
            return bind(rule, user: user, objectType: type, schema: schema)
        }

        /// A permission rule bound for one user: `%user.id` stands for `userID`. Nil when the
        /// rule does not parse or does not fit the type.
        package static func bind(_ rule: String, userID: String, objectType: String, schema: Schema) -> BoundQuery? {
            bind(rule, user: RuleUser(id: userID), objectType: objectType, schema: schema)
        }

        /// A permission rule bound for one user: each `%user.…` placeholder stands for the user's
        /// value (``RuleUser``). Nil when the rule does not parse, does not fit the type, or names
        /// a value the user does not have.
        package static func bind(_ rule: String, user: RuleUser, objectType: String, schema: Schema) -> BoundQuery? {
            // `true` and `false` (the configuration's defaults) are the constant predicates.
            let constant = ["true": "TRUEPREDICATE", "false": "FALSEPREDICATE"][rule.trimmingCharacters(in: .whitespaces).lowercased()]
            if let constant { return try? BoundQuery(parsing: constant, objectType: objectType, schema: schema) }
            guard let (text, arguments) = user.substituting(rule) else { return nil }
            return try? BoundQuery(parsing: text, arguments: arguments, objectType: objectType, schema: schema)
        }

        /// Whether `condition`, a rule on the user alone (`%user.custom_data.role == 'admin'`),
        /// holds for `user`: a role's condition. One that does not parse, or names a value the
        /// user does not have, does not hold.
        package static func holds(_ condition: String, for user: RuleUser) -> Bool {
            guard let schema = try? Schema([ObjectSchema(name: "_User", properties: [Property(name: "_id", type: .string, isPrimaryKey: true)])]),
                  let query = bind(condition, user: user, objectType: "_User", schema: schema)
            else { return false }
            return query.evaluate(on: ["_id": .string(user.id)], resolver: NoLinkResolver())
        }

        /// The rules as far as they decide what a user sees: without the user when no read rule
        /// names a `%user.` placeholder, so the sessions of every user with the same queries
        /// share one evaluation of them.
        package var visibility: Rules {
            guard !readRules.contains(where: { $0.query.contains("%user.") }) else { return self }
            return Rules(queryableFields: queryableFields, readRules: readRules, user: RuleUser(id: ""), fieldAccess: fieldAccess)
        }

        /// Whether a query on `type` may use `field`.
        func allows(_ field: String, of type: String) -> Bool {
            // A field the user may not read is not queryable either: a query on it would tell.
            if let access = fieldAccess(for: type), !access.mayRead(field), !field.isEmpty { return false }
            return queryableFields.isEmpty || queryableFields.contains(field) || queryableFields.contains("\(type).\(field)")
        }
    }

    /// The instructions that give a client object `id` whole, as it is in `state` (the client does
    /// not hold it).
    package static func instructions(creating id: ObjectID, in state: ReplicaState) -> [Instruction] {
        guard let fields = state.object(id), let schema = state.schema[id.type] else { return [] }
        return instructions(creating: id, fields: fields, schema: schema)
    }

    /// The instructions that create object `id` of `schema` whole, with `fields` (collections as
    /// whole `.list`/`.set`/`.map` values; an absent field keeps the property's default).
    package static func instructions(creating id: ObjectID, fields: [String: Value], schema: ObjectSchema) -> [Instruction] {
        var out: [Instruction] = [.createObject(id)]
        for p in schema.properties where !p.isPrimaryKey {
            guard let value = fields[p.name] else { continue }  // absent: the property's default
            let path: [PathElement] = [.property(p.name)]
            switch (p.collection, value) {
            case (.single, _):
                out.append(.set(id, path: path, value: value))
            case (.list, .list(let items)):
                for (i, item) in items.enumerated() { out.append(.listInsert(id, path: path, index: i, value: item)) }
            case (.set, .set(let items)):
                for item in items { out.append(.setInsert(id, path: path, value: item)) }
            case (.map, .map(let entries)):
                for key in entries.keys.sorted() { out.append(.set(id, path: path + [.key(key)], value: entries[key]!)) }
            default:
                continue
            }
        }
        return out
    }

    /// The view change that takes a client from holding `held` to holding `matching` in `state`:
    /// erasures first (in canonical order), then creations.
    package static func viewChange(from held: Set<ObjectID>, to matching: Set<ObjectID>, in state: ReplicaState) -> [Instruction] {
        var out: [Instruction] = []
        for id in held.subtracting(matching).sorted(by: ObjectID.canonicalOrder) where state.object(id) != nil {
            out.append(.eraseObject(id))
        }
        for id in matching.subtracting(held).sorted(by: ObjectID.canonicalOrder) {
            out.append(contentsOf: instructions(creating: id, in: state))
        }
        return out
    }

    /// `changeset` with only what a client holding `view` receives: schema instructions and
    /// instructions on objects of the view.
    package static func filter(_ changeset: Changeset, to view: Set<ObjectID>) -> Changeset {
        var filtered = changeset
        filtered.instructions = changeset.instructions.filter { instruction in
            instruction.object.map(view.contains) ?? true
        }
        return filtered
    }
}

extension ObjectID {
    /// Type name first, then primary key in canonical value order.
    package static func canonicalOrder(_ a: ObjectID, _ b: ObjectID) -> Bool {
        a.type != b.type ? a.type < b.type : a.primaryKey.canonicalBytes.lexicographicallyPrecedes(b.primaryKey.canonicalBytes)
    }
}

/// Why a flexible-sync query set is refused (SDK code 10).
package struct FlexibleSyncError: Error, Sendable, Hashable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// A client's subscriptions, checked against the server's schema and rules: per type, the
/// queries (an object matches one of them) and the read rule (it must also hold).
package struct FlexibleQuerySet: Sendable {
    package let version: Int64
    private let queries: [String: [BoundQuery]]
    private let readRules: [String: BoundQuery]
    /// Types the set names that the schema did not have yet (development mode): they match
    /// nothing until the set is checked again against a schema that has them.
    package let unknownTypes: Set<String>

    /// Parses and checks every query.
    ///
    /// - Throws: ``FlexibleSyncError`` naming the query and why: an unknown type (the server has
    ///   not seen it declared), a parse or binding error, a field the rules do not let queries
    ///   use, a `SORT`/`DISTINCT`/`LIMIT` clause, or a subscription to an embedded type.
    package init(version: Int64, queries: [TypeQuery], schema objectSchemas: [String: ObjectSchema], rules: FlexibleSync.Rules,
                allowingUnknownTypes: Bool = false) throws(FlexibleSyncError) {
        self.version = version
        let schema: Schema
        do {
            schema = try Schema(objectSchemas.keys.sorted().map { objectSchemas[$0]! })
        } catch {
            throw FlexibleSyncError("the server's schema is not valid: \(error)")
        }
        var byType: [String: [BoundQuery]] = [:]
        var readRules: [String: BoundQuery] = [:]
        var unknownTypes: Set<String> = []
        for query in queries {
            let type = query.objectType
            if schema[type] == nil && allowingUnknownTypes {
                unknownTypes.insert(type)
                continue
            }
            guard let objectSchema = schema[type] else {
                throw FlexibleSyncError("cannot subscribe to '\(type)': the server knows no such type (open the realm with it in objectTypes first)")
            }
            guard !objectSchema.isAsymmetric else {
                throw FlexibleSyncError("cannot subscribe to '\(type)': it is an asymmetric (insert-only) type; its objects are never downloaded")
            }
            guard !objectSchema.isEmbedded else {
                throw FlexibleSyncError("cannot subscribe to '\(type)': it is an embedded type; subscribe to the objects that hold it")
            }
            guard objectSchema.primaryKey != nil else {
                throw FlexibleSyncError("cannot subscribe to '\(type)': synced types need a primary key")
            }
            let bound: BoundQuery
            do {
                bound = try BoundQuery(parsing: query.query, objectType: type, schema: schema)
            } catch {
                throw FlexibleSyncError("invalid query for '\(type)' \"\(query.query)\": \(error)")
            }
            guard bound.clauses.isEmpty else {
                throw FlexibleSyncError("invalid query for '\(type)' \"\(query.query)\": SORT, DISTINCT and LIMIT are not allowed in subscriptions")
            }
            for field in Self.fields(of: bound.expression.predicate) where !rules.allows(field, of: type) {
                throw FlexibleSyncError("invalid query for '\(type)' \"\(query.query)\": '\(field)' is not a queryable field of '\(type)' (add it to the app's queryableFields)")
            }
            byType[type, default: []].append(bound)
            if readRules[type] == nil, let rule = rules.readRule(for: type, in: schema) { readRules[type] = rule }
        }
        self.queries = byType
        self.readRules = readRules
        self.unknownTypes = unknownTypes
    }

    /// The objects of `state` the set selects and the rules let the user read.
    /// Whether the object `id` with `fields` (defaults filled in) is in the view: a query of its
    /// type matches it and the read rule lets the user see it. `state` resolves links.
    package func contains(_ id: ObjectID, fields: [String: Value], in state: ReplicaState) -> Bool {
        guard let queries = queries[id.type] else { return false }
        let resolver = ReplicaResolver(state: state)
        guard queries.contains(where: { $0.evaluate(on: fields, resolver: resolver) }) else { return false }
        return readRules[id.type].map { $0.evaluate(on: fields, resolver: resolver) } ?? true
    }

    package func matches(in state: ReplicaState) -> Set<ObjectID> {
        var out = Set<ObjectID>()
        let resolver = ReplicaResolver(state: state)
        for (type, queries) in queries {
            guard let objects = state.objects[type], let schema = state.schema[type] else { continue }
            let rule = readRules[type]
            for (key, fields) in objects {
                let full = resolver.filled(fields, schema)
                guard queries.contains(where: { $0.evaluate(on: full, resolver: resolver) }) else { continue }
                if let rule, !rule.evaluate(on: full, resolver: resolver) { continue }
                out.insert(ObjectID(type: type, primaryKey: key))
            }
        }
        return out
    }

    /// The first property of every key path in `predicate` (a SUBQUERY's collection included; the
    /// paths inside it start at its variable). A path starting with `@links` reads links of other
    /// types and gives `"@links"`, which no queryable-field list names.
    static func fields(of predicate: QueryPredicate) -> [String] {
        switch predicate.kind {
        case .constant: return []
        case .and(let a, let b), .or(let a, let b): return fields(of: a) + fields(of: b)
        case .not(let a): return fields(of: a)
        case .comparison(let c):
            return [c.lhs, c.rhs].flatMap { operand -> [String] in
                switch operand.kind {
                case .keyPath(let path): return field(of: path).map { [$0] } ?? []
                case .subquery(let subquery): return (field(of: subquery.collection).map { [$0] } ?? []) + fields(of: subquery.predicate)
                case .value, .geometry: return []
                }
            }
        }
    }

    private static func field(of path: QueryKeyPath) -> String? {
        switch path.components.first {
        case .property(let name)?: name
        case .links?, .allLinks?: "@links"
        default: nil
        }
    }
}

/// The objects linking to each object through one (type, property), computed once per resolver.
final class BacklinkIndex: Sendable {
    private let indexes = Locked<[String: [ObjectLink: [Value]]]>([:])

    func links(to target: ObjectLink, from originType: String, through property: String,
               build: () -> [ObjectLink: [Value]]) -> [Value] {
        let key = originType + "." + property
        if let index = indexes.withLock({ $0[key] }) { return index[target] ?? [] }
        let index = build()
        indexes.withLock { $0[key] = index }
        return index[target] ?? []
    }
}

/// Resolves links to objects of a ``ReplicaState``, with absent fields holding their defaults
/// (the query evaluator reads a missing property as null).
struct ReplicaResolver: ObjectResolver {
    let state: ReplicaState

    func object(for link: ObjectLink) -> [String: Value]? {
        guard let fields = state.objects[link.objectType]?[link.primaryKey], let schema = state.schema[link.objectType] else { return nil }
        return filled(fields, schema)
    }

    /// Backlinks by origin (type, property), built on first use: evaluating `@links` over every object
    /// of a type then costs one pass over the origin objects, not one per object.
    let backlinks = BacklinkIndex()

    func objects(linkingTo link: ObjectLink, from originType: String, through property: String) -> [Value] {
        backlinks.links(to: link, from: originType, through: property) {
            var index: [ObjectLink: [Value]] = [:]
            for (key, fields) in state.objects[originType] ?? [:] {
                let origin = Value.link(ObjectLink(objectType: originType, primaryKey: key))
                var targets: [ObjectLink] = []
                switch fields[property] {
                case .link(let target)?: targets = [target]
                case .list(let items)?, .set(let items)?:
                    for case .link(let target) in items where !targets.contains(target) { targets.append(target) }
                default: break
                }
                for target in targets { index[target, default: []].append(origin) }
            }
            return index
        }
    }

    func filled(_ fields: [String: Value], _ schema: ObjectSchema) -> [String: Value] {
        var full = fields
        for p in schema.properties where full[p.name] == nil { full[p.name] = state.defaultValue(p) }
        return full
    }
}

extension BoundQuery {
    /// Whether the query holds for an object's `fields` (defaults filled in), links resolved in `state`.
    package func evaluate(on fields: [String: Value], in state: ReplicaState) -> Bool {
        evaluate(on: fields, resolver: ReplicaResolver(state: state))
    }
}

// MARK: - Catching a session up without trusting what it claims

extension FlexibleSync {
    /// What one catch-up sends a session, and what the session holds afterwards.
    package struct CatchUp: Sendable {
        /// The history entries to send, each restricted to what the session may receive (the
        /// session's own entries whole); entries of others with nothing left are dropped.
        package var entries: [HistoryEntry]
        /// The view change at the newest version: erasures, then creations.
        package var viewChange: [Instruction]
        /// The objects the session holds afterwards.
        package var held: Set<ObjectID>
        /// Those of ``held`` the server has only the client's word for (absent from the server).
        package var unconfirmed: Set<ObjectID>
    }

    /// Plans the catch-up of a session from its cursor *c* to the state `state` at *S*, sending it
    /// nothing its user may not read (docs/protocol.md §2.6, "What a session is sent").
    ///
    /// `held` is what the session holds; of it, `unconfirmed` is the client's word only (all of
    /// its `heldObjects` message at first, then what the server has not seen since), believed only
    /// as far as the server can check it:
    /// - an object that exists at *S* and the user may read counts as held, unless the history after
    ///   *c* starts with another client creating it (so it did not exist at *c* and the client cannot
    ///   have it from the server): then it is erased and, if it matches, sent whole;
    /// - an object that exists but the user may not read gets an `eraseObject` only if the history
    ///   after *c* changed it other than by another's creation (the user may have held it before
    ///   it was taken away), and otherwise nothing at all;
    /// - an object absent at *S* stays unconfirmed (the client's own creation not yet integrated,
    ///   or an object erased since); of its history only erasures are sent.
    /// A confirmed held object the user can no longer read is erased; one that is gone is
    /// forgotten (its erasure is among the entries).
    ///
    /// - Parameters:
    ///   - entries: the history after *c* up to *S*, in order; only instructions on `held`
    ///     objects (and schema instructions) matter, so the caller may leave out the rest.
    ///   - ownFile: the session's client file: its entries are its acknowledgements, sent whole.
    ///   - querySet: the session's accepted query set; nil keeps what it holds (and may read).
    ///   - mayRead: whether the user may read an object that exists in `state` (the app's read rules).
    /// - Complexity: O(*i* + *h*) in the instructions of `entries` and the held objects, plus the
    ///   query set's evaluation over `state`.
    package static func catchUp(
        held: Set<ObjectID>, unconfirmed: Set<ObjectID>, entries: [HistoryEntry], ownFile: Int64,
        state: ReplicaState, querySet: FlexibleQuerySet?, mayRead: (ObjectID) -> Bool
    ) -> CatchUp {
        catchUp(held: held, unconfirmed: unconfirmed, entries: entries, ownFile: ownFile, state: state,
                matching: querySet?.matches(in: state), mayRead: mayRead)
    }

    /// ``catchUp(held:unconfirmed:entries:ownFile:state:querySet:mayRead:)`` with the query set's
    /// matches in `state` already evaluated (sessions with the same queries and rules share one
    /// evaluation per server version): `matching` nil keeps what the session holds.
    ///
    /// With `keepingAbsent` false, claimed objects still absent at *S* are forgotten rather than
    /// kept unconfirmed: a claim is believed for a while (the client's own creations reach the
    /// server soon after it connects), not for good. A forgotten object the client does hold is
    /// then like one it created online: its own upload comes back whole, and the view change
    /// sends it if the subscriptions match it.
    package static func catchUp(
        held: Set<ObjectID>, unconfirmed: Set<ObjectID>, entries: [HistoryEntry], ownFile: Int64,
        state: ReplicaState, matching: Set<ObjectID>?, keepingAbsent: Bool = true, mayRead: (ObjectID) -> Bool
    ) -> CatchUp {
        // First instruction on each unconfirmed object in the history after c: another's creation?
        var createdByOthers: [ObjectID: Bool] = [:]
        if !unconfirmed.isEmpty {
            for entry in entries {
                for instruction in entry.changeset.instructions {
                    guard let id = instruction.object, unconfirmed.contains(id), createdByOthers[id] == nil else { continue }
                    var isCreate = false
                    if case .createObject = instruction { isCreate = true }
                    createdByOthers[id] = isCreate && entry.changeset.fileIdent != ownFile
                }
            }
        }
        var trusted = Set<ObjectID>()  // held and readable at S: sent every change
        var absent = Set<ObjectID>()  // unconfirmed, absent at S: sent erasures only
        var erased = Set<ObjectID>()  // held, but no longer readable or not the server's to confirm: erased
        for id in held {
            let isConfirmed = !unconfirmed.contains(id)
            guard state.object(id) != nil else {
                if !isConfirmed { absent.insert(id) }
                continue
            }
            let createdSince = createdByOthers[id]
            if mayRead(id) {
                // Readable, yet created by another after c: the client's copy (if it has one) is
                // not the server's; it is replaced whole if it matches.
                if createdSince == true { erased.insert(id) } else { trusted.insert(id) }
            } else if isConfirmed || createdSince == false {
                erased.insert(id)
            }
        }
        var sent: [HistoryEntry] = []
        for entry in entries {
            if entry.changeset.fileIdent == ownFile {
                sent.append(entry)
                continue
            }
            var filtered = entry
            filtered.changeset.instructions = entry.changeset.instructions.filter { instruction in
                guard let id = instruction.object else { return true }
                if trusted.contains(id) { return true }
                // An erasure of a confirmed object that is gone, or of an unconfirmed one.
                if case .eraseObject = instruction, state.object(id) == nil, held.contains(id) { return true }
                return false
            }
            if !filtered.changeset.instructions.isEmpty { sent.append(filtered) }
        }
        // The client holds what its own entries created, matched or not (they come back to it
        // whole). Those the query set does not match leave its view like any held object; those
        // it matches are sent whole below, as objects the view did not have (others may have
        // changed them since, and those changes were not among the entries filtered to `held`).
        if matching != nil {
            for entry in entries where entry.changeset.fileIdent == ownFile {
                for case .createObject(let id) in entry.changeset.instructions
                where !held.contains(id) && state.object(id) != nil && !(matching?.contains(id) ?? true) {
                    erased.insert(id)
                }
            }
        }
        let matching = matching ?? trusted
        if !keepingAbsent { absent = [] }
        var change: [Instruction] = trusted.subtracting(matching).union(erased).sorted(by: ObjectID.canonicalOrder).map { .eraseObject($0) }
        for id in matching.subtracting(trusted).sorted(by: ObjectID.canonicalOrder) {
            change.append(contentsOf: instructions(creating: id, in: state))
        }
        return CatchUp(entries: sent, viewChange: change, held: matching.union(absent), unconfirmed: absent)
    }
}

extension FlexibleSync.Rules {
    /// Whether the user may read an object of `state` by the app's read rules: a type without a
    /// rule is readable, one whose rule does not fit the type is not, nor is an absent object.
    /// The returned function binds each type's rule once.
    package func readAccess(in state: ReplicaState) -> (ObjectID) -> Bool {
        var bound: [String: BoundQuery?] = [:]
        var schema: Schema?
        let resolver = ReplicaResolver(state: state)
        return { id in
            guard let fields = state.object(id), let objectSchema = state.schema[id.type] else { return false }
            if bound[id.type] == nil {
                if schema == nil { schema = try? Schema(state.schema.keys.sorted().map { state.schema[$0]! }) }
                guard let schema else { return false }
                bound[id.type] = .some(readRule(for: id.type, in: schema))
            }
            guard let rule = bound[id.type]! else { return true }
            return rule.evaluate(on: resolver.filled(fields, objectSchema), resolver: resolver)
        }
    }
}
