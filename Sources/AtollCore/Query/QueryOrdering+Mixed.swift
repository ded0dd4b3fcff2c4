import Foundation

/// How queries compare and sort mixed values (`AnyRealmValue`), in memory and in SQL alike.
///
/// Comparisons use ``QueryOrdering/compare(_:_:)`` on the values themselves: numbers of every kind
/// by value (a `bool` is not a number), strings with strings, and so on; values of kinds that do not
/// compare match no ordered comparison and are never equal. Sorting needs a total order, so kinds
/// come in a fixed rank first — null, bool, numbers, strings, data, dates, ObjectIds, UUIDs, links,
/// nested collections — then values of one rank by ``QueryOrdering/compare(_:_:)``.
///
/// The stores keep mixed values as blobs (Value+Mixed.swift); the client store's `SQLTranslator` calls the functions
/// below on them, which decode and defer to the same Swift code.
extension QueryOrdering {
    /// The total order of `SORT` on a mixed key.
    static func mixedSort(_ a: Value, _ b: Value) -> ComparisonResult {
        let (x, y) = (mixedRank(a), mixedRank(b))
        if x != y { return x < y ? .orderedAscending : .orderedDescending }
        if let order = compare(a, b) { return order }
        // Links to different types, nested collections: by their encoding, for a stable order.
        let (p, q) = (a.canonicalBytes, b.canonicalBytes)
        return p.lexicographicallyPrecedes(q) ? .orderedAscending : (p == q ? .orderedSame : .orderedDescending)
    }

    static func mixedRank(_ value: Value) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .double, .float, .decimal: 2
        case .string: 3
        case .data: 4
        case .date: 5
        case .objectId: 6
        case .uuid: 7
        case .link: 8
        case .list, .set, .map, .object: 9
        }
    }

    /// A value as SQL hands it to the mixed functions: a stored mixed blob, or a plain column of
    /// another type compared with one.
    static func mixedOperand(_ sql: SQLValue) -> Value {
        switch sql {
        case .null: .null
        case .integer(let i): .int(i)
        case .real(let d): .double(d)
        case .text(let s): .string(s)
        case .blob(let d): Value(mixedSQL: .blob(d)) ?? .data(d)
        }
    }
}

extension QueryFunctions {
    package static let mixedCompare = "atoll_mixed_cmp"
    package static let mixedText = "atoll_mixed_text"
    package static let mixedSortKey = "atoll_mixed_sortkey"
    package static let mixedType = "atoll_mixed_type"
    /// `(value, index or key)` → the element of the mixed value's list (integer) or dictionary (text), or NULL.
    package static let mixedElement = "atoll_mixed_at"
    /// `(value)` → the JSON array `[0, 1, …, n-1]` of the positions of the mixed value's list or dictionary.
    package static let mixedPositions = "atoll_mixed_positions"
    /// `(value, position)` → the element at a position of the list, or the value of the dictionary's key at that position in key order.
    package static let mixedNth = "atoll_mixed_nth"

