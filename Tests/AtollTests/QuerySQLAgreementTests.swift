import Atoll
import AtollCore
import AtollTesting
import Foundation
import GRDB
import Testing

/// Runs every query of ``QueryFixtures/cases`` twice, through SQL on a real SQLite database laid out as
/// ``StorageLayout`` says, and in memory, and checks that both return the expected objects.
@Suite struct QuerySQLAgreementTests {
    /// The fixture in an in-memory database with Atoll's SQL functions and collation registered.
    static let database: DatabaseQueue = makeDatabase(QueryFixtures.sqlScript())

    static func makeDatabase(_ script: [(sql: String, arguments: [SQLValue])]) -> DatabaseQueue {
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
            for statement in script {
                try db.execute(sql: statement.sql, arguments: StatementArguments(statement.arguments.map(\.grdbValue)))
            }
        }
        return queue
    }

    @Test("SQL and the evaluator return the expected objects", arguments: QueryFixtures.cases)
    func sqlAndEvaluatorAgree(_ query: QueryCase) throws {
        let bound = try BoundQuery(parsing: query.query, arguments: query.arguments, objectType: query.type,
                                   schema: QueryFixtures.schema, backlinks: QueryFixtures.backlinks)
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

    /// Seeded random points against random circles, boxes and polygons (with a hole): the evaluator, the
    /// SQL and an independent reference (haversine distance; latitude/longitude bounds; the winding
    /// angle of each ring around the point on the sphere) all agree.
    @Test func geoWithinAgreesWithAReferenceOnRandomPoints() throws {
        var rng = SeededRandom(seed: 0x6E0_2024)
        var shapes: [GeoShape] = []
        var centers: [GeoPoint] = []
        for index in 0..<45 {
            let center = GeoPoint(latitude: Double.random(in: -70...70, using: &rng), longitude: Double.random(in: -180...180, using: &rng))!
            centers.append(center)
            switch index % 3 {
            case 0:
                shapes.append(.circle(GeoCircle(center: center, radius: .radians(Double.random(in: 0.01...0.5, using: &rng))!)))
            case 1:
                let height = Double.random(in: 1...20, using: &rng), width = Double.random(in: 1...60, using: &rng)
                var east = center.longitude + width
                if east > 180 { east -= 360 }
                shapes.append(.box(GeoBox(bottomLeft: center, topRight: GeoPoint(latitude: min(90, center.latitude + height), longitude: east)!)))
            default:
                let radius = Double.random(in: 0.05...0.3, using: &rng)
                func star(_ scale: Double) -> [GeoPoint] {
                    let k = Int.random(in: 4...12, using: &rng)
                    var ring = (0..<k).map { i -> GeoPoint in
                        let bearing = 2 * Double.pi * Double(i) / Double(k) + Double.random(in: -0.4...0.4, using: &rng) * .pi / Double(k)
                        return GeoReference.destination(center, bearing: bearing, distance: scale * Double.random(in: 0.5...1, using: &rng))
                    }
                    ring.append(ring[0])
                    return ring
                }
                shapes.append(.polygon(try GeoPolygon(checkedOuterRing: star(radius), holes: [star(radius * 0.15)])))
            }
        }
        var people: [[String: Value]] = []
        for id in 0..<400 {
            var person: [String: Value] = ["_id": .int(Int64(id)), "name": .string("p\(id)")]
            if id % 10 != 9 {
                let point: GeoPoint
                if id % 5 < 3 {
                    let near = centers[Int.random(in: 0..<centers.count, using: &rng)]
                    point = GeoReference.destination(near, bearing: Double.random(in: 0...(2 * .pi), using: &rng),
                                                     distance: Double.random(in: 0...0.6, using: &rng))
                } else {
                    point = GeoPoint(latitude: asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi,
                                     longitude: Double.random(in: -180...180, using: &rng))!
                }
                person["home"] = .object(["type": .string("Point"),
                                          "coordinates": .list([.double(point.longitude), .double(point.latitude)])])
            }
            people.append(person)
        }
        let database = Self.makeDatabase(QueryFixtures.sqlScript(objects: ["Person": people]))
        var inside = 0
        for shape in shapes {
            let bound = try QueryExpression.parse("home GEOWITHIN $0", arguments: [.geometry(shape)])
                .bind(to: "Person", in: QueryFixtures.schema)
            let reference = people.filter { person in
                guard case .object(let home)? = person["home"], case .list(let c)? = home["coordinates"],
                      case .double(let longitude) = c[0], case .double(let latitude) = c[1] else { return false }
                return GeoReference.contains(shape, GeoPoint(latitude: latitude, longitude: longitude)!)
            }.map(QueryFixtures.primaryKey)
            let inMemory = bound.run(on: people, values: { $0 }, resolver: NoLinkResolver()).map(QueryFixtures.primaryKey)
            let sql = try SQLTranslator.translate(bound)
            let fromSQL = try database.read { db in
                try Int64.fetchAll(db, sql: sql.statement(selecting: "t0._row"),
                                   arguments: StatementArguments(sql.arguments.map(\.grdbValue)))
            }.map { $0 - 1 }
            #expect(inMemory == reference, "evaluator: \(shape)")
            #expect(fromSQL.sorted() == reference, "SQL: \(shape)")
            inside += reference.count
        }
        // The points are spread so that the shapes hold some, not none or all.
        #expect(inside > 200 && inside < 45 * 360 / 2)
    }

    @Test func theCaseTableCoversAtLeastSixtyQueries() {
        #expect(QueryFixtures.cases.count >= 60)
    }
}

