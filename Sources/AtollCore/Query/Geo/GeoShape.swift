import Foundation

/// A point on the Earth's surface, in degrees.
///
/// ```swift
/// let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)!               // nil when out of range
/// let checked = try GeoPoint(checkedLatitude: 48.8566, longitude: 2.3522)   // throws GeoError
/// ```
public struct GeoPoint: Hashable, Sendable, CustomStringConvertible {
    public let latitude: Double
    public let longitude: Double

    /// `nil` unless the latitude is in [-90, 90] and the longitude in [-180, 180].
    public init?(latitude: Double, longitude: Double) {
        guard let point = try? GeoPoint(checkedLatitude: latitude, longitude: longitude) else { return nil }
        self = point
    }

    /// Throws ``GeoError/Code/invalidCoordinates`` unless the latitude is in [-90, 90] and the longitude
    /// in [-180, 180].
    public init(checkedLatitude latitude: Double, longitude: Double) throws(GeoError) {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw GeoError(.invalidCoordinates,
                           "latitude must be in [-90, 90] and longitude in [-180, 180], got [\(longitude), \(latitude)] as [longitude, latitude]")
        }
        self.latitude = latitude
        self.longitude = longitude
    }

    public var description: String { "[\(QueryLiteral.number(longitude)), \(QueryLiteral.number(latitude))]" }

    /// The unit vector of the point.
    var vector: GeoVector { GeoVector(latitude: latitude, longitude: longitude) }
}

/// A distance on the Earth's surface, kept in radians of arc.
///
/// ```swift
/// let d: Distance = .kilometers(2)
/// d.radians   // 2 / 6378.1
/// ```
/// Kilometres and miles convert with Realm's Earth radius: 6378.1 km, 3963.2 miles.
public struct Distance: Hashable, Sendable {
    public static let earthRadiusKilometers = 6378.1
    public static let earthRadiusMiles = 3963.2

    /// The distance as an angle at the Earth's centre.
    public let radians: Double

    init(radians: Double) { self.radians = radians }

    // As realm-swift's: `nil` for a negative (or not finite) distance.
    public static func radians(_ value: Double) -> Distance? { value.isFinite && value >= 0 ? Distance(radians: value) : nil }
    public static func degrees(_ value: Double) -> Distance? { radians(value * .pi / 180) }
    public static func kilometers(_ value: Double) -> Distance? { radians(value / earthRadiusKilometers) }
    public static func miles(_ value: Double) -> Distance? { radians(value / earthRadiusMiles) }

    public var degrees: Double { radians * 180 / .pi }
    public var kilometers: Double { radians * Self.earthRadiusKilometers }
    public var miles: Double { radians * Self.earthRadiusMiles }

    /// realm-swift's names for the conversions.
    public func asKilometers() -> Double { kilometers }
    public func asMiles() -> Double { miles }
    public func asDegrees() -> Double { degrees }
}

/// The points within a great-circle distance of a centre (the boundary included).
public struct GeoCircle: Hashable, Sendable {
    public let center: GeoPoint
    public let radius: Distance

    /// A circle; a `Distance` is never negative.
    public init(center: GeoPoint, radius: Distance) {
        self.center = center
        self.radius = radius
    }

    /// `nil` for a negative or non-finite radius.
    public init?(center: GeoPoint, radiusInRadians: Double) {
        guard let radius = Distance.radians(radiusInRadians) else { return nil }
        self.init(center: center, radius: radius)
    }

    /// The centre as `(latitude, longitude)`; `nil` when it is out of range.
    public init?(center: (Double, Double), radius: Distance) {
        guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: point, radius: radius)
    }

    public init?(center: (Double, Double), radiusInRadians: Double) {
        guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: point, radiusInRadians: radiusInRadians)
    }

    /// Throws ``GeoError/Code/invalidRadius`` for a negative or non-finite radius.
    public init(checkedCenter center: GeoPoint, radius: Distance) throws(GeoError) {
        guard radius.radians.isFinite, radius.radians >= 0 else {
            throw GeoError(.invalidRadius, "the radius of a circle must be a non-negative number, got \(radius.radians) radians")
        }
        self.center = center
        self.radius = radius
    }

}

/// The points between two parallels and two meridians (edges included): latitude from
/// `bottomLeft.latitude` to `topRight.latitude`, longitude eastwards from `bottomLeft.longitude` to
/// `topRight.longitude` (across the antimeridian when the first is greater).
public struct GeoBox: Hashable, Sendable {
    public let bottomLeft: GeoPoint
    public let topRight: GeoPoint

    /// A box, as realm-swift makes one (unchecked): a box whose bottom is north of its top
    /// contains nothing. ``init(checkedBottomLeft:topRight:)`` refuses it.
    public init(bottomLeft: GeoPoint, topRight: GeoPoint) {
        self.bottomLeft = bottomLeft
        self.topRight = topRight
    }

