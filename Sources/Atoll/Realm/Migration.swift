import AtollCore
import AtollRealmFile
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
    let oldTypes: [AtollCore.ObjectSchema]
    private let newTypes: [AtollCore.ObjectSchema]
    /// Every old object's single-valued columns, by type and row, read before the file changes.
    private var oldRows: [String: [Int64: [SQLValue]]] = [:]
    private var oldOrder: [String: [Int64]] = [:]
    /// Every old collection's entries: type, property, owner row.
    private var oldCollections: [String: [String: [Int64: [(key: String?, value: SQLValue)]]]] = [:]
    private var deleted: Set<String> = []
    private var failure: (any Error)?

    /// The declared classes by type name, for the Swift names of properties.
    private let classes: [String: ClassInfo]
    private let coordinator: RealmCoordinator
    private let configuration: Realm.Configuration
    /// The realm the new objects live in: the file as the new schema has it, inside the
    /// opening's transaction (see `prepare()`).
    private var realm: Realm?

    init(connection: Connection, coordinator: RealmCoordinator, configuration: Realm.Configuration,
         stored: [AtollCore.ObjectSchema], declared: [AtollCore.ObjectSchema], classes: [ClassInfo] = []) throws {
        store = MigrationStore(connection: connection)
        self.coordinator = coordinator
        self.configuration = configuration
        oldTypes = stored
        newTypes = declared
        self.classes = Dictionary(classes.map { ($0.schema.name, $0) }, uniquingKeysWith: { first, _ in first })
        for schema in stored {
            let rows = try store.rows(schema)
            oldOrder[schema.name] = rows.map(\.row)
            oldRows[schema.name] = Dictionary(rows.map { ($0.row, $0.values) }, uniquingKeysWith: { first, _ in first })
            for property in schema.properties where !property.isSingle {
                oldCollections[schema.name, default: [:]][property.name] = try store.collectionEntries(schema.name, property)
            }
        }
    }

    /// Opens the realm of the new schema on the file, once its tables have the new columns.
    func prepare() {
        for schema in newTypes {
            coordinator.install(TableInfo(schema: schema, classInfo: classes[schema.name]))
        }
        realm = Realm(migrating: store.connection, coordinator: coordinator, configuration: configuration)
    }

    /// Throws the first error the block met; the realm of the new schema is closed.
    func finish() throws {
        let error = realm?.transaction?.error
        realm?.transaction = nil
        realm = nil
        if let failure { throw failure }
        if let error { throw error }
    }

    private func record(_ body: () throws -> Void) {
        do { try body() } catch { if failure == nil { failure = error } }
    }

    private func newTable(_ type: String) -> TableInfo? {
        guard newTypes.contains(where: { $0.name == type }) else { return nil }
        return coordinator.table(named: type)
    }

    /// The new object of a row of `type`.
    private func newObject(_ table: TableInfo, _ row: Int64) -> MigrationObject {
        guard let realm else { preconditionFailure("The migration has ended") }
        return DynamicObject(state: _ManagedObjectState(realm: realm, table: table, row: row))
    }

    /// Calls `block` for every object of `typeName` with its old and new form. `new` is `nil` when the
    /// type no longer exists; `old` is `nil` for a type added by this migration.
    ///
    /// ```swift
    /// migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
    ///     newObject!["age"] = String(oldObject!["age"] as! Int)
    /// }
    /// ```
    public func enumerateObjects(ofType typeName: String, _ block: MigrationObjectEnumerateBlock) {
        let table = newTable(typeName)
        for row in oldOrder[typeName] ?? [] where !deleted.contains("\(typeName)#\(row)") {
            let old = oldObject(typeName, row)
            let new = table.map { newObject($0, row) }
            block(old, new)
        }
    }

    /// Creates an object of `typeName` in the new schema from a dictionary (property names to
    /// values) or an array of values in property order.
    ///
    /// ```swift
    /// let dog = migration.create("Dog", value: ["name": "Rex"])
    /// (newObject!["dogs"] as! List<MigrationObject>).append(dog)
    /// ```
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        guard let table = newTable(typeName), let realm, let transaction = realm.transaction else {
            preconditionFailure("Cannot create an object of '\(typeName)': the type is not in the new schema")
        }
        var created: DynamicObject?
        realm.perform(transaction) { created = try realm.dynamicInsert(table, value: value, update: .error, transaction) }
        return created ?? newObject(table, 0)
    }

    /// Deletes an object (given as its old or new form).
    public func delete(_ object: MigrationObject) {
        let type: String
        let row: Int64
        if let state = object._managedState {
            (type, row) = (state.table.name, state.row)
        } else if let snapshot = object.snapshot {
            (type, row) = (snapshot.type, snapshot.row)
        } else {
            preconditionFailure("Can only delete an object of this migration")
        }
        deleted.insert("\(type)#\(row)")
        record {
            try detach(type, rows: [row])
            try store.deleteRow(type, row)
        }
        realm?.bumpStamp()
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
    ///
    /// ```swift
    /// migration.deleteData(forType: "Dog")
    /// ```
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        guard oldTypes.contains(where: { $0.name == typeName }) else { return false }
        for row in oldOrder[typeName] ?? [] { deleted.insert("\(typeName)#\(row)") }
        record {
            try detach(typeName, rows: try store.allRows(typeName))
            try store.deleteAll(typeName)
        }
        realm?.bumpStamp()
        return true
    }

    /// Moves a property's data to its new name. The old name must be gone from the new schema and
    /// the new name must be new in it, with the same type.
    ///
    /// ```swift
    /// migration.renameProperty(onType: "Person", from: "yearsSinceBirth", to: "age")
    /// ```
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        record {
            guard let old = oldTypes.first(where: { $0.name == typeName })?[property: oldName] else {
                throw Realm.Error(.schemaMismatch, "Cannot rename property '\(typeName).\(oldName)' because it does not exist.")
            }
            guard let new = newTypes.first(where: { $0.name == typeName })?[property: storedName(typeName, newName)] else {
                throw Realm.Error(.schemaMismatch, "Renamed property '\(typeName).\(newName)' is not in the new schema.")
            }
            guard old.type == new.type, old.collection == new.collection, old.objectType == new.objectType else {
                throw Realm.Error(.schemaMismatch, "Cannot rename property '\(typeName).\(oldName)' to '\(newName)': their types differ (\(old.typeDescription) vs \(new.typeDescription)).")
            }
            try store.copy(typeName, from: old, to: new)
        }
        realm?.bumpStamp()
    }

    /// The stored name of the new schema's property that the app calls `key` (its Swift name,
    /// when the class renames it with `propertiesMapping()`).
    private func storedName(_ type: String, _ key: String) -> String {
        classes[type]?.property(named: key)?.name ?? key
    }

    // MARK: Old objects

    private func oldObject(_ type: String, _ row: Int64) -> MigrationObject {
        DynamicObject(snapshot: MigrationSnapshot(migration: self, type: type, row: row))
    }

    /// Property `key` of an old object, as the old schema had it.
    fileprivate func oldValue(_ type: String, _ row: Int64, _ key: String) -> Any? {
        guard let schema = oldTypes.first(where: { $0.name == type }) else { return nil }
        guard let property = schema[property: key] ?? schema[property: storedName(type, key)] else {
            preconditionFailure("Invalid property name '\(key)' for class '\(type)'.")
        }
        if !property.isSingle {
            let entries = oldCollections[type]?[property.name]?[row] ?? []
            return DynamicCollections.copy(property, entries.map { ($0.key, oldElement($0.value, property)) })
        }
        guard let position = schema.properties.filter(\.isSingle).firstIndex(where: { $0.name == property.name }),
              let values = oldRows[type]?[row] else { return nil }
        switch oldElement(values[position], property) {
        case .object(let object) where property.type != .any: return object
        case .value(let value) where property.type != .any: return DynamicObject.swiftValue(value)
        case let stored: return AnyRealmValue._atollFromStored(stored) ?? AnyRealmValue.none
        }
    }

    private func oldElement(_ raw: SQLValue, _ property: Property) -> _StoredElement {
        guard property.type == .object else { return .value(Value(sql: raw, type: property.type) ?? .null) }
        guard case .integer(let target) = raw, let type = property.objectType, oldRows[type]?[target] != nil else { return .value(.null) }
        return .object(oldObject(type, target))
    }
}

