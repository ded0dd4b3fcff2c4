import Foundation

// How GEOWITHIN reads points and passes shapes to SQL.
extension GeoShape {
    /// Whether a stored point is within `shape`. A point is an object whose `type` is `"Point"` and
    /// whose first two coordinates are a longitude and a latitude in range; anything else (another
    /// type, missing or out-of-range coordinates) is within no shape.
    static func contains(_ shape: GeoShape, type: String?, longitude: Double?, latitude: Double?) -> Bool {
        guard type == "Point", let longitude, let latitude,
              let point = GeoPoint(latitude: latitude, longitude: longitude) else { return false }
        return shape.contains(point)
    }

    /// The shape as compact text for an SQL argument: `c lng lat r`, `b lng lat lng lat`, or
    /// `p` then each ring as `; lng lat lng lat …`. Doubles print exactly (shortest round-trip form).
    package var encoded: String {
        func point(_ p: GeoPoint) -> String { "\(p.longitude) \(p.latitude)" }
        switch self {
        case .circle(let c): return "c \(point(c.center)) \(c.radius.radians)"
        case .box(let b): return "b \(point(b.bottomLeft)) \(point(b.topRight))"
        case .polygon(let p):
            return "p" + ([p.outerRing] + p.holes).map { "; " + $0.map(point).joined(separator: " ") }.joined()
        }
    }

    /// The shape ``encoded`` describes, or `nil` when the text is not one.
    package init?(encoded text: String) {
        func points(_ numbers: ArraySlice<Double>) -> [GeoPoint]? {
            guard numbers.count % 2 == 0 else { return nil }
            var out: [GeoPoint] = []
            var i = numbers.startIndex
            while i < numbers.endIndex {
                guard let p = GeoPoint(latitude: numbers[i + 1], longitude: numbers[i]) else { return nil }
                out.append(p)
                i += 2
            }
            return out
        }
        guard let kind = text.first else { return nil }
        switch kind {
        case "c", "b":
            let numbers = text.dropFirst().split(separator: " ").compactMap { Double($0) }
            if kind == "c" {
                guard numbers.count == 3, let center = points(numbers[0..<2])?.first,
                      let radius = Distance.radians(numbers[2]) else { return nil }
                self = .circle(GeoCircle(center: center, radius: radius))
            } else {
                guard numbers.count == 4, let corners = points(numbers[...]),
                      let box = try? GeoBox(checkedBottomLeft: corners[0], topRight: corners[1]) else { return nil }
                self = .box(box)
            }
        case "p":
            var rings: [[GeoPoint]] = []
            for part in text.dropFirst().split(separator: ";") {
                guard let ring = points(part.split(separator: " ").compactMap { Double($0) }[...]) else { return nil }
                rings.append(ring)
            }
            guard let outer = rings.first, let polygon = GeoPolygon(outerRing: outer, holes: Array(rings.dropFirst())) else {
                return nil
            }
            self = .polygon(polygon)
        default:
            return nil
        }
    }

    private static let cache = Locked<[String: GeoShape]>([:])

    /// ``init(encoded:)``, remembering the last few shapes: SQL calls the function once per row.
    static func decodeCached(_ text: String) -> GeoShape? {
        if let shape = cache.withLock({ $0[text] }) { return shape }
        guard let shape = GeoShape(encoded: text) else { return nil }
        cache.withLock { entries in
            if entries.count >= 16 { entries.removeAll() }
            entries[text] = shape
        }
        return shape
    }
}

extension SQLValue {
    var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .real(let d): d
        default: nil
        }
    }
}
