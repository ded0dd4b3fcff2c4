import Foundation

/// The scalar kind of a property, or of each element of a collection property.
///
/// The cases carry realm-swift's names (`PropertyType` is its `RLMPropertyType`), so an app's
/// exhaustive `switch property.type` compiles; the raw values are Atoll's stored and wire names.
public enum PropertyType: String, Sendable, Hashable, Codable, CaseIterable {
    case bool, int, double, float, string, data, date, objectId, decimal128
    /// `Foundation.UUID`.
    case UUID = "uuid"
    /// A link to another object type, or an embedded object.
    case object
    /// Any scalar, a link to an object of any type, or (as a whole value) a list or map of such
    /// values: realm-swift's `AnyRealmValue`. Always nullable.
    case any = "mixed"
    /// An inverse relationship (`LinkingObjects`): computed, never stored, so no schema Atoll
    /// reads or writes has one; the case exists because realm-swift's enumeration has it.
    case linkingObjects

    /// The type stored or sent under `name`: every case but `.linkingObjects`, which no schema
    /// holds (a schema from the network naming it is refused where it is decoded).
    public init?(storedName name: String) {
        guard let type = PropertyType(rawValue: name), type != .linkingObjects else { return nil }
        self = type
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let type = PropertyType(storedName: name) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(name)' is not a stored property type")
        }
        self = type
    }

    /// Whether a property of this type may be a primary key.
    public var canBePrimaryKey: Bool {
        switch self {
        case .int, .string, .objectId, .UUID: true
        default: false
        }
    }

    /// Whether a property of this type may carry a secondary index.
    public var canBeIndexed: Bool {
        switch self {
        case .bool, .int, .string, .date, .objectId, .UUID, .any: true
        default: false
        }
    }
}

/// How many values a property holds.
public enum CollectionKind: String, Sendable, Hashable, Codable {
    /// One value (or one link).
    case single
    /// An ordered list (`List<T>`).
    case list
    /// An unordered set of distinct values (`MutableSet<T>`).
    case set
    /// String keys to values (`Map<String, T>`).
    case map
}

/// One persisted property of an object type.
///
/// ```swift
/// Property(name: "owner", type: .string, isIndexed: true)
/// Property(name: "dogs", type: .object, collection: .list, objectType: "Dog")
/// ```
public struct Property: Sendable, Hashable, Codable {
    public var name: String
    public var type: PropertyType
    public var collection: CollectionKind
    public var isOptional: Bool
    /// The target type of a link or embedded object (`type == .object`).
    public var objectType: String?
    public var isPrimaryKey: Bool
    public var isIndexed: Bool
    /// In the schema an app reads (`realm.schema`), the name the property is stored under when
    /// its class renames it (`propertiesMapping()`); `name` is then the Swift name. Nil in the
    /// schema as stored and synced, where `name` is the stored name.
    public var mappedColumnName: String?

    public init(
        name: String, type: PropertyType, collection: CollectionKind = .single, isOptional: Bool = false,
        objectType: String? = nil, isPrimaryKey: Bool = false, isIndexed: Bool = false
    ) {
        self.name = name
        self.type = type
        self.collection = collection
        self.isOptional = isOptional
        self.objectType = objectType
        self.isPrimaryKey = isPrimaryKey
        self.isIndexed = isIndexed
    }

    /// The value a single-valued property holds before anything is written to it: `null` for
    /// optionals and links, else the type's zero (0, "", false, empty data, 1970, zero ids).
    /// Collections start empty; this gives `null` for them.
    public var initialValue: Value {
        if isOptional || type == .object || type == .any || !isSingle { return .null }
        switch type {
        case .bool: return .bool(false)
        case .int: return .int(0)
        case .double: return .double(0)
        case .float: return .float(0)
        case .string: return .string("")
        case .data: return .data(Data())
        case .date: return .date(Date(timeIntervalSince1970: 0))
        case .objectId: return .objectId(ObjectId(bytes: [UInt8](repeating: 0, count: 12)))
        case .UUID: return .uuid(Foundation.UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .decimal128: return .decimal(Decimal128(0))
        case .object, .any, .linkingObjects: return .null
        }
    }

    /// Whether the property holds exactly one value (not a list, set or map).
    public var isSingle: Bool { collection == .single }

    /// Whether the property is a to-one link or embedded object.
    public var isLink: Bool { type == .object && collection == .single }

    /// A readable spelling of the declared type, e.g. `List<Dog>` or `String?`.
    public var typeDescription: String {
        let element = type == .object ? (objectType ?? "?") : type == .any ? "AnyRealmValue" : type.rawValue
        let optional = isOptional && type != .object && type != .any ? "?" : ""
        switch collection {
        case .single: return type == .object ? element + "?" : element + optional
        case .list: return "List<\(element)\(optional)>"
        case .set: return "MutableSet<\(element)\(optional)>"
        case .map: return "Map<String, \(element)\(type == .object ? "?" : optional)>"
        }
    }
}
