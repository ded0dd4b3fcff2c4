import AtollCore
import Foundation

/// The shared, cached state behind a `Results` value: the query, and the rows it matched in the
/// realm's current snapshot.
final class ResultsCore {
    let realm: Realm
    let table: TableInfo?
    let expression: QueryExpression
    private var cache: [(row: Int64, values: [SQLValue])] = []
    private var cacheStamp = -1
    private var plan: (sql: String, arguments: [SQLValue], post: [BoundClause])?

    private var bound: BoundQuery?

    init(realm: Realm, table: TableInfo?, expression: QueryExpression, bound: BoundQuery? = nil) {
        self.realm = realm
        self.table = table
        self.expression = expression
        self.bound = bound
    }

    /// Checks that `expression` fits the schema, as a `Realm.Error`; returns the checked form.
    @discardableResult
    func validate(_ expression: QueryExpression) throws -> BoundQuery? {
        guard let table else { return nil }
        do {
            return try expression.bind(to: table.name, in: realm.schema)
        } catch {
            throw Realm.Error(.invalidQuery, "\(error)", underlying: error)
        }
    }

    private func makePlan(_ table: TableInfo) throws -> (sql: String, arguments: [SQLValue], post: [BoundClause]) {
        if let plan { return plan }
        let bound: BoundQuery
        if let checked = self.bound {
            bound = checked
        } else {
            do {
                bound = try expression.bind(to: table.name, in: realm.schema)
            } catch {
                throw Realm.Error(.invalidQuery, "\(error)", underlying: error)
            }
        }
        let translated = try SQLTranslator.translate(bound)
        let columns = table.columns.map { "t0." + table.column($0) }
        var sql = "SELECT t0._row\(columns.map { ", " + $0 }.joined()) FROM \(table.table) AS t0 WHERE \(translated.whereClause)"
        sql += " ORDER BY " + (translated.orderBy ?? "t0._row")
        if let limit = translated.limit { sql += " LIMIT \(limit)" }
        let made = (sql, translated.arguments, translated.postClauses)
        plan = made
        return made
    }

    /// The matching rows with their values, evaluated once per snapshot.
    func rows() -> [(row: Int64, values: [SQLValue])] {
        realm.verifyThread()
        if cacheStamp == realm.stamp { return cache }
        guard let table else { return [] }
        do {
            let plan = try makePlan(table)
            var rows = try realm.connection.fetchAll(plan.sql, plan.arguments).map { raw -> (row: Int64, values: [SQLValue]) in
                guard case .integer(let row) = raw[0] else { return (0, []) }
                return (row, Array(raw.dropFirst()))
            }
            for clause in plan.post { rows = apply(clause, to: rows, table) }
            cache = rows
        } catch {
            preconditionFailure("\(error)")
        }
        cacheStamp = realm.stamp
        return cache
    }

    /// DISTINCT and LIMIT written after a DISTINCT run here, on rows already in SQL order.
    private func apply(_ clause: BoundClause, to rows: [(row: Int64, values: [SQLValue])], _ table: TableInfo) -> [(row: Int64, values: [SQLValue])] {
        switch clause {
        case .limit(let n): return Array(rows.prefix(n))
        case .distinct(let keys):
            var seen: Set<[SQLValue]> = []
            return rows.filter { row in
                let key = keys.map { key -> SQLValue in
                    distinctValue(key.keyPath, row, table)
                }
                return seen.insert(key).inserted
            }
        case .sort(let keys):
            return rows.sorted { a, b in
                for key in keys {
                    let x = distinctValue(key.keyPath, a, table), y = distinctValue(key.keyPath, b, table)
                    let order = Self.compare(x, y)
                    if order != .orderedSame { return key.ascending ? order == .orderedAscending : order == .orderedDescending }
                }
                return false
            }
        }
    }

    /// The value of a key path for a fetched row (direct properties from the row, link paths read).
    private func distinctValue(_ keyPath: QueryKeyPath, _ row: (row: Int64, values: [SQLValue]), _ table: TableInfo) -> SQLValue {
        var currentTable = table
        var currentRow = row.row
        var values: [SQLValue]? = row.values
        for (position, element) in keyPath.elements.enumerated() {
            guard case .property(let name) = element.component,
                  let index = currentTable.schema.properties.firstIndex(where: { $0.name == name }),
                  let column = currentTable.columnPosition[index] else { return .null }
            if values == nil { values = try? realm.connection.fetchOne(currentTable.selectRow, [.integer(currentRow)]) }
            let raw = values?[column] ?? .null
            if position == keyPath.elements.count - 1 { return raw }
            guard case .integer(let next) = raw, let target = realm.coordinator.table(named: currentTable.property(index).objectType ?? "") else { return .null }
            currentTable = target
            currentRow = next
            values = nil
        }
        return .null
    }

    static func compare(_ a: SQLValue, _ b: SQLValue) -> ComparisonResult {
        func rank(_ v: SQLValue) -> Int {
            switch v { case .null: 0; case .integer, .real: 1; case .text: 2; case .blob: 3 }
        }
        switch (a, b) {
        case let (.integer(x), .integer(y)): return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        case let (.real(x), .real(y)): return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        case let (.integer(x), .real(y)): return Double(x) < y ? .orderedAscending : Double(x) == y ? .orderedSame : .orderedDescending
        case let (.real(x), .integer(y)): return x < Double(y) ? .orderedAscending : x == Double(y) ? .orderedSame : .orderedDescending
        case let (.text(x), .text(y)): return x.utf8.lexicographicallyPrecedes(y.utf8) ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        case let (.blob(x), .blob(y)): return x.lexicographicallyPrecedes(y) ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        default: return rank(a) < rank(b) ? .orderedAscending : rank(a) == rank(b) ? .orderedSame : .orderedDescending
        }
    }

    func object(at position: Int, _ rows: [(row: Int64, values: [SQLValue])]) -> ObjectBase {
        realm.materialize(table!, row: rows[position].row, prefetched: rows[position].values)
    }

    /// The values of one property over the results, for aggregates.
    func aggregate(_ property: String) -> [AtollCore.Value] {
        guard let table, let index = table.schema.properties.firstIndex(where: { $0.name == property }) else {
            preconditionFailure("'\(table?.name ?? "?")' has no property '\(property)'")
        }
        guard let column = table.columnPosition[index] else {
            preconditionFailure("'\(table.name).\(property)' is a collection; aggregates need a single value")
        }
        let type = table.property(index).type
        return rows().compactMap { AtollCore.Value(sql: $0.values[column], type: type) }.filter { !$0.isNull }
    }
}

extension QueryExpression {
    /// Both queries' predicates, and both's tail clauses in order.
    func and(_ other: QueryExpression) -> QueryExpression {
        let predicate: QueryPredicate = switch predicate.kind {
        case .constant(true): other.predicate
        default: self.predicate && other.predicate
        }
        return QueryExpression(predicate: predicate, clauses: clauses + other.clauses)
    }
}
