import Foundation

/// Breaking schema changes: what the server does to a realm's data when an operator removes a
/// property or changes its type. Clients cannot merge such a change (docs/merge.md), so the server
/// rewrites its state with these functions and starts the history over (a client reset).
extension ReplicaState {
    /// The state without property `name` of `type`: gone from the schema and from every object of the
    /// type, embedded ones included.
    ///
    /// ```swift
    /// let rewritten = try state.removingProperty(type: "Task", name: "priority")
    /// ```
    /// - Throws: `SchemaError` `.unknownType` or `.unknownProperty` when the state has no such type or
    ///   property, `.invalidPrimaryKey` for the primary key (objects cannot lose their identity).
    package func removingProperty(type: String, name: String) throws -> ReplicaState {
        let old = try changeableProperty(type: type, name: name)
        var result = self
        result.schema[type]!.properties.removeAll { $0.name == old.name }
        result.objects = rewritingField(of: type, name) { _ in nil }
        return result
    }

    /// The state with property `name` of `type` retyped to `newType` (and optional or not as
    /// `isOptional` says; unchanged when nil). Values convert where the conversion keeps their meaning
    /// (`Int` ⇄ `Double`, a number or `Bool` to `String`, a `String` that spells a number); every other
    /// value is dropped, so the object holds the new type's default. Collections keep their kind and
    /// convert element by element, dropping elements that do not convert.
    ///
    /// ```swift
    /// let rewritten = try state.changingPropertyType(type: "Task", name: "priority", to: .string)
    /// ```
    /// - Throws: `SchemaError` `.unknownType`, `.unknownProperty`, `.invalidPrimaryKey`, or
    ///   `.unsupportedType` when the old or the new type is a link or embedded object (`.object`).
    package func changingPropertyType(type: String, name: String, to newType: PropertyType,
                                     isOptional: Bool? = nil) throws -> ReplicaState {
        let old = try changeableProperty(type: type, name: name)
        guard old.type != .object, newType != .object else {
            throw SchemaError(.unsupportedType, "\(type).\(name): links and embedded objects cannot change type", objectType: type, property: name)
        }
        var new = old
        new.type = newType
        new.isOptional = isOptional ?? old.isOptional
        new.isIndexed = old.isIndexed && newType.canBeIndexed
        var result = self
        let index = result.schema[type]!.properties.firstIndex { $0.name == name }!
        result.schema[type]!.properties[index] = new
        result.objects = rewritingField(of: type, name) { $0.converted(to: new) }
        return result
    }

    /// The property a breaking change may touch.
    private func changeableProperty(type: String, name: String) throws -> Property {
        guard let objectSchema = schema[type] else {
            throw SchemaError(.unknownType, "there is no object type \(type)", objectType: type)
        }
        guard let property = objectSchema[property: name] else {
            throw SchemaError(.unknownProperty, "\(type) has no property \(name)", objectType: type, property: name)
        }
        guard !property.isPrimaryKey else {
            throw SchemaError(.invalidPrimaryKey, "\(type).\(name) is the primary key; it cannot be removed or retyped",
                              objectType: type, property: name)
        }
        return property
    }

    /// Every object with field `name` of each (top-level or embedded) object of `type` replaced by
    /// `transform` of its value (removed when it gives nil). Navigates with `self`'s schema.
    private func rewritingField(of type: String, _ name: String,
                                _ transform: (Value) -> Value?) -> [String: [Value: [String: Value]]] {
        var result = objects
        for (objectType, byKey) in objects {
            for (key, fields) in byKey {
                let rewritten = rewrite(.object(fields), .embedded(objectType), type, name, transform)
                if case .object(let changed) = rewritten { result[objectType]![key] = changed }
            }
        }
        return result
    }

    private func rewrite(_ value: Value, _ kind: SlotKind, _ type: String, _ name: String,
                         _ transform: (Value) -> Value?) -> Value {
        if let embedded = embeddedType(kind), case .object(let fields) = value {
            var out: [String: Value] = [:]
            for (field, child) in fields {
                guard let p = property(embedded, field) else { continue }
                let inner = rewrite(child, .field(p), type, name, transform)
                out[field] = embedded == type && field == name ? transform(inner) : inner
            }
            return .object(out)
        }
        guard case .field(let p) = kind, p.collection != .single else { return value }
        switch value {
        case .list(let items): return .list(items.map { rewrite($0, .element(p), type, name, transform) })
        case .set(let items): return .set(items.map { rewrite($0, .element(p), type, name, transform) })
        case .map(let entries): return .map(entries.mapValues { rewrite($0, .element(p), type, name, transform) })
        default: return value
        }
    }
}

extension Value {
    /// This value as a field of property `p` holds it after a type change, or nil when it does not
    /// convert (the field then holds the default). Collections convert element by element.
    package func converted(to p: Property) -> Value? {
        switch (p.collection, self) {
        case (.list, .list(let items)):
            return .list(items.compactMap { $0.convertedScalar(to: p.type, optional: p.isOptional) })
        case (.set, .set(let items)):
            var seen: [Value] = []
            for item in items.compactMap({ $0.convertedScalar(to: p.type, optional: p.isOptional) }) where !seen.contains(item) {
                seen.append(item)
            }
            return .set(seen)
        case (.map, .map(let entries)):
            return .map(entries.compactMapValues { $0.convertedScalar(to: p.type, optional: p.isOptional) })
        case (.single, _):
            return convertedScalar(to: p.type, optional: p.isOptional)
        default:
            return nil
        }
    }

    private func convertedScalar(to type: PropertyType, optional: Bool) -> Value? {
        if case .null = self { return optional ? .null : nil }
        if propertyType == type || type == .any { return self }
        switch (self, type) {
        case (.int(let i), .double): return .double(Double(i))
        case (.int(let i), .float): return .float(Float(i))
        case (.int(let i), .decimal128): return .decimal(Decimal128(Int(i)))
        case (.int(let i), .string): return .string(String(i))
        case (.int(let i), .bool): return .bool(i != 0)
        case (.bool(let b), .int): return .int(b ? 1 : 0)
        case (.bool(let b), .string): return .string(b ? "true" : "false")
        case (.double(let d), .int): return Self.integral(d)
        case (.double(let d), .float): return .float(Float(d))
        case (.double(let d), .string): return .string(String(d))
        case (.float(let f), .int): return Self.integral(Double(f))
        case (.float(let f), .double): return .double(Double(f))
        case (.float(let f), .string): return .string(String(f))
        case (.string(let s), .int): return Int64(s).map(Value.int)
        case (.string(let s), .double): return Double(s).map(Value.double)
        case (.string(let s), .float): return Float(s).map(Value.float)
        case (.string(let s), .bool): return s == "true" ? .bool(true) : s == "false" ? .bool(false) : nil
        case (.string(let s), .UUID): return UUID(uuidString: s).map(Value.uuid)
        case (.uuid(let u), .string): return .string(u.uuidString)
        default: return nil
        }
    }

    private static func integral(_ d: Double) -> Value? {
        guard d.rounded() == d, d >= -9.2e18, d <= 9.2e18 else { return nil }
        return .int(Int64(d))
    }
}
