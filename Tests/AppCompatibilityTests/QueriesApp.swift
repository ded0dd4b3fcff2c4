import Atoll
import AtollTesting
import Foundation
import Testing

// A team task tracker written the way Realm apps query: typed `where` with aggregates, subqueries,
// enums and maps, text `filter` with SUBQUERY, @links and [cd], linking objects, and a map of
// places queried with geoWithin.

enum QryPriority: Int, PersistableEnum {
    case low, medium, high
}

class QryLocation: EmbeddedObject {
    @Persisted var type: String = "Point"
    @Persisted var coordinates: List<Double>

    var latitude: Double { coordinates[1] }
    var longitude: Double { coordinates[0] }

    convenience init(latitude: Double, longitude: Double) {
        self.init()
        coordinates.append(objectsIn: [longitude, latitude])
    }
}

class QryTask: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var isComplete = false
    @Persisted var assignee: String?
    @Persisted var priority = QryPriority.low
    @Persisted var progressMinutes = 0
    @Persisted var estimateMinutes = 0
    @Persisted var ratings: List<Int>
    @Persisted var meta: Map<String, String>
    @Persisted var office: QryLocation?
    @Persisted(originProperty: "tasks") var projects: LinkingObjects<QryProject>
}

class QryProject: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var tasks: List<QryTask>
}

@Suite struct QueriesApp {
    func openRealm(_ folder: TemporaryFolder) throws -> Realm {
        let realm = try Realm(configuration: folder.configuration(objectTypes: [QryTask.self, QryProject.self, QryLocation.self]))
        try realm.write {
            func task(_ name: String, _ assignee: String?, complete: Bool, _ priority: QryPriority, progress: Int, estimate: Int,
                      ratings: [Int], office: QryLocation?) -> QryTask {
                let task = QryTask()
                task.name = name
                task.assignee = assignee
                task.isComplete = complete
                task.priority = priority
                task.progressMinutes = progress
                task.estimateMinutes = estimate
                task.ratings.append(objectsIn: ratings)
                task.office = office
                return task
            }
            let london = QryLocation(latitude: 51.5072, longitude: -0.1276)
            let dublin = QryLocation(latitude: 53.3498, longitude: -6.2603)
            let docs = task("Write docs", "Alex", complete: false, .high, progress: 30, estimate: 60, ratings: [4, 5],
                            office: london)
            let review = task("Review r\u{E9}sum\u{E9}s", "Sam", complete: false, .medium, progress: 90, estimate: 60,
                              ratings: [2], office: QryLocation(latitude: 51.5072, longitude: -0.1276))
            review.meta["team"] = "hiring"
            let release = task("Ship release", "Alex", complete: true, .high, progress: 120, estimate: 100, ratings: [],
                               office: dublin)
            let idea = task("Someday idea", nil, complete: false, .low, progress: 0, estimate: 10, ratings: [1], office: nil)
            let mobile = QryProject()
            mobile.name = "Mobile"
            mobile.tasks.append(objectsIn: [docs, release])
            let people = QryProject()
            people.name = "People"
            people.tasks.append(review)
            realm.add([mobile, people])
            realm.add(idea)
        }
        return realm
    }

    @Test func typedQueriesFindTasksAndProjects() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try openRealm(folder)
        let tasks = realm.objects(QryTask.self).sorted(byKeyPath: "name")

