extension QueryExpression {
    /// Parses query text, substituting `arguments` for its placeholders.
    ///
    /// ```swift
    /// let q = try QueryExpression.parse("owner == %@ AND priority > %d SORT(priority DESC)",
    ///                                   arguments: [.string("Frodo"), .int(3)])
    /// ```
    /// Placeholders: `%@` any value (an array for `IN`), `%d` an integer, `%f` a number, `%K` a key path
    /// given as a string, `$0`, `$1`, … by position. Missing, surplus or wrongly typed arguments throw
    /// ``QueryError/Code/badArgument``.
    package static func parse(_ text: String, arguments: [Value] = []) throws(QueryError) -> QueryExpression {
        try parse(text, arguments: arguments.map(QueryArgument.value))
    }

    /// Parses query text whose arguments may also be geospatial shapes (`location GEOWITHIN %@`).
    ///
    /// ```swift
    /// let circle = GeoCircle(center: (48.85, 2.35), radius: .kilometers(5)!)!
    /// let q = try QueryExpression.parse("location GEOWITHIN $0", arguments: [.geometry(.circle(circle))])
    /// ```
    package static func parse(_ text: String, arguments: [QueryArgument]) throws(QueryError) -> QueryExpression {
        var parser = QueryParser(tokens: try QueryLexer.tokenize(text), arguments: arguments)
        return try parser.parseQuery()
    }
}

