/// The persisted shape of one object type: its name and properties.
public struct ObjectSchema: Sendable, Hashable, Codable {
    public var name: String
    public var properties: [Property]
    /// Embedded types have no identity of their own: each instance is owned by exactly one parent.
    public var isEmbedded: Bool
    /// Asymmetric (data ingest) types are insert-only: a client creates their objects, uploads
    /// them and forgets them; the server keeps them and never downloads them.
    public var isAsymmetric: Bool

    public init(name: String, properties: [Property], isEmbedded: Bool = false, isAsymmetric: Bool = false) {
        self.name = name
        self.properties = properties
        self.isEmbedded = isEmbedded
        self.isAsymmetric = isAsymmetric
    }

    private enum CodingKeys: String, CodingKey { case name, properties, isEmbedded, isAsymmetric }

    /// Schemas stored before asymmetric types existed have no `isAsymmetric`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        properties = try container.decode([Property].self, forKey: .properties)
        isEmbedded = try container.decode(Bool.self, forKey: .isEmbedded)
        isAsymmetric = try container.decodeIfPresent(Bool.self, forKey: .isAsymmetric) ?? false
    }

    /// The primary key property, if the type declares one.
    public var primaryKeyProperty: Property? { properties.first(where: \.isPrimaryKey) }

    public var primaryKey: String? { primaryKeyProperty?.name }

    /// - Complexity: O(*p*) for *p* properties; compares names in place (no property copied
    ///   but the one found: typing and checking an import look up every field this way).
    public subscript(property name: String) -> Property? {
        let index = properties.withUnsafeBufferPointer { properties in
            properties.firstIndex { $0.name == name }
        }
        return index.map { properties[$0] }
    }
}

extension Dictionary where Key == String, Value == ObjectSchema {
    /// Takes in a schema instruction additively, as every replica does: `addTable` adds the type
    /// or the properties it lacks, `addColumn` a property its type lacks; nothing is ever
    /// redefined or removed. Other instructions change nothing.
    mutating func mergeSchema(_ instruction: Instruction) {
        switch instruction {
        case .addTable(let table):
            var merged = self[table.name]
                ?? ObjectSchema(name: table.name, properties: [], isEmbedded: table.isEmbedded, isAsymmetric: table.isAsymmetric)
            for property in table.properties where merged[property: property.name] == nil {
                merged.properties.append(property)
            }
            self[table.name] = merged
        case .addColumn(let type, let property):
            guard self[type] != nil, self[type]![property: property.name] == nil else { return }
            self[type]!.properties.append(property)
        default:
            break
        }
    }
}