/// Geometry computed independently of `GeoShape`, for the property test.
enum GeoReference {
    static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }

    /// The point `distance` radians from `start` along the initial `bearing` (radians from north).
    static func destination(_ start: GeoPoint, bearing: Double, distance: Double) -> GeoPoint {
        let lat1 = radians(start.latitude), lng1 = radians(start.longitude)
        let lat2 = asin(sin(lat1) * cos(distance) + cos(lat1) * sin(distance) * cos(bearing))
        var lng2 = lng1 + atan2(sin(bearing) * sin(distance) * cos(lat1), cos(distance) - sin(lat1) * sin(lat2))
        lng2 = (lng2 + 3 * .pi).truncatingRemainder(dividingBy: 2 * .pi) - .pi
        return GeoPoint(latitude: min(90, max(-90, lat2 * 180 / .pi)), longitude: min(180, max(-180, lng2 * 180 / .pi)))!
    }

    /// Haversine great-circle distance in radians.
    static func distance(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let dLat = radians(b.latitude - a.latitude), dLng = radians(b.longitude - a.longitude)
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(radians(a.latitude)) * cos(radians(b.latitude)) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * asin(min(1, h.squareRoot()))
    }

    static func vector(_ p: GeoPoint) -> (Double, Double, Double) {
        let lat = radians(p.latitude), lng = radians(p.longitude)
        return (cos(lat) * cos(lng), cos(lat) * sin(lng), sin(lat))
    }

    /// The total signed angle the ring turns through as seen from `p`: ±2π when it winds around `p`.
    static func winding(_ ring: [GeoPoint], around p: GeoPoint) -> Double {
        let (px, py, pz) = vector(p)
        func tangent(_ q: GeoPoint) -> (Double, Double, Double) {
            let (x, y, z) = vector(q)
            let d = x * px + y * py + z * pz
            return (x - d * px, y - d * py, z - d * pz)
        }
        var total = 0.0
        for i in 0..<(ring.count - 1) {
            let a = tangent(ring[i]), b = tangent(ring[i + 1])
            let cross = (a.1 * b.2 - a.2 * b.1, a.2 * b.0 - a.0 * b.2, a.0 * b.1 - a.1 * b.0)
            total += atan2(cross.0 * px + cross.1 * py + cross.2 * pz, a.0 * b.0 + a.1 * b.1 + a.2 * b.2)
        }
        return total
    }

    /// Inside a small ring: it winds around the point, and the point is on the ring's side of the sphere.
    static func inside(_ ring: [GeoPoint], _ p: GeoPoint) -> Bool {
        let near = ring.contains { distance($0, p) < .pi / 2 }
        return near && abs(winding(ring, around: p)) > .pi
    }

    static func contains(_ shape: GeoShape, _ p: GeoPoint) -> Bool {
        switch shape {
        case .circle(let c): return distance(c.center, p) <= c.radius.radians
        case .box(let b):
            guard p.latitude >= b.bottomLeft.latitude && p.latitude <= b.topRight.latitude else { return false }
            let west = b.bottomLeft.longitude, east = b.topRight.longitude
            return west <= east ? (p.longitude >= west && p.longitude <= east) : (p.longitude >= west || p.longitude <= east)
        case .polygon(let polygon):
            return inside(polygon.outerRing, p) && !polygon.holes.contains { inside($0, p) }
        }
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
