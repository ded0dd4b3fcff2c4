/// `SUBQUERY(…).@count` and the geospatial literals of `GEOWITHIN`.
extension QueryParser {
    /// `SUBQUERY(collection, $x, predicate).@count`. Each subquery nests a level (it counts toward
    /// ``QueryExpression/maximumNestingDepth``), and at most ``QueryExpression/maximumSubqueryDepth``
    /// subqueries may enclose one another.
    mutating func parseSubquery() throws(QueryError) -> QueryOperand {
        let start = advance().range
        guard variables.count < QueryExpression.maximumSubqueryDepth else {
            throw QueryError(.tooComplex,
                             "SUBQUERY nests deeper than \(QueryExpression.maximumSubqueryDepth) levels", at: start)
        }
        try enterNestedLevel()
        defer { depth -= 1 }
        _ = try expect("(")
        let collection = try parseKeyPath()
        _ = try expect(",")
        guard case .variable(let name) = current.kind else { throw expected("a variable such as '$x'") }
        if variables.contains(name) {
            throw QueryError(.syntaxError, "'$\(name)' is already the variable of an enclosing SUBQUERY", at: current.range)
        }
        advance()
        _ = try expect(",")
        variables.append(name)
        let predicate = try parseOr()
        variables.removeLast()
        _ = try expect(")")
        guard current.isSymbol("."), case .collectionOperator(let word) = tokens[index + 1].kind,
              word == "@count" || word == "@size" else {
            throw expected("'.@count' after the SUBQUERY")
        }
        advance()
        let end = advance().range
        return QueryOperand(.subquery(QuerySubquery(collection: collection, variable: name, predicate: predicate)),
                            range: start.through(end))
    }

    /// The right side of `GEOWITHIN`: an argument, `geoCircle([lng, lat], radians)`,
    /// `geoBox([lng, lat], [lng, lat])` or `geoPolygon({[lng, lat], …}, {hole…}, …)`.
    mutating func parseGeometry() throws(QueryError) -> QueryOperand {
        let token = current
        switch token.kind {
        case .placeholder(.keyPath):
            throw expected("a geospatial shape")
        case .placeholder:
            advance()
            return QueryOperand(.geometry(try geometryArgument(token)), range: token.range)
        case .identifier(let name) where tokens[index + 1].isSymbol("("):
            advance()
            advance()
            let shape: GeoShape
            do {
                switch name.lowercased() {
                case "geocircle":
                    let center = try parsePoint()
                    _ = try expect(",")
                    let radius = try parseNumber("a radius in radians")
                    shape = .circle(try GeoCircle(checkedCenter: center, radius: Distance(radians: radius)))
                case "geobox":
                    let bottomLeft = try parsePoint()
                    _ = try expect(",")
                    let topRight = try parsePoint()
                    shape = .box(try GeoBox(checkedBottomLeft: bottomLeft, topRight: topRight))
                case "geopolygon":
                    var rings = [try parseRing()]
                    while take(",") { rings.append(try parseRing()) }
                    shape = .polygon(try GeoPolygon(checkedOuterRing: rings[0], holes: Array(rings.dropFirst())))
                default:
                    throw QueryError(.syntaxError, "unknown shape '\(name)'; use geoCircle, geoBox or geoPolygon",
                                     at: token.range)
                }
            } catch let error as GeoError {
                throw QueryError(error.code == .tooComplex ? .tooComplex : .invalidGeometry, error.message,
                                 at: token.range.through(previous?.range ?? token.range))
            } catch let error as QueryError {
                throw error
            } catch {
                fatalError("unreachable")
            }
            let close = try expect(")").range
            return QueryOperand(.geometry(shape), range: token.range.through(close))
        default:
            throw expected("a geospatial shape: geoCircle, geoBox, geoPolygon or an argument")
        }
    }

    /// `[longitude, latitude]`.
    private mutating func parsePoint() throws(any Error) -> GeoPoint {
        _ = try expect("[")
        let longitude = try parseNumber("a longitude")
        _ = try expect(",")
        let latitude = try parseNumber("a latitude")
        _ = try expect("]")
        return try GeoPoint(checkedLatitude: latitude, longitude: longitude)
    }

    /// `{[lng, lat], …}`, at most ``GeoPolygon/maximumVertexCount`` points.
    private mutating func parseRing() throws(any Error) -> [GeoPoint] {
        _ = try expect("{")
        var points: [GeoPoint] = []
        repeat {
            guard points.count < GeoPolygon.maximumVertexCount else {
                throw GeoError(.tooComplex, "a polygon may have at most \(GeoPolygon.maximumVertexCount) points")
            }
            points.append(try parsePoint())
        } while take(",")
        _ = try expect("}")
        return points
    }

    private mutating func parseNumber(_ what: String) throws(QueryError) -> Double {
        switch current.kind {
        case .integer(let i): advance(); return Double(i)
        case .float(let d): advance(); return d
        case .placeholder(.double), .placeholder(.integer), .placeholder(.any), .placeholder(.positional):
            let token = advance()
            guard let d = try argument(token).numericDouble else {
                throw QueryError(.badArgument, "\(what) must be a number", at: token.range)
            }
            return d
        default: throw expected(what)
        }
    }
}
