@_spi(Reflection) import Swift
import AtollCore
import Foundation
import Synchronization

/// What the SDK knows about one `Object`/`EmbeddedObject` subclass: its schema, and where each
/// `@Persisted` field sits inside an instance.
///
/// Fields are found with the runtime's field reflection (name, offset and type of every stored
/// property, superclasses included), so no Objective-C runtime is needed.
final class ClassInfo: @unchecked Sendable {
    struct Field {
        let offset: Int
        let type: any PersistedField.Type
    }

    /// A `LinkingObjects` property: computed from the origin's links, not stored. Managed
    /// accessors see it at index `fields.count + its position`.
    struct LinkingField {
        let name: String
        let field: Field
        let originClass: ObjectBase.Type
        let originProperty: String
    }

    let type: ObjectBase.Type
    let schema: AtollCore.ObjectSchema
    /// One per schema property, same order.
    let fields: [Field]
    let linkingFields: [LinkingField]
    let propertyIndex: [String: Int]
    /// Classes this one links to or embeds.
    let linkedClasses: [ObjectBase.Type]
    /// An instance with every field bound to its property index and no realm: managed accessors
    /// look their fields' indices up on it (see `Persisted.managedIndex`).
    let probe: ObjectBase
    var isEmbedded: Bool { schema.isEmbedded }
    var primaryKeyIndex: Int? { schema.properties.firstIndex(where: \.isPrimaryKey) }

    private static let cache = Mutex<[ObjectIdentifier: ClassInfo]>([:])
    private static let byName = Mutex<[String: ClassInfo]>([:])

    /// The (cached) description of `type`.
    static func of(_ type: ObjectBase.Type) -> ClassInfo {
        if let info = cache.withLock({ $0[ObjectIdentifier(type)] }) { return info }
        let info = ClassInfo(discovering: type)
        cache.withLock { $0[ObjectIdentifier(type)] = info }
        byName.withLock { $0[info.schema.name] = info }
        return info
    }

    /// A class already seen under this schema name.
    static func named(_ name: String) -> ClassInfo? { byName.withLock { $0[name] } }

    /// Every class seen so far in this process.
    static var all: [ClassInfo] { byName.withLock { Array($0.values) }.sorted { $0.schema.name < $1.schema.name } }

    /// `types` and every class they link to, transitively, in a stable order.
    static func closure(of types: [ObjectBase.Type]) -> [ClassInfo] {
        var seen: Set<ObjectIdentifier> = []
        var result: [ClassInfo] = []
        var queue = types
        while let next = queue.popLast() {
            guard seen.insert(ObjectIdentifier(next)).inserted else { continue }
            let info = of(next)
            result.append(info)
            queue.append(contentsOf: info.linkedClasses)
        }
        return result.sorted { $0.schema.name < $1.schema.name }
    }

