import AtollCore

/// A query as SQL over the tables of ``StorageLayout``, plus what the store must still do in memory.
///
/// ```swift
/// let sql = try SQLTranslator.translate(query)
/// let rows = try Row.fetchAll(db, sql: sql.statement(selecting: "t0._row"),
///                             arguments: StatementArguments(sql.arguments.map(\.databaseValue)))
/// // then, if !sql.postClauses.isEmpty: load the rows' objects and call
/// // query.apply(sql.postClauses, to: objects, values: …, resolver: …)
/// ```
///
/// The SQL calls the functions and collation listed in ``QueryFunctions``, which the store registers.
package struct SQLQuery: Sendable, Hashable {
    /// The object type's table, unquoted (`class_Task`), aliased ``alias`` in the SQL.
    package var table: String
    /// Always `t0`.
    package var alias: String
    /// The condition, for `WHERE`.
    package var whereClause: String
    /// Values for the `?` placeholders of ``whereClause``, in order.
    package var whereArguments: [SQLValue]
    /// The `ORDER BY` terms: the leading `SORT` clauses, then `t0._row` as the last tie-break.
    package var orderBy: String
    /// Values for the `?` placeholders of ``orderBy`` (map subscripts in sort keys), in order.
    package var orderByArguments: [SQLValue]
    /// A `LIMIT` that is safe to apply in SQL, or `nil`.
    package var limit: Int?
    /// Clauses the store applies in memory, in order, to the rows fetched in ``orderBy`` order,
    /// with ``BoundQuery/apply(_:to:values:resolver:)``.
    package var postClauses: [BoundClause]

    /// ``whereArguments`` followed by ``orderByArguments``: the arguments of ``statement(selecting:)``.
    package var arguments: [SQLValue] { whereArguments + orderByArguments }

    /// The key paths whose values ``postClauses`` read (`DISTINCT` and later `SORT` keys).
    package var postClauseKeyPaths: [QueryKeyPath] {
        postClauses.flatMap { clause -> [QueryKeyPath] in
            switch clause {
            case .sort(let keys), .distinct(let keys): keys.map(\.keyPath)
            case .limit: []
            }
        }
    }

    /// `SELECT columns FROM "class_T" t0 WHERE … ORDER BY … [LIMIT n]`.
    package func statement(selecting columns: String = "t0.*") -> String {
        var sql = "SELECT \(columns) FROM \(StorageLayout.quote(table)) \(alias) WHERE \(whereClause) ORDER BY \(orderBy)"
        if let limit { sql += " LIMIT \(limit)" }
        return sql
    }
}
