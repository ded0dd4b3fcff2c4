import AtollCore

/// Translates a ``BoundQuery`` into SQL over the tables of ``StorageLayout``.
///
/// The SQL gives exactly the answers of ``BoundQuery/evaluate(on:resolver:)``:
/// - `==` and `!=` are `IS` and `IS NOT`, so nulls compare as in Realm; `NOT` of anything that may be
///   NULL is `NOT COALESCE(…, 0)`.
/// - String operators and `[c]` call `atoll_string_op`, the SQL face of ``StringOperator/evaluate(_:_:_:caseInsensitive:)``.
/// - Decimal128 comparisons and sorts use the `ATOLL_DECIMAL` collation.
/// - To-one links are correlated subqueries on the target's `_row`; lists, sets and maps are
///   `EXISTS` / `NOT EXISTS` over their tables, `@count` is `COUNT(*)`, aggregates are subqueries.
package enum SQLTranslator {
    /// The SQL functions the store must register; see ``QueryFunctions``.
    package static var sqlFunctions: [(name: String, arity: Int, body: @Sendable ([SQLValue]) -> SQLValue)] {
        QueryFunctions.sqlFunctions
    }

    /// SQL for `query`. The leading `SORT` clauses become `ORDER BY`; `LIMIT`s right after them become
    /// `LIMIT`; every clause after that is left to the store in ``SQLQuery/postClauses``.
    ///
    /// Throws ``QueryError/Code/unsupported`` for constants with no SQL form (a link to an object type
    /// without a primary key, an embedded object).
    package static func translate(_ query: BoundQuery) throws(QueryError) -> SQLQuery {
        var builder = SQLBuilder(schema: query.schema)
        let condition = try builder.predicate(query.predicate)

        var sorts: [[BoundKey]] = []
        var index = 0
        while index < query.clauses.count, case .sort(let keys) = query.clauses[index] {
            sorts.append(keys)
            index += 1
        }
        var limit: Int?
        while index < query.clauses.count, case .limit(let n) = query.clauses[index] {
            limit = min(limit ?? n, n)
            index += 1
        }
        var terms: [String] = []
        var orderArguments: [SQLValue] = []
        // A later SORT is the primary order; earlier ones break its ties (stable sorts).
        for key in sorts.reversed().flatMap({ $0 }) {
            var term = try builder.scalar(key.scalar)
            if key.type == .any { term.sql = "\(QueryFunctions.mixedSortKey)(\(term.sql))" }
            let collate = key.type == .decimal128 ? " COLLATE \(StorageLayout.decimalCollation)" : ""
            terms.append(term.sql + collate + (key.ascending ? " ASC" : " DESC"))
            orderArguments += term.arguments
        }
        terms.append("t0.\(StorageLayout.rowColumn)")
        return SQLQuery(table: StorageLayout.table(query.objectType), alias: "t0", whereClause: condition.sql,
                        whereArguments: condition.arguments, orderBy: terms.joined(separator: ", "),
                        orderByArguments: orderArguments, limit: limit,
                        postClauses: Array(query.clauses[index...]))
    }
}

/// Builds SQL text and its arguments together, in the order they appear.
struct SQLBuilder {
    struct Fragment {
        var sql: String
        var arguments: [SQLValue] = []
        /// Whether the expression may be NULL (only predicates track this).
        var nullable = false
    }

    /// How SQL refers to a context: an object row alias, or a value expression.
    enum Context {
        case row(String)
        case value(String)
    }

    let schema: Schema
    var contexts: [Int: Context] = [0: .row("t0")]
    /// The contexts that are elements of a collection of mixed values.
    var mixedContexts: Set<Int> = []
    var aliasCount = 0

    init(schema: Schema) { self.schema = schema }

    mutating func alias(_ prefix: String) -> String {
        aliasCount += 1
        return prefix + String(aliasCount)
    }

    static func q(_ name: String) -> String { StorageLayout.quote(name) }
    static let row = StorageLayout.rowColumn

    // MARK: - Predicates

