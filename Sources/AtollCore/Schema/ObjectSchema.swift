/// The persisted shape of one object type: its name and properties.
public struct ObjectSchema: Sendable, Hashable, Codable {
    public var name: String
    public var properties: [Property]
    /// Embedded types have no identity of their own: each instance is owned by exactly one parent.
    public var isEmbedded: Bool

    public init(name: String, properties: [Property], isEmbedded: Bool = false) {
        self.name = name
        self.properties = properties
        self.isEmbedded = isEmbedded
    }

    /// The primary key property, if the type declares one.
    public var primaryKeyProperty: Property? { properties.first(where: \.isPrimaryKey) }

    public var primaryKey: String? { primaryKeyProperty?.name }

    public subscript(property name: String) -> Property? {
        properties.first { $0.name == name }
    }
}
