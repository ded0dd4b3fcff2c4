import AtollCore
import Foundation

/// A query translated to SQL, cached per file: results of the same query skip binding and
/// translation.
///
/// ```swift
/// let plan = QueryPlan(bound, translated: try SQLTranslator.translate(bound), table: table, scope: .table)
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

    /// What a plan's rows are drawn from: every object of the table, the objects one owner's list
    /// or set holds, or the objects whose link `property` (a to-one link, list or set of the
    /// table) points at one target (a `LinkingObjects`). The owner's or the target's row is the
    /// caller's first argument.
    enum Scope {
        case table
        case collection(owner: TableInfo, property: Int)
        case linking(property: Int)
    }

    /// The plan of a query over the objects of `table` that `scope` admits (a list keeps its own
    /// order unless the query sorts).
    init(_ bound: BoundQuery, translated: SQLQuery, table: TableInfo, scope: Scope) {
        let columns = table.columns.map { ", t0." + table.column($0) }.joined()
        var sql = "SELECT t0._row\(columns) FROM \(table.table) AS t0"
        switch scope {
        case .table:
            sql += " WHERE \(translated.whereClause) ORDER BY \(translated.orderBy)"
        case .collection(let owner, let property):
            let isList = owner.property(property).collection == .list
            sql += " JOIN \(owner.collectionTable(property)) AS base ON base.value = t0._row"
            sql += " WHERE base.owner = ? AND (\(translated.whereClause))"
            let sorted = bound.clauses.first.map { if case .sort = $0 { true } else { false } } ?? false
            sql += " ORDER BY " + (sorted || !isList ? translated.orderBy : "base.pos")
        case .linking(let property):
            if table.property(property).collection == .single {
                sql += " WHERE t0.\(table.column(property)) = ?"
            } else {
                sql += " WHERE t0._row IN (SELECT owner FROM \(table.collectionTable(property)) WHERE value = ?)"
            }
            sql += " AND (\(translated.whereClause)) ORDER BY \(translated.orderBy)"
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
