import AtollCore
import AtollTesting
import Foundation
import Testing

@Suite struct QueryEvaluationTests {
    /// A task whose optional properties are all null.
    static let empty: [String: Value] = [
        "name": .string("Ring"), "owner": .null, "done": .bool(false), "priority": .int(2), "progress": .double(0.5),
        "estimate": .null, "due": .null, "assignee": .null,
    ]

    static let nullSemantics: [(query: String, matches: Bool)] = [
        ("owner == nil", true),
        ("owner != nil", false),
        ("owner == 'Frodo'", false),
        ("owner != 'Frodo'", true),
        ("owner < 'Frodo'", false),
        ("owner >= 'Frodo'", false),
        ("NOT owner < 'Frodo'", true),
        ("owner BEGINSWITH ''", false),
        ("NOT owner CONTAINS 'x'", true),
        ("owner ==[c] nil", true),
        ("owner !=[c] 'x'", true),
        ("owner IN {'a', nil}", true),
        ("estimate > 0", false),
        ("assignee.name == nil", true),
        ("assignee.name != 'Sam'", true),
        ("assignee.dogs.@count == 0", true),
        ("assignee.dogs.@avg.age == nil", true),
        ("counts.@sum == 0", true),
        ("counts.@avg == nil", true),
        ("ALL tags == 'x'", true),
        ("ANY tags == 'x'", false),
        ("NONE tags == 'x'", true),
        ("counts['k'] == nil", true),
    ]

    @Test("nulls compare as in Realm", arguments: nullSemantics)
    func nullsCompareAsInRealm(_ row: (query: String, matches: Bool)) throws {
        let query = try QueryTestSchema.bind(row.query)
        #expect(query.evaluate(on: Self.empty, resolver: NoLinkResolver()) == row.matches)
    }

    @Test func aLinkToAMissingObjectReadsAsNull() throws {
        var task = Self.empty
        task["assignee"] = .link(ObjectLink(objectType: "Person", primaryKey: .int(99)))
        #expect(try QueryTestSchema.bind("assignee.name == nil").evaluate(on: task, resolver: NoLinkResolver()))
        #expect(try QueryTestSchema.bind("assignee != nil").evaluate(on: task, resolver: NoLinkResolver()))
    }

    @Test func linksResolveThroughTheResolver() throws {
        let sam = ObjectLink(objectType: "Person", primaryKey: .int(1))
        let rex = ObjectLink(objectType: "Dog", primaryKey: .int(1))
        let resolver = DictionaryObjectResolver([
            sam: ["_id": .int(1), "name": .string("Sam"), "dogs": .list([.link(rex)]),
                  "address": .object(["city": .string("Hobbiton")])],
            rex: ["_id": .int(1), "name": .string("Rex"), "age": .int(4)],
        ])
        var task = Self.empty
        task["assignee"] = .link(sam)
        for query in ["assignee.name == 'Sam'", "assignee.dogs.name == 'Rex'", "assignee.dogs.@sum.age == 4",
                      "assignee.address.city BEGINSWITH 'Hob'", "assignee == %@"] {
            let bound = try QueryTestSchema.bind(query, query.contains("%@") ? [.link(sam)] : [])
            #expect(bound.evaluate(on: task, resolver: resolver), "\(query)")
        }
    }

    static let stringOperators: [(StringOperator, String, String, Bool, Bool)] = [
        (.beginsWith, "Frodo", "Fro", false, true),
        (.beginsWith, "Frodo", "fro", false, false),
        (.beginsWith, "Frodo", "fro", true, true),
        (.endsWith, "Frodo", "DO", true, true),
        (.endsWith, "do", "Frodo", false, false),
        (.contains, "Frodo", "rod", false, true),
        (.contains, "Frodo", "", false, true),
        (.contains, "\u{C4}PFEL", "\u{E4}pf", true, true),
        (.like, "Frodo", "F*", false, true),
        (.like, "Frodo", "?rodo", false, true),
        (.like, "Frodo", "*o*o", false, true),
        (.like, "Frodo", "F?o", false, false),
        (.like, "", "*", false, true),
        (.like, "a*b", "a\\*b", false, false),
        (.equal, "\u{E9}", "e\u{301}", false, false),
        (.equal, "STRASSE", "strasse", true, true),
    ]

    @Test("string operators", arguments: stringOperators)
    func stringOperatorsMatch(_ row: (StringOperator, String, String, Bool, Bool)) {
        #expect(StringOperator.evaluate(row.0, row.1, row.2, caseInsensitive: row.3) == row.4)
    }

    @Test func stringsAreEqualOnlyWithTheSameScalars() throws {
        var task = Self.empty
        task["name"] = .string("e\u{301}")
        #expect(try !QueryTestSchema.bind("name == '\u{E9}'").evaluate(on: task, resolver: NoLinkResolver()))
        #expect(try QueryTestSchema.bind("name.@size == 2").evaluate(on: task, resolver: NoLinkResolver()))
    }

    @Test func numbersCompareByValueAcrossWidths() throws {
        var task = Self.empty
        task["estimate"] = .decimal(try Decimal128(string: "2.50"))
        for query in ["progress == 0.5", "progress < 1", "priority == 2.0", "priority < 2.5", "estimate == 2.5",
                      "estimate > 2", "estimate BETWEEN {decimal128(2.5), 3}"] {
            #expect(try QueryTestSchema.bind(query).evaluate(on: task, resolver: NoLinkResolver()), "\(query)")
        }
    }

    @Test func clausesApplyInTheOrderWritten() throws {
        let tasks: [[String: Value]] = [
            ["name": .string("a"), "priority": .int(2), "owner": .string("x")],
            ["name": .string("b"), "priority": .int(1), "owner": .null],
            ["name": .string("c"), "priority": .int(2), "owner": .string("y")],
            ["name": .string("d"), "priority": .int(1), "owner": .string("x")],
        ]
        func names(_ query: String) throws -> [String] {
            try QueryTestSchema.bind(query).run(on: tasks, values: { $0 }, resolver: NoLinkResolver()).map {
                if case .string(let s) = $0["name"] { s } else { "?" }
            }
        }
        #expect(try names("TRUEPREDICATE SORT(priority ASC)") == ["b", "d", "a", "c"])
        #expect(try names("TRUEPREDICATE SORT(priority DESC, name DESC)") == ["c", "a", "d", "b"])
        #expect(try names("TRUEPREDICATE SORT(owner ASC)") == ["b", "a", "d", "c"])
        #expect(try names("TRUEPREDICATE SORT(owner DESC)") == ["c", "a", "d", "b"])
        #expect(try names("TRUEPREDICATE DISTINCT(owner)") == ["a", "b", "c"])
        #expect(try names("TRUEPREDICATE DISTINCT(priority, owner)") == ["a", "b", "c", "d"])
        #expect(try names("TRUEPREDICATE SORT(priority ASC) DISTINCT(priority)") == ["b", "a"])
        #expect(try names("TRUEPREDICATE LIMIT(2) SORT(name DESC)") == ["b", "a"])
        #expect(try names("TRUEPREDICATE SORT(name DESC) LIMIT(2)") == ["d", "c"])
        #expect(try names("priority == 1 LIMIT(0)") == [])
    }
}