    /// The name `@type` gives the kind of value a mixed value holds.
    package static func mixedTypeName(_ value: Value) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .float: "float"
        case .decimal: "decimal"
        case .string: "string"
        case .data: "binary"
        case .date: "date"
        case .objectId: "objectId"
        case .uuid: "uuid"
        case .link, .object: "object"
        case .list, .set: "list"
        case .map: "dictionary"
        }
    }

    /// The kinds a name written after `@type ==` stands for (Realm's names and aliases, any case);
    /// `nil` for a name that is not one.
    package static func mixedTypeNames(matching name: String) -> [String]? {
        switch name.lowercased() {
        case "int", "integer", "long": ["int"]
        case "bool", "boolean": ["bool"]
        case "double": ["double"]
        case "float": ["float"]
        case "decimal", "decimal128": ["decimal"]
        case "numeric": ["int", "double", "float", "decimal"]
        case "string": ["string"]
        case "binary", "data": ["binary"]
        case "date", "timestamp": ["date"]
        case "objectid": ["objectId"]
        case "uuid": ["uuid"]
        case "object", "link": ["object"]
        case "null", "nil": ["null"]
        case "list", "array": ["list"]
        case "dictionary", "map": ["dictionary"]
        default: nil
        }
    }

    static let mixedTypeNameList = "int, bool, double, float, decimal, numeric, string, binary, date, objectId, uuid, object, null, list or dictionary"

    /// The mixed functions, registered with the others (``sqlFunctions``).
    ///
    /// | name | arity | arguments → result |
    /// |---|---|---|
    /// | `atoll_mixed_cmp` | 3 | lhs, rhs, strict 0/1 → -1, 0, 1; NULL when the kinds do not compare, or (strict) either is null |
    /// | `atoll_mixed_text` | 1 | a mixed blob → its text when it holds a string, else NULL |
    /// | `atoll_mixed_type` | 1 | a mixed blob → the `@type` name of what it holds (``mixedTypeName(_:)``) |
    /// | `atoll_mixed_sortkey` | 1 | a mixed blob → a blob whose bytes sort as ``QueryOrdering/mixedSort(_:_:)`` |
    static let mixedFunctions: [(name: String, arity: Int, body: @Sendable ([SQLValue]) -> SQLValue)] = [
        (mixedCompare, 3, { args in
            guard args.count == 3 else { return .null }
            let (a, b) = (QueryOrdering.mixedOperand(args[0]), QueryOrdering.mixedOperand(args[1]))
            if case .integer(1) = args[2], a.isNull || b.isNull { return .null }
            guard let order = QueryOrdering.compare(a, b) else { return .null }
            return .integer(order == .orderedAscending ? -1 : order == .orderedSame ? 0 : 1)
        }),
        (mixedText, 1, { args in
            guard case .string(let s)? = args.first.map(QueryOrdering.mixedOperand) else { return .null }
            return .text(s)
        }),
        (mixedType, 1, { args in
            .text(mixedTypeName(QueryOrdering.mixedOperand(args.first ?? .null)))
        }),
        (mixedElement, 2, { args in
            guard args.count == 2 else { return .null }
            let step: MixedStep
            switch args[1] {
            case .integer(let i): step = .index(Int(clamping: i))
            case .text(let k): step = .key(k)
            default: return .null
            }
            return step.element(of: QueryOrdering.mixedOperand(args[0])).mixedSQLValue
        }),
        (mixedPositions, 1, { args in
            let count = switch QueryOrdering.mixedOperand(args.first ?? .null) {
            case .list(let items): items.count
            case .map(let entries): entries.count
            default: 0
            }
            return .text("[" + (0..<count).map(String.init).joined(separator: ",") + "]")
        }),
        (mixedNth, 2, { args in
            guard args.count == 2, case .integer(let i) = args[1], i >= 0 else { return .null }
            switch QueryOrdering.mixedOperand(args[0]) {
            case .list(let items): return i < items.count ? items[Int(i)].mixedSQLValue : .null
            case .map(let entries):
                guard i < entries.count else { return .null }
                return entries[entries.keys.sorted()[Int(i)]]?.mixedSQLValue ?? .null
            default: return .null
            }
        }),
        (mixedSortKey, 1, { args in
            guard let first = args.first, !(first == .null) else { return .null }
            return .blob(Data(mixedSortKey(QueryOrdering.mixedOperand(first))))
        }),
    ]

    /// Bytes that sort as ``QueryOrdering/mixedSort(_:_:)``: the rank, then an order-preserving
    /// form of the value (numbers as doubles with their sign flipped into place; decimals by their
    /// double value, which orders them except between decimals closer than a double can tell).
    static func mixedSortKey(_ value: Value) -> [UInt8] {
        var key: [UInt8] = [UInt8(QueryOrdering.mixedRank(value))]
        func orderedDouble(_ d: Double) {
            let bits = d.bitPattern
            let flipped = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
            withUnsafeBytes(of: flipped.bigEndian) { key += $0 }
        }
        switch value {
        case .bool(let b): key.append(b ? 1 : 0)
        case .int, .double, .float, .decimal: orderedDouble(value.numericDouble ?? 0)
        case .string(let s): key += Array(s.utf8)
        case .data(let d): key += Array(d)
        case .date(let d): orderedDouble(d.timeIntervalSinceReferenceDate + 0)
        case .objectId(let o): key += o.bytes
        case .uuid(let u): withUnsafeBytes(of: u.uuid) { key += $0 }
        case .null: break
        default: key += value.canonicalBytes
        }
        return key
    }
}
