import AtollCore
import Foundation
import Testing

@Suite struct QueryParserTests {
    static let roundTripQueries = [
        "name == 'Frodo'",
        "owner != nil AND priority > 3",
        "a == 1 OR b == 2 AND c == 3",
        "(a == 1 OR b == 2) AND c == 3",
        "a == 1 AND (b == 2 AND c == 3)",
        "a == 1 OR (b == 2 OR c == 3)",
        "NOT (a == 1 OR b == 2)",
        "!done == true && !(priority < 2)",
        "NOT NOT a == 1",
        "TRUEPREDICATE", "FALSEPREDICATE", "NOT TRUEPREDICATE OR FALSEPREDICATE",
        "name BEGINSWITH[c] 'fr' AND name ENDSWITH 'o' AND name CONTAINS[c] \"OD\" AND name LIKE '?r*'",
        "name ==[c] 'x' OR name !=[c] 'y'",
        "priority IN {1, 2, 3}", "name IN[c] {'a', \"b\"}", "priority IN {}",
        "priority BETWEEN {1, 10}", "progress BETWEEN {0.5, 1e+20}",
        "ANY dogs.name == 'Rex'", "ALL tags BEGINSWITH 'a'", "NONE dogs.age > 3", "SOME tags == 'x'",
        "dogs.@count > 2", "name.@size == 0", "dogs.@sum.age >= 10", "dogs.@avg.age < 2.5",
        "dogs.@min.age == 1", "dogs.@max.age == 1", "counts['a b'] == 3", "counts.@keys == 'k'",
        "counts.@values.@sum > 3", "assignee.address.city == 'Paris'",
        "_id == oid(507f1f77bcf86cd799439011)", "id == uuid(3b241101-e2bb-4255-8caf-4136c566a962)",
        "due > T1704067200:0", "due < T-5:250000000", "due == T2024-01-02@10:00:00",
        "blob == B64\"AQID\"", "estimate == decimal128(1.50)", "estimate < decimal128(-1E+10)",
        "name == 'it\\'s \"quoted\"\\n\\t\\\\'", "name == '\u{C9}l\u{E9}onore \u{1F600}'",
        "priority == -42", "progress > -0.125", "owner == nil", "done == false",
        "priority > 1 SORT(name ASC, priority DESC) DISTINCT(owner, done) LIMIT(10)",
        "TRUEPREDICATE LIMIT(5) SORT(name DESC) SORT(assignee.name ASC)",
        "'work' IN tags",
        "SUBQUERY(tags, $t, $t BEGINSWITH 'a').@count > 1",
        "SUBQUERY(assignee.dogs, $d, $d.age > 2 AND SUBQUERY($d.@links.Person.dogs, $p, $p.age > 3).@count == 0).@count == 1",
        "@links.Person.dogs.@count == 0", "@links.@count > 2", "ANY @links.Task.assignee.name == 'x'",
        "name ==[d] 'e'", "name CONTAINS[cd] 'e'", "name IN[d] {'a'}",
        "home GEOWITHIN geoCircle([1.5, -2], 0.25)", "home GEOWITHIN geoBox([0, 0], [1, 1])",
        "home GEOWITHIN geoPolygon({[0, 0], [1, 0], [1, 1], [0, 0]}, {[0.2, 0.1], [0.5, 0.1], [0.5, 0.3], [0.2, 0.1]})",
    ]

    @Test("parse, print, parse gives the same AST", arguments: roundTripQueries)
    func descriptionParsesBackToTheSameAST(_ text: String) throws {
        let parsed = try QueryExpression.parse(text)
        let printed = parsed.description
        let reparsed = try QueryExpression.parse(printed)
        #expect(reparsed == parsed, "printed as: \(printed)")
        #expect(reparsed.description == printed)
    }

    @Test func notBindsTighterThanAndWhichBindsTighterThanOr() throws {
        let parsed = try QueryExpression.parse("a == 1 OR b == 2 AND NOT c == 3").predicate
        let a: QueryPredicate = .compare("a", .equal, .int(1))
        let b: QueryPredicate = .compare("b", .equal, .int(2))
        let c: QueryPredicate = .compare("c", .equal, .int(3))
        #expect(parsed == (a || (b && !c)))
        #expect(parsed.description == "a == 1 OR b == 2 AND NOT c == 3")
    }

