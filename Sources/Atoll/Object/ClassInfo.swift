@_spi(Reflection) import Swift
import AtollCore
import Atomics
import Foundation

/// What the SDK knows about one `Object`/`EmbeddedObject` subclass: its schema, and where each
/// `@Persisted` field sits inside an instance.
///
/// Fields are found with the runtime's field reflection (name, offset and type of every stored
/// property, superclasses included), so no Objective-C runtime is needed.
final class ClassInfo: @unchecked Sendable {
    struct Field {
        let offset: Int
        let type: any PersistedField.Type
        /// Whether binding the field keeps its declared default as a sample (custom persistable
        /// types); asked once here, not per bind (a conformance check per field of every added
        /// object was a tenth of a bulk insert).
        let keepsSample: Bool

        init(offset: Int, type: any PersistedField.Type) {
            self.offset = offset
            self.type = type
            keepsSample = type.keepsSample
        }
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
    /// The schema as stored and synced: properties carry their persisted names (see
    /// `ObjectBase.propertiesMapping()`).
    let schema: AtollCore.ObjectSchema
    /// One per schema property, same order.
    let fields: [Field]
    let linkingFields: [LinkingField]
    /// The names the app uses (the Swift property names), one per schema property.
    let publicNames: [String]
    /// Property indices by the name the app uses.
    let propertyIndex: [String: Int]
    /// Property indices by persisted name.
    let persistedIndex: [String: Int]
    /// Whether the class is `Encodable`: its managed accessors then keep their fields bound to
    /// the object, so the synthesized `encode(to:)` can read them (see `Persisted.encode(to:)`).
    let isEncodable: Bool
    /// Whether an accessor's fields must be bound when it is made (`bind(_:)`): `Encodable` classes
    /// (their synthesized `encode(to:)` reads fields directly) and classes with fields that keep
    /// samples. Other accessors bind each field on its first access.
    let bindsEagerly: Bool
    /// Classes this one links to or embeds.
    let linkedClasses: [ObjectBase.Type]
    /// An instance with every field bound to its property index and no realm: managed accessors
    /// look their fields' indices up on it (see `Persisted.managedIndex`).
    let probe: ObjectBase
    var isEmbedded: Bool { schema.isEmbedded }
    var primaryKeyIndex: Int? { schema.properties.firstIndex(where: \.isPrimaryKey) }

    /// Per property index, what fires the property's Swift Observation (see `PropertyFirer`),
    /// recorded by the property's first read in the process. `recordedFirers` has bit `i` set once
    /// property `i` (below 64) has one, so a read checks without the lock.
    private let observationFirers = Locked<[Int: PropertyFirer]>([:])
    private let recordedFirers = ManagedAtomic<UInt64>(0)

    private static let cache = Locked<[ObjectIdentifier: ClassInfo]>([:])
    private static let byName = Locked<[String: ClassInfo]>([:])

    /// The (cached) description of `type`.
    static func of(_ type: ObjectBase.Type) -> ClassInfo {
        if let info = cache.withLock({ $0[ObjectIdentifier(type)] }) { return info }
        let info = ClassInfo(discovering: type)
        cache.withLock { $0[ObjectIdentifier(type)] = info }
        byName.withLock { $0[info.schema.name] = info }
        return info
    }

    /// The primary key an `Object` subclass names by overriding `primaryKey()`, or nil when it does
    /// not override it (the base implementation answers nil while this asks).
    private static func overriddenPrimaryKey(of type: ObjectBase.Type) -> String? {
        guard let objectType = type as? Object.Type else { return nil }
        let flag = Thread.current.threadDictionary
        let previous = flag[askingForOverride]
        flag[askingForOverride] = true
        defer { flag[askingForOverride] = previous }
        return objectType.primaryKey()
    }

    static let askingForOverride = "atoll.ClassInfo.askingForPrimaryKeyOverride"