    mutating func predicate(_ predicate: BoundPredicate) throws(QueryError) -> Fragment {
        switch predicate {
        case .constant(let value):
            return Fragment(sql: value ? "1" : "0")
        case .and(let a, let b), .or(let a, let b):
            let l = try self.predicate(a), r = try self.predicate(b)
            let op = if case .and = predicate { "AND" } else { "OR" }
            return Fragment(sql: "(\(l.sql) \(op) \(r.sql))", arguments: l.arguments + r.arguments,
                            nullable: l.nullable || r.nullable)
        case .not(let a):
            return negation(try self.predicate(a))
        case .compare(let lhs, let op, let rhs, _) where isMixed(lhs) || isMixed(rhs):
            return try mixedComparison(lhs, op, rhs)
        case .compare(let lhs, let op, let rhs, let decimal):
            let l = try scalar(lhs), r = try scalar(rhs)
            let collate = decimal ? " COLLATE \(StorageLayout.decimalCollation)" : ""
            // `=` against a non-null constant can use an index; it is NULL (not false) for a null
            // operand, which `nullable` accounts for.
            let plainEqual = op == .equal && [lhs, rhs].contains { if case .constant(let v) = $0 { !v.isNull } else { false } }
            let sqlOp = plainEqual ? "=" : op.rawValue
            return Fragment(sql: "\(l.sql) \(sqlOp) \(r.sql)\(collate)", arguments: l.arguments + r.arguments,
                            nullable: plainEqual || (op != .equal && op != .notEqual))
        case .string(let op, let lhs, let rhs, let options):
            var l = try scalar(lhs), r = try scalar(rhs)
            // A mixed operand takes part only when it holds a string.
            if isMixed(lhs) { l.sql = "\(QueryFunctions.mixedText)(\(l.sql))" }
            if isMixed(rhs) { r.sql = "\(QueryFunctions.mixedText)(\(r.sql))" }
            return Fragment(sql: "\(QueryFunctions.stringOperation)('\(op.rawValue)', \(l.sql), \(r.sql), \(options.rawValue))",
                            arguments: l.arguments + r.arguments)
        case .geoWithin(let point, let pointType, let coordinates, let shape):
            let p = try scalar(point)
            let g = alias("g")
            let type = "(SELECT \(g).\(Self.q("type")) FROM \(Self.q(StorageLayout.table(pointType))) \(g) WHERE \(g).\(Self.row) = \(p.sql))"
            let table = Self.q(StorageLayout.collectionTable(pointType, coordinates))
            func coordinate(_ offset: Int) -> String {
                "(SELECT \(g).\(Self.q("value")) FROM \(table) \(g) WHERE \(g).\(Self.q("owner")) = \(p.sql) "
                    + "ORDER BY \(g).\(Self.q("pos")) LIMIT 1 OFFSET \(offset))"
            }
            return Fragment(sql: "\(QueryFunctions.geoWithin)(?, \(type), \(coordinate(0)), \(coordinate(1)))",
                            arguments: [.text(shape.encoded)] + p.arguments + p.arguments + p.arguments)
        case .quantified(let quantifier, let collection, let inner):
            let source = try self.source(collection)
            var condition = try self.predicate(inner)
            if quantifier == .all { condition = negation(condition) }
            let exists = "EXISTS (SELECT 1 FROM \(source.from) WHERE \(source.owner.sql) AND \(condition.sql))"
            return Fragment(sql: quantifier == .any ? exists : "NOT " + exists,
                            arguments: source.owner.arguments + condition.arguments)
        }
    }

    /// `NOT p`, true when `p` is NULL (a comparison with a null), as the evaluator's `!false`.
    private func negation(_ p: Fragment) -> Fragment {
        Fragment(sql: p.nullable ? "NOT COALESCE(\(p.sql), 0)" : "NOT (\(p.sql))", arguments: p.arguments)
    }

    /// The FROM clause over a collection's table, the condition tying it to its owner, and how its
    /// elements are referred to (also recorded as the collection's context).
    private mutating func source(_ collection: BoundQueryCollection) throws(QueryError) -> (from: String, owner: Fragment) {
        let base = try scalar(collection.base)
        if collection.backlink != nil {
            // The rows of the origin table whose link points at the base row, each once.
            let b = alias("b")
            contexts[collection.context] = .row(b)
            let from = "\(Self.q(StorageLayout.table(collection.owner))) \(b)"
            if collection.property.isSingle {
                return (from, Fragment(sql: "\(b).\(Self.q(collection.property.name)) = \(base.sql)", arguments: base.arguments))
            }
            let l = alias("l")
            let links = Self.q(StorageLayout.collectionTable(collection.owner, collection.property))
            return (from, Fragment(sql: "\(b).\(Self.row) IN (SELECT \(l).\(Self.q("owner")) FROM \(links) \(l) "
                                        + "WHERE \(l).\(Self.q("value")) = \(base.sql))", arguments: base.arguments))
        }
        if collection.isMixedElements {
            // The positions 0..<n of the list or dictionary the mixed value holds, as a JSON array
            // for SQLite's json_each; each element is read at its position. The context is an
            // expression without arguments (it is repeated wherever the element is used).
            let c = alias("c")
            guard base.arguments.isEmpty else {
                throw QueryError(.unsupported, "'[*]' cannot follow this key path in SQL")
            }
            contexts[collection.context] = .value("\(QueryFunctions.mixedNth)(\(base.sql), \(c).\(Self.q("value")))")
            mixedContexts.insert(collection.context)
            return ("json_each(\(QueryFunctions.mixedPositions)(\(base.sql))) \(c)", Fragment(sql: "1"))
        }
        let c = alias("c")
        let table = Self.q(StorageLayout.collectionTable(collection.owner, collection.property))
        var from = "\(table) \(c)"
        if let target = collection.elementObjectType {
            let t = alias("t")
            from += " LEFT JOIN \(Self.q(StorageLayout.table(target))) \(t) ON \(t).\(Self.row) = \(c).\(Self.q("value"))"
            contexts[collection.context] = .row(t)
        } else {
            contexts[collection.context] = .value("\(c).\(Self.q(collection.keys ? "key" : "value"))")
            if collection.property.type == .any && !collection.keys { mixedContexts.insert(collection.context) }
        }
        return (from, Fragment(sql: "\(c).\(Self.q("owner")) = \(base.sql)" + Self.hideUnresolved(collection, c),
                               arguments: base.arguments))
    }