    /// Corners as `(latitude, longitude)`.
    public init?(bottomLeft: (Double, Double), topRight: (Double, Double)) {
        guard let bl = GeoPoint(latitude: bottomLeft.0, longitude: bottomLeft.1),
              let tr = GeoPoint(latitude: topRight.0, longitude: topRight.1) else { return nil }
        self.init(bottomLeft: bl, topRight: tr)
    }

    /// Throws ``GeoError/Code/invalidBox`` when the bottom is north of the top.
    public init(checkedBottomLeft bottomLeft: GeoPoint, topRight: GeoPoint) throws(GeoError) {
        guard bottomLeft.latitude <= topRight.latitude else {
            throw GeoError(.invalidBox, "the bottom-left corner of a box must not be north of its top-right corner")
        }
        self.bottomLeft = bottomLeft
        self.topRight = topRight
    }
}

/// A polygon on the sphere: an outer ring and holes, each a closed ring (first point == last point)
/// of at least 3 distinct points, with great-circle edges.
///
/// A point is within when it is inside the outer ring and inside no hole; points on an edge may fall
/// either way. Each ring must lie within a hemisphere (every vertex less than 90° from the ring's
/// mean direction): its inside is then the smaller of the two regions it bounds.
public struct GeoPolygon: Hashable, Sendable {
    /// The most points a polygon may have, holes included (queries come from the network).
    public static let maximumVertexCount = 10_000
    /// The most holes a polygon may have.
    public static let maximumHoleCount = 1_000

    public let outerRing: [GeoPoint]
    public let holes: [[GeoPoint]]
    let rings: [GeoRing]

    /// `nil` when a ring is not valid; ``init(checkedOuterRing:holes:)`` says why.
    public init?(outerRing: [GeoPoint], holes: [[GeoPoint]] = []) {
        guard let polygon = try? GeoPolygon(checkedOuterRing: outerRing, holes: holes) else { return nil }
        self = polygon
    }

    /// Points as `(latitude, longitude)`.
    public init?(outerRing: [(Double, Double)], holes: [[(Double, Double)]] = []) {
        func points(_ ring: [(Double, Double)]) -> [GeoPoint]? {
            let points = ring.compactMap { GeoPoint(latitude: $0.0, longitude: $0.1) }
            return points.count == ring.count ? points : nil
        }
        guard let outer = points(outerRing) else { return nil }
        var inner: [[GeoPoint]] = []
        for hole in holes {
            guard let ring = points(hole) else { return nil }
            inner.append(ring)
        }
        self.init(outerRing: outer, holes: inner)
    }

    /// Points as `(latitude, longitude)`, holes as further arguments.
    public init?(outerRing: [(Double, Double)], holes: [(Double, Double)]...) {
        self.init(outerRing: outerRing, holes: holes)
    }

    /// Throws ``GeoError`` for a ring that is not closed, has fewer than 3 distinct points or does
    /// not fit in a hemisphere, and for more than ``maximumVertexCount`` points.
    public init(checkedOuterRing outerRing: [GeoPoint], holes: [[GeoPoint]] = []) throws(GeoError) {
        guard holes.count <= Self.maximumHoleCount else {
            throw GeoError(.tooComplex, "a polygon may have at most \(Self.maximumHoleCount) holes, got \(holes.count)")
        }
        let total = holes.reduce(outerRing.count) { $0 + $1.count }
        guard total <= Self.maximumVertexCount else {
            throw GeoError(.tooComplex, "a polygon may have at most \(Self.maximumVertexCount) points, got \(total)")
        }
        var rings = [try GeoRing(outerRing, name: "the outer ring")]
        for (index, hole) in holes.enumerated() {
            rings.append(try GeoRing(hole, name: "hole \(index)"))
        }
        self.outerRing = outerRing
        self.holes = holes
        self.rings = rings
    }

    public static func == (a: Self, b: Self) -> Bool { a.outerRing == b.outerRing && a.holes == b.holes }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(outerRing)
        hasher.combine(holes)
    }
}

/// The right side of `GEOWITHIN`.
public enum GeoShape: Hashable, Sendable, CustomStringConvertible {
    case circle(GeoCircle)
    case box(GeoBox)
    case polygon(GeoPolygon)

    /// Query text that parses back to this shape.
    public var description: String {
        switch self {
        case .circle(let c): "geoCircle(\(c.center), \(QueryLiteral.number(c.radius.radians)))"
        case .box(let b): "geoBox(\(b.bottomLeft), \(b.topRight))"
        case .polygon(let p):
            "geoPolygon(" + ([p.outerRing] + p.holes).map { ring in
                "{" + ring.map(\.description).joined(separator: ", ") + "}"
            }.joined(separator: ", ") + ")"
        }
    }

