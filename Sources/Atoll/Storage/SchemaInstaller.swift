import AtollCore
import Foundation

/// Brings a realm file's tables in line with the declared schema when the file is first opened:
/// creates the internal tables, adds new types and properties automatically, and runs the
/// migration block (or refuses) when a change would lose data.
struct SchemaInstaller {
    /// The file needs a migration and `deleteRealmIfMigrationNeeded` is set: start from an empty file.
    private struct DeleteAndRecreate: Error {}

    private var _coordinator: RealmCoordinator?
    private var _configuration: Realm.Configuration?
    private let path: String
    var coordinator: RealmCoordinator { _coordinator! }
    var configuration: Realm.Configuration { _configuration! }

    init(coordinator: RealmCoordinator, configuration: Realm.Configuration) {
        _coordinator = coordinator
        _configuration = configuration
        path = coordinator.path
    }

    private init(coordinator: RealmCoordinator?, path: String) {
        self.path = path
    }

    /// One difference between the stored and the declared schema.
    enum Change: Equatable {
        case addType(String)
        case addProperty(String, Property)
        case removeProperty(String, Property)
        case changeProperty(String, old: Property, new: Property)
        /// Only `isIndexed` differs: applied without a migration.
        case changeIndex(String, old: Property, new: Property)

        var isDestructive: Bool {
            switch self {
            case .addType, .addProperty, .changeIndex: false
            case .removeProperty, .changeProperty: true
            }
        }

        /// Whether a read-only realm can be used in spite of the change.
        var isIgnorableWhenReadOnly: Bool {
            switch self {
            case .addType, .changeIndex: true
            default: false
            }
        }

        var explanation: String {
            switch self {
            case .addType(let t): "Object type '\(t)' has been added."
            case .addProperty(let t, let p): "Property '\(t).\(p.name)' has been added."
            case .changeIndex(let t, _, let new):
                "Property '\(t).\(new.name)' \(new.isIndexed ? "has been made indexed" : "is no longer indexed")."
            case .removeProperty(let t, let p): "Property '\(t).\(p.name)' has been removed."
            case .changeProperty(let t, let old, let new):
                if old.isPrimaryKey != new.isPrimaryKey {
                    "Primary key of '\(t)' has changed ('\(t).\(new.name)' \(new.isPrimaryKey ? "is now" : "is no longer") the primary key)."
                } else {
                    "Property '\(t).\(new.name)' has been changed from '\(old.typeDescription)' to '\(new.typeDescription)'."
                }
            }
        }
    }

