import AtollRealmFile
import Foundation
import Testing

/// Files written by realm-core 14.14.0 (file format 24) with every property type, checked against the
/// `expected_*.json` files the generator wrote by reading the same files back through realm-core: every class's
/// schema, and every value of every object, with no sampling (see Fixtures/README.md).
@Suite struct GeneratedFixtureTests {
    @Test func allTypesFile() throws {
        try Self.check(file: Fixtures.open("allTypes_v24.realm"), expected: "expected_allTypes_v24.json", schemaVersion: 7)
    }

    @Test func allTypesEncryptedFile() throws {
        let file = try RealmFile(path: Fixtures.path(Fixtures.encryptedAllTypes), encryptionKey: Fixtures.allTypesKey)
        try Self.check(file: file, expected: "expected_allTypes_v24.json", schemaVersion: 7)
        // Without its key the file is recognised as encrypted, not misread.
        #expect(throws: RealmFileError.self) { _ = try Fixtures.open(Fixtures.encryptedAllTypes) }
    }

    @Test func allTypesInMemoryCopy() throws {
        let file = try RealmFile(data: Fixtures.data("allTypes_v24.realm"))
        try Self.check(file: file, expected: "expected_allTypes_v24.json", schemaVersion: 7)
    }

    @Test func emptySchemaFile() throws {
        let file = try Fixtures.open("empty_schema_v3.realm")
        try Self.check(file: file, expected: "expected_empty_schema_v3.json", schemaVersion: 3)
        #expect(try file.table(named: "Person").objectCount() == 0)
    }

