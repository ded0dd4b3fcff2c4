extension QueryExpression {
    /// Checks the query against `schema` for objects of type `objectType`.
    ///
    /// ```swift
    /// let bound = try QueryExpression.parse("dogs.@count > 1").bind(to: "Person", in: schema)
    /// ```
    /// Throws ``QueryError`` for unknown types and properties, operands that cannot be compared, and
    /// operators used on types they do not work on.
    ///
    /// `backlinks` names the computed backlink properties of each type (a client's `LinkingObjects`),
    /// which the schema does not hold because they are neither stored nor synced.
    package func bind(to objectType: String, in schema: Schema,
                     backlinks: [String: [ComputedBacklink]] = [:]) throws(QueryError) -> BoundQuery {
        guard schema[objectType] != nil else {
            throw QueryError(.unknownType, "unknown object type '\(objectType)'")
        }
        var binder = QueryBinder(schema: schema, root: objectType, backlinks: backlinks)
        let predicate = try binder.bind(self.predicate)
        var bound: [BoundClause] = []
        for clause in clauses {
            switch clause {
            case .sort(let keys):
                var out: [BoundKey] = []
                for key in keys { out.append(try binder.bindKey(key.keyPath, ascending: key.ascending, clause: "SORT")) }
                bound.append(.sort(out))
            case .distinct(let paths):
                var out: [BoundKey] = []
                for path in paths { out.append(try binder.bindKey(path, ascending: true, clause: "DISTINCT")) }
                bound.append(.distinct(out))
            case .limit(let n):
                bound.append(.limit(n))
            }
        }
        return BoundQuery(schema: schema, objectType: objectType, expression: self, predicate: predicate,
                          clauses: bound)
    }
}

extension BoundQuery {
    /// Parses and binds in one step.
    package init(parsing text: String, arguments: [Value] = [], objectType: String, schema: Schema,
                backlinks: [String: [ComputedBacklink]] = [:]) throws(QueryError) {
        self = try QueryExpression.parse(text, arguments: arguments).bind(to: objectType, in: schema, backlinks: backlinks)
    }
}

/// Resolves key paths and checks types; see ``QueryExpression/bind(to:in:)``.
struct QueryBinder {
    let schema: Schema
    let root: String
    let backlinks: [String: [ComputedBacklink]]
    var nextContext = 1
    /// The element context and kind of each enclosing SUBQUERY variable.
    var variables: [String: (context: Int, cursor: Cursor)] = [:]

    init(schema: Schema, root: String, backlinks: [String: [ComputedBacklink]] = [:]) {
        self.schema = schema
        self.root = root
        self.backlinks = backlinks
    }

    /// What an operand is: a value of a property type, an object, `nil`, or a list constant.
    enum Cursor: Equatable {
        case value(PropertyType)
        case object(String)
        case null
        case list([Value])
        /// The right side of `GEOWITHIN`.
        case geometry(GeoShape)

        init(constant: Value) {
            switch constant {
            case .null: self = .null
            case .list(let items), .set(let items): self = .list(items)
            case .link(let link): self = .object(link.objectType)
            default: self = .value(constant.propertyType ?? .object)
            }
        }

        var name: String {
            switch self {
            case .value(let type): type.rawValue
            case .object(let type): type
            case .null: "nil"
            case .list: "list"
            case .geometry: "geospatial shape"
            }
        }
    }

    /// One side of a comparison while it is being resolved.
    struct Side {
        enum Kind {
            case path(base: BoundScalar, cursor: Cursor, rest: ArraySlice<QueryKeyPath.Element>)
            case resolved(BoundScalar, Cursor)
        }

        var kind: Kind
        var range: SourceRange
        /// The key path or literal as written, for messages.
        var label: String
        /// The key path elements resolved so far.
        var consumed: [QueryKeyPath.Element] = []

        var isConstant: Bool {
            if case .resolved(.constant, _) = kind { return true }
            return false
        }
    }

    enum Resolved {
        case single(BoundScalar, Cursor)
        /// A collection, and the rest of the key path, to be resolved for each element.
        case multi(BoundQueryCollection, element: Side)
    }

    mutating func newContext() -> Int {
        defer { nextContext += 1 }
        return nextContext
    }

    // MARK: - Predicates

    mutating func bind(_ predicate: QueryPredicate) throws(QueryError) -> BoundPredicate {
        switch predicate.kind {
        case .constant(let value): return .constant(value)
        case .and(let a, let b): return .and(try bind(a), try bind(b))
        case .or(let a, let b): return .or(try bind(a), try bind(b))
        case .not(let a): return .not(try bind(a))
        case .comparison(let comparison): return try bind(comparison)
        }
    }

