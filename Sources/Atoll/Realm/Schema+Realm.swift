import AtollCore

// realm-swift's names for the schema a realm reports, so introspection code written for it
// compiles:
//
// ```swift
// for objectSchema in realm.schema.objectSchema {
//     print(objectSchema.className, objectSchema.primaryKeyProperty?.name ?? "-")
//     for property in objectSchema.properties where property.type == .object {
//         print("  \(property.name) → \(property.objectClassName ?? "")", property.isArray ? "(list)" : "")
//     }
// }
// let task = realm.schema["Task"]
// ```

extension Schema: CustomStringConvertible {
    /// Every object type of the realm, ordered by name.
    public var objectSchema: [ObjectSchema] { objectSchemas }

    public var description: String { objectSchemas.map(\.description).joined(separator: "\n") }
}

extension ObjectSchema: CustomStringConvertible {
    /// The object type's name: the class name, or what `className()` returns.
    public var className: String { name }

    /// The class of the type when this process has used it, else `DynamicObject`.
    public var objectClass: AnyClass { ClassInfo.named(name)?.type ?? DynamicObject.self }

    /// The property named `propertyName`, if the type has one.
    public subscript(propertyName: String) -> Property? { self[property: propertyName] }

    public var description: String {
        let kind = isEmbedded ? " (embedded)" : ""
        return "\(name)\(kind) {\n" + properties.map { "    \($0.description)\n" }.joined() + "}"
    }
}

extension Property: CustomStringConvertible {
    /// The name the property is stored under: the one `propertiesMapping()` gives it, else `name`.
    public var columnName: String { mappedColumnName ?? name }
    /// Whether the property is a `List`.
    public var isArray: Bool { collection == .list }
    /// Whether the property is a `MutableSet`.
    public var isSet: Bool { collection == .set }
    /// Whether the property is a `Map`.
    public var isMap: Bool { collection == .map }
    /// The object type a link, embedded object or collection of objects holds.
    public var objectClassName: String? { objectType }

    /// `name: Type`, then what is special about it: `owner: String (indexed)`.
    public var description: String {
        let flags = [isPrimaryKey ? "primary key" : nil, isIndexed && !isPrimaryKey ? "indexed" : nil].compactMap { $0 }
        return "\(name): \(typeDescription)" + (flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))")
    }
}