    /// A nested Mixed value, spelled out, so a fault in the generic comparison below cannot hide one.
    @Test func nestedMixedValues() throws {
        let table = try Fixtures.open("allTypes_v24.realm").table(named: "AllTypes")
        let objects = try table.allObjects()
        #expect(objects.count == 3)
        #expect(objects[0]["mixed"] == .list([.int(1), .string("two"), .dictionary([RealmDictionaryEntry(key: "k", value: .double(3.5))])]))
        #expect(objects[1]["mixedList"] == .list([
            .list([.int(1), .list([.int(2)])]),
            .dictionary([RealmDictionaryEntry(key: "x", value: .dictionary([RealmDictionaryEntry(key: "y", value: .null)]))]),
        ]))
    }

    // MARK: - Comparison

    /// Differences the comparison must notice: each edit of the expected JSON has to make `check` fail.
    static let mutations: [(String, String)] = [
        ("\"schemaVersion\": 7", "\"schemaVersion\": 8"),
        ("-9223372036854775808", "-9223372036854775807"),
        ("{\"int\": 1001301}", "{\"int\": 1001300}"),     // first element past the first B+tree leaf
        ("{\"int\": 2246301}]", "{\"int\": 2246302}]"),   // last of 1,500
        ("\"intList\": [{\"int\": 1},{\"int\": -2},", "\"intList\": [{\"int\": -2},"),
        ("\"double\": -0.0", "\"double\": 0"),
        ("\"float\": \"nan\"", "\"float\": \"inf\""),
        ("b0400000000000000000000000000000", "30400000000000000000000000000000"), // decimal -0 vs 0
        ("\"nanoseconds\": -1}", "\"nanoseconds\": -2}"),
        ("\"y\": null", "\"y\": {\"int\": 0}"),
        ("\"k\": {\"double\": 3.5}", "\"k\": {\"float\": 3.5}"),
        ("\"again\"", "\"agian\""),
        ("\"stringSet\": [{\"string\": \"a\"}", "\"stringSet\": [{\"string\": \"c\"}"),
        ("\"pk\": {\"int\": 4}", "\"pk\": {\"int\": 3}"),
        ("\"emb0\"", "\"emb9\""),
        ("\"indexed\": true", "\"indexed\": false"),
    ]

    @Test func comparisonDetectsEachDifference() throws {
        let file = try Fixtures.open("allTypes_v24.realm")
        let text = String(decoding: try Fixtures.data("expected_allTypes_v24.json"), as: UTF8.self)
        for (original, replacement) in Self.mutations {
            #expect(text.components(separatedBy: original).count > 1, "mutation target \(original) not in the JSON")
            let mutated = Data(text.replacingOccurrences(of: original, with: replacement).utf8)
            let detected: Bool
            do { detected = try !Self.check(file: file, json: mutated).isEmpty } catch { detected = true }
            #expect(detected, "the comparison missed the edit \(original) → \(replacement)")
        }
    }

    static func check(file: RealmFile, expected name: String, schemaVersion: UInt64) throws {
        #expect(file.schemaVersion == schemaVersion)
        for failure in try check(file: file, json: Fixtures.data(name)) {
            Issue.record(Comment(rawValue: failure))
        }
    }

    /// Compares the whole file with the JSON; returns the differences found, each naming class, object and property.
    static func check(file: RealmFile, json: Data) throws -> [String] {
        let expected = try JSONValue.parse(json)
        let classes = try need(expected["classes"]?.members, "no classes in the JSON")
        var checker = Checker(file: file)
        checker.verify(file.formatVersion == 24, "file format \(file.formatVersion)")
        checker.verify(file.schemaVersion.map { Int64($0) } == expected["schemaVersion"]?.int, "schema version \(String(describing: file.schemaVersion))")
        checker.verify(file.tables.contains { $0.name == "metadata" }, "no metadata table")
        checker.verify(Set(file.classTables.map(\.className)) == Set(classes.map(\.key)), "class tables \(file.classTables.map(\.className))")
        for (className, description) in classes {
            try checker.checkClass(className, description)
        }
        let total = classes.reduce(0) { $0 + Int($1.value["objectCount"]?.int ?? 0) }
        let (objectsChecked, valuesCompared) = (checker.objectsChecked, checker.valuesCompared)
        checker.verify(objectsChecked == total, "\(objectsChecked) of \(total) objects compared")
        checker.verify(total == 0 || valuesCompared > 0, "no values compared")
        return checker.failures
    }

    struct Checker {
        let file: RealmFile
        var valuesCompared = 0
        var failures: [String] = []
        var objectsChecked = 0
        /// Objects read so far, by table name and object key.
        var objectCache: [String: [Int64: RealmObject]] = [:]

        init(file: RealmFile) { self.file = file }

        mutating func verify(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { failures.append(message()) }
        }

        mutating func checkClass(_ className: String, _ description: JSONValue) throws {
            let schema = try need(description["schema"], "\(className): no schema")
            let table = try file.table(named: "class_" + className)
            verify(table.name == schema["table"]?.string, "\(className): table name")
            let kind: RealmTableKind = switch schema["tableType"]?.string {
            case "embedded": .embedded
            case "asymmetric": .asymmetric
            default: .topLevel
            }
            verify(table.kind == kind, "\(className): table kind")
            verify(table.primaryKey == schema["primaryKey"]?.string, "\(className): primary key")
            let properties = try need(schema["properties"]?.elements)
            verify(table.columns.map(\.name) == properties.compactMap { $0["name"]?.string }, "\(className): column names")
            for property in properties {
                try checkColumn(className, table, property)
            }

            let objects = try need(description["objects"]?.elements)
            verify(try table.objectCount() == Int(description["objectCount"]?.int ?? -1), "\(className): object count")
            verify(objects.count == Int(description["objectCount"]?.int ?? -1), "\(className): the JSON lists every object")
            let actual = try table.allObjects()
            verify(actual.count == objects.count, "\(className): objects read")
            for (index, (expectedObject, object)) in zip(objects, actual).enumerated() {
                let key = expectedObject["objKey"]?.int
                verify(object.key == key, "\(className) object #\(index): key \(object.key), expected \(String(describing: key))")
                let values = try need(expectedObject["properties"]?.members, "\(className) object #\(index): no properties")
                let computed = (schema["computedProperties"]?.elements ?? []).compactMap { $0["name"]?.string }
                verify(values.map(\.key) == table.columns.map(\.name) + computed,
                       "\(className) object \(object.key): JSON properties \(values.map(\.key)) are not the columns and computed properties")
                try checkObject("\(className) object \(object.key)", table, object, values)
            }
            try checkComputed(className, schema, table, objects, actual)
        }

        mutating func checkColumn(_ className: String, _ table: RealmTable, _ property: JSONValue) throws {
            let name = property["name"]?.string ?? "?"
            let where_ = "\(className).\(name)"
            let column = try need(table.column(named: name), "\(where_): no such column")
            let type: RealmColumnType? = switch property["type"]?.string {
            case "int": .int
            case "bool": .bool
            case "string": .string
            case "data": .binary
            case "date": .timestamp
            case "float": .float
            case "double": .double
            case "decimal": .decimal128
            case "objectId": .objectId
            case "uuid": .uuid
            case "mixed": .mixed
            case "object": .link
            default: nil
            }
            verify(column.type == type, "\(where_): type \(column.type)")
            verify(column.isNullable == (property["optional"]?.bool == true), "\(where_): nullability")
            let collection: RealmCollectionKind? = switch property["collection"]?.string {
            case nil: .single
            case "list": .list
            case "set": .set
            case "dictionary": .dictionary(keyType: .string)
            default: nil
            }
            verify(column.collection == collection, "\(where_): collection kind \(column.collection)")
            verify(column.targetTable == property["objectType"]?.string.map { "class_" + $0 }, "\(where_): link target")
            // The object store's `indexed` is the column's search-index attribute; a primary key has an index
            // without that attribute.
            verify(column.isIndexed == (property["indexed"]?.bool == true), "\(where_): indexed")
            verify((table.primaryKey == name) == (property["primaryKey"]?.bool == true), "\(where_): primary key")
        }

        mutating func checkObject(_ where_: String, _ table: RealmTable, _ object: RealmObject, _ values: [(key: String, value: JSONValue)]) throws {
            objectsChecked += 1
            let persisted = Set(table.columns.map(\.name))
            let listed = values.map(\.key).filter { persisted.contains($0) }
            verify(listed == table.columns.map(\.name), "\(where_): the JSON lists every column")
            for (name, expected) in values where persisted.contains(name) {
                let column = try need(table.column(named: name))
                let actual = try need(object[name], "\(where_).\(name): not read")
                if let mismatch = try compare(expected, actual, column: column) {
                    failures.append("\(where_).\(name): \(mismatch)")
                }
            }
        }

        /// LinkingObjects are not stored as columns: each must list exactly the objects whose origin property
        /// links here, and each object's backlink count must equal the links into it found in all values.
        mutating func checkComputed(_ className: String, _ schema: JSONValue, _ table: RealmTable, _ expected: [JSONValue], _ actual: [RealmObject]) throws {
            for computed in schema["computedProperties"]?.elements ?? [] {
                let name = computed["name"]?.string ?? "?"
                let originClass = try need(computed["objectType"]?.string)
                let originProperty = try need(computed["originProperty"]?.string)
                let origin = try file.table(named: "class_" + originClass)
                verify(origin.column(named: originProperty) != nil, "\(className).\(name): origin \(originClass).\(originProperty)")
                for (expectedObject, object) in zip(expected, actual) {
                    let linking = try origin.allObjects().filter { candidate in
                        Self.links(in: candidate[originProperty] ?? .null).contains(RealmLink(table: table.name, objectKey: object.key))
                    }
                    let expectedLinks = expectedObject["properties"]?[name]?.elements ?? []
                    let found = RealmValue.set(linking.map { .link(RealmLink(table: origin.name, objectKey: $0.key)) })
                    let column = RealmColumn.Probe(type: .link, collection: .set, target: origin.name, nullable: false)
                    if let mismatch = try compare(.array(expectedLinks), found, column: column) {
                        failures.append("\(className) object \(object.key).\(name): \(mismatch)")
                    }
                }
            }
            // Backlinks: count every link to each object of this table over all tables and values.
            var incoming: [Int64: Int] = [:]
            for other in file.tables {
                for object in try other.allObjects() {
                    for value in object.values {
                        for link in Self.links(in: value) where link.table == table.name { incoming[link.objectKey, default: 0] += 1 }
                    }
                }
            }
            for object in actual {
                verify(object.backlinkCount == incoming[object.key, default: 0], "\(className) object \(object.key): backlink count")
            }
        }

        static func links(in value: RealmValue) -> [RealmLink] {
            switch value {
            case let .link(link): [link]
            case let .list(values), let .set(values): values.flatMap(links(in:))
            case let .dictionary(entries): entries.flatMap { links(in: $0.value) }
            default: []
            }
        }

        /// Nil when `actual` is what realm-core wrote as `expected`, else a description of the difference.
        mutating func compare(_ expected: JSONValue, _ actual: RealmValue, column: RealmColumn.Probe) throws -> String? {
            valuesCompared += 1
            switch column.collection {
            case .single: return try compareScalar(expected, actual, column: column)
            case .list:
                guard case let .array(items) = expected, case let .list(values) = actual else { return "expected list \(expected), read \(actual)" }
                return try compareOrdered(items, values, column: column.element)
            case .set:
                guard case let .array(items) = expected, case let .set(values) = actual else { return "expected set \(expected), read \(actual)" }
                return try compareUnordered(items, values, column: column.element)
            case .dictionary:
                guard case let .object(members) = expected, case let .dictionary(entries) = actual else { return "expected dictionary \(expected), read \(actual)" }
                return try compareEntries(members, entries, column: column.element)
            }
        }

        mutating func compare(_ expected: JSONValue, _ actual: RealmValue, column: RealmColumn) throws -> String? {
            try compare(expected, actual, column: RealmColumn.Probe(column))
        }

        mutating func compareOrdered(_ items: [JSONValue], _ values: [RealmValue], column: RealmColumn.Probe) throws -> String? {
            guard items.count == values.count else { return "\(values.count) elements read, \(items.count) expected" }
            for (index, (item, value)) in zip(items, values).enumerated() {
                if let mismatch = try compare(item, value, column: column) { return "[\(index)]: \(mismatch)" }
            }
            return nil
        }

        mutating func compareUnordered(_ items: [JSONValue], _ values: [RealmValue], column: RealmColumn.Probe) throws -> String? {
            guard items.count == values.count else { return "\(values.count) elements read, \(items.count) expected" }
            var unmatched = Array(values.indices)
            for (index, item) in items.enumerated() {
                var found: Int?
                for (position, candidate) in unmatched.enumerated() {
                    if try compare(item, values[candidate], column: column) == nil {
                        found = position
                        break
                    }
                }
                guard let found else { return "element \(index) (\(item)) not among \(values)" }
                unmatched.remove(at: found)
            }
            return nil
        }

        mutating func compareEntries(_ members: [(key: String, value: JSONValue)], _ entries: [RealmDictionaryEntry], column: RealmColumn.Probe) throws -> String? {
            guard members.count == entries.count else { return "\(entries.count) entries read, \(members.count) expected" }
            guard Set(entries.map(\.key)).count == entries.count else { return "duplicate keys in \(entries.map(\.key))" }
            for (key, item) in members {
                guard let entry = entries.first(where: { $0.key == key }) else { return "key \"\(key)\" missing from \(entries.map(\.key))" }
                if let mismatch = try compare(item, entry.value, column: column) { return "[\"\(key)\"]: \(mismatch)" }
            }
            return nil
        }

        mutating func compareScalar(_ expected: JSONValue, _ actual: RealmValue, column: RealmColumn.Probe) throws -> String? {
            let read = "read \(actual)"
            guard case let .object(members) = expected else {
                if case .null = expected { return actual == .null ? nil : "expected null, \(read)" }
                return "unexpected JSON \(expected)"
            }
            guard members.count == 1 || members.first?.key == "decimal", let (tag, payload) = members.first else { return "unexpected JSON \(expected)" }
            if column.type != .mixed, column.type != .link, tag != "link", tag != "embedded" {
                // Typed columns must give the value of their own type.
                guard Self.tag(of: actual, column.type) == tag else { return "expected \(tag) value for a \(column.type) column, \(read)" }
            }
            switch tag {
            case "int":
                return actual == .int(try need(payload.int)) ? nil : "expected int \(payload), \(read)"
            case "bool":
                return actual == .bool(try need(payload.bool)) ? nil : "expected bool \(payload), \(read)"
            case "string":
                return actual == .string(try need(payload.string)) ? nil : "expected string \(payload), \(read)"
            case "data":
                return actual == .binary(try need(Self.bytes(hex: payload.string))) ? nil : "expected data \(payload), \(read)"
            case "timestamp":
                let timestamp = RealmTimestamp(seconds: try need(payload["seconds"]?.int),
                                               nanoseconds: Int32(try need(payload["nanoseconds"]?.int)))
                return actual == .timestamp(timestamp) ? nil : "expected \(timestamp), \(read)"
            case "double":
                guard case let .double(value) = actual else { return "expected double \(payload), \(read)" }
                return Self.sameFloatingPoint(value, payload, parse: Double.init) ? nil : "expected double \(payload), \(read) (bits \(String(value.bitPattern, radix: 16)))"
            case "float":
                guard case let .float(value) = actual else { return "expected float \(payload), \(read)" }
                return Self.sameFloatingPoint(value, payload, parse: Float.init) ? nil : "expected float \(payload), \(read) (bits \(String(value.bitPattern, radix: 16)))"
            case "decimal":
                guard case let .decimal128(value) = actual else { return "expected decimal \(payload), \(read)" }
                let hex = try need(expected["bid128"]?.string)
                let bits = String(format: "%016llx%016llx", value.high, value.low)
                return bits == hex ? nil : "expected decimal \(payload) (bid128 \(hex)), read \(value) (bid128 \(bits))"
            case "objectId":
                return actual == .objectId(try need(RealmObjectId(hex: try need(payload.string)))) ? nil : "expected ObjectId \(payload), \(read)"
            case "uuid":
                return actual == .uuid(try need(UUID(uuidString: try need(payload.string)))) ? nil : "expected UUID \(payload), \(read)"
            case "list":
                guard case let .array(items) = payload, case let .list(values) = actual else { return "expected nested list \(payload), \(read)" }
                return try compareOrdered(items, values, column: .mixedElement)
            case "dictionary":
                guard case let .object(entries) = payload, case let .dictionary(values) = actual else { return "expected nested dictionary \(payload), \(read)" }
                return try compareEntries(entries, values, column: .mixedElement)
            case "link":
                guard case let .link(link) = actual else { return "expected link \(payload), \(read)" }
                let targetClass = try need(payload["class"]?.string)
                guard link.table == "class_" + targetClass else { return "expected link to \(targetClass), \(read)" }
                if column.type == .link, let target = column.target, target != link.table { return "link into \(link.table), column targets \(target)" }
                if let objectKey = payload["objKey"]?.int { return link.objectKey == objectKey ? nil : "expected link to object \(objectKey), \(read)" }
                let target = try file.table(named: link.table)
                guard let object = try object(target, link.objectKey) else { return "link to missing object \(link.objectKey) of \(link.table)" }
                let primaryKey = try need(target.primaryKey, "\(targetClass) has no primary key")
                let pkColumn = try need(target.column(named: primaryKey))
                if let mismatch = try compare(try need(payload["pk"]), object[primaryKey] ?? .null, column: pkColumn) {
                    return "link to \(targetClass) object \(link.objectKey) whose primary key differs: \(mismatch)"
                }
                return nil
            case "embedded":
                guard case let .link(link) = actual, let target = column.target, link.table == target else { return "expected embedded object \(payload), \(read)" }
                let table = try file.table(named: target)
                guard table.kind == .embedded else { return "embedded object in non-embedded table \(target)" }
                guard let object = try object(table, link.objectKey) else { return "link to missing embedded object \(link.objectKey)" }
                let members = try need(payload.members)
                guard members.map(\.key) == table.columns.map(\.name) else { return "embedded properties \(members.map(\.key)) vs columns \(table.columns.map(\.name))" }
                for (name, item) in members {
                    if let mismatch = try compare(item, object[name] ?? .null, column: try need(table.column(named: name))) {
                        return "embedded object \(link.objectKey).\(name): \(mismatch)"
                    }
                }
                return nil
            default:
                return "unknown JSON tag \(tag)"
            }
        }

        mutating func object(_ table: RealmTable, _ key: Int64) throws -> RealmObject? {
            if let cached = objectCache[table.name]?[key] { return cached }
            let object = try table.object(key: key)
            objectCache[table.name, default: [:]][key] = object
            return object
        }

        /// The JSON tag realm-core's dump gives a value of a typed column.
        static func tag(of value: RealmValue, _ type: RealmColumnType) -> String? {
            switch value {
            case .null: "null"
            case .int: "int"
            case .bool: "bool"
            case .string: "string"
            case .binary: "data"
            case .float: "float"
            case .double: "double"
            case .timestamp: "timestamp"
            case .decimal128: "decimal"
            case .objectId: "objectId"
            case .uuid: "uuid"
            case .link: "link"
            case .list: "list"
            case .set: "set"
            case .dictionary: "dictionary"
            }
        }

        /// Same bits, except NaN (any NaN) and the spelled-out infinities.
        static func sameFloatingPoint<F: BinaryFloatingPoint>(_ value: F, _ payload: JSONValue, parse: (String) -> F?) -> Bool {
            switch payload {
            case .string("nan"): return value.isNaN
            case .string("inf"): return value == .infinity
            case .string("-inf"): return value == -.infinity
            case .string("-0.0"): return value == 0 && value.sign == .minus
            case let .number(text):
                guard let parsed = parse(text) else { return false }
                return parsed == value && parsed.sign == value.sign
            default: return false
            }
        }

        static func bytes(hex: String?) -> Data? {
            guard let hex, hex.utf8.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
                bytes.append(byte)
                index = next
            }
            return Data(bytes)
        }
    }
}

