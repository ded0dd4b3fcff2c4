// Limits on query text. Subscription queries come from the network, and the parser, the binder, the
// evaluator, the SQL translator and `description` all recurse over the tree, so its depth must be
// bounded by something the server controls, not by the client's stack.
//
// - Parentheses and `NOT`/`!` nest: at most `maximumNestingDepth` (100) levels, which no hand-written
//   query reaches, and which keeps every pass's recursion shallow.
// - `AND`/`OR` chains are not nesting: `a == 1 OR a == 2 OR …` may have any number of operands (as in
//   Realm Core and PostgreSQL, which keep such chains flat). The parser builds each chain as a balanced
//   tree, so a chain of n operands is log2(n) deep; equality, hashing and `description` treat the
//   operators as associative, so the grouping is invisible. `IN {…}` lists bind the same way. The length
//   of such a query is bounded only by its text, which the sync protocol bounds by its message size.
// - SUBQUERY: each nests a level, and at most `maximumSubqueryDepth` (10) may enclose one another,
//   since evaluating one visits every element of its collection for every element of the enclosing one.
// - Geospatial polygons: at most `GeoPolygon.maximumVertexCount` points and `maximumHoleCount` holes.
// - Key paths: at most `maximumKeyPathLength` (100) components, since every collection on a path becomes
//   a nested quantifier when binding.

extension QueryExpression {
    /// The deepest nesting of parentheses and `NOT`/`!` a query may have: 100. Deeper queries throw
    /// ``QueryError/Code/tooComplex``. `AND`/`OR` chains do not count: they may be of any length.
    ///
    /// ```swift
    /// let text = String(repeating: "NOT ", count: 101) + "done == true"
    /// try QueryExpression.parse(text)   // throws: the query nests deeper than 100 levels …
    /// ```
    package static let maximumNestingDepth = 100

    /// The most components a key path may have (`a.b.@count` has 3): 100. Longer key paths throw
    /// ``QueryError/Code/tooComplex``.
    package static let maximumKeyPathLength = 100

    /// The most `SUBQUERY`s that may enclose one another: 10. Each also counts as a level of
    /// ``maximumNestingDepth``. Deeper queries throw ``QueryError/Code/tooComplex``.
    package static let maximumSubqueryDepth = 10
}

extension QueryPredicate {
    /// `operands` joined by `AND` (or `OR`) as a balanced tree, so its depth is log2 of its length.
    /// Each node's range covers its operands.
    ///
    /// - Precondition: `operands` is not empty.
    /// - Complexity: O(*n*), recursing log2(*n*) deep.
    static func chain(_ operands: ArraySlice<QueryPredicate>, and: Bool) -> QueryPredicate {
        if operands.count == 1 { return operands[operands.startIndex] }
        let middle = operands.startIndex + operands.count / 2
        let lhs = chain(operands[..<middle], and: and), rhs = chain(operands[middle...], and: and)
        return QueryPredicate(and ? .and(lhs, rhs) : .or(lhs, rhs), range: lhs.range.through(rhs.range))
    }

    /// The operands of the `AND` (or `OR`) chain this predicate heads, left to right, however the chain
    /// is grouped: `(a AND b) AND c` and `a AND (b AND c)` both give `[a, b, c]`. `[self]` when it is not
    /// such a chain. Iterative, so a long chain built in code (`p1 && p2 && …`, left-deep) is safe.
    func chainOperands(and: Bool) -> [QueryPredicate] {
        var operands: [QueryPredicate] = []
        var pending = [self]
        while let next = pending.popLast() {
            switch next.kind {
            case .and(let lhs, let rhs) where and, .or(let lhs, let rhs) where !and:
                pending.append(rhs)
                pending.append(lhs)
            default:
                operands.append(next)
            }
        }
        return operands
    }
}

/// Equality and hashing by meaning: `AND` and `OR` are associative, so chains compare by their operands
/// whatever their grouping (the parser groups long chains as balanced trees, code groups them left-deep).
extension QueryPredicate.Kind {
    package static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case let (.constant(x), .constant(y)): return x == y
        case let (.comparison(x), .comparison(y)): return x == y
        case let (.not(x), .not(y)): return x == y
        case (.and, .and): return QueryPredicate(a).chainOperands(and: true) == QueryPredicate(b).chainOperands(and: true)
        case (.or, .or): return QueryPredicate(a).chainOperands(and: false) == QueryPredicate(b).chainOperands(and: false)
        default: return false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .constant(let value):
            hasher.combine(0)
            hasher.combine(value)
        case .comparison(let comparison):
            hasher.combine(1)
            hasher.combine(comparison)
        case .not(let operand):
            hasher.combine(2)
            hasher.combine(operand)
        case .and:
            hasher.combine(3)
            hasher.combine(QueryPredicate(self).chainOperands(and: true))
        case .or:
            hasher.combine(4)
            hasher.combine(QueryPredicate(self).chainOperands(and: false))
        }
    }
}
