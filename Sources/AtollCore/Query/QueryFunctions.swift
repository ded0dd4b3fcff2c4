import Foundation

/// The SQL functions and collation that a store registers on every connection before running SQL made
/// by the client store's `SQLTranslator`. Each is a pure Swift function that the in-memory evaluator also uses.
///
/// ```swift
/// for function in QueryFunctions.sqlFunctions {
///     db.add(function: DatabaseFunction(function.name, argumentCount: Int32(function.arity), pure: true) { … })
/// }
/// db.add(collation: DatabaseCollation(QueryFunctions.decimalCollation) { QueryFunctions.compareDecimals($0, $1) })
/// ```
///
/// | name | arity | arguments → result |
/// |---|---|---|
/// | `atoll_string_op` | 4 | operator text (`==`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`), lhs, rhs (text, or blobs), options (1 `[c]`, 2 `[d]`) → 0/1 |
/// | `atoll_geo_within` | 4 | shape (``GeoShape/encoded``), point type, longitude, latitude → 0/1 |
/// | `atoll_size` | 1 | text → Unicode scalar count, blob → byte count, else NULL |
/// | `atoll_decimal_sum` | 1 | decimals joined by spaces (or NULL) → decimal text |
/// | `atoll_decimal_avg` | 1 | decimals joined by spaces (or NULL) → decimal text, or NULL when there are none |
/// | `atoll_mixed_*` | | mixed values: comparison, text, `@type`, nested elements, sort keys (QueryOrdering+Mixed.swift) |
///
/// Collation `ATOLL_DECIMAL` (the client store's `StorageLayout.decimalCollation`): ``compareDecimals(_:_:)``.
package enum QueryFunctions {
    package static let stringOperation = "atoll_string_op"
    package static let size = "atoll_size"
    package static let decimalSum = "atoll_decimal_sum"
    package static let decimalAverage = "atoll_decimal_avg"
    package static let geoWithin = "atoll_geo_within"
    package static let decimalCollation = "ATOLL_DECIMAL"

    /// Every SQL function the translator's SQL calls. All are deterministic.
    package static let sqlFunctions: [(name: String, arity: Int, body: @Sendable ([SQLValue]) -> SQLValue)] = scalarFunctions + mixedFunctions

    private static let scalarFunctions: [(name: String, arity: Int, body: @Sendable ([SQLValue]) -> SQLValue)] = [
        (stringOperation, 4, { args in
            guard args.count == 4, case .text(let opName) = args[0], let op = StringOperator(rawValue: opName) else {
                return .null
            }
            let options = if case .integer(let flags) = args[3] { QueryStringOptions(rawValue: Int(flags)) } else { QueryStringOptions() }
            if isBlob(args[1]) || isBlob(args[2]) {
                return .integer(StringOperator.evaluate(op, bytes: bytes(args[1]), bytes(args[2]), options: options) ? 1 : 0)
            }
            return .integer(StringOperator.evaluate(op, text(args[1]), text(args[2]), options: options) ? 1 : 0)
        }),
        (size, 1, { args in args.count == 1 ? sizeOf(args[0]) : .null }),
        (decimalSum, 1, { args in
            .text(sumOfDecimals(decimals(in: args.first ?? .null)).description)
        }),
        (decimalAverage, 1, { args in
            averageOfDecimals(decimals(in: args.first ?? .null)).map { .text($0.description) } ?? .null
        }),
        (geoWithin, 4, { args in
            guard args.count == 4, case .text(let shapeText) = args[0], let shape = GeoShape.decodeCached(shapeText) else { return .null }
            return .integer(GeoShape.contains(shape, type: text(args[1]), longitude: args[2].doubleValue,
                                              latitude: args[3].doubleValue) ? 1 : 0)
        }),
    ]

    /// The `ATOLL_DECIMAL` collation: orders Decimal128 text by value (`"1.50" == "1.5"`, `"9" < "10"`).
    /// Text that is not a decimal sorts after every decimal, by its bytes.
    package static func compareDecimals(_ a: String, _ b: String) -> ComparisonResult {
        switch (try? Decimal128(string: a), try? Decimal128(string: b)) {
        case let (x?, y?): return compare(x, y)
        case (.some, nil): return .orderedAscending
        case (nil, .some): return .orderedDescending
        case (nil, nil): return a.utf8.lexicographicallyPrecedes(b.utf8) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        }
    }

    static func compare(_ x: Decimal128, _ y: Decimal128) -> ComparisonResult {
        x < y ? .orderedAscending : (y < x ? .orderedDescending : .orderedSame)
    }

    /// Length as `@size` sees it: Unicode scalars of a string, bytes of data, `null` otherwise.
    package static func sizeOf(_ value: SQLValue) -> SQLValue {
        switch value {
        case .text(let s): .integer(Int64(s.unicodeScalars.count))
        case .blob(let d): .integer(Int64(d.count))
        default: .null
        }
    }

    /// The sum of decimals (0 for none), as `@sum` computes it.
    package static func sumOfDecimals(_ values: [Decimal128]) -> Decimal128 {
        values.reduce(Decimal128(0), +)
    }

    /// The mean of decimals, or `nil` for none, as `@avg` computes it.
    package static func averageOfDecimals(_ values: [Decimal128]) -> Decimal128? {
        values.isEmpty ? nil : sumOfDecimals(values) / Decimal128(values.count)
    }

    private static func isBlob(_ value: SQLValue) -> Bool {
        if case .blob = value { return true }
        return false
    }

    private static func bytes(_ value: SQLValue) -> Data? {
        switch value {
        case .blob(let d): d
        case .text(let s): Data(s.utf8)
        default: nil
        }
    }

    private static func text(_ value: SQLValue) -> String? {
        switch value {
        case .text(let s): s
        case .blob(let d): String(decoding: d, as: UTF8.self)
        default: nil
        }
    }

    private static func decimals(in value: SQLValue) -> [Decimal128] {
        guard case .text(let joined) = value else { return [] }
        return joined.split(separator: " ").compactMap { try? Decimal128(string: String($0)) }
    }
}