        // Over budget: two properties of a task compared.
        #expect(Array(tasks.where { $0.progressMinutes > $0.estimateMinutes }.map(\.name)) == ["Review r\u{E9}sum\u{E9}s", "Ship release"])
        // ANY on a list of ints; an enum by value and by raw value.
        #expect(tasks.where { $0.ratings >= 5 }.map(\.name) == ["Write docs"])
        #expect(tasks.where { $0.priority == .high && !$0.isComplete }.map(\.name) == ["Write docs"])
        #expect(tasks.where { $0.priority.rawValue >= 1 }.count == 3)
        // Maps: a key's value, and the keys.
        #expect(tasks.where { $0.meta["team"] == "hiring" }.map(\.name) == ["Review r\u{E9}sum\u{E9}s"])
        #expect(tasks.where { $0.meta.keys == "team" }.count == 1)
        // Linking objects: the projects a task belongs to.
        #expect(tasks.where { $0.projects.name == "Mobile" }.map(\.name) == ["Ship release", "Write docs"])
        #expect(tasks.where { $0.projects.count == 0 }.map(\.name) == ["Someday idea"])

        let projects = realm.objects(QryProject.self).sorted(byKeyPath: "name")
        // Aggregates through a list, and a subquery count.
        #expect(projects.where { $0.tasks.progressMinutes.avg > 80 }.map(\.name) == ["People"])
        #expect(projects.where { $0.tasks.estimateMinutes.sum == 160 }.map(\.name) == ["Mobile"])
        #expect(projects.where { ($0.tasks.isComplete == false && $0.tasks.assignee == "Alex").count > 0 }.map(\.name) == ["Mobile"])
    }

    @Test func textQueriesFindTheSameTasks() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try openRealm(folder)
        let tasks = realm.objects(QryTask.self).sorted(byKeyPath: "name")
        #expect(tasks.filter("name CONTAINS[cd] %@", "RESUME").map(\.name) == ["Review r\u{E9}sum\u{E9}s"])
        #expect(tasks.filter("@links.QryProject.tasks.@count == 0").map(\.name) == ["Someday idea"])
        #expect(tasks.filter("ANY projects.name == 'People'").count == 1)
        let projects = realm.objects(QryProject.self)
        #expect(projects.filter("SUBQUERY(tasks, $task, $task.isComplete == true AND $task.priority == %@).@count > 0",
                                QryPriority.high.rawValue).map(\.name) == ["Mobile"])
        #expect(projects.filter("tasks.@max.progressMinutes >= 120").map(\.name) == ["Mobile"])
    }

    @Test func placesAreFoundWithinShapes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try openRealm(folder)
        let tasks = realm.objects(QryTask.self).sorted(byKeyPath: "name")

        let nearLondon = GeoCircle(center: GeoPoint(latitude: 51.5, longitude: -0.12)!, radius: .kilometers(25)!)
        #expect(tasks.where { $0.office.geoWithin(nearLondon) }.map(\.name) == ["Review r\u{E9}sum\u{E9}s", "Write docs"])
        // realm-swift's string form of the same query.
        #expect(tasks.filter("office IN %@", nearLondon).map(\.name) == ["Review r\u{E9}sum\u{E9}s", "Write docs"])
        #expect(Distance.kilometers(-1) == nil, "a negative distance is no distance")
        let box = GeoBox(bottomLeft: GeoPoint(latitude: 50, longitude: -1)!, topRight: GeoPoint(latitude: 52, longitude: 1)!)
        #expect(tasks.filter("office IN %@", box).count == tasks.where { $0.office.geoWithin(box) }.count)

        let ireland = GeoBox(bottomLeft: (51.4, -10.5), topRight: (55.4, -5.9))!
        #expect(tasks.filter("office GEOWITHIN %@", ireland).map(\.name) == ["Ship release"])

        let britainAndIreland = GeoPolygon(outerRing: [(49.9, -11.0), (49.9, 2.0), (59.0, 2.0), (59.0, -11.0), (49.9, -11.0)],
                                           holes: [[(53.0, -7.0), (53.0, -5.5), (54.0, -5.5), (54.0, -7.0), (53.0, -7.0)]])!
        #expect(tasks.where { $0.office.geoWithin(britainAndIreland) }.count == 2)
        #expect(tasks.filter("office GEOWITHIN geoCircle([-6.26, 53.35], %@)", Distance.miles(5)!.radians).count == 1)
    }
}
