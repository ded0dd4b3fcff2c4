import AtollCore
import AtollTesting
import Foundation
import GRDB
import Testing

/// Runs every query of ``QueryFixtures/cases`` twice, through SQL on a real SQLite database laid out as
/// ``StorageLayout`` says, and in memory, and checks that both return the expected objects.
@Suite struct QuerySQLAgreementTests {
    /// The fixture in an in-memory database with Atoll's SQL functions and collation registered.
    static let database: DatabaseQueue = {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            for function in QueryFunctions.sqlFunctions {
                let body = function.body
                db.add(function: DatabaseFunction(function.name, argumentCount: function.arity, pure: true) { values in
                    body(values.map(sqlValue)).grdbValue
                })
            }
            db.add(collation: DatabaseCollation(QueryFunctions.decimalCollation) { QueryFunctions.compareDecimals($0, $1) })
        }
        let queue = try! DatabaseQueue(configuration: configuration)
        try! queue.write { db in
            for statement in QueryFixtures.sqlScript() {
                try db.execute(sql: statement.sql, arguments: StatementArguments(statement.arguments.map(\.grdbValue)))
            }
        }
        return queue
    }()

    @Test("SQL and the evaluator return the expected objects", arguments: QueryFixtures.cases)
    func sqlAndEvaluatorAgree(_ query: QueryCase) throws {
        let bound = try BoundQuery(parsing: query.query, arguments: query.arguments, objectType: query.type,
                                   schema: QueryFixtures.schema)
        let objects = QueryFixtures.objects[query.type] ?? []

        let inMemory = bound.run(on: objects, values: { $0 }, resolver: QueryFixtures.resolver)
            .map(QueryFixtures.primaryKey)

        let sql = try SQLTranslator.translate(bound)
        let rows = try Self.database.read { db in
            try Int64.fetchAll(db, sql: sql.statement(selecting: "t0._row"),
                               arguments: StatementArguments(sql.arguments.map(\.grdbValue)))
        }
        let fetched = bound.apply(sql.postClauses, to: rows.map { objects[Int($0) - 1] }, values: { $0 },
                                  resolver: QueryFixtures.resolver)
        let fromSQL = fetched.map(QueryFixtures.primaryKey)

        if query.ordered {
            #expect(inMemory == query.expected, "evaluator")
            #expect(fromSQL == query.expected, "SQL: \(sql.statement(selecting: "t0._row"))")
        } else {
            #expect(inMemory.sorted() == query.expected.sorted(), "evaluator")
            #expect(fromSQL.sorted() == query.expected.sorted(), "SQL: \(sql.statement(selecting: "t0._row"))")
        }
    }

    @Test func theCaseTableCoversAtLeastSixtyQueries() {
        #expect(QueryFixtures.cases.count >= 60)
    }
}

private func sqlValue(_ value: DatabaseValue) -> SQLValue {
    switch value.storage {
    case .null: .null
    case .int64(let i): .integer(i)
    case .double(let d): .real(d)
    case .string(let s): .text(s)
    case .blob(let d): .blob(d)
    }
}

private extension SQLValue {
    var grdbValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let i): i.databaseValue
        case .real(let d): d.databaseValue
        case .text(let s): s.databaseValue
        case .blob(let d): d.databaseValue
        }
    }
}