    /// A list or set of objects keeps unresolved links (to erased objects) as NULL slots, so sync
    /// positions agree; queries skip them as the collection's readers do.
    private static func hideUnresolved(_ collection: BoundQueryCollection, _ alias: String) -> String {
        collection.property.type == .object && (collection.property.collection == .list || collection.property.collection == .set)
            ? " AND \(alias).\(q("value")) IS NOT NULL" : ""
    }

    // MARK: - Mixed values

    /// A step into a mixed value's nested collection as an SQL literal: the SQL of a `[*]` element
    /// is repeated where it is used, so it carries no arguments.
    static func literal(_ step: MixedStep) throws(QueryError) -> String {
        switch step {
        case .index(let i): return String(i)
        case .key(let key):
            guard !key.unicodeScalars.contains("\0") else { throw QueryError(.unsupported, "a dictionary key with a NUL character cannot be queried") }
            return "'" + key.replacingOccurrences(of: "'", with: "''") + "'"
        }
    }

    /// Whether `scalar` is a stored mixed value (a blob the mixed SQL functions decode).
    func isMixed(_ scalar: BoundScalar) -> Bool {
        switch scalar {
        case .property(_, _, let property), .mapValue(_, _, let property, _): property.type == .any
        case .mixedElement: true
        case .context(let id): mixedContexts.contains(id)
        default: false
        }
    }

    /// A comparison with a mixed value, through `atoll_mixed_cmp` (QueryOrdering+Mixed.swift):
    /// equal only when the kinds compare and the values are the same (null equals null); ordered
    /// comparisons never match a null or a value of a kind that does not compare.
    private mutating func mixedComparison(_ lhs: BoundScalar, _ op: BoundComparison, _ rhs: BoundScalar) throws(QueryError) -> Fragment {
        func operand(_ scalar: BoundScalar) throws(QueryError) -> Fragment {
            guard case .constant(let value) = scalar else { return try self.scalar(scalar) }
            return value.isNull ? Fragment(sql: "NULL") : Fragment(sql: "?", arguments: [value.mixedSQLValue])
        }
        let l = try operand(lhs), r = try operand(rhs)
        let strict = op == .equal || op == .notEqual ? 0 : 1
        let call = "\(QueryFunctions.mixedCompare)(\(l.sql), \(r.sql), \(strict))"
        let sql = switch op {
        case .equal: "COALESCE(\(call), 2) = 0"
        case .notEqual: "COALESCE(\(call), 2) <> 0"
        case .less: "\(call) < 0"
        case .lessOrEqual: "\(call) <= 0"
        case .greater: "\(call) > 0"
        case .greaterOrEqual: "\(call) >= 0"
        }
        return Fragment(sql: sql, arguments: l.arguments + r.arguments, nullable: strict == 1)
    }

    // MARK: - Scalars

