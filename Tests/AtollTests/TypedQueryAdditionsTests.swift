@testable import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

enum TQStatus: Int, PersistableEnum {
    case open, started, done
}

/// A GeoJSON-shaped point, as Realm requires for geospatial queries.
final class TQPoint: EmbeddedObject {
    @Persisted var type = "Point"
    @Persisted var coordinates: List<Double>

    convenience init(longitude: Double, latitude: Double) {
        self.init()
        coordinates.append(objectsIn: [longitude, latitude])
    }
}

final class TQTask: Object {
    @Persisted(primaryKey: true) var title = ""
    @Persisted var isComplete = false
    @Persisted var assignee = ""
    @Persisted var status: TQStatus
    @Persisted var budget = 0.0
    @Persisted var spent = 0.0
    @Persisted var ratings: List<Int>
    @Persisted var labels: MutableSet<String>
    @Persisted var attributes: Map<String, Int>
    @Persisted var blob = Data()
    @Persisted var location: TQPoint?
    @Persisted(originProperty: "tasks") var owners: LinkingObjects<TQUser>
}

final class TQUser: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted var tasks: List<TQTask>
}

/// What realm-swift's typed `Query` has beyond plain comparisons (aggregates through collections,
/// subquery counts, ANY on primitive collections, two properties compared, map keys and values, enum
/// raw values, string operators on data, linking objects, geospatial containment) gives the same
/// objects as the equivalent query text, and the objects expected.
@Suite struct TypedQueryAdditionsTests {
    struct Case<T: Object>: Sendable {
        let text: String
        let typed: @Sendable (Query<T>) -> Query<Bool>
        let expected: [String]
    }

    static let userCases: [Case<TQUser>] = [
        Case(text: "tasks.@avg.budget > 7.5", typed: { $0.tasks.budget.avg > 7.5 }, expected: ["Bo"]),
        Case(text: "tasks.@min.budget < 5", typed: { $0.tasks.budget.min < 5 }, expected: ["Ali"]),
        Case(text: "tasks.@max.budget >= 8", typed: { $0.tasks.budget.max >= 8 }, expected: ["Ali", "Bo"]),
        Case(text: "tasks.@sum.budget == 14", typed: { $0.tasks.budget.sum == 14 }, expected: ["Ali"]),
        Case(text: "tasks.@count == 0", typed: { $0.tasks.count == 0 }, expected: ["Cy"]),
        Case(text: "SUBQUERY(tasks, $obj, $obj.isComplete == false AND $obj.assignee == 'Alex').@count > 0",
             typed: { ($0.tasks.isComplete == false && $0.tasks.assignee == "Alex").count > 0 }, expected: ["Ali"]),
        Case(text: "SUBQUERY(tasks, $t, $t.isComplete == false).@count == 1",
             typed: { ($0.tasks.isComplete == false).count == 1 }, expected: ["Ali", "Bo"]),
        Case(text: "SUBQUERY(tasks, $t, ANY $t.ratings > 4).@count > 0", typed: { ($0.tasks.ratings > 4).count > 0 },
             expected: ["Ali"]),
    ]

