import AtollCore
import Foundation

/// Passed to a configuration's `migrationBlock` when `schemaVersion` grows: read objects as they
/// were, write them as they are now, rename properties.
///
/// ```swift
/// config.migrationBlock = { migration, oldVersion in
///     migration.enumerateObjects(ofType: "Person") { old, new in
///         new!["fullName"] = "\(old!["firstName"] as! String) \(old!["lastName"] as! String)"
///     }
/// }
/// ```
public final class Migration: @unchecked Sendable {
    let store: MigrationStore
    /// The schema before and after the migration.
    ///
    /// ```swift
    /// if migration.oldSchema["Person"]?[property: "age"]?.type == .int { … }
    /// ```
    public var oldSchema: Schema { (try? Schema(oldTypes)) ?? .empty }
    public var newSchema: Schema { (try? Schema(newTypes)) ?? .empty }
    private let oldTypes: [AtollCore.ObjectSchema]
    private let newTypes: [AtollCore.ObjectSchema]
    private let changes: [SchemaInstaller.Change]
    private var oldRows: [String: [(row: Int64, values: [String: Any])]] = [:]
    private var deleted: Set<String> = []
    private var failure: (any Error)?

    /// The declared classes by type name, for the Swift names of renamed properties.
    private let classes: [String: ClassInfo]

    init(connection: Connection, stored: [AtollCore.ObjectSchema], declared: [AtollCore.ObjectSchema],
         classes: [ClassInfo] = [], changes: [SchemaInstaller.Change]) throws {
        store = MigrationStore(connection: connection)
        oldTypes = stored
        newTypes = declared
        self.classes = Dictionary(classes.map { ($0.schema.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.changes = changes
        for schema in stored {
            let columns = schema.properties.filter(\.isSingle)
            oldRows[schema.name] = try store.rows(schema).map { row, stored in
                var values: [String: Any] = [:]
                for (offset, property) in columns.enumerated() {
                    values[property.name] = Value(sql: stored[offset], type: property.type).map(MigrationObject.swiftValue) ?? NSNull()
                }
                return (row, values)
            }
        }
    }

    func prepare() {}

    func finish() throws {
        if let failure { throw failure }
    }

    private func record(_ body: () throws -> Void) {
        do { try body() } catch { if failure == nil { failure = error } }
    }

    /// Calls `block` for every object of `typeName` with its old and new form. `new` is `nil` when the
    /// type no longer exists; `old` is `nil` for a type added by this migration.
    public func enumerateObjects(ofType typeName: String, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void) {
        let newType = newTypes.first { $0.name == typeName }
        for (row, values) in oldRows[typeName] ?? [] where !deleted.contains("\(typeName)#\(row)") {
            let old = MigrationObject(migration: self, type: typeName, row: row, oldValues: values)
            let new = newType.map { MigrationObject(migration: self, type: $0.name, row: row, oldValues: nil) }
            block(old, new)
        }
    }

    /// Creates an object of `typeName` in the new schema.
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        var row: Int64 = 0
        record {
            guard let schema = newTypes.first(where: { $0.name == typeName }) else {
                throw Realm.Error(.invalidValue, "Cannot create an object of '\(typeName)': the type is not in the new schema")
            }
            row = try store.insertRow(schema)
        }
        let object = MigrationObject(migration: self, type: typeName, row: row, oldValues: nil)
        if let dictionary = value as? [String: Any] {
            for (key, element) in dictionary { object[key] = element }
        }
        return object
    }

    /// Deletes an object (given as its old or new form).
    public func delete(_ object: MigrationObject) {
        deleted.insert("\(object.type)#\(object.row)")
        record {
            try detach(object.type, rows: [object.row])
            try store.deleteRow(object.type, object.row)
        }
    }

    /// Removes the collections `rows` own and every link to them (embedded children are not
    /// followed yet).
    private func detach(_ type: String, rows: [Int64]) throws {
        guard let schema = newTypes.first(where: { $0.name == type }) else { return }
        for row in rows {
            for property in schema.properties where !property.isSingle {
                try store.clear(type, property, owner: row)
            }
        }
        for owner in newTypes {
            for property in owner.properties where property.objectType == type {
                for row in rows { try store.removeLinks(owner.name, property, to: row) }
            }
        }
    }

    /// Deletes every object of a type; returns whether the type existed.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        guard oldTypes.contains(where: { $0.name == typeName }) else { return false }
        for (row, _) in oldRows[typeName] ?? [] { deleted.insert("\(typeName)#\(row)") }
        record {
            try detach(typeName, rows: (oldRows[typeName] ?? []).map(\.row))
            try store.deleteAll(typeName)
        }
        return true
    }

    /// Moves a property's data to its new name. The old name must be gone from the new schema and
    /// the new name must be new in it, with the same type.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        record {
            guard let old = oldTypes.first(where: { $0.name == typeName })?[property: oldName] else {
                throw Realm.Error(.schemaMismatch, "Cannot rename property '\(typeName).\(oldName)' because it does not exist.")
            }
            guard let new = newTypes.first(where: { $0.name == typeName })?[property: newName] else {
                throw Realm.Error(.schemaMismatch, "Renamed property '\(typeName).\(newName)' is not in the new schema.")
            }
            guard old.type == new.type, old.collection == new.collection else {
                throw Realm.Error(.schemaMismatch, "Cannot rename property '\(typeName).\(oldName)' to '\(newName)': their types differ (\(old.typeDescription) vs \(new.typeDescription)).")
            }
            try store.copy(typeName, from: old, to: new)
            for (index, entry) in (oldRows[typeName] ?? []).enumerated() {
                oldRows[typeName]![index].values[newName] = entry.values[oldName]
            }
        }
    }

    /// The stored name of the new schema's property that the app calls `key` (its Swift name,
    /// when the class renames it with `propertiesMapping()`).
    private func storedName(_ type: String, _ key: String) -> String {
        classes[type]?.property(named: key)?.name ?? key
    }

    fileprivate func read(_ type: String, _ row: Int64, _ key: String) -> Any? {
        let key = storedName(type, key)
        guard let property = newTypes.first(where: { $0.name == type })?[property: key], property.isSingle else { return nil }
        var result: Any?
        record {
            let value = try store.field(type, row, key)
            result = Value(sql: value, type: property.type).map(MigrationObject.swiftValue)
        }
        return result
    }

    fileprivate func write(_ type: String, _ row: Int64, _ key: String, _ value: Any?) {
        let key = storedName(type, key)
        record {
            guard let property = newTypes.first(where: { $0.name == type })?[property: key] else {
                throw Realm.Error(.invalidValue, "'\(type)' has no property '\(key)' in the new schema")
            }
            guard property.isSingle, property.type != .object else {
                throw Realm.Error(.invalidValue, "'\(type).\(key)': migrations can set scalar properties only")
            }
            let converted = try Self.convert(value, to: property, at: "\(type).\(key)")
            try store.setField(type, row, key, converted.sqlValue)
        }
    }
}