    mutating func scalar(_ scalar: BoundScalar) throws(QueryError) -> Fragment {
        switch scalar {
        case .constant(let value):
            return try constant(value)
        case .context(let id):
            switch contexts[id] {
            case .row(let alias): return Fragment(sql: "\(alias).\(Self.row)")
            case .value(let expression): return Fragment(sql: expression)
            case nil: preconditionFailure("context \(id) used outside its collection")
            }
        case .property(let base, let owner, let property):
            if case .context(let id) = base, case .row(let alias) = contexts[id] {
                return Fragment(sql: "\(alias).\(Self.q(property.name))")
            }
            let b = try self.scalar(base)
            let s = alias("s")
            return Fragment(sql: "(SELECT \(s).\(Self.q(property.name)) FROM \(Self.q(StorageLayout.table(owner))) \(s) "
                                + "WHERE \(s).\(Self.row) = \(b.sql))", arguments: b.arguments)
        case .mapValue(let base, let owner, let property, let key):
            let b = try self.scalar(base)
            let m = alias("m")
            return Fragment(sql: "(SELECT \(m).\(Self.q("value")) FROM \(Self.q(StorageLayout.collectionTable(owner, property))) \(m) "
                                + "WHERE \(m).\(Self.q("owner")) = \(b.sql) AND \(m).\(Self.q("key")) = ?)",
                            arguments: b.arguments + [.text(key)])
        case .mixedElement(let base, let step):
            let b = try self.scalar(base)
            return Fragment(sql: "\(QueryFunctions.mixedElement)(\(b.sql), \(try Self.literal(step)))", arguments: b.arguments)
        case .count(let collection) where collection.backlink != nil:
            let source = try self.source(collection)
            return Fragment(sql: "(SELECT COUNT(*) FROM \(source.from) WHERE \(source.owner.sql))", arguments: source.owner.arguments)
        case .subqueryCount(let collection, let predicate):
            let source = try self.source(collection)
            let condition = try self.predicate(predicate)
            return Fragment(sql: "(SELECT COUNT(*) FROM \(source.from) WHERE \(source.owner.sql) AND \(condition.sql))",
                            arguments: source.owner.arguments + condition.arguments)
        case .total(let parts):
            var fragments: [Fragment] = []
            for part in parts { fragments.append(try self.scalar(part)) }
            return Fragment(sql: "(" + fragments.map(\.sql).joined(separator: " + ") + ")",
                            arguments: fragments.flatMap(\.arguments))
        case .count(let collection):
            let b = try self.scalar(collection.base)
            let c = alias("c")
            let table = Self.q(StorageLayout.collectionTable(collection.owner, collection.property))
            return Fragment(sql: "(SELECT COUNT(*) FROM \(table) \(c) WHERE \(c).\(Self.q("owner")) = \(b.sql)\(Self.hideUnresolved(collection, c)))",
                            arguments: b.arguments)
        case .aggregate(let kind, let collection, let element, let type):
            let source = try self.source(collection)
            let e = try self.scalar(element)
            let rest = " FROM \(source.from) WHERE \(source.owner.sql)"
            let decimal = type == .decimal128
            switch kind {
            case .minimum where decimal, .maximum where decimal:
                let direction = kind == .minimum ? "ASC" : "DESC"
                return Fragment(sql: "(SELECT \(e.sql)\(rest) AND \(e.sql) IS NOT NULL ORDER BY \(e.sql) "
                                    + "COLLATE \(StorageLayout.decimalCollation) \(direction) LIMIT 1)",
                                arguments: e.arguments + source.owner.arguments + e.arguments + e.arguments)
            default:
                let call = switch kind {
                case .sum: decimal ? "\(QueryFunctions.decimalSum)(group_concat(\(e.sql), ' '))"
                    : type == .int ? "COALESCE(SUM(\(e.sql)), 0)" : "TOTAL(\(e.sql))"
                case .average: decimal ? "\(QueryFunctions.decimalAverage)(group_concat(\(e.sql), ' '))" : "AVG(\(e.sql))"
                case .minimum: "MIN(\(e.sql))"
                case .maximum: "MAX(\(e.sql))"
                }
                return Fragment(sql: "(SELECT \(call)\(rest))", arguments: e.arguments + source.owner.arguments)
            }
        case .size(let base):
            let b = try self.scalar(base)
            return Fragment(sql: "\(QueryFunctions.size)(\(b.sql))", arguments: b.arguments)
        case .typeName(let base):
            let b = try self.scalar(base)
            return Fragment(sql: "\(QueryFunctions.mixedType)(\(b.sql))", arguments: b.arguments)
        }
    }

    private mutating func constant(_ value: Value) throws(QueryError) -> Fragment {
        switch value {
        case .null:
            return Fragment(sql: "NULL")
        case .link(let link):
            guard let key = schema[link.objectType]?.primaryKey, !link.primaryKey.isNull else {
                throw QueryError(.unsupported, "a link to '\(link.objectType)' has no SQL form: the type has no primary key")
            }
            let table = Self.q(StorageLayout.table(link.objectType))
            let k = alias("k")
            // A link to a missing object matches no row, not the null link: hence -1, never a row.
            return Fragment(sql: "COALESCE((SELECT \(k).\(Self.row) FROM \(table) \(k) WHERE \(k).\(Self.q(key)) = ?), -1)",
                            arguments: [link.primaryKey.sqlValue])
        case .object, .list, .set, .map:
            throw QueryError(.unsupported, "\(QueryParser.article(value.kindName)) constant has no SQL form")
        default:
            return Fragment(sql: "?", arguments: [value.sqlValue])
        }
    }
}