    private init(discovering type: ObjectBase.Type) {
        self.type = type
        var found: [(name: String, field: Field)] = []
        var linking: [(name: String, field: Field, origin: any LinkingObjectsField.Type)] = []
        _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 /* classType */)) { name, offset, fieldType, _ in
            let name = String(cString: name)
            if name.hasPrefix("_"), let persisted = fieldType as? any PersistedField.Type {
                if let origin = fieldType as? any LinkingObjectsField.Type {
                    linking.append((String(name.dropFirst()), Field(offset: offset, type: persisted), origin))
                } else {
                    found.append((String(name.dropFirst()), Field(offset: offset, type: persisted)))
                }
            }
            return true
        }
        let prototype = type.init()
        var properties: [Property] = []
        var linked: [ObjectBase.Type] = []
        var linkingFields: [LinkingField] = []
        withExtendedLifetime(prototype) {
            let base = UnsafeRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
            for (name, field, origin) in linking {
                let property = origin.originProperty(at: base + field.offset)
                precondition(!property.isEmpty, "'\(type.className()).\(name)': declare LinkingObjects as @Persisted(originProperty: \"…\")")
                linkingFields.append(LinkingField(name: name, field: field, originClass: origin.originClass, originProperty: property))
                linked.append(origin.originClass)
            }
        }
        withExtendedLifetime(prototype) {
            let base = UnsafeRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
            for (name, field) in found {
                let shape = field.type.shape
                let options = field.type.options(at: base + field.offset)
                if let target = shape.objectClass { linked.append(target) }
                properties.append(Property(
                    name: name, type: shape.type, collection: shape.collection,
                    isOptional: shape.isOptional || (shape.type == .object && shape.collection == .single),
                    objectType: shape.objectClass?.className(),
                    isPrimaryKey: options.primaryKey, isIndexed: options.indexed || options.primaryKey))
            }
        }
        self.schema = AtollCore.ObjectSchema(
            name: type.className(), properties: properties, isEmbedded: type is EmbeddedObject.Type)
        self.fields = found.map(\.field)
        self.linkingFields = linkingFields
        self.propertyIndex = Dictionary(uniqueKeysWithValues: properties.enumerated().map { ($1.name, $0) })
        self.linkedClasses = linked
        self.probe = prototype
        bind(prototype)
    }

    // MARK: Field access

    func withField<R>(_ index: Int, of object: ObjectBase, _ body: (UnsafeMutableRawPointer, any PersistedField.Type) throws -> R) rethrows -> R {
        try withExtendedLifetime(object) {
            let base = Unmanaged.passUnretained(object).toOpaque()
            return try body(base + fields[index].offset, fields[index].type)
        }
    }

    /// Points every field of `object` at the realm's storage.
    func bind(_ object: ObjectBase) {
        withExtendedLifetime(object) {
            let base = Unmanaged.passUnretained(object).toOpaque()
            for (index, field) in fields.enumerated() {
                field.type.bind(at: base + field.offset, index: index)
            }
            for (position, linking) in linkingFields.enumerated() {
                linking.field.type.bind(at: base + linking.field.offset, index: fields.count + position)
            }
        }
    }

    /// The unmanaged contents of `object`, one per property.
    func contents(of object: ObjectBase) -> [FieldContent] {
        withExtendedLifetime(object) {
            let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
            return fields.map { field in
                guard let content = field.type.content(at: base + field.offset) else {
                    preconditionFailure("contents(of:) is for unmanaged objects")
                }
                return content
            }
        }
    }

    func value(forKey key: String, of object: ObjectBase) -> Any? {
        guard let index = propertyIndex[key] else {
            preconditionFailure("'\(schema.name)' has no property '\(key)'")
        }
        let value = withField(index, of: object) { pointer, type in type.get(at: pointer, index: index, object: object) }
        if case Optional<Any>.none = value { return nil }
        return value
    }

    func setValue(_ value: Any, forKey key: String, of object: ObjectBase) throws {
        guard let index = propertyIndex[key] else {
            throw Realm.Error(.invalidValue, "'\(schema.name)' has no property '\(key)'")
        }
        try withField(index, of: object) { pointer, type in try type.assign(value, at: pointer, index: index, object: object) }
    }

    /// Fills `object` from a dictionary, an array in property order, or another object.
    func assign(_ value: Any, to object: ObjectBase) throws {
        switch value {
        case let dictionary as [String: Any]:
            for (key, element) in dictionary { try setValue(element, forKey: key, of: object) }
        case let array as [Any]:
            guard array.count <= fields.count else {
                throw Realm.Error(.invalidValue, "\(array.count) values given for '\(schema.name)', which has \(fields.count) properties")
            }
            for (index, element) in array.enumerated() {
                try setValue(element, forKey: schema.properties[index].name, of: object)
            }
        case let other as ObjectBase:
            for property in schema.properties {
                if let element = ClassInfo.of(Swift.type(of: other)).propertyIndex[property.name] != nil
                    ? other.value(forKey: property.name) : nil {
                    try setValue(element, forKey: property.name, of: object)
                }
            }
        default:
            throw Realm.Error(.invalidValue, "cannot initialize '\(schema.name)' from a \(Swift.type(of: value)); pass a dictionary, an array or an object")
        }
    }
}
