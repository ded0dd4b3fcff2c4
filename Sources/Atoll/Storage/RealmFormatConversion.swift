import AtollCore
import AtollRealmFile
import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Turns a file in Realm's own format (realm-core's, formats 20–24) into an Atoll file, so a
/// `Realm(configuration:)` on a path that holds one opens the app's existing data (issue 22).
///
/// The conversion writes the file's classes as they are stored — its schema, under its
/// `schemaVersion` — into a new Atoll file in one transaction: the app's declared schema is then
/// applied by ``SchemaInstaller`` as on any open, so the app's `migrationBlock` sees the old
/// objects exactly as Realm would show them. Object keys become row numbers (key + 1), so the
/// order of unsorted results is the file's, and links need no lookup.
///
/// What is read: every `class_` table and its objects, with every property kind Realm Swift
/// writes. What is left: Realm's internal tables (`metadata`, `pk`, sync history and
/// subscriptions), backlinks (derived), links to objects that were deleted while others still
/// pointed at them (Realm's tombstones, which read as absent), and, in mixed values, links to
/// objects without a primary key (a mixed link travels by primary key in Atoll; such a value
/// becomes null and is counted in ``Report/droppedMixedLinks``).
enum RealmFormatConversion {
    /// What a conversion wrote.
    struct Report: Equatable {
        var classes = 0
        var objects = 0
        var droppedMixedLinks = 0
    }

