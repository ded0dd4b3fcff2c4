import Foundation

/// MongoDB Extended JSON v2 (relaxed and canonical) read into ``Value``s: the wrappers
/// `$oid`, `$date`, `$numberInt`, `$numberLong`, `$numberDouble`, `$numberDecimal`, `$binary`
/// (subtype 04: UUID), `$uuid`, and plain JSON numbers, strings, booleans and null.
public enum ExtendedJSON {
    /// A wrapper's scalar, or nil when `node` is not an Extended JSON wrapper (a plain document).
    ///
    /// ```swift
    /// try ExtendedJSON.scalar(JSONNode.parse(Array(#"{"$numberLong": "42"}"#.utf8)), path: "n")   // .int(42)
    /// ```
    public static func scalar(_ node: JSONNode, path: String) throws(DataImportError) -> Value? {
        guard case .object(let members) = node, let first = members.first, first.0.hasPrefix("$") else { return nil }
        let (key, body) = first
        func bad(_ what: String) -> DataImportError { DataImportError(.badExtendedJSON, "\(key) \(what)", path: path) }
        func text() throws(DataImportError) -> String {
            guard members.count == 1, case .string(let s) = body else { throw bad("must hold one string") }
            return s
        }
        switch key {
        case "$oid":
            let s = try text()
            guard s.utf8.count == 24, let id = ObjectId(s.lowercased()) else { throw bad("is not 24 hex digits") }
            return .objectId(id)
        case "$numberInt":
            guard let i = Int32(try text()) else { throw bad("is not a 32-bit integer") }
            return .int(Int64(i))
        case "$numberLong":
            guard let i = Int64(try text()) else { throw bad("is not a 64-bit integer") }
            return .int(i)
        case "$numberDouble":
            switch try text() {
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            case "NaN": return .double(.nan)
            case let s: guard let d = Double(s) else { throw bad("is not a number") }; return .double(d)
            }
        case "$numberDecimal":
            do { return .decimal(try Decimal128(string: try text())) } catch { throw bad("is not a decimal") }
        case "$uuid":
            guard let u = UUID(uuidString: try text()) else { throw bad("is not a UUID") }
            return .uuid(u)
        case "$date":
            guard members.count == 1 else { throw bad("must be the only member") }
            switch body {
            case .string(let iso):
                guard let date = parseISODate(iso) else { throw bad("is not an ISO-8601 date") }
                return .date(date)
            case .number(let n, _):  // legacy relaxed form: milliseconds
                guard let ms = Double(n) else { throw bad("is not a number") }
                return .date(Date(timeIntervalSince1970: ms / 1000))
            case .object:
                guard case .int(let ms)? = try scalar(body, path: path) else { throw bad("must hold $numberLong") }
                return .date(Date(timeIntervalSince1970: Double(ms) / 1000))
            default: throw bad("must hold a string or $numberLong")
            }
        case "$binary":
            guard members.count == 1, case .object = body, case .string(let b64)? = body["base64"],
                  case .string(let subType)? = body["subType"], let bytes = Data(base64Encoded: b64), let sub = UInt8(subType, radix: 16)
            else { throw bad("must hold base64 and a hex subType") }
            if sub == 4 || sub == 3 {
                guard bytes.count == 16 else { throw bad("of subtype \(subType) must hold 16 bytes") }
                return .uuid(UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }))
            }
            return .data(bytes)
        default:
            return nil
        }
    }

    /// Milliseconds since 1970 of `$date`'s ISO-8601 form (`1970-01-01T00:00:00Z`, with or
    /// without fractional seconds, `Z` or an offset).
    static func parseISODate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// A JSON number (relaxed form) as a Value: integers as `.int` when they fit, else `.double`.
    static func number(_ text: String, isInteger: Bool) -> Value? {
        if isInteger, let i = Int64(text) { return .int(i) }
        return Double(text).map(Value.double)
    }
}
