@testable import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

@Suite struct QuerySQLTranslatorTests {
    static let shapes: [(query: String, type: String, sql: String, arguments: [SQLValue])] = [
        ("owner == 'Frodo' AND NOT done == true", "Task",
         #"(t0."owner" = ? AND NOT COALESCE(t0."done" = ?, 0))"#, [.text("Frodo"), .integer(1)]),
        ("owner != 'Frodo' OR owner == nil", "Task", #"(t0."owner" IS NOT ? OR t0."owner" IS NULL)"#, [.text("Frodo")]),
        ("name BEGINSWITH[c] 'fr'", "Task", #"atoll_string_op('BEGINSWITH', t0."name", ?, 1)"#, [.text("fr")]),
        ("name !=[c] 'x'", "Task", #"NOT (atoll_string_op('==', t0."name", ?, 1))"#, [.text("x")]),
        ("assignee.name == 'Sam'", "Task",
         #"(SELECT s1."name" FROM "class_Person" s1 WHERE s1._row = t0."assignee") = ?"#, [.text("Sam")]),
        ("ANY tags == 'x'", "Task",
         #"EXISTS (SELECT 1 FROM "list_Task_tags" c1 WHERE c1."owner" = t0._row AND c1."value" = ?)"#, [.text("x")]),
        ("ALL labels BEGINSWITH 'a'", "Task",
         #"NOT EXISTS (SELECT 1 FROM "set_Task_labels" c1 WHERE c1."owner" = t0._row AND NOT (atoll_string_op('BEGINSWITH', c1."value", ?, 0)))"#,
         [.text("a")]),
        ("NONE tags == 'x'", "Task",
         #"NOT EXISTS (SELECT 1 FROM "list_Task_tags" c1 WHERE c1."owner" = t0._row AND c1."value" = ?)"#, [.text("x")]),
        ("tags.@count > 2", "Task",
         #"(SELECT COUNT(*) FROM "list_Task_tags" c1 WHERE c1."owner" = t0._row) > ?"#, [.integer(2)]),
        ("counts['a'] == 1", "Task",
         #"(SELECT m1."value" FROM "map_Task_counts" m1 WHERE m1."owner" = t0._row AND m1."key" = ?) = ?"#,
         [.text("a"), .integer(1)]),
        ("estimate > 1.5", "Task", #"t0."estimate" > ? COLLATE ATOLL_DECIMAL"#, [.text("1.5")]),
        ("due >= T1704067200:0 AND progress < 1", "Task", #"(t0."due" >= ? AND t0."progress" < ?)"#,
         [.real(1_704_067_200 - 978_307_200), .real(1)]),  // dates bind as seconds since 2001
        ("priority IN {1, 2}", "Task", #"(t0."priority" = ? OR t0."priority" = ?)"#, [.integer(1), .integer(2)]),
        ("dogs.@sum.age > 10", "Person",
         #"(SELECT COALESCE(SUM(t2."age"), 0) FROM "list_Person_dogs" c1 LEFT JOIN "class_Dog" t2 ON t2._row = c1."value" WHERE c1."owner" = t0._row AND c1."value" IS NOT NULL) > ?"#,
         [.integer(10)]),
        ("dogs.name == 'Rex'", "Person",
         #"EXISTS (SELECT 1 FROM "list_Person_dogs" c1 LEFT JOIN "class_Dog" t2 ON t2._row = c1."value" WHERE c1."owner" = t0._row AND c1."value" IS NOT NULL AND t2."name" = ?)"#,
         [.text("Rex")]),
        ("name.@size > 3", "Person", #"atoll_size(t0."name") > ?"#, [.integer(3)]),
    ]

    @Test("a query becomes the expected SQL", arguments: shapes)
    func queryBecomesSQL(_ shape: (query: String, type: String, sql: String, arguments: [SQLValue])) throws {
        let sql = try SQLTranslator.translate(QueryTestSchema.bind(shape.query, on: shape.type))
        #expect(sql.whereClause == shape.sql)
        #expect(sql.whereArguments == shape.arguments)
    }

    @Test func aLinkArgumentIsLookedUpByPrimaryKey() throws {
        let link = Value.link(ObjectLink(objectType: "Person", primaryKey: .int(7)))
        let sql = try SQLTranslator.translate(QueryTestSchema.bind("assignee == %@", [link]))
        #expect(sql.whereClause == #"t0."assignee" = COALESCE((SELECT k1._row FROM "class_Person" k1 WHERE k1."_id" = ?), -1)"#)
        #expect(sql.whereArguments == [.integer(7)])
    }

    @Test func leadingSortsBecomeOrderByAndTheRestIsLeftToTheStore() throws {
        let query = try QueryTestSchema.bind(
            "priority > 1 SORT(name ASC) SORT(estimate DESC, assignee.name ASC) LIMIT(5) DISTINCT(owner) LIMIT(2)")
        let sql = try SQLTranslator.translate(query)
        #expect(sql.orderBy == #"t0."estimate" COLLATE ATOLL_DECIMAL DESC, (SELECT s1."name" FROM "class_Person" s1 WHERE s1._row = t0."assignee") ASC, t0."name" ASC, t0._row"#)
        #expect(sql.limit == 5)
        #expect(sql.postClauses.map(\.description) == ["DISTINCT(owner)", "LIMIT(2)"])
        #expect(sql.postClauseKeyPaths == ["owner"])
        #expect(sql.statement(selecting: "t0._row") == #"SELECT t0._row FROM "class_Task" t0 WHERE t0."priority" > ? ORDER BY "#
            + sql.orderBy + " LIMIT 5")
        #expect(sql.arguments == [.integer(1)])
    }

    @Test func aLimitBeforeASortIsTakenInSQLAndTheSortLeftToTheStore() throws {
        let sql = try SQLTranslator.translate(QueryTestSchema.bind("TRUEPREDICATE LIMIT(3) SORT(name DESC)"))
        #expect(sql.whereClause == "1")
        #expect(sql.orderBy == "t0._row")
        #expect(sql.limit == 3)
        #expect(sql.postClauses.map(\.description) == ["SORT(name DESC)"])
    }

    @Test func aLimitAfterDistinctStaysInMemory() throws {
        let sql = try SQLTranslator.translate(QueryTestSchema.bind("TRUEPREDICATE DISTINCT(owner) LIMIT(3)"))
        #expect(sql.limit == nil)
        #expect(sql.postClauses.map(\.description) == ["DISTINCT(owner)", "LIMIT(3)"])
    }

    @Test func mapSubscriptsInSortKeysBindAfterTheWhereArguments() throws {
        let sql = try SQLTranslator.translate(QueryTestSchema.bind("name == 'a' SORT(counts['x'] DESC)"))
        #expect(sql.arguments == [.text("a"), .text("x")])
        #expect(sql.orderByArguments == [.text("x")])
    }

    @Test func theStoreRegistersItsFunctionsAndOneCollation() {
        let functions = QueryFunctions.sqlFunctions.map { "\($0.name)/\($0.arity)" }
        #expect(functions == ["atoll_string_op/4", "atoll_size/1", "atoll_decimal_sum/1", "atoll_decimal_avg/1", "atoll_geo_within/4",
                              "atoll_mixed_cmp/3", "atoll_mixed_text/1", "atoll_mixed_type/1", "atoll_mixed_at/2",
                              "atoll_mixed_positions/1", "atoll_mixed_nth/2", "atoll_mixed_sortkey/1"])
        #expect(QueryFunctions.decimalCollation == StorageLayout.decimalCollation)
    }

    @Test func theSQLFunctionsCallTheSameSwiftCode() {
        func call(_ name: String, _ args: [SQLValue]) -> SQLValue {
            QueryFunctions.sqlFunctions.first { $0.name == name }!.body(args)
        }
        #expect(call("atoll_string_op", [.text("LIKE"), .text("Frodo"), .text("f*?O"), .integer(1)]) == .integer(1))
        #expect(call("atoll_string_op", [.text("LIKE"), .text("Frodo"), .text("f*?O"), .integer(0)]) == .integer(0))
        #expect(call("atoll_string_op", [.text("=="), .null, .null, .integer(1)]) == .integer(1))
        #expect(call("atoll_string_op", [.text("CONTAINS"), .null, .text(""), .integer(0)]) == .integer(0))
        #expect(call("atoll_size", [.text("e\u{301}")]) == .integer(2))
        #expect(call("atoll_size", [.blob(Data([1, 2, 3]))]) == .integer(3))
        #expect(call("atoll_decimal_sum", [.text("1.5 2.25 -0.75")]) == .text("3.00"))
        #expect(call("atoll_decimal_sum", [.null]) == .text("0"))
        #expect(call("atoll_decimal_avg", [.text("1 2")]) == .text("1.5"))
        #expect(call("atoll_decimal_avg", [.null]) == .null)
    }

    @Test func theDecimalCollationOrdersByValue() {
        #expect(QueryFunctions.compareDecimals("1.50", "1.5") == .orderedSame)
        #expect(QueryFunctions.compareDecimals("9", "10") == .orderedAscending)
        #expect(QueryFunctions.compareDecimals("-1", "-0.5") == .orderedAscending)
        #expect(QueryFunctions.compareDecimals("1E+3", "999.9") == .orderedDescending)
        #expect(QueryFunctions.compareDecimals("not a number", "1") == .orderedDescending)
    }

    /// The largest queries the parser accepts translate too: the deepest nesting, a flat chain of
    /// 20,000 comparisons, an IN list of 100,000 values (QueryLimitTests checks their parsing).
    @Test func theLargestAcceptedQueriesTranslate() throws {
        let deep = String(repeating: "(", count: 100) + "priority == 1" + String(repeating: ")", count: 100)
        _ = try SQLTranslator.translate(QueryTestSchema.bind(deep))
        _ = try SQLTranslator.translate(QueryTestSchema.bind(String(repeating: "NOT ", count: 100) + "done == true"))
        let chain = (0..<20_000).map { "priority == \($0)" }.joined(separator: " OR ")
        _ = try SQLTranslator.translate(QueryTestSchema.bind(chain))
        let values = (0..<100_000).map { Value.int(Int64($0)) }
        let list = try SQLTranslator.translate(QueryTestSchema.bind("priority IN %@", [.list(values)]))
        #expect(list.arguments.count >= 1)
    }
}