    /// Whether the file at `path` is in Realm's format: bytes 16–19 of its header are `T-DB`; or,
    /// when the configuration has an encryption key, a file that is neither an SQLite file nor an
    /// encrypted Atoll file (Realm encrypts its header with the rest: the key decides, and a wrong
    /// one is reported as such by the reader).
    static func isRealmFormat(path: String, encryptionKey: Data? = nil) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 24), header.count == 24 else { return false }
        let bytes = [UInt8](header)
        if bytes[16..<20].elementsEqual("T-DB".utf8) { return true }
        guard encryptionKey != nil else { return false }
        return !bytes.starts(with: Array("SQLite format 3".utf8)) && !bytes.starts(with: Array("ATOLLENC".utf8))
    }

    /// The Atoll schema the Realm file's classes are stored with, as Atoll would derive it from
    /// the Realm Swift models that wrote them (so an unchanged model needs no migration).
    static func schema(of file: RealmFile) throws -> [AtollCore.ObjectSchema] {
        try file.classTables.map { table in
            let properties = try table.columns.compactMap { column -> Property? in
                try property(column, primaryKey: table.primaryKey)
            }
            return AtollCore.ObjectSchema(
                name: table.className, properties: properties,
                isEmbedded: table.kind == .embedded, isAsymmetric: table.kind == .asymmetric)
        }
    }

    private static func property(_ column: RealmColumn, primaryKey: String?) throws -> Property? {
        let type: PropertyType
        switch column.type {
        case .int: type = .int
        case .bool: type = .bool
        case .string: type = .string
        case .binary: type = .data
        case .mixed: type = .any
        case .timestamp: type = .date
        case .float: type = .float
        case .double: type = .double
        case .decimal128: type = .decimal128
        case .link: type = .object
        case .objectId: type = .objectId
        case .uuid: type = .UUID
        case .typedLink:
            throw Realm.Error(.unsupportedFileFormatVersion,
                              "property '\(column.name)' is a typed link column, which Realm Swift models never declare")
        }
        let collection: CollectionKind
        switch column.collection {
        case .single: collection = .single
        case .list: collection = .list
        case .set: collection = .set
        case .dictionary(let keyType):
            guard keyType == .string else {
                throw Realm.Error(.unsupportedFileFormatVersion,
                                  "property '\(column.name)' is a dictionary with \(keyType) keys; Realm Swift maps have string keys")
            }
            collection = .map
        }
        let isPrimaryKey = column.name == primaryKey
        return Property(
            name: column.name, type: type, collection: collection,
            isOptional: column.isNullable || type == .any || (type == .object && collection == .single),
            objectType: column.targetTable.map(className),
            isPrimaryKey: isPrimaryKey, isIndexed: column.isIndexed || isPrimaryKey)
    }

    private static func className(_ table: String) -> String {
        table.hasPrefix("class_") ? String(table.dropFirst("class_".count)) : table
    }

    /// Writes the classes and objects of `file` into the empty Atoll file at `destination` (created
    /// here), with `file`'s schema version, in one transaction. The caller syncs and renames it.
    @discardableResult
    ///
    /// - Parameter uploads: for a synced configuration: the history also gets changesets that
    ///   create every object, so that they are the device's first uploads (every class needs a
    ///   primary key, as sync does).
    /// - Parameter subscriptions: for a flexible-sync configuration: the file's newest subscription
    ///   set that the server did not refuse becomes the realm's first set, pending.
    static func convert(_ file: RealmFile, into destination: String, key: EncryptionKey?, uploads: Bool = false,
                        subscriptions: Bool = false,
                        progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> Report {
        let schemas = try schema(of: file)
        do {
            _ = try Schema(schemas)
        } catch let error as SchemaError {
            throw Realm.Error(.invalidDatabase, "the Realm file's schema is not one Atoll can hold: \(error.message)", underlying: error)
        }
        let connection = try Connection(path: destination, readOnly: false, key: key)
        defer { try? connection.queue.close() }
        var writer = Writer(file: file, schemas: schemas, connection: connection)
        if uploads {
            for schema in schemas where !schema.isEmbedded && schema.primaryKey == nil {
                throw Realm.Error(.invalidConfiguration,
                                  "the Realm file's class '\(schema.name)' has no primary key, and a synced realm needs one on every class")
            }
            writer.uploads = UploadHistory(connection: connection)
        }
        if let progress {
            let total = try file.classTables.reduce(0) { total, table in
                do { return total + (try table.objectCount()) } catch { throw Self.error(error) }
            }
            writer.progress = { progress($0, total) }
            progress(0, total)
        }
        try connection.run { _ in
            // The work file is private until it is complete and synced (a failed or cut conversion
            // throws it away): no journal, no syncs while it is written; WAL again at the end.
            try connection.execute("PRAGMA journal_mode = OFF")
            try connection.execute("PRAGMA synchronous = OFF")
            try connection.beginWrite()
            do {
                try InternalTables.create(connection)
                try SchemaInstaller.setMeta(connection, "version", .integer(0))
                try SchemaInstaller.setMeta(connection, "schema_version", .integer(Int64(bitPattern: file.schemaVersion ?? 0)))
                for schema in schemas {
                    for statement in TableInfo.createStatements(for: schema) { try connection.execute(statement) }
                }
                try SchemaInstaller.saveSchema(connection, schemas)
                try writer.writeObjects()
                try writer.uploads?.flush()
                if subscriptions, let set = try subscriptionSet(of: file), !set.isEmpty {
                    _ = try SubscriptionStorage.insert(set, connection)
                }
                try connection.commit()
            } catch {
                try? connection.rollback()
                throw error
            }
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        return writer.report
    }

    /// Copies the objects, table by table, in key order.
    private struct Writer {
        let file: RealmFile
        let schemas: [String: AtollCore.ObjectSchema]
        let connection: Connection
        var report = Report()
        /// Embedded objects met in their owners: (embedded type, row) → (owner type, owner row, property).
        var owners: [(type: String, row: Int64, ownerType: String, ownerRow: Int64, property: String)] = []
        /// Primary keys of link targets of mixed values, by stored table name and object key.
        var primaryKeys: [String: [Int64: Value?]] = [:]
        /// Told the number of objects written, every 1,000 and at the end.
        var progress: ((Int) -> Void)?
        /// For a synced realm: the history that uploads every object.
        var uploads: UploadHistory?

        init(file: RealmFile, schemas: [AtollCore.ObjectSchema], connection: Connection) {
            self.file = file
            self.schemas = Dictionary(uniqueKeysWithValues: schemas.map { ($0.name, $0) })
            self.connection = connection
        }

        mutating func writeObjects() throws {
            try uploads?.add(schemas.keys.sorted().map { .addTable(schemas[$0]!) })
            for table in file.classTables {
                guard let schema = schemas[table.className] else { continue }
                report.classes += 1
                let singles = schema.properties.filter(\.isSingle)
                let columns = [StorageLayout.rowColumn] + singles.map(\.name)
                let insert = "INSERT INTO \(StorageLayout.quote(StorageLayout.table(schema.name))) (" +
                    columns.map(StorageLayout.quote).joined(separator: ", ") + ") VALUES (" +
                    Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
                let positions = Dictionary(uniqueKeysWithValues: table.columns.enumerated().map { ($1.name, $0) })
                // Where each property's value is in an object of the file, looked up once per table.
                let singleSources = singles.map { positions[$0.name] }
                let collections = schema.properties.filter { !$0.isSingle }.compactMap { property in
                    positions[property.name].map { (property, $0) }
                }
                var arguments: [SQLValue] = []
                arguments.reserveCapacity(columns.count)
                var cursor = table.objects()
                while let object = try Self.next(&cursor) {
                    let row = object.key + 1
                    arguments.removeAll(keepingCapacity: true)
                    arguments.append(.integer(row))
                    for (property, source) in zip(singles, singleSources) {
                        arguments.append(try sqlValue(source.map { object.values[$0] } ?? .null, property, owner: schema.name, row: row))
                    }
                    try connection.execute(insert, arguments)
                    for (property, position) in collections {
                        try writeCollection(object.values[position], property, owner: schema.name, row: row)
                    }
                    if uploads != nil, !schema.isEmbedded { try recordUpload(object, table, schema) }
                    report.objects += 1
                    if report.objects % 1_000 == 0 { progress?(report.objects) }
                }
            }
            progress?(report.objects)
            for owner in owners {
                try connection.execute(
                    "UPDATE \(StorageLayout.quote(StorageLayout.table(owner.type))) SET _parent_type = ?, _parent_row = ?, _parent_prop = ? WHERE _row = ?",
                    [.text(owner.ownerType), .integer(owner.ownerRow), .text(owner.property), .integer(owner.row)])
            }
        }

        /// The instructions that create `object` whole, embedded objects inline, links by primary key.
        private mutating func recordUpload(_ object: RealmObject, _ table: RealmTable, _ schema: AtollCore.ObjectSchema) throws {
            guard let pk = schema.primaryKey, let pkValue = object[pk] else { return }
            let id = ObjectID(type: schema.name, primaryKey: try atollValue(pkValue))
            var fields: [String: Value] = [:]
            for property in schema.properties where !property.isPrimaryKey {
                guard let value = object[property.name] else { continue }
                fields[property.name] = try uploadValue(value, property)
            }
            let instructions = FlexibleSync.instructions(creating: id, fields: fields, schema: schema)
            try uploads?.add(instructions)
        }

        /// A property's value as sync carries it: links by the target's primary key, embedded
        /// objects as their fields, collections whole.
        private mutating func uploadValue(_ value: RealmValue, _ property: Property) throws -> Value {
            func element(_ value: RealmValue) throws -> Value? {
                guard property.type == .object else { return try atollValue(value) }
                guard case .link(let link) = value, !link.isUnresolved else { return nil }
                let target = try table(link.table)
                if target.kind == .embedded {
                    guard let object = try lookUp(target, key: link.objectKey) else { return nil }
                    var fields: [String: Value] = [:]
                    for embedded in schemas[target.className]?.properties ?? [] {
                        fields[embedded.name] = try object[embedded.name].map { try uploadValue($0, embedded) } ?? .null
                    }
                    return .object(fields)
                }
                guard let pk = try primaryKey(of: link) else { return nil }
                return .link(ObjectLink(objectType: target.className, primaryKey: pk))
            }
            switch (property.collection, value) {
            case (.single, _): return try element(value) ?? .null
            case (.list, .list(let items)): return .list(try items.compactMap(element))
            case (.set, .set(let items)), (.set, .list(let items)): return .set(try items.compactMap(element))
            case (.map, .dictionary(let entries)):
                var map: [String: Value] = [:]
                for entry in entries { map[entry.key] = try element(entry.value) ?? .null }
                return .map(map)
            default: return .null
            }
        }

        private func table(_ name: String) throws -> RealmTable {
            do { return try file.table(named: name) } catch { throw RealmFormatConversion.error(error) }
        }

        private func lookUp(_ table: RealmTable, key: Int64) throws -> RealmObject? {
            do { return try table.object(key: key) } catch { throw RealmFormatConversion.error(error) }
        }

        private static func next(_ cursor: inout RealmObjectCursor) throws -> RealmObject? {
            do {
                return try cursor.next()
            } catch {
                throw RealmFormatConversion.error(error)
            }
        }

        /// The stored form of a single value, or of one element of a collection.
        private mutating func sqlValue(_ value: RealmValue, _ property: Property, owner: String, row: Int64) throws -> SQLValue {
            if property.type == .object {
                guard case .link(let link) = value, !link.isUnresolved else { return .null }
                let target = link.objectKey + 1
                if let type = property.objectType, schemas[type]?.isEmbedded == true {
                    owners.append((type, target, owner, row, property.name))
                }
                return .integer(target)
            }
            return try atollValue(value).sqlValue(as: property.type)
        }

        private mutating func writeCollection(_ value: RealmValue, _ property: Property, owner: String, row: Int64) throws {
            let table = StorageLayout.quote(StorageLayout.collectionTable(owner, property))
            switch (property.collection, value) {
            case (.list, .list(let elements)):
                var position: Int64 = 0
                for element in elements {
                    if property.type == .object, case .link(let link) = element, link.isUnresolved { continue }
                    try connection.execute("INSERT INTO \(table) (owner, pos, value) VALUES (?, ?, ?)",
                                           [.integer(row), .integer(position), try sqlValue(element, property, owner: owner, row: row)])
                    position += 1
                }
            case (.set, .set(let elements)), (.set, .list(let elements)):
                for element in elements {
                    if property.type == .object, case .link(let link) = element, link.isUnresolved { continue }
                    try connection.execute("INSERT INTO \(table) (owner, value) VALUES (?, ?)",
                                           [.integer(row), try sqlValue(element, property, owner: owner, row: row)])
                }
            case (.map, .dictionary(let entries)):
                for entry in entries {
                    if property.type == .object, case .link(let link) = entry.value, link.isUnresolved { continue }
                    try connection.execute("INSERT INTO \(table) (owner, key, value) VALUES (?, ?, ?)",
                                           [.integer(row), .text(entry.key), try sqlValue(entry.value, property, owner: owner, row: row)])
                }
            case (_, .null):
                return
            default:
                throw Realm.Error(.invalidDatabase, "'\(owner).\(property.name)' holds a \(value) where a \(property.collection) was expected")
            }
        }

        /// A scalar or mixed value as Atoll holds it.
        private mutating func atollValue(_ value: RealmValue) throws -> Value {
            switch value {
            case .null: return .null
            case .int(let v): return .int(v)
            case .bool(let v): return .bool(v)
            case .string(let v): return .string(v)
            case .binary(let v): return .data(v)
            case .float(let v): return .float(v)
            case .double(let v): return .double(v)
            case .timestamp(let t): return .date(t.date)
            case .decimal128(let d): return .decimal(Decimal128(bid: d.high, low: d.low))
            case .objectId(let o): return .objectId(ObjectId(bytes: Data(o.bytes)))
            case .uuid(let u): return .uuid(u)
            case .link(let link):
                // Only in mixed values: Atoll's travel by the target's primary key.
                guard let primaryKey = try primaryKey(of: link) else {
                    report.droppedMixedLinks += 1
                    return .null
                }
                return .link(ObjectLink(objectType: RealmFormatConversion.className(link.table), primaryKey: primaryKey))
            case .list(let elements): return .list(try elements.map { try atollValue($0) })
            case .set(let elements): return .list(try elements.map { try atollValue($0) })
            case .dictionary(let entries):
                var map: [String: Value] = [:]
                for entry in entries { map[entry.key] = try atollValue(entry.value) }
                return .map(map)
            }
        }

        private mutating func primaryKey(of link: RealmLink) throws -> Value? {
            if link.isUnresolved { return nil }
            if let known = primaryKeys[link.table]?[link.objectKey] { return known }
            var found: Value?
            do {
                let table = try file.table(named: link.table)
                if let name = table.primaryKey, let object = try table.object(key: link.objectKey), let value = object[name] {
                    found = try atollValue(value)
                }
            } catch let error as RealmFileError {
                if case .notFound = error { found = nil } else { throw RealmFormatConversion.error(error) }
            }
            primaryKeys[link.table, default: [:]][link.objectKey] = found
            return found
        }
    }

    /// The subscriptions of the file's newest subscription set that is not in error or superseded
    /// (realm-core's `flx_subscription_sets`, states 4 and 5), in their order; nil without one.
    static func subscriptionSet(of file: RealmFile) throws -> [StoredSubscription]? {
        guard file.tables.contains(where: { $0.name == "flx_subscription_sets" }) else { return nil }
        do {
            let sets = try file.table(named: "flx_subscription_sets").allObjects()
            let usable = sets.filter { ![4, 5].contains($0["state"]?.intValue ?? 4) }
            guard let newest = usable.max(by: { ($0["version"]?.intValue ?? 0) < ($1["version"]?.intValue ?? 0) }),
                  let links = newest["subscriptions"]?.elements else { return nil }
            let table = try file.table(named: "flx_subscriptions")
            return try links.compactMap { value -> StoredSubscription? in
                guard case .link(let link) = value, let object = try table.object(key: link.objectKey),
                      let objectType = object["object_class"]?.stringValue, let query = object["query"]?.stringValue
                else { return nil }
                let id: ObjectId = if case .objectId(let o)? = object["id"] { ObjectId(bytes: o.bytes) } else { ObjectId.generate() }
                let date = { (name: String) -> Date in
                    if case .timestamp(let t)? = object[name] { return t.date }
                    return Date()
                }
                return StoredSubscription(id: id, name: object["name"]?.stringValue, objectType: objectType, query: query,
                                          createdAt: date("created_at"), updatedAt: date("updated_at"))
            }
        } catch {
            throw Self.error(error)
        }
    }

    /// The history of a realm that becomes synced with objects already in it (a converted Realm
    /// file, a local realm's synced copy): changesets that create them, of at most 2,000
    /// instructions, cut between objects, numbered on from `version`.
    struct UploadHistory {
        let connection: Connection
        var pending: [Instruction] = []
        var version: Int64 = 0

        init(connection: Connection, after version: Int64 = 0) {
            self.connection = connection
            self.version = version
        }

        mutating func add(_ instructions: [Instruction]) throws {
            if !pending.isEmpty, pending.count + instructions.count > 2_000 { try flush() }
            pending += instructions
        }

        mutating func flush() throws {
            guard !pending.isEmpty else { return }
            version += 1
            try HistoryStore(connection: connection).append(
                Changeset(version: version, timestamp: Int64(Date().timeIntervalSince1970 * 1_000), instructions: pending))
            pending = []
        }
    }

    /// A reader error as the `Realm.Error` an open reports.
    static func error(_ error: any Error) -> Realm.Error {
        guard let error = error as? RealmFileError else {
            return error as? Realm.Error ?? Realm.Error(.fail, "\(error)")
        }
        switch error {
        case .fileAccess(let path, _): return Realm.Error(.fileAccess, "\(error)", path: path, underlying: error)
        case .unsupportedFormat, .unsupported: return Realm.Error(.unsupportedFileFormatVersion, "\(error)", underlying: error)
        case .invalidDatabase(let reason) where reason.hasPrefix("Realm file decryption failed"):
            // Realm's own message, without the reader's prefix.
            return Realm.Error(.invalidDatabase, reason, underlying: error)
        case .invalidDatabase, .notFound: return Realm.Error(.invalidDatabase, "\(error)", underlying: error)
        }
    }
}

// MARK: - In place

extension RealmFormatConversion {
    /// Where the Realm-format file at `path` is kept once converted (`default.realm` →
    /// `default.realm.before-atoll`): the original bytes, for the app to fall back on or delete.
    static func backupPath(for path: String) -> String { path + RealmFiles.formerRealmSuffixes[0] }

    /// The conversion's work file beside `path`: a crash leaves it, the next conversion replaces it.
    static func workPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).atoll-conversion").path
    }

    /// Converts the Realm-format file at `path`, if that is what is there, into an Atoll file at
    /// the same path. Returns whether it converted.
    ///
    /// Crash-safe: the Atoll file is written and synced beside the original, the original is
    /// linked to ``backupPath(for:)``, and only then does a rename put the Atoll file in its
    /// place. Until that rename `path` is the untouched original and a later open starts over;
    /// after it, `path` is the complete converted file. Processes that open the same file at once
    /// take turns through a lock on the original; the later one finds it converted.
    @discardableResult
    static func convertIfNeeded(at path: String, encryptionKey: Data?, key: EncryptionKey?, uploads: Bool = false,
                                subscriptions: Bool = false) throws -> Bool {
        guard isRealmFormat(path: path, encryptionKey: encryptionKey) else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }  // gone meanwhile: nothing to convert
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else {
            throw Realm.Error(.fileAccess, "cannot lock \(path) to convert it: \(String(cString: strerror(errno)))", path: path)
        }
        // Another process may have converted (and replaced) the file while this one waited.
        var locked = stat(), current = stat()
        guard fstat(fd, &locked) == 0, stat(path, &current) == 0, locked.st_ino == current.st_ino,
              isRealmFormat(path: path, encryptionKey: encryptionKey) else {
            return false
        }
        let file: RealmFile
        do {
            file = try RealmFile(path: path, encryptionKey: encryptionKey)
        } catch {
            throw Self.error(error)
        }
        let work = workPath(for: path)
        for suffix in RealmFiles.suffixes { try? FileManager.default.removeItem(atPath: work + suffix) }
        do {
            let report = try convert(file, into: work, key: key, uploads: uploads, subscriptions: subscriptions)
            Logger.log(.detail, Category.Storage.all, "converted the Realm file \(path) (format \(file.formatVersion)): "
                + "\(report.objects) objects of \(report.classes) classes; the original is kept as \(backupPath(for: path))")
            if report.droppedMixedLinks > 0 {
                Logger.log(.warn, Category.Storage.all, "\(report.droppedMixedLinks) AnyRealmValue links of \(path) name objects without a "
                    + "primary key, which Atoll's mixed values cannot link to: they read as nil (docs/from-realm.md)")
            }
            try RealmFiles.sync(work)
            let backup = backupPath(for: path)
            try? FileManager.default.removeItem(atPath: backup)
            if link(path, backup) != 0 {
                try FileManager.default.copyItem(atPath: path, toPath: backup)
                try RealmFiles.sync(backup)
            }
            let folder = (path as NSString).deletingLastPathComponent
            try RealmFiles.sync(folder)
            guard rename(work, path) == 0 else {
                throw Realm.Error(.fileAccess, "cannot move the converted file into place at \(path): \(String(cString: strerror(errno)))", path: path)
            }
            try RealmFiles.sync(folder)
        } catch {
            for suffix in RealmFiles.suffixes { try? FileManager.default.removeItem(atPath: work + suffix) }
            if let error = error as? Realm.Error { throw error }
            throw Realm.Error(.fileAccess, "cannot convert the Realm file at \(path): \(error.localizedDescription)", path: path,
                              underlying: error as? any Error & Sendable)
        }
        return true
    }
}

