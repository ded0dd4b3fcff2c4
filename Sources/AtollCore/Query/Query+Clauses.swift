import Foundation

/// Running `SORT`, `DISTINCT` and `LIMIT` in memory, on objects given as property maps.
extension BoundQuery {
    /// Filters `elements` with the predicate, then applies every tail clause in order.
    ///
    /// `elements` must be in storage order (by row): it breaks every tie, as `t0._row` does in SQL.
    /// ```swift
    /// let names = query.run(on: people, values: { $0 }, resolver: resolver).map { $0["name"] }
    /// ```
    package func run<Element>(on elements: [Element], values: (Element) -> [String: Value],
                             resolver: some ObjectResolver) -> [Element] {
        let matching = elements.filter { evaluate(on: values($0), resolver: resolver) }
        return apply(clauses, to: matching, values: values, resolver: resolver)
    }

    /// Applies `clauses` in order to `elements`: the store calls this with `SQLQuery.postClauses`
    /// on the rows it fetched in `SQLQuery.orderBy` order.
    ///
    /// - `SORT`: a stable sort (nulls first when ascending, last when descending).
    /// - `DISTINCT`: keeps the first element of each group equal on every key.
    /// - `LIMIT(n)`: keeps the first `n`.
    /// - Complexity: O(*n* log *n*) per sort, O(*n*) per distinct or limit.
    package func apply<Element>(_ clauses: [BoundClause], to elements: [Element], values: (Element) -> [String: Value],
                               resolver: some ObjectResolver) -> [Element] {
        var result = elements
        for clause in clauses {
            switch clause {
            case .sort(let keys):
                let rows = result.map { element in keys.map { $0.value(in: values(element), resolver: resolver) } }
                let order = rows.indices.sorted { i, j in
                    for (k, key) in keys.enumerated() {
                        let c = key.type == .any ? QueryOrdering.mixedSort(rows[i][k], rows[j][k])
                            : QueryOrdering.compare(rows[i][k], rows[j][k]) ?? .orderedSame
                        if c != .orderedSame { return (c == .orderedAscending) == key.ascending }
                    }
                    return i < j
                }
                result = order.map { result[$0] }
            case .distinct(let keys):
                var seen: Set<[Value]> = []
                result = result.filter { element in
                    seen.insert(keys.map { Self.distinctForm($0.value(in: values(element), resolver: resolver)) }).inserted
                }
            case .limit(let n):
                result = Array(result.prefix(n))
            }
        }
        return result
    }

    /// Strings group by their exact scalars (as SQLite's BINARY collation), not by canonical equivalence.
    private static func distinctForm(_ value: Value) -> Value {
        if case .string(let s) = value { return .data(Data(s.utf8)) }
        return value
    }
}

extension BoundKey {
    /// The key's value for one object.
    package func value(in object: [String: Value], resolver: some ObjectResolver) -> Value {
        QueryEvaluator(resolver: resolver, contexts: [0: .object(object)]).value(scalar)
    }
}