    /// A key path from the object, or from a SUBQUERY variable (`$x.name`).
    func pathSide(_ path: QueryKeyPath, range: SourceRange) throws(QueryError) -> Side {
        if let first = path.elements.first, case .variable(let name) = first.component {
            guard let variable = variables[name] else {
                throw QueryError(.syntaxError, "'$\(name)' is not the variable of an enclosing SUBQUERY", at: first.range)
            }
            return Side(kind: .path(base: .context(variable.context), cursor: variable.cursor, rest: path.elements.dropFirst()),
                        range: range, label: path.description, consumed: [first])
        }
        return Side(kind: .path(base: .context(0), cursor: .object(root), rest: path.elements[...]),
                    range: range, label: path.description)
    }

    mutating func side(_ operand: QueryOperand) throws(QueryError) -> Side {
        switch operand.kind {
        case .keyPath(let path):
            return try pathSide(path, range: operand.range)
        case .value(let value):
            return Side(kind: .resolved(.constant(value), Cursor(constant: value)), range: operand.range,
                        label: QueryLiteral.text(for: value))
        case .geometry(let shape):
            return Side(kind: .resolved(.constant(.null), .geometry(shape)), range: operand.range, label: shape.description)
        case .subquery(let subquery):
            let collectionSide = try pathSide(subquery.collection, range: subquery.collection.range)
            guard case .multi(let collection, let element) = try walk(collectionSide),
                  case .path(_, let elementCursor, let rest) = element.kind, rest.isEmpty else {
                throw QueryError(.invalidOperation,
                                 "SUBQUERY needs a list, set, map or linking objects, but '\(subquery.collection)' is not one",
                                 at: subquery.collection.range)
            }
            let outer = variables[subquery.variable]
            variables[subquery.variable] = (collection.context, elementCursor)
            defer { variables[subquery.variable] = outer }
            let predicate = try bind(subquery.predicate)
            return Side(kind: .resolved(.subqueryCount(collection, predicate), .value(.int)), range: operand.range,
                        label: operand.description)
        }
    }

    mutating func bind(_ comparison: QueryComparison) throws(QueryError) -> BoundPredicate {
        var op = comparison.op
        var collectionOnRight = false
        if op == .in, case .keyPath = comparison.rhs.kind {
            op = .equal
            collectionOnRight = true
        }
        let lhs = try side(comparison.lhs), rhs = try side(comparison.rhs)
        return try compare(lhs, op, rhs, comparison, quantifier: comparison.quantifier, lifted: nil,
                           collectionOnRight: collectionOnRight)
    }

    /// Lifts collections on either side into quantifiers, then compares single values.
    /// `lifted` is the label of a collection already lifted on the left.
    mutating func compare(_ lhs: Side, _ op: QueryOperator, _ rhs: Side, _ comparison: QueryComparison,
                          quantifier: QueryQuantifier?, lifted: String?,
                          collectionOnRight: Bool) throws(QueryError) -> BoundPredicate {
        let inner: QueryQuantifier? = quantifier == QueryQuantifier.none ? .any : quantifier
        let left = try walk(lhs)
        if case .multi(let collection, let element) = left {
            let predicate = try compare(element, op, rhs, comparison, quantifier: inner ?? .any,
                                        lifted: lhs.label, collectionOnRight: collectionOnRight)
            return .quantified(quantifier ?? .any, collection, predicate)
        }
        guard case .single(let lScalar, let lCursor) = left else { fatalError("unreachable") }
        let resolvedLeft = Side(kind: .resolved(lScalar, lCursor), range: lhs.range, label: lhs.label)
        let right = try walk(rhs)
        if case .multi(let collection, let element) = right {
            if let lifted {
                throw QueryError(.unsupported, "cannot compare two collections, '\(lifted)' and '\(rhs.label)'",
                                 at: comparison.operatorRange)
            }
            let predicate = try compare(resolvedLeft, op, element, comparison, quantifier: inner ?? .any,
                                        lifted: rhs.label, collectionOnRight: false)
            return .quantified(quantifier ?? .any, collection, predicate)
        }
        guard case .single(let rScalar, let rCursor) = right else { fatalError("unreachable") }
        if collectionOnRight {
            throw QueryError(.invalidOperation,
                             "IN needs a list or a key path through a list, set or map, but '\(rhs.label)' is a single value",
                             at: rhs.range)
        }
        if let quantifier, lifted == nil {
            throw QueryError(.invalidOperation,
                             "\(quantifier.rawValue) needs a key path through a list, set or map, but '\(lhs.label)' is a single value",
                             at: lhs.range)
        }
        return try compareValues((lScalar, lCursor, resolvedLeft), op, (rScalar, rCursor, rhs), comparison)
    }

