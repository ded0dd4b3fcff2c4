import Foundation

/// A Realm file described for people and tools: what `atoll realm-file inspect` prints (what
/// Realm Studio showed: format, schema version, classes, properties, object counts) and what
/// `atoll realm-file export` writes (each object as one line of relaxed Extended JSON).
///
/// ```swift
/// let file = try RealmFile(path: "default.realm")
/// print(try RealmFileReport.inspect(file))
/// try RealmFileReport.export(file.table(named: "Task"), of: file) { print($0) }
/// ```
public enum RealmFileReport {
    /// The file's format and schema versions, each class with its properties and object count,
    /// and the tables Realm keeps for itself (sync subscriptions, schema metadata).
    public static func inspect(_ file: RealmFile) throws(RealmFileError) -> String {
        var lines = ["format: \(file.formatVersion)", "schema version: \(file.schemaVersion.map(String.init) ?? "none")"]
        let classes = file.classTables.sorted { $0.className < $1.className }
        lines.append("classes: \(classes.count)")
        for table in classes {
            let kind = switch table.kind {
            case .topLevel: ""
            case .embedded: " (embedded)"
            case .asymmetric: " (asymmetric)"
            }
            let count = try table.objectCount()
            lines.append("  \(table.className)\(kind): \(count) object\(count == 1 ? "" : "s")")
            for column in table.columns {
                lines.append("    \(column.name): \(describe(column, of: file))\(column.name == table.primaryKey ? ", primary key" : "")")
            }
        }
        let ownTables = file.tables.filter { !$0.isClassTable }.map(\.name).sorted()
        lines.append("other tables: \(ownTables.isEmpty ? "none" : ownTables.joined(separator: ", "))")
        let subscriptions = ownTables.contains("flx_subscriptions")
        lines.append("flexible sync subscriptions: \(subscriptions ? "yes" : "no")")
        return lines.joined(separator: "\n")
    }

    /// Calls `emit` with each object of `table`, in the file's order, as relaxed Extended JSON
    /// (one document, no line breaks). A link becomes the target's primary key when its class has
    /// one, the target itself when it is embedded, else `{"$link": {"class": …, "key": …}}`.
    public static func export(_ table: RealmTable, of file: RealmFile, _ emit: (String) -> Void) throws(RealmFileError) {
        let exporter = Exporter(file: file)
        var cursor = table.objects()
        while let object = try cursor.next() {
            var out = ""
            try exporter.document(object, of: table, depth: 0, path: 0).write(to: &out)
            emit(out)
        }
    }

    /// Calls `emit` with each object of class `className` (see ``export(_:of:_:)``) or, when it
    /// is nil, of every class that is not embedded, by class name, each line
    /// `{"class": <name>, "object": <object>}`.
    public static func export(_ file: RealmFile, className: String?, _ emit: (String) -> Void) throws(RealmFileError) {
        if let className {
            try export(file.table(named: className), of: file, emit)
            return
        }
        for table in file.classTables.sorted(by: { $0.className < $1.className }) where table.kind != .embedded {
            var prefix = "{\"class\":"
            JSONText.quote(table.className, into: &prefix)
            prefix += ",\"object\":"
            try export(table, of: file) { emit(prefix + $0 + "}") }
        }
    }

    static func describe(_ column: RealmColumn, of file: RealmFile) -> String {
        var type = column.type.rawValue
        if let target = column.targetTable {
            type = (try? file.table(named: target))?.className ?? target
        }
        if column.isNullable { type += "?" }
        return switch column.collection {
        case .single: type
        case .list: "list of \(type)"
        case .set: "set of \(type)"
        case .dictionary(let key): "dictionary of \(key.rawValue) to \(type)"
        }
    }
}

