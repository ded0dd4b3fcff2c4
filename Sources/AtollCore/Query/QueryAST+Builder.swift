/// Building queries in code, as the typed `.where { … }` builder does. The result equals the parsed
/// form of the same query text.
///
/// ```swift
/// let p: QueryPredicate = .compare("owner", .equal, .string("Frodo")) && !.compare("done", .equal, .bool(true))
/// p == (try QueryExpression.parse("owner == 'Frodo' AND NOT done == true")).predicate   // true
/// ```
extension QueryPredicate {
    /// `TRUEPREDICATE`.
    package static let truePredicate = QueryPredicate(.constant(true))
    /// `FALSEPREDICATE`.
    package static let falsePredicate = QueryPredicate(.constant(false))

    /// `lhs op[options] rhs` between any two operands.
    package static func comparison(_ lhs: QueryOperand, _ op: QueryOperator, _ rhs: QueryOperand,
                                  options: QueryStringOptions = [],
                                  quantifier: QueryQuantifier? = nil) -> QueryPredicate {
        QueryPredicate(.comparison(QueryComparison(lhs, op, rhs, options: options, quantifier: quantifier)))
    }

    /// `keyPath op[options] value`, e.g. `.compare("age", .greater, .int(3))`.
    package static func compare(_ keyPath: QueryKeyPath, _ op: QueryOperator, _ value: Value,
                               options: QueryStringOptions = [],
                               quantifier: QueryQuantifier? = nil) -> QueryPredicate {
        comparison(.keyPath(keyPath), op, .value(value), options: options, quantifier: quantifier)
    }

    /// `keyPath IN {values…}`.
    package static func isIn(_ keyPath: QueryKeyPath, _ values: [Value], options: QueryStringOptions = [],
                            quantifier: QueryQuantifier? = nil) -> QueryPredicate {
        compare(keyPath, .in, .list(values), options: options, quantifier: quantifier)
    }

    /// `keyPath BETWEEN {low, high}`.
    package static func between(_ keyPath: QueryKeyPath, _ low: Value, _ high: Value,
                               quantifier: QueryQuantifier? = nil) -> QueryPredicate {
        compare(keyPath, .between, .list([low, high]), quantifier: quantifier)
    }

    /// `ANY keyPath op value`: true when some element of the collection matches.
    package static func any(_ keyPath: QueryKeyPath, _ op: QueryOperator, _ value: Value,
                           options: QueryStringOptions = []) -> QueryPredicate {
        compare(keyPath, op, value, options: options, quantifier: .any)
    }

    /// `ALL keyPath op value`: true when every element matches (and for an empty collection).
    package static func all(_ keyPath: QueryKeyPath, _ op: QueryOperator, _ value: Value,
                           options: QueryStringOptions = []) -> QueryPredicate {
        compare(keyPath, op, value, options: options, quantifier: .all)
    }

    /// `NONE keyPath op value`: true when no element matches.
    package static func none(_ keyPath: QueryKeyPath, _ op: QueryOperator, _ value: Value,
                            options: QueryStringOptions = []) -> QueryPredicate {
        compare(keyPath, op, value, options: options, quantifier: QueryQuantifier.none)
    }

    package static func && (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(.and(lhs, rhs))
    }

    package static func || (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(.or(lhs, rhs))
    }

    package static prefix func ! (operand: QueryPredicate) -> QueryPredicate {
        QueryPredicate(.not(operand))
    }
}

extension QueryOperand {
    package static func keyPath(_ keyPath: QueryKeyPath) -> QueryOperand { QueryOperand(.keyPath(keyPath)) }
    package static func value(_ value: Value) -> QueryOperand { QueryOperand(.value(value)) }
}

extension QueryExpression {
    /// Appends `SORT(keyPath ASC|DESC)`.
    package func sorted(by keyPath: QueryKeyPath, ascending: Bool = true) -> QueryExpression {
        QueryExpression(predicate: predicate, clauses: clauses + [.sort([QuerySortKey(keyPath, ascending: ascending)])])
    }

    /// Appends `DISTINCT(keyPaths…)`.
    package func distinct(by keyPaths: [QueryKeyPath]) -> QueryExpression {
        QueryExpression(predicate: predicate, clauses: clauses + [.distinct(keyPaths)])
    }

    /// Appends `LIMIT(count)`.
    package func limited(to count: Int) -> QueryExpression {
        QueryExpression(predicate: predicate, clauses: clauses + [.limit(count)])
    }
}