// MARK: - Read-only

extension RealmFormatConversion {
    /// The path of an Atoll copy of the Realm-format file at `path`, converted into the caches
    /// folder the first time: a read-only configuration (a file in the app's bundle) cannot
    /// convert in place. The copy is named after the original's path, size and modification time,
    /// so a changed original is converted again.
    static func convertedCopy(of path: String, encryptionKey: Data?, key: EncryptionKey?) throws -> String {
        let attributes = (try? FileManager.default.attributesOfItem(atPath: path)) ?? [:]
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let digest = SHA256.hash(data: Data("\(path)\n\(size)\n\(modified)\n\(key == nil ? "plain" : "encrypted")".utf8))
        let name = digest.prefix(16).map { String(format: "%02x", $0) }.joined() + ".realm"
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        let folder = caches.appendingPathComponent("atoll-converted", isDirectory: true)
        let copy = folder.appendingPathComponent(name).path
        if FileManager.default.fileExists(atPath: copy) { return copy }
        let file: RealmFile
        do {
            file = try RealmFile(path: path, encryptionKey: encryptionKey)
        } catch {
            throw Self.error(error)
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw Realm.Error(.fileAccess, "cannot create \(folder.path) for a converted copy of \(path): \(error.localizedDescription)", path: path)
        }
        let partial = RealmFiles.partialPath(for: copy)
        defer { for suffix in RealmFiles.suffixes { try? FileManager.default.removeItem(atPath: partial + suffix) } }
        try convert(file, into: partial, key: key)
        try RealmFiles.sync(partial)
        do {
            try RealmFiles.publish(partial, at: copy)
        } catch let error as Realm.Error where error.code == .fileExists {
            // Another opener converted it first.
        }
        return copy
    }
}

