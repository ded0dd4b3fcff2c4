/// The stored type of a column (for collections: of its elements).
public enum RealmColumnType: String, Sendable, Equatable, CaseIterable {
    case int, bool, string, binary, mixed, timestamp, float, double, decimal128, link, objectId, typedLink, uuid

    /// Maps the on-disk column type number; the legacy link-list type (13) reads as `.link`.
    init?(storedType: Int64) {
        switch storedType {
        case 0: self = .int
        case 1: self = .bool
        case 2: self = .string
        case 4: self = .binary
        case 6: self = .mixed
        case 8: self = .timestamp
        case 9: self = .float
        case 10: self = .double
        case 11: self = .decimal128
        case 12, 13: self = .link
        case 15: self = .objectId
        case 16: self = .typedLink
        case 17: self = .uuid
        default: return nil
        }
    }
}

/// Whether a column holds one value per object or a collection.
public enum RealmCollectionKind: Sendable, Equatable {
    case single
    case list
    case set
    /// A dictionary; Realm only writes string keys.
    case dictionary(keyType: RealmColumnType)
}

/// Kind of table as recorded in the table's flags.
public enum RealmTableKind: Sendable, Equatable {
    case topLevel
    case embedded
    case asymmetric
}

/// One public column of a table.
public struct RealmColumn: Sendable, Equatable {
    /// Column (property) name.
    public let name: String
    /// Value type, or element type for collections.
    public let type: RealmColumnType
    /// Whether the value (or each element) may be null; a single link is always nullable, links in
    /// collections never are.
    public let isNullable: Bool
    /// Single value, list, set or dictionary.
    public let collection: RealmCollectionKind
    /// Whether the column has a search index.
    public let isIndexed: Bool
    /// For link columns: the stored name of the target table.
    public let targetTable: String?
    /// The raw 64-bit column key (index, type, attributes, tag).
    public let key: Int64

    /// Position of this column's leaf in a cluster (column key index + 1).
    var clusterSlot: Int { Int(key & 0xFFFF) + 1 }
    /// Position in the table's spec arrays.
    let specIndex: Int
}

/// Spec attribute bits used by the reader.
enum ColumnAttribute {
    static let indexed: Int64 = 1
    static let nullable: Int64 = 16
    static let list: Int64 = 32
    static let dictionary: Int64 = 64
    static let set: Int64 = 128
}