struct MissingValue: Error, CustomStringConvertible {
    let description: String
}

/// `value`, or a thrown error naming `what` (usable where `#require` cannot be nested).
func need<T>(_ value: T?, _ what: @autoclosure () -> String = "a value the JSON or the file lacks") throws -> T {
    guard let value else { throw MissingValue(description: what()) }
    return value
}

extension RealmColumn {
    /// What the comparison needs to know about a column (or a collection's elements).
    struct Probe {
        let type: RealmColumnType
        let collection: RealmCollectionKind
        let target: String?
        let nullable: Bool

        init(_ column: RealmColumn) {
            self.init(type: column.type, collection: column.collection, target: column.targetTable, nullable: column.isNullable)
        }

        init(type: RealmColumnType, collection: RealmCollectionKind, target: String?, nullable: Bool) {
            self.type = type
            self.collection = collection
            self.target = target
            self.nullable = nullable
        }

        /// The same column's elements.
        var element: Probe { Probe(type: type, collection: .single, target: target, nullable: nullable) }
        /// An element of a collection nested in a Mixed value.
        static let mixedElement = Probe(type: .mixed, collection: .single, target: nil, nullable: true)
    }
}

/// A JSON value that keeps numbers as their text (exact 64-bit integers, floats parsed at their own width) and
/// object members in file order.
enum JSONValue: CustomStringConvertible {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    subscript(key: String) -> JSONValue? {
        if case let .object(members) = self { return members.first { $0.key == key }?.value }
        return nil
    }

