import AtollCore
import AtollTesting
import Testing

/// A query that must fail, with the error it must fail with.
struct QueryErrorCase: Sendable, CustomStringConvertible {
    let query: String
    let arguments: [Value]
    let code: QueryError.Code
    /// The full `description`: what is wrong, then where.
    let message: String

    init(_ query: String, _ code: QueryError.Code, _ message: String) {
        self.init(query, [], code, message)
    }

    init(_ query: String, _ arguments: [Value], _ code: QueryError.Code, _ message: String) {
        self.query = query
        self.arguments = arguments
        self.code = code
        self.message = message
    }

    var description: String { query }
}

@Suite struct QueryErrorTests {
    static let cases: [QueryErrorCase] = [
        // Syntax.
        QueryErrorCase("", .syntaxError, "the query is empty at line 1, column 1"),
        QueryErrorCase("name == ", .syntaxError, "expected a value after '==' at line 1, column 9"),
        QueryErrorCase("name", .syntaxError, "expected a comparison operator after 'name' at line 1, column 5"),
        QueryErrorCase("name === 'a'", .syntaxError, "expected a value after '==', found '=' at line 1, column 8"),
        QueryErrorCase("name = 'abc", .syntaxError, "unterminated string at line 1, column 8"),
        QueryErrorCase("name == 'a\\q'", .syntaxError, "invalid escape sequence '\\q' in string at line 1, column 11"),
        QueryErrorCase("(name == 'a'", .syntaxError, "expected ')' after 'a' at line 1, column 13"),
        QueryErrorCase("name == 'a' AND", .syntaxError, "expected a predicate after 'AND' at line 1, column 16"),
        QueryErrorCase("name == 'a' # 1", .syntaxError, "unexpected character '#' at line 1, column 13"),
        QueryErrorCase("priority > 3 name", .syntaxError,
                       "expected AND, OR, SORT, DISTINCT, LIMIT or the end of the query, found 'name' at line 1, column 14"),
        QueryErrorCase("name == 'a' AND\n  priority >", .syntaxError, "expected a value after '>' at line 2, column 13"),
        QueryErrorCase("name == oid(123)", .syntaxError, "'123' is not a valid ObjectId at line 1, column 9"),
        QueryErrorCase("tags.@foo > 1", .syntaxError,
                       "unknown collection operator '@foo'; use @count, @size, @sum, @avg, @min, @max, @keys, @values, @links or @type at line 1, column 6"),
        QueryErrorCase("priority BETWEEN {1, 2, 3}", .syntaxError,
                       "'BETWEEN' needs exactly 2 values {low, high}, found 3 at line 1, column 18"),
        QueryErrorCase("name ==[x] 'a'", .syntaxError,
                       "unknown comparison option '[x]'; use [c] for case-insensitive, [d] for diacritic-insensitive at line 1, column 8"),
        QueryErrorCase("priority > 1 SORT(name SIDEWAYS)", .syntaxError,
                       "expected ')' after 'name', found 'SIDEWAYS' at line 1, column 24"),
        QueryErrorCase("priority > 1 LIMIT(-1)", .syntaxError, "LIMIT needs a count of 0 or more, found -1 at line 1, column 20"),
        QueryErrorCase("priority == 99999999999999999999", .syntaxError,
                       "integer literal '99999999999999999999' does not fit in 64 bits at line 1, column 13"),
        // Arguments.
        QueryErrorCase("name == $0", [], .badArgument, "missing argument 0 for '$0': 0 arguments given at line 1, column 9"),
        QueryErrorCase("name == %@ OR owner == %@", [.string("a")], .badArgument,
                       "missing argument 1 for '%@': 1 argument given at line 1, column 24"),
        QueryErrorCase("priority > %d", [.string("x")], .badArgument,
                       "argument 0 for '%d' must be an integer, got a string at line 1, column 12"),
        QueryErrorCase("progress > %f", [.bool(true)], .badArgument,
                       "argument 0 for '%f' must be a number, got a bool at line 1, column 12"),
        QueryErrorCase("%K == 1", [.int(3)], .badArgument,
                       "argument 0 for '%K' must be a string naming a key path, got an int at line 1, column 1"),
        QueryErrorCase("priority > 3", [.int(1)], .badArgument, "1 argument given but the query uses 0"),
        QueryErrorCase("priority IN %@", [.int(3)], .badArgument, "IN needs a list argument, got an int at line 1, column 13"),
        // Names.
        QueryErrorCase("ownr == 'Frodo'", .unknownProperty, "'Task' has no property 'ownr' at line 1, column 1"),
        QueryErrorCase("assignee.nme == 'x'", .unknownProperty, "'Person' has no property 'nme' at line 1, column 10"),
        QueryErrorCase("%K == 'x'", [.string("nope")], .unknownProperty, "'Task' has no property 'nope' at line 1, column 1"),
        QueryErrorCase("name.first == 'x'", .unknownProperty, "'name' is a string and has no property 'first' at line 1, column 6"),
        QueryErrorCase("TRUEPREDICATE SORT(nam ASC)", .unknownProperty, "'Task' has no property 'nam' at line 1, column 20"),
        // Types.
        QueryErrorCase("name == 3", .typeMismatch, "cannot compare 'name' (string) with 3 (int) at line 1, column 9"),
        QueryErrorCase("priority == 'high'", .typeMismatch,
                       "cannot compare 'priority' (int) with \"high\" (string) at line 1, column 13"),
        QueryErrorCase("_id == 'zzz'", .typeMismatch, "cannot compare '_id' (objectId) with \"zzz\" (string) at line 1, column 8"),
        QueryErrorCase("done == 1", .typeMismatch, "cannot compare 'done' (bool) with 1 (int) at line 1, column 9"),
        QueryErrorCase("name == priority", .typeMismatch,
                       "cannot compare 'name' (string) with 'priority' (int) at line 1, column 9"),
        QueryErrorCase("name == %@", [.list([.string("a")])], .typeMismatch,
                       "a list can only be used with IN or BETWEEN, not with '==' at line 1, column 9"),
        QueryErrorCase("name == {'a', 'b'}", .syntaxError, "expected a value after '==', found '{' at line 1, column 9"),
        // Operators.
        QueryErrorCase("name.@count > 1", .invalidOperation,
                       "'@count' needs a list, set or map, but 'name' is a string at line 1, column 6"),
        QueryErrorCase("priority.@size > 1", .invalidOperation,
                       "'@size' needs a string, data, list, set or map, but 'priority' is an int at line 1, column 10"),
        QueryErrorCase("priority BEGINSWITH 'a'", .invalidOperation,
                       "BEGINSWITH needs strings or data, but 'priority' is an int at line 1, column 1"),
        QueryErrorCase("done < true", .invalidOperation, "'<' cannot compare bool values ('done') at line 1, column 6"),
        QueryErrorCase("assignee > nil", .invalidOperation, "'>' cannot compare links ('assignee') at line 1, column 10"),
        QueryErrorCase("priority <[c] 3", .invalidOperation,
                       "'[c]' cannot modify '<'; it applies to ==, !=, IN, BEGINSWITH, ENDSWITH, CONTAINS and LIKE at line 1, column 11"),
        QueryErrorCase("ANY name == 'x'", .invalidOperation,
                       "ANY needs a key path through a list, set or map, but 'name' is a single value at line 1, column 5"),
        QueryErrorCase("tags.@sum > 1", .invalidOperation, "'@sum' needs numbers, but 'tags' holds string values at line 1, column 6"),
        QueryErrorCase("counts.@keys.@avg > 1", .invalidOperation,
                       "'@avg' needs numbers, but 'counts.@keys' holds string values at line 1, column 14"),
        QueryErrorCase("priority IN name", .invalidOperation,
                       "IN needs a list or a key path through a list, set or map, but 'name' is a single value at line 1, column 13"),
        QueryErrorCase("TRUEPREDICATE SORT(tags ASC)", .invalidOperation,
                       "SORT key path 'tags' goes through a list, set or map; use properties reachable through to-one links at line 1, column 20"),
        QueryErrorCase("TRUEPREDICATE SORT(assignee DESC)", .invalidOperation,
                       "cannot SORT by 'assignee', a link to 'Person'; use one of its properties at line 1, column 20"),
        // [d], SUBQUERY, @links and GEOWITHIN.
        QueryErrorCase("priority ==[d] 1", .invalidOperation, "'==[d]' needs strings or data, but 'priority' is an int at line 1, column 1"),
        QueryErrorCase("SUBQUERY(name, $x, $x == 'a').@count > 0", .invalidOperation,
                       "SUBQUERY needs a list, set, map or linking objects, but 'name' is not one at line 1, column 10"),
        QueryErrorCase("SUBQUERY(tags, $x, $y == 'a').@count > 0", .syntaxError,
                       "'$y' is not the variable of an enclosing SUBQUERY at line 1, column 20"),
        QueryErrorCase("SUBQUERY(tags, $x, $x == 'a') > 0", .syntaxError,
                       "expected '.@count' after the SUBQUERY after ')', found '>' at line 1, column 31"),
        QueryErrorCase("@links.Nope.x.@count > 0", .unknownType, "unknown object type 'Nope' in '@links.Nope.x' at line 1, column 1"),
        QueryErrorCase("@links.Person.dogs.@count > 0", .unknownProperty,
                       "'Person' has no property 'dogs' linking to 'Task' at line 1, column 1"),
        QueryErrorCase("@links > 0", .invalidOperation,
                       "'@links' needs '.@count' or a type and property ('@links.Type.property') at line 1, column 1"),
        QueryErrorCase("assignee.address.@links.@count > 0", .unsupported,
                       "the backlinks of embedded objects ('Address') cannot be queried at line 1, column 18"),
        QueryErrorCase("name GEOWITHIN geoCircle([0, 0], 1)", .invalidOperation,
                       "GEOWITHIN needs a point: an embedded object with 'type' (String) and 'coordinates' (List<Double>), "
                           + "but 'name' is a string at line 1, column 1"),
        QueryErrorCase("name == geoCircle([0, 0], 1)", .syntaxError,
                       "expected AND, OR, SORT, DISTINCT, LIMIT or the end of the query, found '(' at line 1, column 18"),
        QueryErrorCase("x GEOWITHIN geoPolygon({[0, 0], [1, 0], [1, 1]})", .invalidGeometry,
                       "the outer ring of the polygon is not closed: its first and last points must be the same at line 1, column 13"),
        QueryErrorCase("x GEOWITHIN geoPolygon({[0, 0], [1, 0], [0, 0]})", .invalidGeometry,
                       "the outer ring of the polygon must have at least 3 distinct points and no repeated point (besides closing it) at line 1, column 13"),
        QueryErrorCase("x GEOWITHIN geoCircle([0, 91], 1)", .invalidGeometry,
                       "latitude must be in [-90, 90] and longitude in [-180, 180], got [0.0, 91.0] as [longitude, latitude] at line 1, column 13"),
        QueryErrorCase("x GEOWITHIN geoCircle([0, 0], -1)", .invalidGeometry,
                       "the radius of a circle must be a non-negative number, got -1.0 radians at line 1, column 13"),
        QueryErrorCase("x GEOWITHIN geoBox([0, 10], [1, 5])", .invalidGeometry,
                       "the bottom-left corner of a box must not be north of its top-right corner at line 1, column 13"),
        QueryErrorCase("x GEOWITHIN 'here'", .syntaxError,
                       "expected a geospatial shape: geoCircle, geoBox, geoPolygon or an argument after 'GEOWITHIN', found 'here' at line 1, column 13"),
        // Unsupported.
        QueryErrorCase("tags == labels", .unsupported, "cannot compare two collections, 'tags' and 'labels' at line 1, column 6"),
    ]