    func run() throws {
        // The declared schema is checked before anything touches the file.
        let declared = try declaredSchema()
        let connection = try Connection(path: coordinator.path, readOnly: configuration.readOnly, key: coordinator.encryptionKey)
        do {
            try install(connection, declared: declared)
        } catch is DeleteAndRecreate {
            try? connection.queue.close()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: coordinator.path + suffix) }
            let fresh = try Connection(path: coordinator.path, readOnly: false, key: coordinator.encryptionKey)
            defer { try? fresh.queue.close() }
            try install(fresh, declared: declared)
            return
        } catch {
            try? connection.queue.close()
            throw error
        }
        // The first realm of the file uses it (RealmCoordinator.takeConnection).
        coordinator.recycle(connection)
    }

    private func install(_ connection: Connection, declared: [ClassInfo]) throws {
        try connection.run { _ in
            if !configuration.readOnly {
                do {
                    try connection.execute("BEGIN IMMEDIATE")
                } catch {
                    throw Realm.Error(.invalidDatabase, "\(coordinator.path) is not a realm file that can be opened: \(error)", underlying: error as? any Error & Sendable)
                }
            }
            do {
                try installInTransaction(connection, declared: declared)
                if !configuration.readOnly { try connection.execute("COMMIT") }
            } catch {
                if !configuration.readOnly { try? connection.execute("ROLLBACK") }
                throw error
            }
        }
    }

    private func declaredSchema() throws -> [ClassInfo] {
        guard let types = configuration.objectTypes else {
            return Self.processSchema(includingAsymmetric: configuration.syncConfiguration?.enableFlexibleSync == true)
        }
        let infos = ClassInfo.closure(of: types)
        do {
            _ = try Schema(infos.map(\.schema))
        } catch let error as SchemaError {
            throw Realm.Error(.invalidSchema, error.message, underlying: error)
        }
        return infos
    }

    /// The schema of a configuration without `objectTypes`: every class the process has used, with
    /// the classes they link to. A class whose own schema is invalid is left out here; using it
    /// reports the error (see `Realm.table(for:create:)`). So is a class whose
    /// `shouldIncludeInDefaultSchema()` is false, unless another class links to it, and an
    /// asymmetric class outside flexible sync (only flexible sync takes them, as in Realm).
    static func processSchema(includingAsymmetric: Bool) -> [ClassInfo] {
        var result: [String: ClassInfo] = [:]
        for info in ClassInfo.all where info.type.shouldIncludeInDefaultSchema() && (includingAsymmetric || !info.schema.isAsymmetric) {
            let closure = ClassInfo.closure(of: [info.type])
            guard (try? Schema(closure.map(\.schema))) != nil else { continue }
            for member in closure where result[member.schema.name] == nil { result[member.schema.name] = member }
        }
        let infos = result.values.sorted { $0.schema.name < $1.schema.name }
        return (try? Schema(infos.map(\.schema))) != nil ? infos : []
    }

    private func installInTransaction(_ connection: Connection, declared: [ClassInfo]) throws {
        let hasMeta: Bool
        do {
            hasMeta = try connection.fetchOne("SELECT 1 FROM sqlite_master WHERE name = '_atoll_meta'") != nil
        } catch {
            throw Realm.Error(.invalidDatabase, "\(coordinator.path) is not a realm file: \(error)", underlying: error as? any Error & Sendable)
        }
        if !hasMeta {
            guard !configuration.readOnly else {
                throw Realm.Error(.invalidDatabase, "\(coordinator.path) is not a realm file")
            }
            let userTables = try connection.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table'")
            guard userTables.isEmpty else {
                throw Realm.Error(.invalidDatabase, "\(coordinator.path) is an SQLite file but not a realm file")
            }
            try InternalTables.create(connection)
            try Self.setMeta(connection, "version", .integer(0))
            try Self.setMeta(connection, "schema_version", .integer(Int64(configuration.schemaVersion)))
        }
        let stored = try storedSchema(connection)
        if hasMeta { try checkFormat(connection, stored) }
        if hasMeta && !configuration.readOnly { try InternalTables.upgrade(connection, stored) }
        let storedVersion = try UInt64(connection.fetchInt("SELECT value FROM _atoll_meta WHERE key = 'schema_version'") ?? 0)
        let changes = Self.diff(stored: stored, declared: declared.map(\.schema))
        let migrating = hasMeta && configuration.schemaVersion > storedVersion

        if hasMeta && configuration.deleteRealmIfMigrationNeeded && !configuration.readOnly
            && (configuration.schemaVersion != storedVersion || changes.contains(where: \.isDestructive)) {
            throw DeleteAndRecreate()
        }
        if hasMeta && configuration.schemaVersion < storedVersion {
            throw Realm.Error(.fail,
                "Provided schema version \(configuration.schemaVersion) is less than last set version \(storedVersion).")
        }
        if changes.contains(where: \.isDestructive) && !migrating {
            throw Realm.Error(.schemaMismatch,
                "Migration is required due to the following errors:\n" +
                changes.filter(\.isDestructive).map { "- " + $0.explanation }.joined(separator: "\n"))
        }
        if configuration.readOnly && !changes.isEmpty {
            let missing = changes.filter { !$0.isIgnorableWhenReadOnly }
            if !missing.isEmpty {
                throw Realm.Error(.schemaMismatch, "The read-only realm's schema differs from the declared one:\n" +
                    missing.map { "- " + $0.explanation }.joined(separator: "\n"))
            }
        }

        var merged = Dictionary(uniqueKeysWithValues: stored.map { ($0.name, $0) })
        let byName = Dictionary(uniqueKeysWithValues: declared.map { ($0.schema.name, $0) })
        if !configuration.readOnly && (!changes.isEmpty || migrating) {
            let migration = migrating && configuration.migrationBlock != nil
                ? try Migration(connection: connection, coordinator: coordinator, configuration: configuration,
                                stored: stored, declared: declared.map(\.schema), classes: declared)
                : nil
            try Self.apply(changes, declared: declared.map(\.schema), connection: connection, phase: .before)
            if let migration, let block = configuration.migrationBlock {
                migration.prepare()
                block(migration, storedVersion)
                try migration.finish()
            }
            try Self.apply(changes, declared: declared.map(\.schema), connection: connection, phase: .after)
            for info in declared { merged[info.schema.name] = info.schema }
            try Self.saveSchema(connection, Array(merged.values))
            try Self.setMeta(connection, "schema_version", .integer(Int64(configuration.schemaVersion)))
        }
        for schema in merged.values {
            // Tables of types missing in a read-only file are not installed: queries on them are empty.
            if configuration.readOnly, stored.first(where: { $0.name == schema.name }) == nil { continue }
            let info = byName[schema.name]
            coordinator.install(TableInfo(schema: info?.schema ?? schema, classInfo: info))
        }
        coordinator.setLatestVersion(try HistoryStore(connection: connection).currentVersion())
    }

    // MARK: Diff and apply

    static func diff(stored: [AtollCore.ObjectSchema], declared: [AtollCore.ObjectSchema]) -> [Change] {
        var changes: [Change] = []
        for schema in declared {
            guard let old = stored.first(where: { $0.name == schema.name }) else {
                changes.append(.addType(schema.name))
                continue
            }
            for property in schema.properties {
                guard let oldProperty = old[property: property.name] else {
                    changes.append(.addProperty(schema.name, property))
                    continue
                }
                var comparable = oldProperty
                comparable.isIndexed = property.isIndexed
                if comparable != property {
                    changes.append(.changeProperty(schema.name, old: oldProperty, new: property))
                } else if oldProperty.isIndexed != property.isIndexed {
                    changes.append(.changeIndex(schema.name, old: oldProperty, new: property))
                }
            }
            for property in old.properties where schema[property: property.name] == nil {
                changes.append(.removeProperty(schema.name, property))
            }
        }
        return changes
    }

    enum Phase { case before, after }

    /// `.before` adds what is new (keeping replaced columns under a temporary name so a migration can
    /// read them); `.after` drops what is gone and indexes the new columns, once the migration block
    /// has written their values (so a new primary key is checked for duplicates only then).
    static func apply(_ changes: [Change], declared: [AtollCore.ObjectSchema], connection: Connection, phase: Phase) throws {
        for change in changes {
            switch (change, phase) {
            case (.addType(let name), .before):
                guard let schema = declared.first(where: { $0.name == name }) else { continue }
                for statement in TableInfo.createStatements(for: schema) { try connection.execute(statement) }
            case (.addProperty(let type, let property), .before):
                try addProperty(type, property, connection)
            case (.addProperty(let type, let property), .after) where property.isSingle:
                try createIndexes(type, property, connection)
            case (.removeProperty(let type, let property), .after):
                try dropProperty(type, property, connection, column: property.name)
            case (.changeProperty(let type, let old, let new), .before):
                if old.collection == .single {
                    try dropIndexes(type, old, connection)
                    try connection.execute("ALTER TABLE \(StorageLayout.quote(StorageLayout.table(type))) RENAME COLUMN \(StorageLayout.quote(old.name)) TO \(StorageLayout.quote("_atoll_old_" + old.name))")
                } else {
                    try connection.execute("ALTER TABLE \(StorageLayout.quote(StorageLayout.collectionTable(type, old))) RENAME TO \(StorageLayout.quote("_atoll_old_" + StorageLayout.collectionTable(type, old)))")
                }
                try addProperty(type, new, connection)
                if old.type == new.type && old.collection == new.collection && old.objectType == new.objectType {
                    try copyValues(type, from: old, to: new, connection)
                }
            case (.changeProperty(let type, let old, let new), .after):
                if old.collection == .single {
                    try connection.execute("ALTER TABLE \(StorageLayout.quote(StorageLayout.table(type))) DROP COLUMN \(StorageLayout.quote("_atoll_old_" + old.name))")
                } else {
                    try connection.execute("DROP TABLE IF EXISTS \(StorageLayout.quote("_atoll_old_" + StorageLayout.collectionTable(type, old)))")
                }
                if new.isSingle { try createIndexes(type, new, connection) }
            case (.changeIndex(let type, let old, let new), .after):
                try dropIndexes(type, old, connection)
                try createIndexes(type, new, connection)
            default: break
            }
        }
    }

    /// Adds the column (or collection table) of a new property; a column's indexes come later
    /// (`createIndexes`).
    static func addProperty(_ type: String, _ property: Property, _ connection: Connection) throws {
        let table = StorageLayout.quote(StorageLayout.table(type))
        guard property.isSingle else {
            for statement in TableInfo.propertyStatements(type, property) { try connection.execute(statement) }
            return
        }
        var definition = TableInfo.columnDefinition(property)
        if !property.isOptional, let fallback = defaultValue(property) { definition += " DEFAULT \(fallback)" }
        try connection.execute("ALTER TABLE \(table) ADD COLUMN \(definition)")
    }

    /// Creates the indexes of a single-valued property; duplicate values of a primary key fail.
    static func createIndexes(_ type: String, _ property: Property, _ connection: Connection) throws {
        for statement in TableInfo.propertyStatements(type, property) {
            do {
                try connection.execute(statement)
            } catch where property.isPrimaryKey {
                throw Realm.Error(.primaryKeyExists,
                    "Primary key property '\(type).\(property.name)' has duplicate values after migration.",
                    underlying: error as? any Error & Sendable)
            }
        }
    }

    static func copyValues(_ type: String, from old: Property, to new: Property, _ connection: Connection) throws {
        let table = StorageLayout.quote(StorageLayout.table(type))
        if old.collection == .single {
            let source = StorageLayout.quote("_atoll_old_" + old.name)
            if new.isOptional || old.isOptional == false {
                try connection.execute("UPDATE \(table) SET \(StorageLayout.quote(new.name)) = \(source)")
            } else {
                try connection.execute("UPDATE \(table) SET \(StorageLayout.quote(new.name)) = \(source) WHERE \(source) IS NOT NULL")
            }
        } else {
            let target = StorageLayout.quote(StorageLayout.collectionTable(type, new))
            let source = StorageLayout.quote("_atoll_old_" + StorageLayout.collectionTable(type, old))
            try connection.execute("INSERT INTO \(target) SELECT * FROM \(source)\(new.isOptional ? "" : " WHERE value IS NOT NULL")")
        }
    }

    static func dropIndexes(_ type: String, _ property: Property, _ connection: Connection) throws {
        try connection.execute("DROP INDEX IF EXISTS \(StorageLayout.quote("pk_\(type)_\(property.name)"))")
        try connection.execute("DROP INDEX IF EXISTS \(StorageLayout.quote("idx_\(type)_\(property.name)"))")
    }

    static func dropProperty(_ type: String, _ property: Property, _ connection: Connection, column: String) throws {
        if property.isSingle {
            try dropIndexes(type, property, connection)
            try connection.execute("ALTER TABLE \(StorageLayout.quote(StorageLayout.table(type))) DROP COLUMN \(StorageLayout.quote(column))")
        } else {
            try connection.execute("DROP TABLE IF EXISTS \(StorageLayout.quote(StorageLayout.collectionTable(type, property)))")
        }
    }

    /// The SQL literal a new non-optional column starts with.
    static func defaultValue(_ property: Property) -> String? {
        switch property.type {
        case .bool, .int, .double, .float: "0"
        // 1970-01-01, Date's own seconds since 2001 (Property.initialValue).
        case .date: "\(-Date.timeIntervalBetween1970AndReferenceDate)"
        case .string: "''"
        case .decimal128: "'0'"
        case .data: "X''"
        // The zero ObjectId and the zero UUID, as Realm gives existing objects.
        case .objectId: "X'\(String(repeating: "00", count: 12))'"
        case .UUID: "X'\(String(repeating: "00", count: 16))'"
        case .object, .any, .linkingObjects: nil
        }
    }

    // MARK: Meta

    /// Creates tables for types first used after the file was opened, inside the caller's write
    /// transaction, and records them in the stored schema.
    static func addTypes(_ schemas: [AtollCore.ObjectSchema], connection: Connection, path: String) throws {
        let installer = SchemaInstaller(coordinator: nil, path: path)
        var stored = try installer.storedSchema(connection)
        for schema in schemas where !stored.contains(where: { $0.name == schema.name }) {
            for statement in TableInfo.createStatements(for: schema) { try connection.execute(statement) }
            stored.append(schema)
        }
        try Self.saveSchema(connection, stored)
    }

    /// Replaces (or adds) one type in the stored schema, inside the caller's write transaction.
    static func replaceStoredType(_ schema: AtollCore.ObjectSchema, connection: Connection, path: String) throws {
        let installer = SchemaInstaller(coordinator: nil, path: path)
        var stored = try installer.storedSchema(connection)
        stored.removeAll { $0.name == schema.name }
        stored.append(schema)
        try Self.saveSchema(connection, stored)
    }

    /// Refuses a file this version cannot read as it is: one of a newer format (a newer Atoll
    /// wrote it), or, read-only, one that holds dates in the format before 4 (it would need the
    /// upgrade a read-only realm may not write, as Realm refuses such a file).
    private func checkFormat(_ connection: Connection, _ stored: [AtollCore.ObjectSchema]) throws {
        let format = try InternalTables.storedFormat(connection)
        if format > InternalTables.format {
            throw Realm.Error(.unsupportedFileFormatVersion,
                "\(coordinator.path) is in realm file format \(format), written by a newer version of Atoll; "
                    + "this one reads formats up to \(InternalTables.format)")
        }
        if configuration.readOnly && format < 4
            && stored.contains(where: { $0.properties.contains { $0.type == .date } }) {
            throw Realm.Error(.fileFormatUpgradeRequired,
                "\(coordinator.path) stores dates in realm file format \(format) and must be upgraded to format "
                    + "\(InternalTables.format): open it once without readOnly")
        }
    }

    private func storedSchema(_ connection: Connection) throws -> [AtollCore.ObjectSchema] {
        guard case .text(let json)? = try connection.fetchOne("SELECT value FROM _atoll_meta WHERE key = 'schema'")?.first else {
            return []
        }
        do {
            return try JSONDecoder().decode([AtollCore.ObjectSchema].self, from: Data(json.utf8))
        } catch {
            throw Realm.Error(.invalidDatabase, "the schema stored in \(path) is damaged: \(error)")
        }
    }

    static func saveSchema(_ connection: Connection, _ schemas: [AtollCore.ObjectSchema]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(schemas.sorted { $0.name < $1.name }), as: UTF8.self)
        try Self.setMeta(connection, "schema", .text(json))
    }

    static func setMeta(_ connection: Connection, _ key: String, _ value: SQLValue) throws {
        try connection.execute("INSERT OR REPLACE INTO _atoll_meta (key, value) VALUES (?, ?)", [.text(key), value])
    }
}
