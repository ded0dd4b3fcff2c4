import Foundation

/// One document of an import, typed through the realm's schema: the instructions that create it
/// (or, for a primary key already present, overwrite its fields: importing twice is harmless), the
/// links it holds, and the fields it had that the schema does not.
package struct TypedDocument: Sendable, Hashable {
    package var id: ObjectID
    package var instructions: [Instruction]
    /// Every link target the document names, to be checked against what exists.
    package var links: [ObjectLink]
    /// Members the schema has no property for (reported, not imported).
    package var ignoredFields: [String]
}

/// Types mongoexport documents (Extended JSON v2) through an Atoll schema. Pure.
///
/// ```swift
/// let typed = try DocumentTyping(schema: schema).type(JSONNode.parse(line), as: "Task")
/// changeset.instructions += typed.instructions
/// ```
package struct DocumentTyping: Sendable {
    package let schema: [String: ObjectSchema]
    /// A member taken out of every document (the partition key of a partition-based app).
    package var skippedField: String?

    package init(schema: [String: ObjectSchema], skippedField: String? = nil) {
        self.schema = schema
        self.skippedField = skippedField
    }

    /// The document typed as a top-level object of `typeName`.
    /// - Throws: ``DataImportError`` naming the field that was wrong.
    package func type(_ document: JSONNode, as typeName: String) throws(DataImportError) -> TypedDocument {
        guard let objectSchema = schema[typeName], !objectSchema.isEmbedded else {
            throw DataImportError(.unknownType, "the realm's schema has no top-level type \(typeName)")
        }
        guard case .object(let members) = document else { throw DataImportError(.notADocument, "a document must be a JSON object") }
        guard let key = objectSchema.primaryKeyProperty else {
            throw DataImportError(.unknownType, "\(typeName) has no primary key, so it does not sync")
        }
        guard let rawKey = document[key.name] else { throw DataImportError(.missingPrimaryKey, "the document has no \(key.name)") }
        var links: [ObjectLink] = []
        let primaryKey = try value(rawKey, for: key, element: false, path: key.name, links: &links)
        guard !primaryKey.isNull || key.isOptional else { throw DataImportError(.missingPrimaryKey, "\(key.name) is null", path: key.name) }
        let id = ObjectID(type: typeName, primaryKey: primaryKey)
        var instructions: [Instruction] = [.createObject(id)]
        var ignored: [String] = []
        var seen = Set<String>()
        for (name, node) in members where name != key.name && name != skippedField {
            guard seen.insert(name).inserted else {
                throw DataImportError(.wrongType, "the member appears twice", path: name)
            }
            guard let property = objectSchema[property: name] else { ignored.append(name); continue }
            let path: [PathElement] = [.property(name)]
            switch property.collection {
            case .single:
                instructions.append(.set(id, path: path, value: try value(node, for: property, element: false, path: name, links: &links)))
            case .list, .set:
                guard case .array(let elements) = node else {
                    if case .null = node { instructions.append(.clear(id, path: path)); continue }
                    throw DataImportError(.wrongType, "a \(property.collection.rawValue) needs an array", path: name)
                }
                instructions.append(.clear(id, path: path))
                for (index, element) in elements.enumerated() {
                    let typed = try value(element, for: property, element: true, path: "\(name)[\(index)]", links: &links)
                    instructions.append(property.collection == .list
                        ? .listInsert(id, path: path, index: index, value: typed)
                        : .setInsert(id, path: path, value: typed))
                }
            case .map:
                guard case .object(let entries) = node else {
                    if case .null = node { instructions.append(.clear(id, path: path)); continue }
                    throw DataImportError(.wrongType, "a map needs a document", path: name)
                }
                instructions.append(.clear(id, path: path))
                for (entry, element) in entries {
                    let typed = try value(element, for: property, element: true, path: "\(name).\(entry)", links: &links)
                    instructions.append(.set(id, path: path + [.key(entry)], value: typed))
                }
            }
        }
        return TypedDocument(id: id, instructions: instructions, links: links, ignoredFields: ignored)
    }

    /// One value (a whole single property, or one element of a collection) typed for `property`.
    func value(_ node: JSONNode, for property: Property, element: Bool, path: String,
               links: inout [ObjectLink]) throws(DataImportError) -> Value {
        func wrong(_ found: String) -> DataImportError {
            DataImportError(.wrongType, "\(property.typeDescription) cannot hold \(found)", path: path)
        }
        if case .null = node {
            guard property.isOptional || property.type == .object || property.type == .any else { throw wrong("null") }
            return .null
        }
        if property.type == .object {
            guard let target = property.objectType, let targetSchema = schema[target] else {
                throw DataImportError(.unknownType, "the link's target type is not in the schema", path: path)
            }
            if targetSchema.isEmbedded { return try embedded(node, targetSchema, path: path, links: &links) }
            guard let targetKey = targetSchema.primaryKeyProperty else { throw wrong("a link to a type without primary key") }
            // A link is its target's `_id`; a DBRef ({"$ref", "$id"}) is read for its `$id`.
            let keyNode = node["$id"] ?? node
            let key = try value(keyNode, for: Property(name: targetKey.name, type: targetKey.type), element: false, path: path, links: &links)
            let link = ObjectLink(objectType: target, primaryKey: key)
            links.append(link)
            return .link(link)
        }
        let scalar: Value
        switch node {
        case .null: return .null
        case .bool(let b): scalar = .bool(b)
        case .string(let s): scalar = .string(s)
        case .number(let text, let isInteger):
            guard let number = ExtendedJSON.number(text, isInteger: isInteger) else { throw wrong("the number \(text.prefix(40))") }
            scalar = number
        case .array: throw wrong("an array")
        case .object:
            guard let wrapped = try ExtendedJSON.scalar(node, path: path) else {
                if property.type == .any { throw wrong("a document (a mixed value holds scalars here)") }
                throw wrong("a document")
            }
            scalar = wrapped
        }
        return try convert(scalar, to: property, wrong: wrong)
    }

    /// A scalar of the file converted to the property's type where nothing is lost.
    func convert(_ scalar: Value, to property: Property, wrong: (String) -> DataImportError) throws(DataImportError) -> Value {
        switch (property.type, scalar) {
        case (.any, _): return scalar
        case (.int, .int): return scalar
        case (.int, .double(let d)):
            guard d.rounded() == d, let i = Int64(exactly: d) else { throw wrong("the fraction \(d)") }
            return .int(i)
        case (.double, .double): return scalar
        case (.double, .int(let i)): return .double(Double(i))
        case (.double, .decimal(let d)): return .double(d.doubleValue)
        case (.float, .double(let d)): return .float(Float(d))
        case (.float, .int(let i)): return .float(Float(i))
        case (.decimal128, .decimal): return scalar
        case (.decimal128, .int(let i)): return .decimal(Decimal128(Int(i)))
        case (.decimal128, .double(let d)): return .decimal(Decimal128(d))
        case (.bool, .bool), (.string, .string), (.date, .date), (.objectId, .objectId), (.UUID, .uuid), (.data, .data): return scalar
        case (.UUID, .string(let s)):
            guard let u = UUID(uuidString: s) else { throw wrong("a string that is not a UUID") }
            return .uuid(u)
        default: throw wrong("a \(scalar.kindName)")
        }
    }

    /// An embedded document, as one `.object` value (how clients write them too).
    private func embedded(_ node: JSONNode, _ target: ObjectSchema, path: String, links: inout [ObjectLink]) throws(DataImportError) -> Value {
        guard case .object(let members) = node, try ExtendedJSON.scalar(node, path: path) == nil else {
            throw DataImportError(.wrongType, "embedded \(target.name) needs a document", path: path)
        }
        var fields: [String: Value] = [:]
        for (name, child) in members {
            guard let property = target[property: name] else { continue }
            let childPath = "\(path).\(name)"
            switch property.collection {
            case .single: fields[name] = try value(child, for: property, element: false, path: childPath, links: &links)
            case .list, .set:
                guard case .array(let elements) = child else { throw DataImportError(.wrongType, "needs an array", path: childPath) }
                var values: [Value] = []
                for (i, e) in elements.enumerated() { values.append(try value(e, for: property, element: true, path: "\(childPath)[\(i)]", links: &links)) }
                fields[name] = property.collection == .list ? .list(values) : .set(values)
            case .map:
                guard case .object(let entries) = child else { throw DataImportError(.wrongType, "needs a document", path: childPath) }
                var values: [String: Value] = [:]
                for (k, e) in entries { values[k] = try value(e, for: property, element: true, path: "\(childPath).\(k)", links: &links) }
                fields[name] = .map(values)
            }
        }
        return .object(fields)
    }

    /// The realm a document of a partition-based app belongs to: its partition key member's value.
    package static func partition(of document: JSONNode, key: String) throws(DataImportError) -> PartitionValue {
        guard let node = document[key] else { return .null }
        switch node {
        case .null: return .null
        case .string(let s): return .string(s)
        case .number(let text, true): if let i = Int64(text) { return .int(i) }
        case .object:
            switch try ExtendedJSON.scalar(node, path: key) {
            case .int(let i)?: return .int(i)
            case .objectId(let o)?: return .objectId(o)
            case .uuid(let u)?: return .uuid(u)
            default: break
            }
        default: break
        }
        throw DataImportError(.badPartition, "a partition value is a string, an integer, an ObjectId, a UUID or null", path: key)
    }
}