    typealias Operand = (scalar: BoundScalar, cursor: Cursor, side: Side)

    /// Compares two single values: expands IN and BETWEEN, converts constants, checks the operator.
    mutating func compareValues(_ lhs: Operand, _ op: QueryOperator, _ rhs: Operand,
                                _ comparison: QueryComparison) throws(QueryError) -> BoundPredicate {
        switch op {
        case .in, .between:
            guard case .list(let items) = rhs.cursor, op == .in || items.count == 2 else {
                throw QueryError(.typeMismatch, "\(op.rawValue) needs " + (op == .in ? "a list" : "{low, high}")
                    + ", got \(rhs.side.label)", at: rhs.side.range)
            }
            func item(_ value: Value) -> Operand {
                (.constant(value), Cursor(constant: value),
                 Side(kind: .resolved(.constant(value), Cursor(constant: value)), range: rhs.side.range,
                      label: QueryLiteral.text(for: value)))
            }
            if op == .between {
                return .and(try compareValues(lhs, .greaterOrEqual, item(items[0]), comparison),
                            try compareValues(lhs, .lessOrEqual, item(items[1]), comparison))
            }
            var equals: [BoundPredicate] = []
            for value in items { equals.append(try compareValues(lhs, .equal, item(value), comparison)) }
            // A balanced tree: the evaluator and the SQL translator recurse on it, and the list may be long.
            return equals.isEmpty ? .constant(false) : BoundPredicate.or(equals[...])
        case .geoWithin:
            return try geoWithin(lhs, rhs)
        default:
            break
        }
        for operand in [lhs, rhs] {
            if case .geometry = operand.cursor {
                throw QueryError(.typeMismatch, "a geospatial shape can only be the right side of GEOWITHIN",
                                 at: operand.side.range)
            }
        }
        if case .typeName = lhs.scalar, rhs.side.isConstant { return try typeComparison(lhs, op, rhs) }
        if case .typeName = rhs.scalar, lhs.side.isConstant { return try typeComparison(rhs, op, lhs) }
        var (l, r) = (lhs, rhs)
        let options = comparison.options
        if op.isStringOperator || !options.isEmpty {
            let what = op.isStringOperator ? op.rawValue : "'\(comparison.op.rawValue)[\(options.letters)]'"
            // A mixed value takes part as a string when it holds one (SQLTranslator's atoll_mixed_text).
            let textual: [Cursor] = [.value(.string), .value(.data), .value(.any)]
            for operand in [l, r] where !operand.side.isConstant && !textual.contains(operand.cursor) {
                throw QueryError(.invalidOperation,
                                 "\(what) needs strings or data, but '\(operand.side.label)' is \(QueryParser.article(operand.cursor.name))",
                                 at: operand.side.range)
            }
        }
        for side in [l.side, r.side] where side.isConstant {
            if case .list = Cursor(constant: constantValue(side)) {
                throw QueryError(.typeMismatch, "a list can only be used with IN or BETWEEN, not with '\(op.rawValue)'",
                                 at: side.range)
            }
        }
        if r.side.isConstant && !l.side.isConstant {
            r.scalar = .constant(try coerce(constantValue(r.side), to: l.cursor, path: l.side, constant: r.side))
            if r.cursor != .null { r.cursor = l.cursor }
        } else if l.side.isConstant && !r.side.isConstant {
            l.scalar = .constant(try coerce(constantValue(l.side), to: r.cursor, path: r.side, constant: l.side))
            if l.cursor != .null { l.cursor = r.cursor }
        } else {
            try checkCompatible(l, r)
        }
        let domain = l.cursor == .null ? r.cursor : l.cursor
        switch op {
        case .equal, .notEqual:
            if !options.isEmpty {
                let equal = BoundPredicate.string(.equal, l.scalar, r.scalar, options: options)
                return op == .equal ? equal : .not(equal)
            }
            return .compare(l.scalar, op == .equal ? .equal : .notEqual, r.scalar, decimal: domain == .value(.decimal128))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let label = l.side.isConstant ? r.side.label : l.side.label
            switch domain {
            case .value(.bool), .value(.data), .value(.object):
                throw QueryError(.invalidOperation,
                                 "'\(op.rawValue)' cannot compare \(domain.name) values ('\(label)')",
                                 at: comparison.operatorRange)
            case .object:
                throw QueryError(.invalidOperation, "'\(op.rawValue)' cannot compare links ('\(label)')",
                                 at: comparison.operatorRange)
            default: break
            }
            let bound: BoundComparison = switch op {
            case .less: .less
            case .lessOrEqual: .lessOrEqual
            case .greater: .greater
            default: .greaterOrEqual
            }
            return .compare(l.scalar, bound, r.scalar, decimal: domain == .value(.decimal128))
        case .beginsWith, .endsWith, .contains, .like:
            let stringOp: StringOperator = switch op {
            case .beginsWith: .beginsWith
            case .endsWith: .endsWith
            case .contains: .contains
            default: .like
            }
            return .string(stringOp, l.scalar, r.scalar, options: options)
        case .in, .between, .geoWithin:
            fatalError("handled above")
        }
    }