/// A recursive-descent parser over ``QueryToken``s. Precedence: `NOT` > `AND` > `OR`.
package struct QueryParser {
    var tokens: [QueryToken]
    var index = 0
    let arguments: [QueryArgument]
    var nextSequentialArgument = 0
    var highestPositionalArgument = -1
    /// How many `(`, `NOT` and `SUBQUERY` enclose the current token.
    var depth = 0
    /// The variables of the `SUBQUERY`s enclosing the current token, innermost last.
    var variables: [String] = []

    init(tokens: [QueryToken], arguments: [QueryArgument]) {
        self.tokens = tokens
        self.arguments = arguments
    }

    var current: QueryToken { tokens[index] }
    var previous: QueryToken? { index > 0 ? tokens[index - 1] : nil }

    @discardableResult
    mutating func advance() -> QueryToken {
        let token = tokens[index]
        if token.kind != .end { index += 1 }
        return token
    }

    mutating func take(_ symbol: String) -> Bool {
        guard current.isSymbol(symbol) else { return false }
        advance()
        return true
    }

    mutating func takeKeyword(_ words: String...) -> QueryToken? {
        guard words.contains(where: current.isKeyword) else { return nil }
        return advance()
    }

    /// "expected `what` after 'previous'", with what was found instead when it is not the end.
    func expected(_ what: String) -> QueryError {
        var message = "expected " + what
        if let previous { message += " after " + previous.quotedText }
        if current.kind != .end { message += ", found \(current.quotedText)" }
        return QueryError(.syntaxError, message, at: current.range)
    }

    mutating func expect(_ symbol: String) throws(QueryError) -> QueryToken {
        guard current.isSymbol(symbol) else { throw expected("'\(symbol)'") }
        return advance()
    }

    // MARK: - Query and predicates

    mutating func parseQuery() throws(QueryError) -> QueryExpression {
        if current.kind == .end {
            throw QueryError(.syntaxError, "the query is empty", at: current.range)
        }
        let predicate = try parseOr()
        var clauses: [QueryClause] = []
        while current.kind != .end {
            guard tokens[index + 1].isSymbol("("), let clause = try parseClause() else {
                throw QueryError(.syntaxError,
                                 "expected AND, OR, SORT, DISTINCT, LIMIT or the end of the query, found \(current.quotedText)",
                                 at: current.range)
            }
            clauses.append(clause)
        }
        let used = max(nextSequentialArgument, highestPositionalArgument + 1)
        if arguments.count > used {
            throw QueryError(.badArgument,
                             "\(Self.count(arguments.count, "argument")) given but the query uses \(used)")
        }
        return QueryExpression(predicate: predicate, clauses: clauses)
    }

    /// `a OR b OR …`. The operands of one chain become a balanced tree (see ``QueryPredicate/chain(_:and:)``),
    /// so a long flat chain costs no recursion depth.
    mutating func parseOr() throws(QueryError) -> QueryPredicate {
        var operands = [try parseAnd()]
        while takeKeyword("OR") != nil || take("||") {
            operands.append(try parseAnd())
        }
        return QueryPredicate.chain(operands[...], and: false)
    }

    mutating func parseAnd() throws(QueryError) -> QueryPredicate {
        var operands = [try parseNot()]
        while takeKeyword("AND") != nil || take("&&") {
            operands.append(try parseNot())
        }
        return QueryPredicate.chain(operands[...], and: true)
    }

    /// `NOT p`, `!p`: each one nests a level (a run of them is not folded: `NOT NOT p` is kept as written).
    mutating func parseNot() throws(QueryError) -> QueryPredicate {
        if current.isKeyword("NOT") || current.isSymbol("!") {
            try enterNestedLevel()
            defer { depth -= 1 }
            let start = advance().range
            let operand = try parseNot()
            return QueryPredicate(.not(operand), range: start.through(operand.range))
        }
        return try parsePrimary()
    }

    mutating func parsePrimary() throws(QueryError) -> QueryPredicate {
        if current.isSymbol("(") {
            try enterNestedLevel()
            defer { depth -= 1 }
            let open = advance().range
            let inner = try parseOr()
            let close = try expect(")").range
            return QueryPredicate(inner.kind, range: open.through(close))
        }
        if let token = takeKeyword("TRUEPREDICATE", "FALSEPREDICATE") {
            return QueryPredicate(.constant(token.isKeyword("TRUEPREDICATE")), range: token.range)
        }
        if current.kind == .end { throw expected("a predicate") }
        return try parseComparison()
    }

    /// Counts one more level of `(` or `NOT`, refusing to go past ``QueryExpression/maximumNestingDepth``:
    /// the parser (and every pass over the tree after it) recurses once per level, and query text comes
    /// from the network, so an unbounded depth would let a client overflow the server's stack.
    mutating func enterNestedLevel() throws(QueryError) {
        guard depth < QueryExpression.maximumNestingDepth else {
            throw QueryError(.tooComplex,
                             "the query nests deeper than \(QueryExpression.maximumNestingDepth) levels of parentheses and NOT",
                             at: current.range)
        }
        depth += 1
    }

    mutating func parseComparison() throws(QueryError) -> QueryPredicate {
        var quantifier: QueryQuantifier?
        var start = current.range
        if let word = ["ANY", "SOME", "ALL", "NONE"].first(where: current.isKeyword) {
            switch tokens[index + 1].kind {
            case .identifier, .placeholder(.keyPath), .variable, .collectionOperator("@links"):
                quantifier = word == "ALL" ? .all : word == "NONE" ? QueryQuantifier.none : .any
                start = advance().range
            default: break
            }
        }
        let lhs = try parseOperand(expecting: quantifier == nil ? "a key path or a value" : "a key path")
        guard let (parsedOperator, opToken) = parseOperator() else {
            throw expected("a comparison operator")
        }
        // realm-swift's string form of a geospatial query: `location IN %@` with a shape.
        let op = parsedOperator == .in && isGeometryPlaceholder(current) ? .geoWithin : parsedOperator
        let options = try parseOptions(for: op, opToken: opToken)
        let rhs: QueryOperand
        switch op {
        case .geoWithin:
            rhs = try parseGeometry()
        case .in where current.isSymbol("{"), .between where current.isSymbol("{"):
            rhs = try parseList(after: opToken, exactly: op == .between ? 2 : nil)
        case .between:
            rhs = try parseOperand(expecting: "'{' or an argument")
            try checkListArgument(rhs, for: op, count: 2)
        case .in:
            rhs = try parseOperand(expecting: "'{', an argument or a key path")
            try checkListArgument(rhs, for: op, count: nil)
        default:
            rhs = try parseOperand(expecting: "a value")
        }
        let comparison = QueryComparison(lhs, op, rhs, options: options, quantifier: quantifier,
                                         operatorRange: opToken.range)
        return QueryPredicate(.comparison(comparison), range: start.through(rhs.range))
    }

    /// Whether `token` is a placeholder whose argument is a geospatial shape (without taking it).
    func isGeometryPlaceholder(_ token: QueryToken) -> Bool {
        guard case .placeholder = token.kind else { return false }
        var probe = self
        return (try? probe.geometryArgument(token)) != nil
    }

    mutating func parseOperator() -> (QueryOperator, QueryToken)? {
        let symbols: [String: QueryOperator] = [
            "==": .equal, "=": .equal, "!=": .notEqual, "<>": .notEqual, "<": .less, "<=": .lessOrEqual,
            ">": .greater, ">=": .greaterOrEqual,
        ]
        if case .symbol(let s) = current.kind, let op = symbols[s] { return (op, advance()) }
        let words: [QueryOperator] = [.beginsWith, .endsWith, .contains, .like, .in, .between, .geoWithin]
        if let op = words.first(where: { current.isKeyword($0.rawValue) }) { return (op, advance()) }
        return nil
    }

    /// `[c]`, `[d]` or `[cd]` right after an operator.
    mutating func parseOptions(for op: QueryOperator, opToken: QueryToken) throws(QueryError) -> QueryStringOptions {
        guard current.isSymbol("["), case .identifier(let word) = tokens[index + 1].kind,
              tokens[index + 2].isSymbol("]") else { return [] }
        let range = current.range.through(tokens[index + 2].range)
        var options: QueryStringOptions = []
        for letter in word.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            default:
                throw QueryError(.syntaxError,
                                 "unknown comparison option '[\(word)]'; use [c] for case-insensitive, [d] for diacritic-insensitive",
                                 at: range)
            }
        }
        if op.isOrdering || op == .between || op == .geoWithin {
            throw QueryError(.invalidOperation, "'[\(word)]' cannot modify '\(opToken.text)'; "
                + "it applies to ==, !=, IN, BEGINSWITH, ENDSWITH, CONTAINS and LIKE", at: range)
        }
        index += 3
        return options
    }

    // MARK: - Operands

    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE",
        "TRUEPREDICATE", "FALSEPREDICATE", "ANY", "SOME", "ALL", "NONE", "GEOWITHIN",
    ]

    mutating func parseOperand(expecting what: String) throws(QueryError) -> QueryOperand {
        let token = current
        switch token.kind {
        case .identifier(let name):
            switch name.lowercased() {
            case "true", "false":
                advance()
                return QueryOperand(.value(.bool(name.lowercased() == "true")), range: token.range)
            case "nil", "null":
                advance()
                return QueryOperand(.value(.null), range: token.range)
            default:
                guard !Self.reservedWords.contains(name.uppercased()) else { throw expected(what) }
                if name.uppercased() == "SUBQUERY", tokens[index + 1].isSymbol("(") { return try parseSubquery() }
                let path = try parseKeyPath()
                return QueryOperand(.keyPath(path), range: path.range)
            }
        case .variable, .collectionOperator("@links"):
            let path = try parseKeyPath()
            return QueryOperand(.keyPath(path), range: path.range)
        case .integer(let i): advance(); return QueryOperand(.value(.int(i)), range: token.range)
        case .float(let d): advance(); return QueryOperand(.value(.double(d)), range: token.range)
        case .string(let s): advance(); return QueryOperand(.value(.string(s)), range: token.range)
        case .constant(let v): advance(); return QueryOperand(.value(v), range: token.range)
        case .placeholder(.keyPath):
            advance()
            return QueryOperand(.keyPath(try keyPathArgument(token)), range: token.range)
        case .placeholder:
            advance()
            return QueryOperand(.value(try argument(token)), range: token.range)
        default:
            throw expected(what)
        }
    }

    mutating func parseKeyPath() throws(QueryError) -> QueryKeyPath {
        if case .placeholder(.keyPath) = current.kind {
            let token = advance()
            return try keyPathArgument(token)
        }
        var elements: [QueryKeyPath.Element]
        switch current.kind {
        case .identifier(let first):
            elements = [QueryKeyPath.Element(.property(first), range: advance().range)]
        case .variable(let name):
            guard variables.contains(name) else {
                throw QueryError(.syntaxError, "'$\(name)' is not the variable of an enclosing SUBQUERY", at: current.range)
            }
            elements = [QueryKeyPath.Element(.variable(name), range: advance().range)]
        case .collectionOperator("@links"):
            elements = [parseLinks()]
        default:
            throw expected("a key path")
        }
        while true {
            if current.isSymbol(".") {
                advance()
                switch current.kind {
                case .identifier(let name): elements.append(.init(.property(name), range: advance().range))
                case .collectionOperator("@links"): elements.append(parseLinks())
                case .collectionOperator(let word):
                    elements.append(.init(QueryKeyPath.component(word), range: advance().range))
                default: throw expected("a property name or a collection operator")
                }
            } else if current.isSymbol("["), case .string(let key) = tokens[index + 1].kind,
                      tokens[index + 2].isSymbol("]") {
                let range = current.range.through(tokens[index + 2].range)
                index += 3
                elements.append(.init(.key(key), range: range))
            } else if current.isSymbol("["), case .integer(let position) = tokens[index + 1].kind,
                      tokens[index + 2].isSymbol("]") {
                let range = current.range.through(tokens[index + 2].range)
                guard let position = Int(exactly: position) else { throw QueryError(.syntaxError, "index out of range", at: range) }
                index += 3
                elements.append(.init(.index(position), range: range))
            } else if current.isSymbol("["), tokens[index + 1].isSymbol("*"), tokens[index + 2].isSymbol("]") {
                let range = current.range.through(tokens[index + 2].range)
                index += 3
                elements.append(.init(.allElements, range: range))
            } else {
                return try Self.checkLength(QueryKeyPath(elements: elements))
            }
        }
    }

    /// `@links.Type.property`, or `@links` alone (followed by `.@count`).
    mutating func parseLinks() -> QueryKeyPath.Element {
        let start = advance().range
        if index + 3 < tokens.count, tokens[index].isSymbol("."), case .identifier(let type) = tokens[index + 1].kind,
           tokens[index + 2].isSymbol("."), case .identifier(let property) = tokens[index + 3].kind {
            let end = tokens[index + 3].range
            index += 4
            return .init(.links(type: type, property: property), range: start.through(end))
        }
        return .init(.allLinks, range: start)
    }

    /// Refuses key paths longer than ``QueryExpression/maximumKeyPathLength``: binding lifts every
    /// collection on a path into a nested quantifier, so the path's length is a nesting depth too.
    static func checkLength(_ path: QueryKeyPath) throws(QueryError) -> QueryKeyPath {
        guard path.elements.count <= QueryExpression.maximumKeyPathLength else {
            throw QueryError(.tooComplex,
                             "the key path has \(path.elements.count) components, more than \(QueryExpression.maximumKeyPathLength)",
                             at: path.range)
        }
        return path
    }

    /// `{v1, v2, …}`: constants and value placeholders only.
    mutating func parseList(after opToken: QueryToken, exactly count: Int?) throws(QueryError) -> QueryOperand {
        let open = advance().range
        var values: [Value] = []
        if !current.isSymbol("}") {
            repeat {
                let operand = try parseOperand(expecting: "a value")
                guard case .value(let value) = operand.kind else {
                    throw QueryError(.syntaxError, "expected a value in the list, found key path '\(operand)'",
                                     at: operand.range)
                }
                values.append(value)
            } while take(",")
        }
        let close = try expect("}").range
        if let count, values.count != count {
            throw QueryError(.syntaxError,
                             "'\(opToken.text)' needs exactly \(count) values {low, high}, found \(values.count)",
                             at: open.through(close))
        }
        return QueryOperand(.value(.list(values)), range: open.through(close))
    }

    func checkListArgument(_ operand: QueryOperand, for op: QueryOperator, count: Int?) throws(QueryError) {
        guard case .value(let value) = operand.kind else {
            if op == .in { return }
            throw QueryError(.syntaxError, "BETWEEN needs {low, high}, found key path '\(operand)'", at: operand.range)
        }
        guard case .list(let items) = value else {
            throw QueryError(.badArgument, "\(op.rawValue) needs a list argument, got \(Self.article(value.kindName))",
                             at: operand.range)
        }
        if let count, items.count != count {
            throw QueryError(.badArgument, "BETWEEN needs a list of exactly \(count) values, got \(items.count)",
                             at: operand.range)
        }
    }

    // MARK: - Tail clauses

    mutating func parseClause() throws(QueryError) -> QueryClause? {
        if takeKeyword("SORT") != nil {
            _ = try expect("(")
            var keys: [QuerySortKey] = []
            repeat {
                let path = try parseKeyPath()
                var ascending = true
                if takeKeyword("ASC", "ASCENDING") != nil {
                    ascending = true
                } else if takeKeyword("DESC", "DESCENDING") != nil {
                    ascending = false
                }
                keys.append(QuerySortKey(path, ascending: ascending))
            } while take(",")
            _ = try expect(")")
            return .sort(keys)
        }
        if takeKeyword("DISTINCT") != nil {
            _ = try expect("(")
            var paths: [QueryKeyPath] = []
            repeat { paths.append(try parseKeyPath()) } while take(",")
            _ = try expect(")")
            return .distinct(paths)
        }
        if takeKeyword("LIMIT") != nil {
            _ = try expect("(")
            let token = current
            let count: Int64
            switch token.kind {
            case .integer(let n): advance(); count = n
            case .placeholder(.keyPath): throw expected("a count")
            case .placeholder:
                advance()
                guard case .int(let n) = try argument(token) else {
                    throw QueryError(.badArgument, "LIMIT needs an integer argument", at: token.range)
                }
                count = n
            default: throw expected("a count")
            }
            guard count >= 0, let limit = Int(exactly: count) else {
                throw QueryError(.syntaxError, "LIMIT needs a count of 0 or more, found \(count)", at: token.range)
            }
            _ = try expect(")")
            return .limit(limit)
        }
        return nil
    }
}