    static let codeBuilt: [(QueryExpression, String)] = [
        (QueryExpression(predicate: .compare("owner", .equal, .string("Frodo")) && !.compare("done", .equal, .bool(true))),
         "owner == 'Frodo' && !done == true"),
        (QueryExpression(predicate: .compare("priority", .greaterOrEqual, .int(3)) || .compare("owner", .equal, .null)),
         "priority >= 3 OR owner == NULL"),
        (QueryExpression(predicate: .isIn("priority", [.int(1), .int(2)])), "priority IN {1, 2}"),
        (QueryExpression(predicate: .between("progress", .double(0.25), .double(0.75))), "progress BETWEEN {0.25, 0.75}"),
        (QueryExpression(predicate: .compare("name", .beginsWith, .string("fr"), options: .caseInsensitive)),
         "name BEGINSWITH[c] 'fr'"),
        (QueryExpression(predicate: .compare(QueryKeyPath([.property("dogs"), .count]), .greater, .int(2))),
         "dogs.@count > 2"),
        (QueryExpression(predicate: .any("dogs.name", .equal, .string("Rex"))
                         && .all("tags", .like, .string("a*")) && .none("dogs.age", .less, .int(1))),
         "ANY dogs.name == 'Rex' AND ALL tags LIKE 'a*' AND NONE dogs.age < 1"),
        (QueryExpression(predicate: .truePredicate).sorted(by: "name").distinct(by: ["owner"]).limited(to: 3),
         "TRUEPREDICATE SORT(name ASC) DISTINCT(owner) LIMIT(3)"),
        (QueryExpression(predicate: .comparison(.value(.string("work")), .in, .keyPath("tags"))), "'work' IN tags"),
    ]

    @Test("an AST built in code equals the parsed query", arguments: codeBuilt)
    func codeBuiltQueriesEqualParsedQueries(_ built: QueryExpression, _ text: String) throws {
        #expect(built == (try QueryExpression.parse(text)))
        #expect(try QueryExpression.parse(built.description) == built)
    }

    @Test func nodesCarryTheirSourceRanges() throws {
        let text = "name == 'a'\n  AND dogs.@count > 2"
        let parsed = try QueryExpression.parse(text).predicate
        guard case .and(let first, let second) = parsed.kind, case .comparison(let comparison) = second.kind,
              case .keyPath(let path) = comparison.lhs.kind else {
            Issue.record("unexpected tree \(parsed)")
            return
        }
        #expect(first.range == SourceRange(offset: 0, length: 11, line: 1, column: 1))
        #expect(second.range == SourceRange(offset: 18, length: 15, line: 2, column: 7))
        #expect(comparison.operatorRange == SourceRange(offset: 30, length: 1, line: 2, column: 19))
        #expect(path.elements.map(\.range.column) == [7, 12])
        #expect(parsed.range == SourceRange(offset: 0, length: 33, line: 1, column: 1))
    }

    @Test func placeholdersTakeTheirArguments() throws {
        let parsed = try QueryExpression.parse(
            "%K == %@ AND priority > %d AND progress < %f AND owner == $1 AND name == $0 AND tags IN %@",
            arguments: [.string("assignee.name"), .string("Sam"), .int(3), .int(1), .set([.string("x")])])
        let expected = try QueryExpression.parse(
            "assignee.name == 'Sam' AND priority > 3 AND progress < 1.0 AND owner == 'Sam' AND name == 'assignee.name' AND tags IN {'x'}")
        #expect(parsed == expected)
    }

    @Test func keywordsIgnoreCase() throws {
        let lower = try QueryExpression.parse("name beginswith[C] 'a' and not tags in {'x'} or any dogs.age between {1, 2} sort(name desc) limit(1)")
        let upper = try QueryExpression.parse("name BEGINSWITH[c] 'a' AND NOT tags IN {'x'} OR ANY dogs.age BETWEEN {1, 2} SORT(name DESC) LIMIT(1)")
        #expect(lower == upper)
    }

    @Test func literalsHaveTheirValues() throws {
        func value(_ literal: String) throws -> Value {
            guard case .comparison(let c) = try QueryExpression.parse("x == " + literal).predicate.kind,
                  case .value(let v) = c.rhs.kind else { return .null }
            return v
        }
        #expect(try value("42") == .int(42))
        #expect(try value("-7") == .int(-7))
        #expect(try value("2.5e3") == .double(2500))
        #expect(try value("'a\\u00e9\\\"'") == .string("a\u{E9}\""))
        #expect(try value("TRUE") == .bool(true))
        #expect(try value("null") == .null)
        #expect(try value("T2024-01-02@10:00:00") == .date(Date(timeIntervalSince1970: 1_704_189_600)))
        #expect(try value("T1704189600:500000000") == .date(Date(timeIntervalSince1970: 1_704_189_600.5)))
        #expect(try value("B64\"AQID\"") == .data(Data([1, 2, 3])))
        #expect(try value("decimal128(1.50)") == .decimal(try Decimal128(string: "1.5")))
        #expect(try value("oid(507f1f77bcf86cd799439011)") == .objectId(try ObjectId(string: "507f1f77bcf86cd799439011")))
    }

    @Test func aPropertyNamedLikeAClauseIsStillAProperty() throws {
        let parsed = try QueryExpression.parse("limit > 3 AND sort == 'x' SORT(limit ASC)")
        #expect(parsed.clauses == [.sort([QuerySortKey("limit")])])
        #expect(parsed.predicate == (.compare("limit", .greater, .int(3)) && .compare("sort", .equal, .string("x"))))
    }
}
