/// An argument substituted for a placeholder: a value, or a geospatial shape for `GEOWITHIN`.
package enum QueryArgument: Hashable, Sendable {
    case value(Value)
    case geometry(GeoShape)
}

/// Substituting arguments for placeholders while parsing.
extension QueryParser {
    /// The value for `%@`, `%d`, `%f` or `$n`, checked against what the placeholder asks for.
    mutating func argument(_ token: QueryToken) throws(QueryError) -> Value {
        let index = try argumentIndex(token)
        guard case .value(let value) = arguments[index] else {
            throw QueryError(.badArgument, "argument \(index) is a geospatial shape, which only GEOWITHIN takes",
                             at: token.range)
        }
        switch token.kind {
        case .placeholder(.integer):
            guard case .int = value else {
                throw QueryError(.badArgument,
                                 "argument \(index) for '%d' must be an integer, got \(Self.article(value.kindName))",
                                 at: token.range)
            }
            return value
        case .placeholder(.double):
            switch value {
            case .double: return value
            case .float(let f): return .double(Double(f))
            case .int(let i): return .double(Double(i))
            default:
                throw QueryError(.badArgument,
                                 "argument \(index) for '%f' must be a number, got \(Self.article(value.kindName))",
                                 at: token.range)
            }
        default:
            if case .set(let items) = value { return .list(items) }
            return value
        }
    }

    /// The key path named by the string argument of `%K`.
    mutating func keyPathArgument(_ token: QueryToken) throws(QueryError) -> QueryKeyPath {
        let index = try argumentIndex(token)
        guard case .value(.string(let text)) = arguments[index] else {
            let kind = if case .value(let value) = arguments[index] { value.kindName } else { "geospatial shape" }
            throw QueryError(.badArgument, "argument \(index) for '%K' must be a string naming a key path, got "
                + Self.article(kind), at: token.range)
        }
        let path = QueryKeyPath(text)
        if text.isEmpty || path.components.contains(.property("")) {
            throw QueryError(.badArgument, "argument \(index) for '%K' is not a key path: \"\(text)\"", at: token.range)
        }
        return try Self.checkLength(QueryKeyPath(elements: path.components.map { QueryKeyPath.Element($0, range: token.range) }))
    }

    /// The shape for a placeholder on the right of `GEOWITHIN`.
    mutating func geometryArgument(_ token: QueryToken) throws(QueryError) -> GeoShape {
        let index = try argumentIndex(token)
        guard case .geometry(let shape) = arguments[index] else {
            throw QueryError(.badArgument, "argument \(index) for GEOWITHIN must be a GeoCircle, GeoBox or GeoPolygon",
                             at: token.range)
        }
        return shape
    }

    mutating func argumentIndex(_ token: QueryToken) throws(QueryError) -> Int {
        let index: Int
        if case .placeholder(.positional(let n)) = token.kind {
            index = n
            highestPositionalArgument = max(highestPositionalArgument, n)
        } else {
            index = nextSequentialArgument
            nextSequentialArgument += 1
        }
        guard index < arguments.count else {
            throw QueryError(.badArgument,
                             "missing argument \(index) for '\(token.text)': \(Self.count(arguments.count, "argument")) given",
                             at: token.range)
        }
        return index
    }

    /// "1 argument", "2 arguments".
    static func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }

    /// "an int", "a string".
    package static func article(_ noun: String) -> String {
        (noun.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + noun
    }
}