    /// Whether `Object.primaryKey()` is being asked by schema discovery (its base answer is nil then).
    static var isAskingForOverride: Bool { Thread.current.threadDictionary[askingForOverride] != nil }

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
        let mapping = type.propertiesMapping()
        // Realm's older way to name the primary key: `override class func primaryKey() -> String?`.
        let declaredKey = Self.overriddenPrimaryKey(of: type)
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
                    name: mapping[name] ?? name, type: shape.type, collection: shape.collection,
                    isOptional: shape.isOptional || (shape.type == .object && shape.collection == .single),
                    objectType: shape.objectClass?.className(),
                    isPrimaryKey: options.primaryKey || name == declaredKey,
                    isIndexed: options.indexed || options.primaryKey || name == declaredKey))
            }
        }
        self.schema = AtollCore.ObjectSchema(
            name: type.className(), properties: properties, isEmbedded: type is EmbeddedObject.Type,
            isAsymmetric: type is AsymmetricObject.Type)
        self.fields = found.map(\.field)
        self.linkingFields = linkingFields
        self.publicNames = found.map(\.name)
        self.propertyIndex = Dictionary(found.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        // Two properties mapped to one name make the schema invalid (reported when a realm opens).
        self.persistedIndex = Dictionary(properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        let isEncodable = (type as Any.Type) is any Encodable.Type
        self.isEncodable = isEncodable
        self.linkedClasses = linked
        self.bindsEagerly = isEncodable || found.contains(where: \.field.keepsSample) || linkingFields.contains(where: \.field.keepsSample)
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

    /// Points every field of `object` at the realm's storage. Fields of an `Encodable` class also
    /// record the object, for `Persisted.encode(to:)`.
    func bind(_ object: ObjectBase) {
        withExtendedLifetime(object) {
            let base = Unmanaged.passUnretained(object).toOpaque()
            for (index, field) in fields.enumerated() {
                if field.keepsSample { field.type.keepSample(base + field.offset) }
                if isEncodable {
                    field.type.bind(at: base + field.offset, index: index, owner: object)
                } else {
                    field.type.bind(at: base + field.offset, index: index)
                }
            }
            for (position, linking) in linkingFields.enumerated() {
                if linking.field.keepsSample { linking.field.type.keepSample(linking.field.offset + base) }
                linking.field.type.bind(at: base + linking.field.offset, index: fields.count + position)
            }
        }
    }

    /// The unmanaged contents of `object`, one per property.
    func contents(of object: ObjectBase) -> [_FieldContent] {
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

    // MARK: Observation

    /// Whether property `index` has its `PropertyFirer`.
    func hasFirer(_ index: Int) -> Bool {
        if index < 64 { return recordedFirers.load(ordering: .acquiring) & (1 << UInt64(index)) != 0 }
        return observationFirers.withLock { $0[index] != nil }
    }

    /// Records the `PropertyFirer` of property `index` unless one is recorded already.
    func recordFirer(_ index: Int, _ make: () -> PropertyFirer) {
        observationFirers.withLock { firers in
            if firers[index] == nil { firers[index] = make() }
        }
        if index < 64 { recordedFirers.bitwiseOr(1 << UInt64(index), ordering: .releasing) }
    }

    /// The recorded firers of the properties in `indices` (all of them for `nil`).
    func firers(for indices: Set<Int>?) -> [PropertyFirer] {
        observationFirers.withLock { firers in
            guard let indices else { return Array(firers.values) }
            return indices.compactMap { firers[$0] }
        }
    }

    // MARK: Names

    /// The property an app names `name`: by its Swift name, else by its persisted name.
    func property(named name: String) -> Property? {
        guard let index = propertyIndex[name] ?? persistedIndex[name] else { return nil }
        return schema.properties[index]
    }

    /// The persisted property a query or key path of `objectType` names `name`, if the type's
    /// class is known in this process.
    static func storedProperty(_ objectType: String, _ name: String) -> Property? {
        named(objectType)?.property(named: name)
    }

    /// `stored` (a schema of this class's type, as the file or the class has it) with the names
    /// the app uses, as `objectSchema` shows it.
    func publicSchema(_ stored: AtollCore.ObjectSchema) -> AtollCore.ObjectSchema {
        var result = stored
        for position in result.properties.indices {
            let stored = result.properties[position].name
            if let index = persistedIndex[stored], publicNames[index] != stored {
                result.properties[position].name = publicNames[index]
                result.properties[position].mappedColumnName = stored
            }
        }
        return result
    }

    /// `keyPath` (dot-separated names the app uses, from this type) with persisted names.
    func persistedKeyPath(_ keyPath: String) -> String {
        QueryKeyPath(keyPath).resolvingNames(from: schema.name, ClassInfo.resolver(ClassInfo.closure(of: [type]))).description
    }

    /// Resolves names on the classes of `infos` (a type and those it links to), whatever other
    /// classes of the process share their names.
    static func resolver(_ infos: [ClassInfo]) -> QueryNameResolver {
        let byName = Dictionary(infos.map { ($0.schema.name, $0) }, uniquingKeysWith: { first, _ in first })
        return { type, name in byName[type]?.property(named: name) }
    }

    // MARK: Key-value coding

    /// The index of the property the app names `key`; traps with Realm's message otherwise.
    func index(forKey key: String) -> Int {
        guard let index = propertyIndex[key] else {
            preconditionFailure("Invalid property name '\(key)' for class '\(schema.name)'.")
        }
        return index
    }

    /// The value of property `index`, as key-value coding gives it: `nil` for nil, an enum's raw
    /// value, the live collection for a list, set or map.
    func value(at index: Int, of object: ObjectBase) -> Any? {
        let value = withField(index, of: object) { pointer, type in type.get(at: pointer, index: index, object: object) }
        if case Optional<Any>.none = value { return nil }
        if let persistableEnum = value as? any PersistableEnum { return persistableEnum.rawValue }
        return value
    }

    func value(forKey key: String, of object: ObjectBase) -> Any? {
        value(at: index(forKey: key), of: object)
    }

    /// Sets the property the app names `key`. Throws `.invalidValue` for an unknown name or a value
    /// of the wrong type.
    func setValue(_ value: Any, forKey key: String, of object: ObjectBase) throws {
        guard let index = propertyIndex[key] else {
            throw Realm.Error(.invalidValue, "Invalid property name '\(key)' for class '\(schema.name)'.")
        }
        do {
            try withField(index, of: object) { pointer, type in try type.assign(value, at: pointer, index: index, object: object) }
        } catch let error as Realm.Error where error.code == .invalidValue {
            let property = schema.properties[index]
            let given = value is NSNull ? "nil" : "'\(value)' of type '\(Swift.type(of: value))'"
            throw Realm.Error(.invalidValue, "Invalid value \(given) for '\(property.typeDescription)' property '\(schema.name).\(key)'.",
                              underlying: error)
        }
    }

    /// Fills `object` from a dictionary, an array in property order, or another object.
    func assign(_ value: Any, to object: ObjectBase) throws {
        switch value {
        case let dictionary as [String: Any]:
            // As in Realm, keys that name no property are ignored (JSON often carries more).
            for (key, element) in dictionary where propertyIndex[key] != nil { try setValue(element, forKey: key, of: object) }
        case let array as [Any]:
            guard array.count <= fields.count else {
                throw Realm.Error(.invalidValue, "\(array.count) values given for '\(schema.name)', which has \(fields.count) properties")
            }
            for (index, element) in array.enumerated() {
                try setValue(element, forKey: publicNames[index], of: object)
            }
        case let other as ObjectBase:
            let source = ClassInfo.of(Swift.type(of: other))
            for name in publicNames {
                guard let index = source.propertyIndex[name], let element = source.value(at: index, of: other) else { continue }
                try setValue(element, forKey: name, of: object)
            }
        default:
            throw Realm.Error(.invalidValue, "cannot initialize '\(schema.name)' from a \(Swift.type(of: value)); pass a dictionary, an array or an object")
        }
    }
}