/// A JSON value written in the order it was built (a document keeps the file's column order).
enum JSONText {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONText])
    case object([(String, JSONText)])

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.quote(text, into: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// Builds Extended JSON documents, inlining embedded objects (to a bounded depth: a damaged file
/// may link embedded objects in a cycle).
private struct Exporter {
    let file: RealmFile
    static let maxDepth = 64
    /// Bound on embedded objects plus collections (which Mixed values nest up to 100 deep) along one path, so
    /// the recursion stays well inside a thread's stack.
    static let maxCombinedDepth = 200

    /// `depth` counts embedded objects, `path` embedded objects and collections, above `object`.
    func document(_ object: RealmObject, of table: RealmTable, depth: Int, path: Int) throws(RealmFileError) -> JSONText {
        try Self.checkCombined(path)
        guard depth <= Self.maxDepth else {
            throw .invalidDatabase(reason: "embedded objects nest deeper than \(Self.maxDepth) levels in \(table.name)")
        }
        var members: [(String, JSONText)] = []
        for (name, value) in zip(object.columnNames, object.values) {
            members.append((name, try json(value, depth: depth, path: path)))
        }
        return .object(members)
    }

    func json(_ value: RealmValue, depth: Int, path: Int) throws(RealmFileError) -> JSONText {
        // Collections recurse here; scalars are written by a separate function so this frame stays small.
        switch value {
        case .list(let items), .set(let items):
            try Self.checkCombined(path)
            var array: [JSONText] = []
            array.reserveCapacity(items.count)
            for item in items { array.append(try json(item, depth: depth, path: path + 1)) }
            return .array(array)
        case .dictionary(let entries):
            try Self.checkCombined(path)
            var members: [(String, JSONText)] = []
            members.reserveCapacity(entries.count)
            for entry in entries { members.append((entry.key, try json(entry.value, depth: depth, path: path + 1))) }
            return .object(members)
        case .link(let link): return try self.link(link, depth: depth, path: path)
        default: return Self.scalar(value)
        }
    }

    @inline(never)
    static func scalar(_ value: RealmValue) -> JSONText {
        switch value {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .int(let value): return .number(String(value))
        case .string(let value): return .string(value)
        case .float(let value): return Self.number(Double(value))
        case .double(let value): return Self.number(value)
        case .binary(let data): return Self.binary(data, subType: "00")
        case .uuid(let uuid): return Self.binary(withUnsafeBytes(of: uuid.uuid) { Data($0) }, subType: "04")
        case .objectId(let id): return .object([("$oid", .string(id.hexString))])
        case .decimal128(let decimal): return .object([("$numberDecimal", .string(decimal.description))])
        case .timestamp(let timestamp): return Self.date(timestamp)
        case .list, .set, .dictionary, .link: return .null
        }
    }

    static func checkCombined(_ depth: Int) throws(RealmFileError) {
        guard depth < maxCombinedDepth else {
            throw .invalidDatabase(reason: "embedded objects and nested collections go deeper than \(maxCombinedDepth) levels")
        }
    }

    func link(_ link: RealmLink, depth: Int, path: Int) throws(RealmFileError) -> JSONText {
        let target = try file.table(named: link.table)
        let reference = JSONText.object([("$link", .object([("class", .string(target.className)), ("key", .number(String(link.objectKey)))]))])
        guard !link.isUnresolved, let object = try target.object(key: link.objectKey) else { return reference }
        if target.kind == .embedded { return try document(object, of: target, depth: depth + 1, path: path + 1) }
        if let primaryKey = target.primaryKey, let value = object[primaryKey] { return try json(value, depth: depth, path: path) }
        return reference
    }

    static func number(_ value: Double) -> JSONText {
        guard value.isFinite else {
            return .object([("$numberDouble", .string(value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity"))])
        }
        if value == value.rounded(), abs(value) < 1e15 { return .number(String(format: "%.1f", value)) }
        return .number("\(value)")
    }

    static func binary(_ data: Data, subType: String) -> JSONText {
        .object([("$binary", .object([("base64", .string(data.base64EncodedString())), ("subType", .string(subType))]))])
    }

    /// Relaxed form for years 1970–9999 (ISO 8601 with milliseconds), canonical otherwise.
    static func date(_ timestamp: RealmTimestamp) -> JSONText {
        let milliseconds = timestamp.seconds.multipliedReportingOverflow(by: 1_000)
        guard !milliseconds.overflow else { return .object([("$date", .object([("$numberLong", .string("\(timestamp.seconds)000"))]))]) }
        let total = milliseconds.partialValue &+ Int64(timestamp.nanoseconds / 1_000_000)
        guard total >= 0, total < 253_402_300_800_000 else {
            return .object([("$date", .object([("$numberLong", .string(String(total)))]))])
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return .object([("$date", .string(formatter.string(from: Date(timeIntervalSince1970: Double(total) / 1_000))))])
    }
}