    /// `point GEOWITHIN shape`: the point is an object with `type` (a string, `"Point"`) and
    /// `coordinates` (a list of doubles, `[longitude, latitude]`), as Realm's GeoJSON-shaped points.
    func geoWithin(_ lhs: Operand, _ rhs: Operand) throws(QueryError) -> BoundPredicate {
        guard case .geometry(let shape) = rhs.cursor else {
            throw QueryError(.typeMismatch, "GEOWITHIN needs a geospatial shape on its right, got \(rhs.side.label)",
                             at: rhs.side.range)
        }
        guard case .object(let type) = lhs.cursor, let object = schema[type],
              let kind = object[property: "type"], kind.type == .string, kind.isSingle,
              let coordinates = object[property: "coordinates"], coordinates.type == .double, coordinates.collection == .list else {
            throw QueryError(.invalidOperation,
                             "GEOWITHIN needs a point: an embedded object with 'type' (String) and 'coordinates' (List<Double>), "
                                 + "but '\(lhs.side.label)' is \(QueryParser.article(lhs.cursor.name))", at: lhs.side.range)
        }
        return .geoWithin(lhs.scalar, pointType: type, coordinates: coordinates, shape)
    }

    /// `x.@type == 'name'` (or `!=`): the names Realm accepts, `numeric` standing for every kind of number.
    private func typeComparison(_ type: Operand, _ op: QueryOperator, _ name: Operand) throws(QueryError) -> BoundPredicate {
        guard op == .equal || op == .notEqual else {
            throw QueryError(.invalidOperation, "'@type' can only be compared with '==', '!=' or IN", at: type.side.range)
        }
        guard case .string(let text) = constantValue(name.side), let kinds = QueryFunctions.mixedTypeNames(matching: text) else {
            throw QueryError(.typeMismatch, "\(name.side.label) is not a type name; use one of "
                                 + QueryFunctions.mixedTypeNameList, at: name.side.range)
        }
        let equals = kinds.map { BoundPredicate.compare(type.scalar, .equal, .constant(.string($0)), decimal: false) }
        let any = BoundPredicate.or(equals[...])
        return op == .equal ? any : .not(any)
    }

    func constantValue(_ side: Side) -> Value {
        if case .resolved(.constant(let value), _) = side.kind { return value }
        return .null
    }

    // MARK: - SORT and DISTINCT keys

    mutating func bindKey(_ path: QueryKeyPath, ascending: Bool, clause: String) throws(QueryError) -> BoundKey {
        let side = Side(kind: .path(base: .context(0), cursor: .object(root), rest: path.elements[...]),
                        range: path.range, label: path.description)
        guard case .single(let scalar, let cursor) = try walk(side) else {
            throw QueryError(.invalidOperation,
                             "\(clause) key path '\(path)' goes through a list, set or map; use properties reachable through to-one links",
                             at: path.range)
        }
        switch cursor {
        case .value(let type):
            return BoundKey(keyPath: path, ascending: ascending, scalar: scalar, type: type)
        case .object where clause == "DISTINCT":
            return BoundKey(keyPath: path, ascending: ascending, scalar: scalar, type: .object)
        default:
            throw QueryError(.invalidOperation, "cannot \(clause) by '\(path)', a link to '\(cursor.name)'; use one of its properties",
                             at: path.range)
        }
    }
}