// MARK: - Public

extension Realm {
    /// Converts the file Realm wrote at `source` (formats 20–24, encrypted with `encryptionKey` if
    /// it is) into an Atoll realm file at `destination`, with the file's classes, objects and
    /// schema version; `source` is not changed. Opening a configuration whose `fileURL` holds such
    /// a file does this in place by itself: this is for tools and for converting ahead of time.
    ///
    /// ```swift
    /// try Realm.convertRealmFile(at: oldURL, to: newURL) { done, total in print("\(done)/\(total)") }
    /// ```
    ///
    /// - Parameter progress: told the objects written and the total, every thousand objects.
    /// - Throws: `.fileExists` when a file is at `destination`; `.invalidDatabase`,
    ///   `.unsupportedFileFormatVersion` or `.fileAccess` for a file that cannot be read (a wrong key
    ///   says so).
    public static func convertRealmFile(at source: URL, to destination: URL, encryptionKey: Data? = nil,
                                        progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws {
        let key = try EncryptionKey.make(encryptionKey)
        let file: RealmFile
        do {
            file = try RealmFile(path: source.standardizedFileURL.path, encryptionKey: encryptionKey)
        } catch {
            throw RealmFormatConversion.error(error)
        }
        let path = destination.standardizedFileURL.path
        guard !FileManager.default.fileExists(atPath: path) else {
            throw Realm.Error(.fileExists, "File at path '\(path)' already exists", path: path)
        }
        let partial = RealmFiles.partialPath(for: path)
        defer { for suffix in RealmFiles.suffixes { try? FileManager.default.removeItem(atPath: partial + suffix) } }
        try RealmFormatConversion.convert(file, into: partial, key: key, progress: progress)
        try RealmFiles.sync(partial)
        try RealmFiles.publish(partial, at: path)
    }
}
