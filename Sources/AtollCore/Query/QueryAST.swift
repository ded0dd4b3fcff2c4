/// Where a piece of a query came from in its text.
///
/// `offset` and `length` count characters from the start of the query; `line` and `column` start at 1.
/// Nodes built in code carry ``SourceRange/none``.
package struct SourceRange: Hashable, Sendable, CustomStringConvertible {
    package var offset: Int
    package var length: Int
    package var line: Int
    package var column: Int

    package init(offset: Int, length: Int, line: Int, column: Int) {
        self.offset = offset
        self.length = length
        self.line = line
        self.column = column
    }

    /// The range of a node that was not parsed from text.
    package static let none = SourceRange(offset: 0, length: 0, line: 0, column: 0)

    /// Whether the range points into query text.
    package var isKnown: Bool { line > 0 }

    /// The range from the start of `self` to the end of `other`.
    package func through(_ other: SourceRange) -> SourceRange {
        guard isKnown else { return other }
        guard other.isKnown else { return self }
        return SourceRange(offset: offset, length: max(length, other.offset + other.length - offset),
                           line: line, column: column)
    }

    package var description: String { "line \(line), column \(column)" }
}

/// A parsed query: a predicate, then tail clauses (`SORT`, `DISTINCT`, `LIMIT`) in the order written.
///
/// ```swift
/// let query = try QueryExpression.parse("age > %d SORT(name ASC) LIMIT(10)", arguments: [.int(18)])
/// query.description   // "age > 18 SORT(name ASC) LIMIT(10)"
/// ```
///
/// Equality compares meaning only: two expressions parsed from differently spaced text, or one parsed
/// and one built in code, are equal when they say the same thing. Source ranges are not compared.
package struct QueryExpression: Hashable, Sendable {
    package var predicate: QueryPredicate
    package var clauses: [QueryClause]

    package init(predicate: QueryPredicate, clauses: [QueryClause] = []) {
        self.predicate = predicate
        self.clauses = clauses
    }
}

/// A boolean condition on one object.
package struct QueryPredicate: Hashable, Sendable {
    package indirect enum Kind: Hashable, Sendable {
        /// `TRUEPREDICATE` or `FALSEPREDICATE`.
        case constant(Bool)
        case and(QueryPredicate, QueryPredicate)
        case or(QueryPredicate, QueryPredicate)
        case not(QueryPredicate)
        case comparison(QueryComparison)
    }

    package var kind: Kind
    package var range: SourceRange

    package init(_ kind: Kind, range: SourceRange = .none) {
        self.kind = kind
        self.range = range
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }
    package func hash(into hasher: inout Hasher) { hasher.combine(kind) }
}

/// `ANY`/`SOME`, `ALL` or `NONE` in front of a comparison through a collection.
package enum QueryQuantifier: String, Hashable, Sendable {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// The operator of a comparison.
package enum QueryOperator: String, Hashable, Sendable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    /// `*` matches any run of characters, `?` exactly one.
    case like = "LIKE"
    /// The right side is a list (`{1, 2}`, an array argument) or a collection key path.
    case `in` = "IN"
    /// The right side is a two-element list `{low, high}`; bounds are inclusive.
    case between = "BETWEEN"
    /// The left side is an embedded point (`type`, `coordinates`), the right a ``GeoShape``.
    case geoWithin = "GEOWITHIN"

    /// Whether the operator orders its operands (`<`, `<=`, `>`, `>=`).
    package var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }

    /// Whether the operator works on strings only.
    package var isStringOperator: Bool { [.beginsWith, .endsWith, .contains, .like].contains(self) }
}

/// The `[c]` and `[d]` modifiers of a string comparison.
package struct QueryStringOptions: OptionSet, Hashable, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: compare the lowercased forms of both sides.
    package static let caseInsensitive = QueryStringOptions(rawValue: 1)
    /// `[d]`: compare with diacritics removed (canonical decomposition, combining marks dropped).
    package static let diacriticInsensitive = QueryStringOptions(rawValue: 2)
}

/// `lhs op[options] rhs`, optionally quantified (`ANY dogs.name == "Rex"`).
package struct QueryComparison: Hashable, Sendable {
    package var quantifier: QueryQuantifier?
    package var lhs: QueryOperand
    package var op: QueryOperator
    package var options: QueryStringOptions
    package var rhs: QueryOperand
    /// Where the operator is written, for errors about it.
    package var operatorRange: SourceRange

    package init(_ lhs: QueryOperand, _ op: QueryOperator, _ rhs: QueryOperand,
                options: QueryStringOptions = [], quantifier: QueryQuantifier? = nil,
                operatorRange: SourceRange = .none) {
        self.quantifier = quantifier
        self.lhs = lhs
        self.op = op
        self.options = options
        self.rhs = rhs
        self.operatorRange = operatorRange
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.quantifier == b.quantifier && a.lhs == b.lhs && a.op == b.op && a.options == b.options && a.rhs == b.rhs
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(quantifier)
        hasher.combine(lhs)
        hasher.combine(op)
        hasher.combine(options)
        hasher.combine(rhs)
    }
}

