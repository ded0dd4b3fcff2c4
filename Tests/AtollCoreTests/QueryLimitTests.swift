@testable import AtollCore
import AtollTesting
import Foundation
import Testing

/// Query text comes from the network (subscriptions): no input may overflow the stack or take
/// quadratic time. See "Limits" in docs/query-language.md.
@Suite struct QueryLimitTests {
    static func nested(_ prefix: String, _ levels: Int, _ suffix: String = "") -> String {
        String(repeating: prefix, count: levels) + "priority == 1" + String(repeating: suffix, count: levels)
    }

    static func expectTooDeep(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) { try QueryExpression.parse(text) } throws: { error in
            guard let error = error as? QueryError else { return false }
            return error.code == .tooComplex
                && error.message == "the query nests deeper than 100 levels of parentheses and NOT"
        }
    }

    /// The depth of the tree, counting every node.
    static func depth(_ p: QueryPredicate) -> Int {
        switch p.kind {
        case .constant, .comparison: 1
        case .not(let a): 1 + depth(a)
        case .and(let a, let b), .or(let a, let b): 1 + max(depth(a), depth(b))
        }
    }

    @Test func aMillionBangsAreRefusedNotAStackOverflow() {
        Self.expectTooDeep(String(repeating: "!", count: 1_000_000) + "priority == 1")
    }

    @Test func aMillionOpenParenthesesAreRefusedNotAStackOverflow() {
        Self.expectTooDeep(String(repeating: "(", count: 1_000_000) + "priority == 1")
    }

    @Test func aMillionNotsAreRefused() {
        Self.expectTooDeep(String(repeating: "NOT ", count: 1_000_000) + "priority == 1")
    }

    @Test("100 levels of nesting are accepted, 101 refused",
          arguments: [("(", ")"), ("NOT ", ""), ("!", ""), ("!(", ")"), ("NOT (", ")")])
    func nestingIsCappedAtOneHundredLevels(_ open: String, _ close: String) throws {
        let levelsPerRepeat = open.count(where: { $0 == "(" }) + (open.contains("!") || open.contains("NOT") ? 1 : 0)
        let accepted = try QueryExpression.parse(Self.nested(open, 100 / levelsPerRepeat, close))
        // Binding, evaluating and printing the deepest accepted query all work (translating it to
        // SQL: QuerySQLTranslatorTests in AtollTests).
        let bound = try accepted.bind(to: "Task", in: QueryTestSchema.schema)
        _ = bound.evaluate(on: ["priority": .int(1)], resolver: NoLinkResolver())
        #expect(try QueryExpression.parse(accepted.description) == accepted)
        let tooDeep = open + Self.nested(open, 100 / levelsPerRepeat, close) + close
        Self.expectTooDeep(tooDeep)
    }

    @Test func theTooDeepErrorPointsAtTheFirstLevelPastTheCap() throws {
        do {
            _ = try QueryExpression.parse(Self.nested("(", 101, ")"))
            Issue.record("expected an error")
        } catch {
            #expect(error.range.column == 101)
            #expect(error.description == "the query nests deeper than 100 levels of parentheses and NOT at line 1, column 101")
        }
    }

    @Test func flatChainsDoNotNestAndHaveNoLengthLimit() throws {
        // One comparison per line: also checks that locating tokens by line is not quadratic.
        let count = 20_000
        let text = (0..<count).map { "priority == \($0)" }.joined(separator: "\nOR ")
        let parsed = try QueryExpression.parse(text)
        #expect(Self.depth(parsed.predicate) <= 16)  // balanced: 1 + ⌈log2(20_000)⌉; left-deep it would be 20_000
        #expect(parsed.predicate.chainOperands(and: false).count == count)
        let bound = try parsed.bind(to: "Task", in: QueryTestSchema.schema)
        #expect(bound.evaluate(on: ["priority": .int(Int64(count - 1))], resolver: NoLinkResolver()))
        #expect(!bound.evaluate(on: ["priority": .int(-1)], resolver: NoLinkResolver()))
        let printed = parsed.description
        #expect(printed == text.replacingOccurrences(of: "\n", with: " "))
        #expect(try QueryExpression.parse(printed) == parsed)
        #expect(parsed.hashValue == (try QueryExpression.parse(printed)).hashValue)

        let and = try QueryExpression.parse(Array(repeating: "priority > 0", count: count).joined(separator: " && "))
        #expect(Self.depth(and.predicate) <= 16)
        #expect(try and.bind(to: "Task", in: QueryTestSchema.schema)
            .evaluate(on: ["priority": .int(1)], resolver: NoLinkResolver()))
    }

    @Test func longInListsBindToShallowTrees() throws {
        let count = 100_000
        let values = (0..<count).map { Value.int(Int64($0)) }
        let bound = try QueryExpression.parse("priority IN %@", arguments: [.list(values)])
            .bind(to: "Task", in: QueryTestSchema.schema)
        #expect(bound.evaluate(on: ["priority": .int(Int64(count - 1))], resolver: NoLinkResolver()))
        #expect(!bound.evaluate(on: ["priority": .int(-1)], resolver: NoLinkResolver()))
        #expect(bound == (try QueryExpression.parse("priority IN %@", arguments: [.list(values)])
            .bind(to: "Task", in: QueryTestSchema.schema)))
    }

    @Test func chainsEqualWhateverTheirGrouping() throws {
        let a: QueryPredicate = .compare("a", .equal, .int(1))
        let b: QueryPredicate = .compare("b", .equal, .int(2))
        let c: QueryPredicate = .compare("c", .equal, .int(3))
        #expect(((a && b) && c) == (a && (b && c)))
        #expect(((a && b) && c).hashValue == (a && (b && c)).hashValue)
        #expect(try QueryExpression.parse("a == 1 OR (b == 2 OR c == 3)").predicate == ((a || b) || c))
        #expect(((a && b) || c) != (a && (b || c)))
        #expect((a && b) != (b && a))
    }

    @Test func keyPathsAreCappedAtOneHundredComponents() throws {
        let path = { (n: Int) in (["assignee"] + Array(repeating: "address", count: n - 2) + ["city"]).joined(separator: ".") }
        _ = try QueryExpression.parse(path(100) + " == 'x'")
        #expect { _ = try QueryExpression.parse(path(101) + " == 'x'") } throws: { error in
            (error as? QueryError)?.description == "the key path has 101 components, more than 100 at line 1, column 1"
        }
        #expect { _ = try QueryExpression.parse("%K == 'x'", arguments: [.string(path(1_000_000))]) } throws: { error in
            (error as? QueryError)?.code == .tooComplex
        }
    }

    @Test func subqueriesNestAtMostTenDeep() throws {
        func nested(_ levels: Int) -> String {
            var inner = "$v\(levels).name == 'x'"
            for level in stride(from: levels, to: 0, by: -1) {
                let collection = level == 1 ? "assignee.dogs" : "$v\(level - 1).@links.Person.dogs.dogs"
                inner = "SUBQUERY(\(collection), $v\(level), \(inner)).@count > 0"
            }
            return inner
        }
        _ = try QueryExpression.parse(nested(QueryExpression.maximumSubqueryDepth))
        #expect { try QueryExpression.parse(nested(QueryExpression.maximumSubqueryDepth + 1)) } throws: { error in
            (error as? QueryError)?.code == .tooComplex
                && (error as? QueryError)?.message == "SUBQUERY nests deeper than 10 levels"
        }
    }

    @Test func aPolygonHasAtMostTenThousandPoints() {
        let points = (0...GeoPolygon.maximumVertexCount).map { i in "[\(Double(i) / 1e5), \(i % 2 == 0 ? 0 : 0.001)]" }
        let text = "home GEOWITHIN geoPolygon({" + points.joined(separator: ", ") + "})"
        #expect { try QueryExpression.parse(text) } throws: { error in
            (error as? QueryError)?.code == .tooComplex
        }
    }
}