    /// Whether `point` is within the shape.
    public func contains(_ point: GeoPoint) -> Bool {
        switch self {
        case .circle(let c):
            return GeoVector.angle(c.center.vector, point.vector) <= c.radius.radians
        case .box(let b):
            guard point.latitude >= b.bottomLeft.latitude, point.latitude <= b.topRight.latitude else { return false }
            let (west, east) = (b.bottomLeft.longitude, b.topRight.longitude)
            // At a pole every longitude is the same point.
            if abs(point.latitude) == 90 { return true }
            if west <= east { return point.longitude >= west && point.longitude <= east }
            return point.longitude >= west || point.longitude <= east
        case .polygon(let p):
            let v = point.vector
            guard p.rings[0].contains(v) else { return false }
            return !p.rings.dropFirst().contains { $0.contains(v) }
        }
    }
}

/// A problem with a geospatial shape or point, as Realm reports it.
public struct GeoError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// A latitude outside [-90, 90] or a longitude outside [-180, 180], or not a number.
        case invalidCoordinates
        /// A circle's radius is negative or not finite.
        case invalidRadius
        /// A box's bottom-left corner is north of its top-right corner.
        case invalidBox
        /// A ring is not closed (its first and last points differ).
        case ringNotClosed
        /// A ring has fewer than 3 distinct points, or repeats a point.
        case tooFewPoints
        /// A ring does not fit in a hemisphere.
        case ringTooLarge
        /// A polygon with more points or holes than allowed.
        case tooComplex
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// A point of the unit sphere.
struct GeoVector: Hashable, Sendable {
    var x, y, z: Double

    init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    init(latitude: Double, longitude: Double) {
        let lat = latitude * .pi / 180, lng = longitude * .pi / 180
        self.init(x: cos(lat) * cos(lng), y: cos(lat) * sin(lng), z: sin(lat))
    }

    func dot(_ o: GeoVector) -> Double { x * o.x + y * o.y + z * o.z }

    func cross(_ o: GeoVector) -> GeoVector {
        GeoVector(x: y * o.z - z * o.y, y: z * o.x - x * o.z, z: x * o.y - y * o.x)
    }

    var length: Double { dot(self).squareRoot() }

    /// The great-circle angle between two unit vectors, stable for small and large angles.
    static func angle(_ a: GeoVector, _ b: GeoVector) -> Double { atan2(a.cross(b).length, a.dot(b)) }
}

/// One validated ring, ready for point tests: its vertices projected gnomonically onto the plane
/// tangent at the ring's mean direction, where great-circle edges are straight segments.
struct GeoRing: Hashable, Sendable {
    let center: GeoVector
    let east: GeoVector
    let north: GeoVector
    let projected: [(Double, Double)]

    init(_ points: [GeoPoint], name: String) throws(GeoError) {
        guard let first = points.first, let last = points.last, first == last else {
            throw GeoError(.ringNotClosed, "\(name) of the polygon is not closed: its first and last points must be the same")
        }
        let open = points.dropLast()
        guard open.count >= 3, Set(open).count == open.count else {
            throw GeoError(.tooFewPoints,
                           "\(name) of the polygon must have at least 3 distinct points and no repeated point (besides closing it)")
        }
        let vectors = open.map(\.vector)
        var sum = GeoVector(x: 0, y: 0, z: 0)
        for v in vectors { sum = GeoVector(x: sum.x + v.x, y: sum.y + v.y, z: sum.z + v.z) }
        let length = sum.length
        guard length > 1e-12 else { throw GeoError(.ringTooLarge, "\(name) of the polygon does not fit in a hemisphere") }
        let c = GeoVector(x: sum.x / length, y: sum.y / length, z: sum.z / length)
        guard vectors.allSatisfy({ $0.dot(c) > 1e-9 }) else {
            throw GeoError(.ringTooLarge, "\(name) of the polygon does not fit in a hemisphere")
        }
        // A basis of the tangent plane at c.
        let pole = abs(c.z) < 0.9 ? GeoVector(x: 0, y: 0, z: 1) : GeoVector(x: 1, y: 0, z: 0)
        var e = pole.cross(c)
        let el = e.length
        e = GeoVector(x: e.x / el, y: e.y / el, z: e.z / el)
        let n = c.cross(e)
        center = c
        east = e
        north = n
        projected = vectors.map { v in (v.dot(e) / v.dot(c), v.dot(n) / v.dot(c)) }
    }

    /// Even-odd crossing test in the gnomonic plane; points in the far hemisphere are outside.
    func contains(_ v: GeoVector) -> Bool {
        let d = v.dot(center)
        guard d > 0 else { return false }
        let px = v.dot(east) / d, py = v.dot(north) / d
        var inside = false
        var j = projected.count - 1
        for i in projected.indices {
            let (xi, yi) = projected[i], (xj, yj) = projected[j]
            if (yi > py) != (yj > py), px < (xj - xi) * (py - yi) / (yj - yi) + xi {
                inside.toggle()
            }
            j = i
        }
        return inside
    }

    static func == (a: Self, b: Self) -> Bool { a.center == b.center && a.projected.elementsEqual(b.projected, by: ==) }
    func hash(into hasher: inout Hasher) { hasher.combine(center) }
}
