import Atoll
import AtollCore

extension QueryFixtures {
    /// SQL that creates the fixture's tables as ``StorageLayout`` describes them and fills them with
    /// ``objects`` (rows numbered from 1 in order; embedded objects get rows of their own type's table).
    /// Run it on a database where the `ATOLL_DECIMAL` collation is registered. `objects` replaces the
    /// fixture's objects (keyed by type, each with an `_id`), for randomised tests on the same schema.
    package static func sqlScript(objects: [String: [[String: Value]]] = objects) -> [(sql: String, arguments: [SQLValue])] {
        var script = SQLScript()
        for object in schema.objectSchemas {
            var columns = ["\(StorageLayout.rowColumn) INTEGER PRIMARY KEY"]
            for property in object.properties where property.isSingle {
                columns.append("\(StorageLayout.quote(property.name)) \(columnType(property.type))")
            }
            script.add("CREATE TABLE \(StorageLayout.quote(StorageLayout.table(object.name))) (\(columns.joined(separator: ", ")))")
            for property in object.properties where !property.isSingle {
                let value = "value \(columnType(property.type))"
                let columns = switch property.collection {
                case .list: "owner INTEGER NOT NULL, pos INTEGER NOT NULL, \(value)"
                case .set: "owner INTEGER NOT NULL, \(value)"
                default: "owner INTEGER NOT NULL, key TEXT NOT NULL, \(value)"
                }
                script.add("CREATE TABLE \(StorageLayout.quote(StorageLayout.collectionTable(object.name, property))) (\(columns))")
            }
        }
        for (type, list) in objects {
            for (index, object) in list.enumerated() {
                script.rows[ObjectLink(objectType: type, primaryKey: object["_id"]!)] = Int64(index + 1)
            }
        }
        for type in objects.keys.sorted() {
            for (index, object) in objects[type]!.enumerated() {
                script.insert(object, type: type, row: Int64(index + 1))
            }
        }
        return script.statements
    }

    static func columnType(_ type: PropertyType) -> String {
        switch type {
        case .bool, .int, .object, .linkingObjects: "INTEGER"
        case .double, .float, .date: "REAL"
        case .string: "TEXT"
        case .data, .objectId, .UUID, .any: "BLOB"
        case .decimal128: "TEXT COLLATE \(StorageLayout.decimalCollation)"
        }
    }
}

private struct SQLScript {
    var statements: [(sql: String, arguments: [SQLValue])] = []
    var rows: [ObjectLink: Int64] = [:]
    var embeddedRows: [String: Int64] = [:]

    mutating func add(_ sql: String, _ arguments: [SQLValue] = []) {
        statements.append((sql, arguments))
    }

    mutating func insert(_ object: [String: Value], type: String, row: Int64) {
        let schema = QueryFixtures.schema[type]!
        var names = [StorageLayout.rowColumn]
        var values: [SQLValue] = [.integer(row)]
        for property in schema.properties where property.isSingle {
            names.append(StorageLayout.quote(property.name))
            values.append(encode(object[property.name] ?? .null, property))
        }
        let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
        add("INSERT INTO \(StorageLayout.quote(StorageLayout.table(type))) (\(names.joined(separator: ", "))) VALUES (\(marks))",
            values)
        for property in schema.properties where !property.isSingle {
            let table = StorageLayout.quote(StorageLayout.collectionTable(type, property))
            switch object[property.name] ?? .null {
            case .list(let items):
                for (pos, item) in items.enumerated() {
                    add("INSERT INTO \(table) (owner, pos, value) VALUES (?, ?, ?)",
                        [.integer(row), .integer(Int64(pos)), encode(item, property)])
                }
            case .set(let items):
                for item in items {
                    add("INSERT INTO \(table) (owner, value) VALUES (?, ?)", [.integer(row), encode(item, property)])
                }
            case .map(let entries):
                for key in entries.keys.sorted() {
                    add("INSERT INTO \(table) (owner, key, value) VALUES (?, ?, ?)",
                        [.integer(row), .text(key), encode(entries[key]!, property)])
                }
            default: break
            }
        }
    }

    mutating func encode(_ value: Value, _ property: Property) -> SQLValue {
        switch value {
        case .link(let link): return rows[link].map(SQLValue.integer) ?? .null
        case .object(let fields):
            let type = property.objectType!
            let row = (embeddedRows[type] ?? 0) + 1
            embeddedRows[type] = row
            insert(fields, type: type, row: row)
            return .integer(row)
        default: return value.sqlValue
        }
    }
}
