import Foundation

/// MongoDB Extended JSON v2 (relaxed and canonical) read into ``Value``s: the wrappers
/// `$oid`, `$date`, `$numberInt`, `$numberLong`, `$numberDouble`, `$numberDecimal`, `$binary`
/// (subtype 04: UUID), `$uuid`, and plain JSON numbers, strings, booleans and null.
package enum ExtendedJSON {
    /// A wrapper's scalar, or nil when `node` is not an Extended JSON wrapper (a plain document).
    ///
    /// ```swift
    /// try ExtendedJSON.scalar(JSONNode.parse(Array(#"{"$numberLong": "42"}"#.utf8)), path: "n")   // .int(42)
    /// ```
    package static func scalar(_ node: JSONNode, path: String) throws(DataImportError) -> Value? {
        guard case .object(let members) = node, let first = members.first, first.0.hasPrefix("$") else { return nil }
        let (key, body) = first
        func bad(_ what: String) -> DataImportError { DataImportError(.badExtendedJSON, "\(key) \(what)", path: path) }
        switch key {
        case "$oid", "$numberInt", "$numberLong", "$numberDouble", "$numberDecimal", "$uuid":
            guard members.count == 1, case .string(let text) = body else { throw bad("must hold one string") }
            return try wrapped(key, text, path: path)
        case "$date":
            guard members.count == 1 else { throw bad("must be the only member") }
            switch body {
            case .string(let iso): return try wrapped(key, iso, path: path)
            case .number(let n, _):  // legacy relaxed form: milliseconds
                guard let ms = Double(n) else { throw bad("is not a number") }
                return .date(Date(timeIntervalSince1970: ms / 1000))
            case .object:
                guard case .int(let ms)? = try scalar(body, path: path) else { throw bad("must hold $numberLong") }
                return .date(Date(timeIntervalSince1970: Double(ms) / 1000))
            default: throw bad("must hold a string or $numberLong")
            }
        case "$binary":
            guard members.count == 1, case .object = body, case .string(let b64)? = body["base64"], case .string(let subType)? = body["subType"]
            else { throw bad("must hold base64 and a hex subType") }
            return try binary(base64: b64, subType: subType, path: path)
        default:
            return nil
        }
    }

    /// The scalar of a wrapper whose body is one string (`$oid`, `$numberInt`, `$numberLong`,
    /// `$numberDouble`, `$numberDecimal`, `$uuid`, and `$date` in its ISO-8601 form): the one
    /// reading of those bodies, shared by ``scalar(_:path:)`` and the byte-level typer.
    static func wrapped(_ key: String, _ text: String, path: String) throws(DataImportError) -> Value {
        func bad(_ what: String) -> DataImportError { DataImportError(.badExtendedJSON, "\(key) \(what)", path: path) }
        switch key {
        case "$oid":
            guard text.utf8.count == 24, let id = ObjectId(text.lowercased()) else { throw bad("is not 24 hex digits") }
            return .objectId(id)
        case "$numberInt":
            guard let i = Int32(text) else { throw bad("is not a 32-bit integer") }
            return .int(Int64(i))
        case "$numberLong":
            guard let i = Int64(text) else { throw bad("is not a 64-bit integer") }
            return .int(i)
        case "$numberDouble":
            switch text {
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            case "NaN": return .double(.nan)
            case let s: guard let d = Double(s) else { throw bad("is not a number") }; return .double(d)
            }
        case "$numberDecimal":
            do { return .decimal(try Decimal128(string: text)) } catch { throw bad("is not a decimal") }
        case "$uuid":
            guard let u = UUID(uuidString: text) else { throw bad("is not a UUID") }
            return .uuid(u)
        case "$date":
            guard let date = parseISODate(text) else { throw bad("is not an ISO-8601 date") }
            return .date(date)
        default:
            throw bad("is not a wrapper with a string body")
        }
    }

    /// `$binary`'s body: subtypes 04 and 03 (16 bytes) are UUIDs, the others data.
    static func binary(base64: String, subType: String, path: String) throws(DataImportError) -> Value {
        func bad(_ what: String) -> DataImportError { DataImportError(.badExtendedJSON, "$binary \(what)", path: path) }
        guard let bytes = Data(base64Encoded: base64), let sub = UInt8(subType, radix: 16) else { throw bad("must hold base64 and a hex subType") }
        if sub == 4 || sub == 3 {
            guard bytes.count == 16 else { throw bad("of subtype \(subType) must hold 16 bytes") }
            return .uuid(UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }))
        }
        return .data(bytes)
    }

    /// The date of `$date`'s ISO-8601 form: `YYYY-MM-DDTHH:MM:SS`, optional fractional seconds (up to
    /// nanoseconds), then `Z` or an offset (`±HH:MM`, `±HHMM`, `±HH`), as RFC 3339 and mongoexport
    /// write it. Parsed by hand: Foundation's ISO8601DateFormatter builds an ICU formatter per
    /// call, which was a fifth of a data import's time.
    package static func parseISODate(_ text: String) -> Date? {
        var bytes = Array(text.utf8)[...]
        func digits(_ count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            var value = 0
            for byte in bytes.prefix(count) {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            bytes = bytes.dropFirst(count)
            return value
        }
        func take(_ ascii: Character...) -> Bool {
            guard let first = bytes.first, ascii.contains(where: { UInt8(ascii: $0.unicodeScalars.first!) == first }) else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = digits(4), take("-"), let month = digits(2), take("-"), let day = digits(2), take("T", "t"),
              let hour = digits(2), take(":"), let minute = digits(2), take(":"), let second = digits(2),
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60 else { return nil }
        var nanoseconds = 0
        if take(".") {
            var count = 0
            while let byte = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                guard count < 9 else { return nil }
                nanoseconds = nanoseconds * 10 + Int(byte - UInt8(ascii: "0"))
                count += 1
                bytes = bytes.dropFirst()
            }
            guard count > 0 else { return nil }
            for _ in count..<9 { nanoseconds *= 10 }
        }
        var offset = 0
        if take("Z", "z") {
        } else if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            bytes = bytes.dropFirst()
            guard let hours = digits(2), hours < 24 else { return nil }
            var minutes = 0
            if !bytes.isEmpty {
                _ = take(":")
                guard let m = digits(2), m < 60 else { return nil }
                minutes = m
            }
            offset = (hours * 60 + minutes) * 60 * (sign == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        guard bytes.isEmpty else { return nil }
        let seconds = QueryLexer.daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day)) * 86_400
            + Int64(hour * 3_600 + minute * 60 + second - offset)
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1_000_000_000)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// A JSON number (relaxed form) as a Value: integers as `.int` when they fit, else `.double`.
    static func number(_ text: String, isInteger: Bool) -> Value? {
        if isInteger, let i = Int64(text) { return .int(i) }
        return Double(text).map(Value.double)
    }
}
