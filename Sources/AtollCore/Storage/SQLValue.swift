import Foundation

/// A value as SQLite stores it. Both the client store and the server's SQLite store encode
/// ``Value``s this way, so SQL built by the client store's `SQLTranslator` binds the same bytes the store wrote.
///
/// | Value | SQL |
/// |---|---|
/// | bool | integer 0 / 1 |
/// | int | integer |
/// | double, float | real; a NaN: blob, its 8 bytes (SQLite would store NULL) |
/// | string | text |
/// | data | blob |
/// | date | real, seconds since 2001: `Date`'s own `Double`, so a date reads back `==` and sorts |
/// | objectId | blob, 12 bytes |
/// | uuid | blob, 16 bytes |
/// | decimal128 | text, canonical form, compared with the `ATOLL_DECIMAL` collation |
/// | link, embedded | integer, the target's row |
/// | mixed | blob, the value's sync encoding (Value+Mixed.swift); `NULL` for null |
package enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

extension Value {
    /// The stored form of a scalar. Links and collections have no direct encoding: the store maps
    /// links to rows and keeps collections in their own tables.
    package var sqlValue: SQLValue {
        switch self {
        case .null: .null
        case .bool(let b): .integer(b ? 1 : 0)
        case .int(let i): .integer(i)
        // SQLite stores a NaN as NULL: it is kept as its eight bytes instead (Realm keeps NaNs).
        case .double(let d): d.isNaN ? Self.nan(d.bitPattern) : .real(d)
        case .float(let f): f.isNaN ? Self.nan(Double(f).bitPattern) : .real(Double(f))
        case .string(let s): .text(s)
        case .data(let d): .blob(d)
        case .date(let d): .real(d.timeIntervalSinceReferenceDate)
        case .objectId(let o): .blob(Data(o.bytes))
        case .uuid(let u): .blob(withUnsafeBytes(of: u.uuid) { Data($0) })
        case .decimal(let d): .text(d.description)
        case .link, .object, .list, .set, .map:
            preconditionFailure("\(kindName) values have no scalar SQL encoding")
        }
    }

    /// Decodes a stored scalar of the given property type. Returns `nil` when the stored value does
    /// not have the shape the type requires (a corrupted file or a foreign writer).
    package init?(sql: SQLValue, type: PropertyType) {
        switch (type, sql) {
        case (.any, _): self.init(mixedSQL: sql)
        case (_, .null): self = .null
        case (.bool, .integer(let i)): self = .bool(i != 0)
        case (.int, .integer(let i)): self = .int(i)
        case (.double, .real(let d)): self = .double(d)
        case (.double, .integer(let i)): self = .double(Double(i))
        case (.double, .blob(let d)) where d.count == 8: self = .double(Double(bitPattern: Self.bits(d)))
        case (.float, .blob(let d)) where d.count == 8: self = .float(Float(Double(bitPattern: Self.bits(d))))
        case (.float, .real(let d)): self = .float(Float(d))
        case (.float, .integer(let i)): self = .float(Float(i))
        case (.string, .text(let s)): self = .string(s)
        case (.data, .blob(let d)): self = .data(d)
        case (.data, .text(let s)): self = .data(Data(s.utf8))
        case (.date, .real(let d)): self = .date(Date(timeIntervalSinceReferenceDate: d))
        case (.date, .integer(let i)): self = .date(Date(timeIntervalSinceReferenceDate: Double(i)))
        case (.objectId, .blob(let d)) where d.count == 12: self = .objectId(ObjectId(bytes: d))
        case (.UUID, .blob(let d)) where d.count == 16:
            let b = [UInt8](d)
            self = .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                                     b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case (.decimal128, .text(let s)):
            guard let d = try? Decimal128(string: s) else { return nil }
            self = .decimal(d)
        default: return nil
        }
    }
}

extension Value {
    /// A NaN as stored: its bit pattern, eight bytes big-endian.
    static func nan(_ bits: UInt64) -> SQLValue {
        .blob(withUnsafeBytes(of: bits.bigEndian) { Data($0) })
    }

    static func bits(_ data: Data) -> UInt64 {
        data.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
