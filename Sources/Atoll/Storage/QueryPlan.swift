import AtollCore
import Foundation

/// A query translated to SQL, cached per file: results of the same query skip binding and
/// translation.
///
/// ```swift
/// let plan = QueryPlan(bound, translated: try SQLTranslator.translate(bound), table: table, collection: nil)
/// let rows = try realm.store.rows(matching: plan, owner: nil)
/// ```
struct QueryPlan: @unchecked Sendable {
    struct Key: Hashable, @unchecked Sendable {
        let objectType: String
        /// The collection table (and kind) the results are scoped to, if any.
        let collection: String?
        let expression: QueryExpression
    }

    let sql: String
    /// Arguments of the SQL after the collection owner's row (which the caller puts first).
    let arguments: [SQLValue]
    let post: [BoundClause]
    let bound: BoundQuery

    /// The plan of a query over every object of `table`, or over the objects a list or set
    /// property of one owner holds (in the list's order unless the query sorts).
    init(_ bound: BoundQuery, translated: SQLQuery, table: TableInfo, collection: (owner: TableInfo, property: Int)?) {
        let columns = table.columns.map { ", t0." + table.column($0) }.joined()
        var sql = "SELECT t0._row\(columns) FROM \(table.table) AS t0"
        if let (owner, property) = collection {
            let isList = owner.property(property).collection == .list
            sql += " JOIN \(owner.collectionTable(property)) AS base ON base.value = t0._row"
            sql += " WHERE base.owner = ? AND (\(translated.whereClause))"
            // Without a SORT, a list keeps its own order.
            let sorted = bound.clauses.first.map { if case .sort = $0 { true } else { false } } ?? false
            sql += " ORDER BY " + (sorted || !isList ? translated.orderBy : "base.pos")
        } else {
            sql += " WHERE \(translated.whereClause) ORDER BY \(translated.orderBy)"
        }
        if let limit = translated.limit { sql += " LIMIT \(limit)" }
        self.sql = sql
        arguments = translated.whereArguments + translated.orderByArguments
        post = translated.postClauses
        self.bound = bound
    }
}

extension ObjectStore {
    /// The rows a plan matches, with their values; `owner` is the collection owner's row for a
    /// plan over a collection.
    func rows(matching plan: QueryPlan, owner: Int64?) throws -> [(row: Int64, values: [SQLValue])] {
        try connection.fetchRows(plan.sql, owner.map { [.integer($0)] + plan.arguments } ?? plan.arguments)
    }
}