/// One side of a comparison: a key path or a constant.
///
/// Arguments (`%@`, `$0`, …) are substituted while parsing, so they appear here as constants, and `%K`
/// as a key path. A list literal `{1, 2}` is a constant ``Value/list(_:)``.
package struct QueryOperand: Hashable, Sendable {
    package enum Kind: Hashable, Sendable {
        case keyPath(QueryKeyPath)
        case value(Value)
        /// `SUBQUERY(collection, $x, predicate).@count`: how many elements match.
        case subquery(QuerySubquery)
        /// A geospatial shape, the right side of `GEOWITHIN`.
        case geometry(GeoShape)
    }

    package var kind: Kind
    package var range: SourceRange

    package init(_ kind: Kind, range: SourceRange = .none) {
        self.kind = kind
        self.range = range
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }
    package func hash(into hasher: inout Hasher) { hasher.combine(kind) }
}

/// A path of property names and collection operators, such as `owner.name` or `dogs.@sum.age`.
///
/// ```swift
/// let path: QueryKeyPath = "dogs.@count"
/// path.components   // [.property("dogs"), .count]
/// ```
package struct QueryKeyPath: Hashable, Sendable, ExpressibleByStringLiteral {
    package enum Component: Hashable, Sendable {
        case property(String)
        /// A map subscript, `attrs['key']`; on a mixed value, the value of its dictionary at `key`.
        case key(String)
        /// `mixed[2]`: the element at an index of the list a mixed value holds.
        case index(Int)
        /// `mixed[*]`: every element of the list or dictionary a mixed value holds (quantified).
        case allElements
        case count, size, sum, average, minimum, maximum, keys, values
        /// `@type` of a mixed value: the name of the kind of value it holds.
        case type
        /// `@links.Type.property`: the objects of `Type` whose link `property` points here.
        case links(type: String, property: String)
        /// `@links` alone, only before `@count`: every object linking here, through any property.
        case allLinks
        /// `$x`, the element variable of a `SUBQUERY`; only first in a key path.
        case variable(String)
    }

    /// A component and where it is written.
    package struct Element: Hashable, Sendable {
        package var component: Component
        package var range: SourceRange

        package init(_ component: Component, range: SourceRange = .none) {
            self.component = component
            self.range = range
        }

        package static func == (lhs: Self, rhs: Self) -> Bool { lhs.component == rhs.component }
        package func hash(into hasher: inout Hasher) { hasher.combine(component) }
    }

    package var elements: [Element]

    package init(elements: [Element]) { self.elements = elements }

    package init(_ components: [Component]) {
        elements = components.map { Element($0) }
    }

    /// Splits `path` at dots; `@count`, `@size`, `@sum`, `@avg`, `@min`, `@max`, `@keys` and `@values`
    /// become operators, `@links.Type.property` a backlink, a leading `$x` a subquery variable, anything
    /// else a property name (unknown names are reported when binding).
    package init(_ path: String) {
        let words = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var components: [Component] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if word.lowercased() == "@links" {
                if index + 2 < words.count, !words[index + 1].hasPrefix("@"), !words[index + 2].hasPrefix("@") {
                    components.append(.links(type: words[index + 1], property: words[index + 2]))
                    index += 3
                } else {
                    components.append(.allLinks)
                    index += 1
                }
                continue
            }
            if index == 0, word.hasPrefix("$"), word.count > 1, !word.dropFirst().allSatisfy(\.isNumber) {
                components.append(.variable(String(word.dropFirst())))
            } else {
                components.append(Self.component(word))
            }
            index += 1
        }
        self.init(components)
    }

    package init(stringLiteral value: String) { self.init(value) }

    package var components: [Component] { elements.map(\.component) }

    /// The range covering every element.
    package var range: SourceRange {
        guard let first = elements.first, let last = elements.last else { return .none }
        return first.range.through(last.range)
    }

    static func component(_ word: String) -> Component {
        switch word.lowercased() {
        case "@count": .count
        case "@size": .size
        case "@sum": .sum
        case "@avg": .average
        case "@min": .minimum
        case "@max": .maximum
        case "@keys": .keys
        case "@values": .values
        case "@type": .type
        default: .property(word)
        }
    }
}

/// `SUBQUERY(collection, $variable, predicate)`: the elements of `collection` for which `predicate`
/// holds, where key paths starting with `$variable` read the element. Only its `@count` is a value.
package struct QuerySubquery: Hashable, Sendable {
    package var collection: QueryKeyPath
    /// The variable's name, without `$`.
    package var variable: String
    package var predicate: QueryPredicate

    package init(collection: QueryKeyPath, variable: String, predicate: QueryPredicate) {
        self.collection = collection
        self.variable = variable
        self.predicate = predicate
    }
}

/// A tail clause, applied to the matching objects in the order written.
package enum QueryClause: Hashable, Sendable {
    /// A stable sort: objects equal on every key keep their previous order.
    case sort([QuerySortKey])
    /// Keeps the first object of each group that is equal on every key path.
    case distinct([QueryKeyPath])
    /// Keeps the first `n` objects.
    case limit(Int)
}

/// One key of `SORT(…)`.
package struct QuerySortKey: Hashable, Sendable {
    package var keyPath: QueryKeyPath
    package var ascending: Bool

    package init(_ keyPath: QueryKeyPath, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }
}
