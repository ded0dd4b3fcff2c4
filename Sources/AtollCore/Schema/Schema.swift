/// A set of object types, validated as a whole (every link names a known type).
///
/// ```swift
/// let schema = try Schema([ObjectSchema(name: "Dog", properties: [Property(name: "name", type: .string)])])
/// schema["Dog"]?.properties.count   // 1
/// ```
public struct Schema: Sendable, Hashable, Codable {
    public private(set) var objectSchemas: [ObjectSchema]

    /// Validates `objectSchemas`; see ``SchemaError`` for what is rejected.
    public init(_ objectSchemas: [ObjectSchema]) throws {
        self.objectSchemas = objectSchemas
        try validate()
    }

    /// A schema with no types.
    public static let empty = try! Schema([])

    public subscript(name: String) -> ObjectSchema? {
        objectSchemas.first { $0.name == name }
    }

    public var typeNames: [String] { objectSchemas.map(\.name) }

    /// The same schema with each type as `transform` gives it, not validated again: for a view of
    /// the schema under other names (`realm.schema` shows the app's property names).
    public func mapObjectSchemas(_ transform: (ObjectSchema) -> ObjectSchema) -> Schema {
        var mapped = self
        mapped.objectSchemas = objectSchemas.map(transform)
        return mapped
    }

    /// Checks every rule a store relies on and throws the first violation found.
    public func validate() throws {
        var seen: Set<String> = []
        for object in objectSchemas {
            guard Self.isValidName(object.name) else {
                throw SchemaError(.invalidName, "'\(object.name)' is not a valid object type name", objectType: object.name)
            }
            guard seen.insert(object.name).inserted else {
                throw SchemaError(.duplicateType, "object type '\(object.name)' is declared twice", objectType: object.name)
            }
            try validate(object)
        }
    }

    private func validate(_ object: ObjectSchema) throws {
        var names: Set<String> = []
        let keys = object.properties.filter(\.isPrimaryKey)
        if keys.count > 1 {
            throw SchemaError(.multiplePrimaryKeys,
                "'\(object.name)' declares \(keys.count) primary keys (\(keys.map(\.name).joined(separator: ", "))); at most one is allowed",
                objectType: object.name)
        }
        if object.isAsymmetric && (object.isEmbedded || keys.isEmpty) {
            throw SchemaError(.invalidPrimaryKey,
                "asymmetric type '\(object.name)' needs a primary key (and cannot be embedded)", objectType: object.name)
        }
        if object.isEmbedded, let key = keys.first {
            throw SchemaError(.primaryKeyOnEmbedded,
                "embedded type '\(object.name)' cannot have a primary key ('\(key.name)')",
                objectType: object.name, property: key.name)
        }
        for property in object.properties {
            let here = "'\(object.name).\(property.name)'"
            guard Self.isValidName(property.name) else {
                throw SchemaError(.invalidName, "\(here) is not a valid property name", objectType: object.name, property: property.name)
            }
            guard names.insert(property.name).inserted else {
                throw SchemaError(.duplicateProperty, "\(here) is declared twice", objectType: object.name, property: property.name)
            }
            if property.type == .linkingObjects {
                throw SchemaError(.unsupportedType, "\(here): linking objects are computed from the links to the type, never stored",
                    objectType: object.name, property: property.name)
            }
            if property.isPrimaryKey {
                guard property.isSingle, property.type.canBePrimaryKey else {
                    throw SchemaError(.invalidPrimaryKey,
                        "\(here) of type \(property.typeDescription) cannot be a primary key; use Int, String, ObjectId or UUID",
                        objectType: object.name, property: property.name)
                }
            }
            if property.isIndexed && !property.isPrimaryKey {
                guard property.isSingle, property.type.canBeIndexed else {
                    throw SchemaError(.invalidIndex, "\(here) of type \(property.typeDescription) cannot be indexed",
                        objectType: object.name, property: property.name)
                }
            }
            if property.type == .object {
                guard let target = property.objectType, let targetSchema = self[target] else {
                    throw SchemaError(.unknownLinkTarget,
                        "\(here) links to '\(property.objectType ?? "")', which is not in the schema",
                        objectType: object.name, property: property.name)
                }
                if targetSchema.isAsymmetric {
                    throw SchemaError(.unsupportedType, "\(here) links to asymmetric type '\(target)': its objects are never read, nothing can link to them",
                        objectType: object.name, property: property.name)
                }
                if object.isAsymmetric && !targetSchema.isEmbedded {
                    throw SchemaError(.unsupportedType, "\(here): an asymmetric type can link to embedded objects only",
                        objectType: object.name, property: property.name)
                }
                if property.collection == .set && targetSchema.isEmbedded {
                    throw SchemaError(.unsupportedType, "\(here): a MutableSet cannot hold embedded objects",
                        objectType: object.name, property: property.name)
                }
                if property.collection == .single && !property.isOptional {
                    throw SchemaError(.nonOptionalLink, "\(here): a to-one link must be optional",
                        objectType: object.name, property: property.name)
                }
                if property.collection == .list && property.isOptional {
                    throw SchemaError(.unsupportedType, "\(here): a List cannot hold optional objects",
                        objectType: object.name, property: property.name)
                }
            } else if property.objectType != nil {
                throw SchemaError(.unsupportedType, "\(here) names a target type but is not a link",
                    objectType: object.name, property: property.name)
            }
        }
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !name.hasPrefix("__"), name.utf8.count <= 63 else { return false }
        guard first == "_" || first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}

/// A rejected schema, with the type and property at fault.
public struct SchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        case invalidName, duplicateType, duplicateProperty, multiplePrimaryKeys, primaryKeyOnEmbedded
        case invalidPrimaryKey, invalidIndex, unknownLinkTarget, nonOptionalLink, unsupportedType
        /// A breaking schema change names a type or property the schema does not have.
        case unknownType, unknownProperty
    }

    public let code: Code
    public let message: String
    public let objectType: String?
    public let property: String?

    public init(_ code: Code, _ message: String, objectType: String? = nil, property: String? = nil) {
        self.code = code
        self.message = message
        self.objectType = objectType
        self.property = property
    }

    public var description: String { "Schema error: \(message)" }
}
