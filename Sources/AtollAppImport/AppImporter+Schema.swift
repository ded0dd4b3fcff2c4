import AtollCore

/// `data_sources/<service>/<db>/<collection>/schema.json` and `relationships.json` → Atoll object types.
extension ImportContext {
    mutating func readSchemas() throws(AppImportError) {
        // Collections first (their class names are needed to resolve relationships).
        for path in export.files.keys.sorted() {
            let parts = path.split(separator: "/").map(String.init)
            guard parts.count == 5, parts[0] == "data_sources", ["schema.json", "rules.json", "relationships.json"].contains(parts[4]) else { continue }
            let key = parts[1...3].joined(separator: "/")
            if collections[key] == nil {
                collections[key] = Collection(service: parts[1], database: parts[2], name: parts[3], className: parts[3], schema: nil,
                                              folder: parts[0...3].joined(separator: "/"))
            }
            if parts[4] == "schema.json", let schema = try document(path), let title = schema["title"]?.string, !title.isEmpty {
                collections[key]?.className = title
            }
        }
        for key in collections.keys.sorted() {
            let collection = collections[key]!
            let schemaPath = "\(collection.folder)/schema.json"
            guard let json = try document(schemaPath), json.entries?.isEmpty == false else { continue }
            let relationships = try self.document("\(collection.folder)/relationships.json")
            var types: [ObjectSchema] = []
            if let type = objectSchema(json, name: collection.className, embedded: false, relationships: relationships,
                                       path: schemaPath, into: &types) {
                collections[key]?.schema = type
            }
            for type in types where !schemaList.contains(where: { $0.name == type.name }) { schemaList.append(type) }
        }
    }

    /// The object type `json` describes (embedded types it holds go to `types` too); nil when it
    /// has no properties Atoll can read.
    mutating func objectSchema(_ json: ExportJSON, name: String, embedded: Bool, relationships: ExportJSON?, path: String,
                               into types: inout [ObjectSchema]) -> ObjectSchema? {
        let required = Set(json["required"]?.array?.compactMap(\.string) ?? [])
        var properties: [Property] = []
        for (field, spec) in json["properties"]?.entries ?? [] {
            let subject = "\(path) \(name).\(field)"
            if let relation = relationships?[field] {
                guard let ref = relation["ref"]?.string, let target = ref.split(separator: "/").last.map(String.init) else {
                    report.add(.refused, subject, "a relationship without a ref is left out")
                    continue
                }
                let className = className(ofCollection: target)
                let isList = relation["is_list"]?.bool ?? false
                properties.append(Property(name: field, type: .object, collection: isList ? .list : .single, isOptional: !isList,
                                           objectType: className))
                report.add(.mapped, subject, isList ? "list of links to \(className)" : "link to \(className)")
                continue
            }
            guard let property = property(field, spec, optional: !required.contains(field) && field != "_id", owner: name,
                                           path: path, subject: subject, into: &types) else { continue }
            properties.append(property)
        }
        if !embedded {
            guard let index = properties.firstIndex(where: { $0.name == "_id" }) else {
                report.add(.refused, "\(path) \(name)", "no _id property: a synced type needs its primary key _id; the type is left out")
                return nil
            }
            guard properties[index].type.canBePrimaryKey, properties[index].isSingle else {
                report.add(.refused, "\(path) \(name)", "_id of type \(properties[index].type.rawValue) cannot be a primary key; the type is left out")
                return nil
            }
            properties[index].isPrimaryKey = true
            properties[index].isOptional = false
        }
        let type = ObjectSchema(name: name, properties: properties, isEmbedded: embedded)
        types.append(type)
        report.add(.mapped, "\(path) \(name)", (embedded ? "embedded type, " : "type, ") + "\(properties.count) properties")
        return type
    }

    static let scalarTypes: [String: PropertyType] = [
        "objectId": .objectId, "string": .string, "int": .int, "long": .int, "double": .double, "decimal": .decimal128,
        "bool": .bool, "date": .date, "uuid": .UUID, "binData": .data, "mixed": .any,
    ]

    /// `spec`'s `bsonType` (a name, or a name and `"null"`): the type and whether it is optional.
    static func bsonType(_ spec: ExportJSON) -> (name: String, nullable: Bool)? {
        if let name = spec["bsonType"]?.string { return (name, false) }
        guard let names = spec["bsonType"]?.array?.compactMap(\.string) else { return nil }
        let others = names.filter { $0 != "null" }
        guard others.count == 1 else { return nil }
        return (others[0], names.contains("null"))
    }

    mutating func property(_ field: String, _ spec: ExportJSON, optional: Bool, owner: String, path: String, subject: String,
                           into types: inout [ObjectSchema]) -> Property? {
        guard MongoExpression.isFieldPath(field), !field.contains(".") else {
            report.add(.refused, subject, "the field name is not a property name Atoll accepts; left out")
            return nil
        }
        guard let bsonType = Self.bsonType(spec) else {
            report.add(.refused, subject, "bsonType \(MongoExpression.describe(spec["bsonType"] ?? .null)) is not one type; left out")
            return nil
        }
        let (bson, nullable) = bsonType
        if let scalar = Self.scalarTypes[bson] {
            return Property(name: field, type: scalar, isOptional: scalar == .any || optional || nullable)
        }
        switch bson {
        case "array":
            guard let items = spec["items"], let itemType = Self.bsonType(items) else {
                report.add(.refused, subject, "an array without one item type; left out")
                return nil
            }
            let (itemBSON, itemNullable) = itemType
            let unique = spec["uniqueItems"]?.bool ?? false
            if let scalar = Self.scalarTypes[itemBSON] {
                return Property(name: field, type: scalar, collection: unique ? .set : .list, isOptional: scalar == .any || itemNullable)
            }
            if itemBSON == "object", !unique, let embedded = embeddedType(items, field: field, owner: owner, path: path, into: &types) {
                return Property(name: field, type: .object, collection: .list, objectType: embedded)
            }
            report.add(.refused, subject, "an array of \(itemBSON)\(unique ? " with uniqueItems" : "") has no Atoll type; left out")
            return nil
        case "object":
            if spec["properties"] == nil, let values = spec["additionalProperties"], let valueType = Self.bsonType(values),
               let scalar = Self.scalarTypes[valueType.name] {
                return Property(name: field, type: scalar, collection: .map, isOptional: scalar == .any || valueType.nullable)
            }
            if let embedded = embeddedType(spec, field: field, owner: owner, path: path, into: &types) {
                return Property(name: field, type: .object, isOptional: true, objectType: embedded)
            }
            report.add(.refused, subject, "an object without properties (nor a map's additionalProperties) has no Atoll type; left out")
            return nil
        default:
            report.add(.refused, subject, "bsonType \(bson) has no Atoll type; left out")
            return nil
        }
    }

    mutating func embeddedType(_ spec: ExportJSON, field: String, owner: String, path: String, into types: inout [ObjectSchema]) -> String? {
        guard spec["properties"] != nil else { return nil }
        let name = spec["title"]?.string ?? "\(owner)_\(field)"
        if types.contains(where: { $0.name == name }) { return name }
        return objectSchema(spec, name: name, embedded: true, relationships: nil, path: path, into: &types)?.name
    }
}
