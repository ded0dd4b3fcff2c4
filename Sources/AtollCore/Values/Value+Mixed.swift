import Foundation

/// Values of mixed properties (realm-swift's `AnyRealmValue`): what they may hold and how the
/// stores keep them.
///
/// A mixed property holds `null`, any scalar, a link to a top-level object of any type, or a list
/// or map of such values, nested as deep as ``Value/decode(from:depth:)`` allows. It never holds an
/// embedded object or a set. Nested collections are whole values: an instruction replaces the
/// property's value; no instruction reaches inside it (docs/merge.md, "Mixed values").
///
/// The SQLite stores keep a mixed value as a blob of its sync encoding (`NULL` for `null`): the
/// encoding carries the value's type (an `int` and a `double` stay apart, a `bool` is not an
/// `int`), links travel by primary key (so a link to an object that is gone, or not yet synced, is
/// unresolved and reads as `null` until it resolves, as typed links do), and equal values have equal
/// bytes (map keys are sorted), so set membership and equality can compare bytes.
extension Value {
    /// Whether a mixed property can hold this value.
    package var isMixedStorable: Bool {
        switch self {
        case .object, .set: false
        case .list(let items): items.allSatisfy(\.isMixedStorable)
        case .map(let entries): entries.values.allSatisfy(\.isMixedStorable)
        default: true
        }
    }

    /// The stored form of a mixed value.
    package var mixedSQLValue: SQLValue {
        if case .null = self { return .null }
        var w = BinaryWriter()
        encode(into: &w)
        return .blob(Data(w.bytes))
    }

    /// Decodes the stored form of a mixed value; `nil` when the bytes are not one (a corrupted
    /// file or a foreign writer).
    package init?(mixedSQL sql: SQLValue) {
        switch sql {
        case .null: self = .null
        case .blob(let data):
            var r = BinaryReader(data)
            guard let value = try? Value.decode(from: &r), r.isAtEnd, value.isMixedStorable else { return nil }
            self = value
        default: return nil
        }
    }

    /// The stored form of this value in a column (or collection element) of type `type`.
    package func sqlValue(as type: PropertyType) -> SQLValue {
        type == .any ? mixedSQLValue : sqlValue
    }
}