    static let taskCases: [Case<TQTask>] = [
        Case(text: "ANY ratings > 3", typed: { $0.ratings > 3 }, expected: ["Buy milk", "Read"]),
        Case(text: "ANY labels == 'work'", typed: { $0.labels == "work" }, expected: ["Fix bug"]),
        Case(text: "budget > spent", typed: { $0.budget > $0.spent }, expected: ["Caf\u{E9} visit", "Read"]),
        Case(text: "budget == spent", typed: { $0.budget == $0.spent }, expected: ["Fix bug"]),
        Case(text: "attributes.@keys == 'size'", typed: { $0.attributes.keys == "size" }, expected: ["Buy milk"]),
        Case(text: "ANY attributes.@values >= 1", typed: { $0.attributes.values >= 1 }, expected: ["Buy milk", "Caf\u{E9} visit"]),
        Case(text: "attributes['size'] > 2", typed: { $0.attributes["size"] > 2 }, expected: ["Buy milk"]),
        Case(text: "status == 2", typed: { $0.status == .done }, expected: ["Caf\u{E9} visit", "Read"]),
        Case(text: "status > 0", typed: { $0.status.rawValue > 0 }, expected: ["Caf\u{E9} visit", "Fix bug", "Read"]),
        Case(text: "blob CONTAINS B64\"AgM=\"", typed: { $0.blob.contains(Data([2, 3])) }, expected: ["Buy milk"]),
        Case(text: "blob BEGINSWITH B64\"CQ==\"", typed: { $0.blob.starts(with: Data([9])) }, expected: ["Fix bug"]),
        Case(text: "blob ENDSWITH B64\"Aw==\"", typed: { $0.blob.ends(with: Data([3])) }, expected: ["Buy milk"]),
        Case(text: "blob LIKE B64\"AT8D\"", typed: { $0.blob.like(Data([1, 0x3F, 3])) }, expected: ["Buy milk"]),
        Case(text: "title CONTAINS[d] 'Cafe'", typed: { $0.title.contains("Cafe", options: .diacriticInsensitive) },
             expected: ["Caf\u{E9} visit"]),
        Case(text: "title BEGINSWITH[cd] 'CAFE'", typed: { $0.title.starts(with: "CAFE", options: [.caseInsensitive, .diacriticInsensitive]) },
             expected: ["Caf\u{E9} visit"]),
        Case(text: "ANY owners.name == 'Ali'", typed: { $0.owners.name == "Ali" }, expected: ["Buy milk", "Caf\u{E9} visit"]),
        Case(text: "owners.@count == 0", typed: { $0.owners.count == 0 }, expected: ["Read"]),
        Case(text: "owners.@max.age > 25", typed: { $0.owners.age.max > 25 }, expected: ["Buy milk", "Caf\u{E9} visit"]),
        Case(text: "location GEOWITHIN geoCircle([2.35, 48.85], 0.2)",
             typed: { $0.location.geoWithin(GeoCircle(center: (48.85, 2.35), radius: .radians(0.2)!)!) },
             expected: ["Buy milk", "Caf\u{E9} visit"]),
        Case(text: "location GEOWITHIN geoBox([150, -40], [155, -30])",
             typed: { $0.location.geoWithin(GeoBox(bottomLeft: (-40, 150), topRight: (-30, 155))!) }, expected: ["Read"]),
        Case(text: "location GEOWITHIN geoPolygon({[0, 45], [20, 45], [20, 55], [0, 55], [0, 45]})",
             typed: { $0.location.geoWithin(GeoPolygon(outerRing: [(45, 0), (45, 20), (55, 20), (55, 0), (45, 0)])!) },
             expected: ["Buy milk", "Caf\u{E9} visit"]),
    ]

    static func populate(_ realm: Realm) throws {
        try realm.write {
            func task(_ title: String, _ complete: Bool, _ assignee: String, _ status: TQStatus, _ budget: Double, _ spent: Double,
                      ratings: [Int], labels: [String], attributes: [String: Int], blob: [UInt8], location: TQPoint?) -> TQTask {
                let t = TQTask()
                t.title = title
                t.isComplete = complete
                t.assignee = assignee
                t.status = status
                t.budget = budget
                t.spent = spent
                t.ratings.append(objectsIn: ratings)
                t.labels.insert(objectsIn: labels)
                for (key, value) in attributes { t.attributes[key] = value }
                t.blob = Data(blob)
                t.location = location
                return t
            }
            let milk = task("Buy milk", false, "Alex", .open, 10, 12, ratings: [1, 5], labels: ["home"], attributes: ["size": 3],
                            blob: [1, 2, 3], location: TQPoint(longitude: 2.3522, latitude: 48.8566))
            let cafe = task("Caf\u{E9} visit", true, "Alex", .done, 4, 1, ratings: [2], labels: [], attributes: ["color": 1],
                            blob: [], location: TQPoint(longitude: 13.405, latitude: 52.52))
            let bug = task("Fix bug", false, "Sam", .started, 8, 8, ratings: [], labels: ["work"], attributes: [:],
                           blob: [9], location: nil)
            let read = task("Read", false, "Alex", .done, 1, 0, ratings: [4], labels: [], attributes: [:], blob: [],
                            location: TQPoint(longitude: 151.2093, latitude: -33.8688))
            realm.add(read)
            realm.create(TQUser.self, value: ["name": "Ali", "age": 30, "tasks": [milk, cafe]])
            realm.create(TQUser.self, value: ["name": "Bo", "age": 20, "tasks": [bug]])
            realm.create(TQUser.self, value: ["name": "Cy", "age": 40])
        }
    }

    private func realm(_ t: TestRealm) throws -> Realm {
        let realm = try t.open()
        try Self.populate(realm)
        return realm
    }

    private func testRealm() throws -> TestRealm { try TestRealm(objectTypes: [TQUser.self, TQTask.self, TQPoint.self]) }