/// How a migration's old object reads its values: from the rows read before the file changed.
final class MigrationSnapshot {
    unowned let migration: Migration
    let type: String
    let row: Int64

    init(migration: Migration, type: String, row: Int64) {
        self.migration = migration
        self.type = type
        self.row = row
    }

    func value(forKey key: String) -> Any? { migration.oldValue(type, row, key) }

    var description: String {
        guard let schema = migration.oldTypes.first(where: { $0.name == type }) else { return "\(type) { }" }
        let fields = schema.properties.map { "\t\($0.name) = \(DynamicObject.describe(value(forKey: $0.name)))" }
        return "\(type) {\n" + fields.joined(separator: ";\n") + ";\n}"
    }
}

extension Realm {
    /// Runs the configuration's migration, if the file needs one, without keeping a realm open.
    ///
    /// ```swift
    /// try Realm.performMigration(for: config)
    /// ```
    /// Opening a realm migrates it too; this lets an app choose when.
    public static func performMigration(for configuration: Realm.Configuration = Realm.Configuration.defaultConfiguration) throws {
        _ = try RealmCoordinator.coordinator(for: configuration)
    }
}

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
    if RealmFormatConversion.isRealmFormat(path: path, encryptionKey: encryptionKey) {
        // A file Realm wrote, not converted yet: its own `metadata` table has the version.
        do {
            return try AtollRealmFile.RealmFile(path: path, encryptionKey: encryptionKey).schemaVersion ?? 0
        } catch {
            throw RealmFormatConversion.error(error)
        }
    }
    let version: Int64?
    do {
        version = try MigrationStore.schemaVersion(atPath: path, key: key)
    } catch let error as Realm.Error {
        throw error  // a wrong key, an encrypted file without one, a file that cannot be read
    } catch {
        throw Realm.Error(.invalidDatabase, "\(path) is not a realm file: \(error)", underlying: error as? any Error & Sendable)
    }
    guard let version, version >= 0 else {
        throw Realm.Error(.invalidDatabase, "\(path) has no schema version")
    }
    return UInt64(version)
}