extension Migration {
    /// `value` as the stored kind of `property`, or an `.invalidValue` error naming `place`.
    static func convert(_ value: Any?, to property: Property, at place: String) throws -> Value {
        let given: Value? = if let value, !(value is NSNull) { Value(any: value) } else { .null }
        switch (given, property.type) {
        case (.null?, _) where property.isOptional:
            return .null
        case (.null?, _):
            throw Realm.Error(.invalidValue, "'\(place)' is not optional: it cannot be set to nil")
        case (.int(let i)?, .double): return .double(Double(i))
        case (.int(let i)?, .float): return .float(Float(i))
        case (.double(let d)?, .float): return .float(Float(d))
        case (.float(let f)?, .double): return .double(Double(f))
        case (let v?, _) where v.propertyType == property.type:
            return v
        default:
            let kind = given?.kindName ?? "\(type(of: value!))"
            throw Realm.Error(.invalidValue, "'\(place)' holds \(property.typeDescription) values; a \(kind) was given")
        }
    }
}

/// An object as a migration sees it: properties by name.
public final class MigrationObject {
    unowned let migration: Migration
    let type: String
    let row: Int64
    private let oldValues: [String: Any]?

    init(migration: Migration, type: String, row: Int64, oldValues: [String: Any]?) {
        self.migration = migration
        self.type = type
        self.row = row
        self.oldValues = oldValues
    }

    public subscript(key: String) -> Any? {
        get {
            if let oldValues {
                let value = oldValues[key]
                return value is NSNull ? nil : value
            }
            return migration.read(type, row, key)
        }
        set {
            precondition(oldValues == nil, "The old object of a migration is read-only")
            migration.write(type, row, key, newValue)
        }
    }

    static func swiftValue(_ value: Value) -> Any {
        switch value {
        case .null: NSNull()
        case .bool(let b): b
        case .int(let i): Int(i)
        case .double(let d): d
        case .float(let f): f
        case .string(let s): s
        case .data(let d): d
        case .date(let d): d
        case .objectId(let o): o
        case .uuid(let u): u
        case .decimal(let d): d
        default: value
        }
    }
}

/// The dynamic object type of migrations, under its Realm name.
public typealias DynamicObject = MigrationObject

/// The schema version stored in the realm file at `fileURL`, without opening it as a realm.
///
/// ```swift
/// if try schemaVersionAtURL(config.fileURL!) < 3 { … }
/// ```
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    let path = fileURL.standardizedFileURL.path
    guard FileManager.default.fileExists(atPath: path) else {
        throw Realm.Error(.fileNotFound, "Cannot read the schema version of \(path): the file does not exist")
    }
    let key = try EncryptionKey.make(encryptionKey)
    let version: Int64?
    do {
        version = try MigrationStore.schemaVersion(atPath: path, key: key)
    } catch let error as Realm.Error where error.code == .fileAccess {
        throw error  // a wrong key, or an encrypted file without one
    } catch {
        throw Realm.Error(.invalidDatabase, "\(path) is not a realm file: \(error)", underlying: error as? any Error & Sendable)
    }
    guard let version, version >= 0 else {
        throw Realm.Error(.invalidDatabase, "\(path) has no schema version")
    }
    return UInt64(version)
}