    var string: String? { if case let .string(v) = self { v } else { nil } }
    var bool: Bool? { if case let .bool(v) = self { v } else { nil } }
    var int: Int64? { if case let .number(v) = self { Int64(v) } else { nil } }
    var elements: [JSONValue]? { if case let .array(v) = self { v } else { nil } }
    var members: [(key: String, value: JSONValue)]? { if case let .object(v) = self { v } else { nil } }

    var description: String {
        switch self {
        case .null: "null"
        case let .bool(v): "\(v)"
        case let .number(v): v
        case let .string(v): "\"\(v.count > 80 ? String(v.prefix(80)) + "…" : v)\""
        case let .array(v): "[" + v.map(\.description).joined(separator: ", ") + "]"
        case let .object(v): "{" + v.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        }
    }

    struct SyntaxError: Error, CustomStringConvertible {
        let offset: Int
        var description: String { "JSON syntax error at byte \(offset)" }
    }

    static func parse(_ data: Data) throws -> JSONValue {
        var parser = Parser(bytes: [UInt8](data))
        let value = try parser.value()
        parser.skipSpace()
        guard parser.position == parser.bytes.count else { throw SyntaxError(offset: parser.position) }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
        }

        mutating func expect(_ literal: String) throws {
            let utf8 = Array(literal.utf8)
            guard position + utf8.count <= bytes.count, Array(bytes[position..<position + utf8.count]) == utf8 else {
                throw SyntaxError(offset: position)
            }
            position += utf8.count
        }

