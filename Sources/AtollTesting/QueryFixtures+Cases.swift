import AtollCore

/// One query over ``QueryFixtures`` and the primary keys it must return.
package struct QueryCase: Sendable, CustomStringConvertible {
    package let type: String
    package let query: String
    package let arguments: [Value]
    package let expected: [Int64]
    /// Whether `expected` is in the order the query must return (it has SORT or LIMIT); otherwise the
    /// results are compared as sets.
    package let ordered: Bool

    package init(_ type: String, _ query: String, _ arguments: [Value], _ expected: [Int64], ordered: Bool = false) {
        self.type = type
        self.query = query
        self.arguments = arguments
        self.expected = expected
        self.ordered = ordered
    }

    /// A query on `Person`.
    package init(_ query: String, _ expected: [Int64], ordered: Bool = false) {
        self.init("Person", query, [], expected, ordered: ordered)
    }

    /// A query with arguments on `Person`.
    package init(_ query: String, _ arguments: [Value], _ expected: [Int64], ordered: Bool = false) {
        self.init("Person", query, arguments, expected, ordered: ordered)
    }

    package var description: String { "\(type): \(query)" }
}

extension QueryFixtures {
    /// Every operator, option, placeholder kind and clause, with the objects each query matches.
    package static let cases: [QueryCase] = [
        // Comparisons of every property kind.
        QueryCase("age == 25", [2, 4]),
        QueryCase("age = 30", [1]),
        QueryCase("age != 25", [1, 3, 5]),
        QueryCase("age <> 25", [1, 3, 5]),
        QueryCase("age < 30", [2, 4]),
        QueryCase("age <= 30", [1, 2, 4]),
        QueryCase("age > 30", [3, 5]),
        QueryCase("age >= 35", [3, 5]),
        QueryCase("age == 25.0", [2, 4]),
        QueryCase("age > 24.5", [1, 2, 3, 4, 5]),
        QueryCase("height > 1.7", [1, 2, 4]),
        QueryCase("height < 2", [1, 2, 3, 4, 5]),
        QueryCase("weight > 56", [1, 4]),
        QueryCase("weight == nil", [2, 5]),
        QueryCase("isActive == true", [1, 3, 4]),
        QueryCase("isActive == FALSE", [2, 5]),
        QueryCase("birthday > T2000-01-01@00:00:00", [2, 5]),
        QueryCase("birthday < T631152001:0", [1, 4]),
        QueryCase("birthday == nil", [3]),
        QueryCase("oid == oid(507f1f77bcf86cd799439011)", [1]),
        QueryCase("oid > oid(507f1f77bcf86cd799439011)", [2, 4]),
        QueryCase("uuid == uuid(3b241101-e2bb-4255-8caf-4136c566a962)", [1]),
        QueryCase("avatar == B64\"AQID\"", [1]),
        QueryCase("balance > 5", [1, 3]),
        QueryCase("balance == 10.5", [1]),
        QueryCase("balance < decimal128(0)", [2]),
        QueryCase("balance BETWEEN {0, 10.5}", [1, 5]),
        // Strings.
        QueryCase("name == \"Alice\"", [1]),
        QueryCase("name == 'dave'", [4]),
        QueryCase("name ==[c] \"ALICE\"", [1]),
        QueryCase("name !=[c] 'alice'", [2, 3, 4, 5]),
        QueryCase("name BEGINSWITH \"A\"", [1]),
        QueryCase("name BEGINSWITH[c] 'd'", [4]),
        QueryCase("name ENDSWITH 'a'", [3]),
        QueryCase("name CONTAINS 'o'", [2, 5]),
        QueryCase("name CONTAINS[c] '\u{E9}L'", [5]),
        QueryCase("name LIKE '?o*'", [2]),
        QueryCase("name LIKE[c] '*A'", [3]),
        QueryCase("name LIKE '*l*'", [1, 3, 5]),
        QueryCase("nickname CONTAINS[c] 'E'", [3]),
        QueryCase("name.@size > 5", [5]),
        QueryCase("avatar.@size == 0", [3]),
        QueryCase("avatar.@size >= 1", [1, 4]),
        // Nulls.
        QueryCase("nickname == nil", [2, 5]),
        QueryCase("nickname == NULL", [2, 5]),
        QueryCase("nickname != nil", [1, 3, 4]),
        QueryCase("nickname != 'Al'", [2, 3, 4, 5]),
        QueryCase("nickname < 'D'", [1, 3]),
        QueryCase("NOT nickname < 'D'", [2, 4, 5]),
        // IN, BETWEEN, constants, logic and precedence.
        QueryCase("name IN {'Alice', 'Bob', 'Zed'}", [1, 2]),
        QueryCase("name IN[c] {'ALICE', 'DAVE'}", [1, 4]),
        QueryCase("age BETWEEN {25, 30}", [1, 2, 4]),
        QueryCase("NOT age BETWEEN {26, 40}", [2, 4]),
        QueryCase("TRUEPREDICATE", [1, 2, 3, 4, 5]),
        QueryCase("FALSEPREDICATE", []),
        QueryCase("name == 'Bob' OR age == 25 AND isActive == true", [2, 4]),
        QueryCase("(name == 'Bob' OR age == 25) AND isActive == true", [4]),
        QueryCase("!(age > 30) && nickname != nil", [1, 4]),
        QueryCase("NOT NOT isActive == true || FALSEPREDICATE", [1, 3, 4]),
        // Links and embedded objects.
        QueryCase("bestFriend.name == 'Alice'", [2, 5]),
        QueryCase("bestFriend.bestFriend.name == 'Alice'", [1]),
        QueryCase("bestFriend == nil", [3]),
        QueryCase("bestFriend.age > 30", [4]),
        QueryCase("address.city == 'Paris'", [1]),
        QueryCase("address.city ==[c] 'paris'", [1, 4]),
        QueryCase("address.zip == nil", [2, 3, 5]),
        QueryCase("address == nil", [3]),
        QueryCase("Dog", "owner.address.city == 'Paris'", [], [1, 2]),
        QueryCase("Dog", "weight == nil", [], [2]),
        // Collections and quantifiers.
        QueryCase("dogs.name == 'Rex'", [1, 2]),
        QueryCase("ANY dogs.age > 10", [4]),
        QueryCase("ALL dogs.age < 6", [1, 3, 5]),
        QueryCase("NONE dogs.name BEGINSWITH[c] 'r'", [3, 4]),
        QueryCase("dogs.owner.name == 'Bob'", [2]),
        QueryCase("dogs.name IN {'Bella', 'rexy'}", [4, 5]),
        QueryCase("ANY dogs.age >= 5 AND dogs.name == 'Rex'", [1, 2]),
        QueryCase("SOME tags == 'green'", [1, 5]),
        QueryCase("ALL bestFriend.dogs.age < 6", [2, 3, 4, 5]),
        QueryCase("NOT (ANY dogs.weight > 10)", [3, 5]),
        QueryCase("ALL dogs.weight > 1", [2, 3, 4, 5]),
        QueryCase("dogs.weight == nil", [1]),
        QueryCase("bestFriend.address.city BEGINSWITH 'P'", [2, 5]),
        QueryCase("tags.@count > 0 AND ALL tags ==[c] 'green'", [5]),
        QueryCase("name LIKE '*'", [1, 2, 3, 4, 5]),
        QueryCase("tags ==[c] 'RED'", [1, 4]),
        QueryCase("ALL tags BEGINSWITH 'g'", [3]),
        QueryCase("luckyNumbers == 7", [1, 2]),
        QueryCase("attrs['a'] == 1", [1]),
        QueryCase("attrs.a >= 1", [1, 2]),
        QueryCase("attrs['zzz'] == nil", [1, 2, 3, 4, 5]),
        QueryCase("attrs.@keys == 'c'", [4]),
        QueryCase("ANY attrs.@values > 4", [2, 5]),
        QueryCase("ALL attrs.@values > 0", [1, 2, 3, 5]),
        QueryCase("Task", "labels == 'work'", [], [2, 4]),
        QueryCase("Task", "ANY labels IN {'fun', 'urgent'}", [], [2, 5, 6]),
        QueryCase("Task", "'work' IN labels", [], [2, 4]),
        // @count, @size and aggregates.
        QueryCase("dogs.@count > 1", [1, 4]),
        QueryCase("dogs.@size == 0", [3]),
        QueryCase("tags.@count == 2", [1, 4, 5]),
        QueryCase("luckyNumbers.@count >= 2", [1, 4]),
        QueryCase("attrs.@count == 0", [3]),
        QueryCase("scores.@count == luckyNumbers.@count", [2, 3]),
        QueryCase("scores.@sum > 50", [1, 5]),
        QueryCase("scores.@sum == 0", [3]),
        QueryCase("scores.@avg > 10", [1, 5]),
        QueryCase("scores.@min == 1", [4]),
        QueryCase("scores.@max < 10", [2, 4]),
        QueryCase("attrs.@values.@sum > 5", [5]),
        QueryCase("dogs.@sum.age > 10", [4]),
        QueryCase("dogs.@avg.weight > 15", [1, 2, 4]),
        QueryCase("dogs.@max.age == 12", [4]),
        QueryCase("dogs.@min.age <= 3", [1, 4, 5]),
        QueryCase("age > dogs.@max.age", [1, 2, 4, 5]),
        QueryCase("Task", "assignee.dogs.name == 'Rex'", [], [1, 2, 5]),
        QueryCase("Task", "assignee.dogs.@count == 2", [], [1, 4, 5]),
        QueryCase("Task", "labels.@count == 0", [], [3]),
        QueryCase("Dog", "owner.scores.@sum >= 60", [], [1, 2, 6]),
        QueryCase("Task", "costs.@sum == 0.3", [], [4]),
        QueryCase("Task", "costs.@max > 50", [], [6]),
        QueryCase("Task", "costs.@min < 0", [], [5]),
        QueryCase("Task", "costs.@avg == 1.875", [], [1]),
        QueryCase("Task", "ANY costs > 5", [], [2, 6]),
        // Backlinks: @links, and the computed `tasks` (Task.assignee) and `owners` (Person.dogs).
        QueryCase("@links.Task.assignee.@count > 0", [1, 2, 4, 5]),
        QueryCase("@links.Task.assignee.@count == 2", [1]),
        QueryCase("@links.Person.bestFriend.name == 'Bob'", [1]),
        QueryCase("@links.Person.bestFriend.@count >= 2", [1]),
        QueryCase("ALL @links.Person.bestFriend.age > 26", [2, 4, 5]),
        QueryCase("@links.@count == 3", [2, 4]),
        QueryCase("@links.@count > 5", [1]),
        QueryCase("Dog", "@links.Person.dogs.@count == 0", [], []),
        QueryCase("Dog", "ANY @links.Person.dogs.name == 'dave'", [], [4, 5]),
        QueryCase("Dog", "owners.age > 30", [], [6]),
        QueryCase("Dog", "@links.@count == 1", [], [1, 2, 3, 4, 5, 6]),
        QueryCase("tasks.@count == 0", [3]),
        QueryCase("tasks.@count == 0 OR name == 'Bob'", [2, 3]),
        QueryCase("@links.@count == 3 AND name == 'Bob'", [2]),
        QueryCase("ANY tasks.done == true", [1, 2]),
        QueryCase("tasks.title BEGINSWITH 'F'", [4]),
        QueryCase("NONE tasks.priority > 2", [1, 3]),
        QueryCase("tasks.@sum.priority > 3", [5]),
        QueryCase("tasks.@max.priority == 3", [2, 4]),
        QueryCase("Task", "assignee.tasks.@count == 2", [], [1, 5]),
        // SUBQUERY.
        QueryCase("SUBQUERY(dogs, $d, $d.age > 2 AND $d.name BEGINSWITH 'R').@count > 0", [1, 2]),
        QueryCase("SUBQUERY(dogs, $d, $d.age > 2).@count == 2", [1]),
        QueryCase("SUBQUERY(tags, $t, $t BEGINSWITH[c] 'g').@count >= 1", [1, 5]),
        QueryCase("SUBQUERY(tasks, $t, $t.done == false).@count == 1", [1, 4, 5]),
        QueryCase("SUBQUERY(dogs, $d, SUBQUERY($d.@links.Person.dogs, $p, $p.age > 30).@count > 0).@count > 0", [5]),
        QueryCase("NOT SUBQUERY(dogs, $d, $d.weight == nil).@count == 0", [1]),
        QueryCase("Task", "SUBQUERY(labels, $l, $l == 'work').@count > 0", [], [2, 4]),
        // Diacritic-insensitive [d] and [cd].
        QueryCase("name ==[d] 'Eloise'", [5]),
        QueryCase("name CONTAINS[cd] 'ELO'", [5]),
        QueryCase("name BEGINSWITH[d] 'E'", [5]),
        QueryCase("name LIKE[d] '?loise'", [5]),
        QueryCase("name !=[d] 'Eloise'", [1, 2, 3, 4]),
        QueryCase("address.city ==[d] 'Zurich'", [5]),
        QueryCase("name IN[cd] {'eloise', 'BOB'}", [2, 5]),
        // String operators on data (bytes; `*` and `?` are the bytes 0x2A and 0x3F).
        QueryCase("avatar CONTAINS B64\"AgM=\"", [1]),
        QueryCase("avatar BEGINSWITH B64\"AQ==\"", [1]),
        QueryCase("avatar ENDSWITH B64\"/w==\"", [4]),
        QueryCase("avatar BEGINSWITH B64\"\"", [1, 3, 4]),
        QueryCase("avatar LIKE B64\"AT8D\"", [1]),
        // Two key paths compared.
        QueryCase("weight > height", [1, 3, 4]),
        QueryCase("Task", "priority > assignee.dogs.@count", [], [2, 3, 4, 6]),
        // Geospatial: `home` is a point [longitude, latitude]; Éloïse's has type "Polygon", so never matches.
        QueryCase("home GEOWITHIN geoCircle([2.35, 48.85], 0.01)", [1]),
        QueryCase("home GEOWITHIN geoCircle([2.35, 48.85], 0.2)", [1, 2]),
        QueryCase("home GEOWITHIN geoBox([0, 40], [20, 55])", [1, 2]),
        QueryCase("home GEOWITHIN geoBox([150, -40], [-170, -30])", [4]),
        QueryCase("home GEOWITHIN geoPolygon({[0, 45], [20, 45], [20, 55], [0, 55], [0, 45]})", [1, 2]),
        QueryCase("home GEOWITHIN geoPolygon({[0, 45], [20, 45], [20, 55], [0, 55], [0, 45]}, {[1, 48], [4, 48], [4, 50], [1, 50], [1, 48]})", [2]),
        QueryCase("NOT home GEOWITHIN geoCircle([2.35, 48.85], 0.01)", [2, 3, 4, 5]),
        // Placeholders.
        QueryCase("name == %@", [.string("Bob")], [2]),
        QueryCase("age > %d", [.int(30)], [3, 5]),
        QueryCase("height >= %f", [.double(1.8)], [2, 4]),
        QueryCase("%K == %@", [.string("name"), .string("Carla")], [3]),
        QueryCase("age == $1 OR name == $0", [.string("Alice"), .int(40)], [1, 3]),
        QueryCase("age IN %@", [.list([.int(25), .int(40)])], [2, 3, 4]),
        QueryCase("address.city IN %@", [.list([.string("Berlin"), .string("Z\u{FC}rich")])], [2, 5]),
        QueryCase("oid == %@", [.string("507f1f77bcf86cd799439012")], [2]),
        QueryCase("bestFriend == %@", [.link(ObjectLink(objectType: "Person", primaryKey: .int(1)))], [2, 5]),
        QueryCase("name ==[c] $0", [.string("\u{E9}lo\u{EF}se")], [5]),
        QueryCase("Task", "done == %@ AND priority >= %d", [.bool(false), .int(2)], [3, 4, 6]),
        QueryCase("Task", "assignee.name BEGINSWITH 'A'", [], [1, 5]),
        QueryCase("Task", "estimate > 2", [], [2, 4, 6]),
        QueryCase("Task", "due > T2024-01-01@12:00:00", [], [1, 4, 6]),
        QueryCase("Task", "title CONTAINS '*'", [], [5]),
        QueryCase("Task", "priority IN {}", [], []),
        // Tail clauses, applied in the order written.
        QueryCase("age > 26 SORT(age DESC)", [3, 5, 1], ordered: true),
        QueryCase("TRUEPREDICATE SORT(age ASC, name DESC)", [4, 2, 1, 5, 3], ordered: true),
        QueryCase("TRUEPREDICATE SORT(name DESC)", [5, 4, 3, 2, 1], ordered: true),
        QueryCase("TRUEPREDICATE SORT(nickname ASC)", [2, 5, 1, 3, 4], ordered: true),
        QueryCase("TRUEPREDICATE SORT(nickname DESC)", [4, 3, 1, 2, 5], ordered: true),
        QueryCase("TRUEPREDICATE SORT(bestFriend.name ASC)", [3, 2, 5, 1, 4], ordered: true),
        QueryCase("TRUEPREDICATE SORT(age ASC) LIMIT(2)", [2, 4], ordered: true),
        QueryCase("age > 20 LIMIT(2)", [1, 2], ordered: true),
        QueryCase("TRUEPREDICATE DISTINCT(age)", [1, 2, 3, 5], ordered: true),
        QueryCase("TRUEPREDICATE DISTINCT(bestFriend)", [1, 2, 3, 4], ordered: true),
        QueryCase("TRUEPREDICATE SORT(age DESC) DISTINCT(isActive)", [3, 5], ordered: true),
        QueryCase("TRUEPREDICATE LIMIT(3) SORT(name DESC)", [3, 2, 1], ordered: true),
        QueryCase("TRUEPREDICATE SORT(age ASC) SORT(isActive DESC)", [4, 1, 3, 2, 5], ordered: true),
        QueryCase("isActive == true SORT(balance DESC)", [3, 1, 4], ordered: true),
        QueryCase("Task", "TRUEPREDICATE SORT(estimate ASC)", [], [3, 5, 1, 4, 2, 6], ordered: true),
        QueryCase("Task", "TRUEPREDICATE SORT(costs.@sum DESC)", [], [6, 2, 1, 4, 3, 5], ordered: true),
        QueryCase("TRUEPREDICATE SORT(dogs.@count DESC, name ASC)", [1, 4, 2, 5, 3], ordered: true),
        QueryCase("TRUEPREDICATE SORT(attrs['a'] DESC)", [2, 1, 4, 3, 5], ordered: true),
        QueryCase("Task", "done == false SORT(%K DESC) LIMIT(%d)", [.string("assignee.age"), .int(2)], [6, 1], ordered: true),
    ]
}