    @Test("a bad query fails with a message that says what is wrong and where", arguments: cases)
    func badQueryFails(_ bad: QueryErrorCase) {
        do {
            _ = try QueryTestSchema.bind(bad.query, bad.arguments)
            Issue.record("'\(bad.query)' was accepted")
        } catch let error as QueryError {
            #expect(error.code == bad.code)
            #expect(error.description == bad.message)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func theErrorPointsAtTheOffendingText() throws {
        let error = try #require(throws: QueryError.self) { try QueryTestSchema.bind("name == 'a' AND ownr == 'b'") }
        #expect(error.range == SourceRange(offset: 16, length: 4, line: 1, column: 17))
        #expect(error.message == "'Task' has no property 'ownr'")
    }

    @Test func bindingToAnUnknownTypeFails() throws {
        let error = try #require(throws: QueryError.self) { try QueryTestSchema.bind("name == 'a'", on: "Nope") }
        #expect(error.code == .unknownType)
        #expect(error.description == "unknown object type 'Nope'")
    }

    @Test func aTypedThrowCanBeMatchedByCode() {
        do {
            _ = try QueryExpression.parse("name ==")
        } catch {
            // `parse` throws `QueryError` only, so `error` needs no cast.
            #expect(error.code == .syntaxError)
        }
    }
}