    @Test(arguments: userCases.indices)
    func userQueriesMatchTheirText(_ index: Int) throws {
        let c = Self.userCases[index]
        let t = try testRealm()
        let users = try realm(t).objects(TQUser.self).sorted(byKeyPath: "name")
        #expect(users.where(c.typed).map(\.name) == c.expected, "typed: \(c.text)")
        #expect(try users.filter(query: c.text).map(\.name) == c.expected, "text: \(c.text)")
    }

    @Test(arguments: taskCases.indices)
    func taskQueriesMatchTheirText(_ index: Int) throws {
        let c = Self.taskCases[index]
        let t = try testRealm()
        let tasks = try realm(t).objects(TQTask.self).sorted(byKeyPath: "title")
        #expect(tasks.where(c.typed).map(\.title) == c.expected, "typed: \(c.text)")
        #expect(try tasks.filter(query: c.text).map(\.title) == c.expected, "text: \(c.text)")
    }

    @Test func aSubqueryCountPrintsAsRealmQueryLanguage() throws {
        let t = try testRealm()
        let users = try realm(t).objects(TQUser.self)
        let typed = users.where { ($0.tasks.isComplete == false && $0.tasks.assignee == "Alex").count > 0 }
        #expect(typed.core.expression.description
            == "SUBQUERY(tasks, $obj, $obj.isComplete == false AND $obj.assignee == \"Alex\").@count > 0")
    }

    @Test func shapesAreQueryArguments() throws {
        let t = try testRealm()
        let tasks = try realm(t).objects(TQTask.self).sorted(byKeyPath: "title")
        let europe = GeoBox(bottomLeft: (40, 0), topRight: (55, 20))!
        #expect(try tasks.filter(query: "location GEOWITHIN %@", arguments: [europe]).map(\.title) == ["Buy milk", "Caf\u{E9} visit"])
        let paris = GeoCircle(center: (48.85, 2.35), radius: .kilometers(20)!)!
        #expect(tasks.filter("location GEOWITHIN $0", paris).map(\.title) == ["Buy milk"])
        #expect(tasks.filter("NOT location GEOWITHIN $0", paris).count == 3)
    }

    @Test func invalidShapesAreTypedErrors() throws {
        #expect(GeoPoint(latitude: 91, longitude: 0) == nil)
        #expect(Distance.radians(-1) == nil)
        #expect(GeoCircle(center: (0, 0), radiusInRadians: -1) == nil)
        #expect(throws: GeoError.self) { try GeoPoint(checkedLatitude: 0, longitude: 181) }
        do {
            _ = try GeoPolygon(checkedOuterRing: [GeoPoint(latitude: 0, longitude: 0)!, GeoPoint(latitude: 0, longitude: 1)!,
                                                  GeoPoint(latitude: 1, longitude: 1)!])
            Issue.record("an open ring is not a polygon")
        } catch {
            #expect(error.code == .ringNotClosed)
        }
        let t = try testRealm()
        let tasks = try realm(t).objects(TQTask.self)
        #expect {
            _ = try tasks.filter(query: "location GEOWITHIN geoPolygon({[0, 0], [1, 0], [1, 1]})")
        } throws: { error in
            guard let error = error as? Realm.Error, let query = error.underlying as? QueryError else { return false }
            return error.code == .invalidQuery && query.code == .invalidGeometry && query.message.contains("not closed")
        }
        #expect {
            _ = try tasks.filter(query: "location GEOWITHIN geoCircle([0, 100], 1)")
        } throws: { error in
            ((error as? Realm.Error)?.underlying as? QueryError)?.code == .invalidGeometry
        }
    }

    @Test func linkingObjectsAreQueryableButNotStored() throws {
        let t = try testRealm()
        let realm = try realm(t)
        #expect(realm.schema["TQTask"]?.properties.contains { $0.name == "owners" } == false)
        let tasks = realm.objects(TQTask.self)
        #expect(try tasks.filter(query: "ANY owners.age < 25").map(\.title) == ["Fix bug"])
        #expect(try tasks.filter(query: "@links.TQUser.tasks.@count == 0").map(\.title) == ["Read"])
        #expect(try realm.objects(TQUser.self).filter(query: "tasks.owners.@count == 1").count == 2)
        #expect(realm.objects(TQTask.self).sorted(byKeyPath: "title").where { $0.owners.name == "Bo" }.map(\.title) == ["Fix bug"])
    }
}