        mutating func value() throws -> JSONValue {
            skipSpace()
            guard position < bytes.count else { throw SyntaxError(offset: position) }
            switch bytes[position] {
            case UInt8(ascii: "n"): try expect("null"); return .null
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "["):
                position += 1
                var items: [JSONValue] = []
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
                while true {
                    items.append(try value())
                    skipSpace()
                    guard position < bytes.count else { throw SyntaxError(offset: position) }
                    position += 1
                    if bytes[position - 1] == UInt8(ascii: "]") { return .array(items) }
                    guard bytes[position - 1] == UInt8(ascii: ",") else { throw SyntaxError(offset: position - 1) }
                }
            case UInt8(ascii: "{"):
                position += 1
                var members: [(key: String, value: JSONValue)] = []
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
                while true {
                    skipSpace()
                    let key = try string()
                    skipSpace()
                    try expect(":")
                    members.append((key, try value()))
                    skipSpace()
                    guard position < bytes.count else { throw SyntaxError(offset: position) }
                    position += 1
                    if bytes[position - 1] == UInt8(ascii: "}") { return .object(members) }
                    guard bytes[position - 1] == UInt8(ascii: ",") else { throw SyntaxError(offset: position - 1) }
                }
            default:
                let start = position
                while position < bytes.count, "+-0123456789.eE".utf8.contains(bytes[position]) { position += 1 }
                guard position > start else { throw SyntaxError(offset: start) }
                return .number(String(decoding: bytes[start..<position], as: UTF8.self))
            }
        }

        mutating func string() throws -> String {
            try expect("\"")
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    guard position < bytes.count else { throw SyntaxError(offset: position) }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "n"): raw.append(0x0A)
                    case UInt8(ascii: "t"): raw.append(0x09)
                    case UInt8(ascii: "r"): raw.append(0x0D)
                    case UInt8(ascii: "b"): raw.append(0x08)
                    case UInt8(ascii: "f"): raw.append(0x0C)
                    case UInt8(ascii: "u"):
                        flush()
                        var code = try hex4()
                        if (0xD800..<0xDC00).contains(code) {
                            try expect("\\u")
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw SyntaxError(offset: position) }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw SyntaxError(offset: position) }
                        scalars.append(scalar)
                    default: raw.append(escape) // \" \\ \/
                    }
                default: raw.append(byte)
                }
            }
            throw SyntaxError(offset: position)
        }

        mutating func hex4() throws -> UInt32 {
            guard position + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16) else {
                throw SyntaxError(offset: position)
            }
            position += 4
            return code
        }
    }
}
