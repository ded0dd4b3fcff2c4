import AtollCore
import Foundation

/// Tables and columns from the server: added when the schema stays valid with them.
extension Integrator {
    mutating func addTable(_ schema: ObjectSchema) throws {
        if let existing = realm.coordinator.table(named: schema.name) {
            for property in schema.properties where existing.schema[property: property.name] == nil {
                try addColumn(schema.name, property)
            }
            return
        }
        guard try install(schema) else {
            deferredTables.append(schema)
            return
        }
        // A table may complete the links of tables deferred before it.
        var progress = true
        while progress {
            progress = false
            for (index, deferred) in deferredTables.enumerated() where try install(deferred) {
                deferredTables.remove(at: index)
                progress = true
                break
            }
        }
    }

    /// Creates a table for a type the file does not have, if the schema stays valid with it.
    func install(_ schema: ObjectSchema) throws -> Bool {
        guard realm.coordinator.table(named: schema.name) == nil else { return true }
        guard (try? Schema(realm.coordinator.allTables.map(\.schema) + [schema])) != nil else { return false }
        try SchemaInstaller.addTypes([schema], connection: realm.connection, path: realm.coordinator.path)
        realm.coordinator.install(TableInfo(schema: schema, classInfo: nil))
        return true
    }

    mutating func addColumn(_ type: String, _ property: Property) throws {
        if let index = deferredTables.firstIndex(where: { $0.name == type }) {
            if deferredTables[index][property: property.name] == nil { deferredTables[index].properties.append(property) }
            return
        }
        // A type with a class keeps the class's properties: a column the class does not declare
        // would make the next open of the file require a migration.
        guard let table = realm.coordinator.table(named: type), table.classInfo == nil,
              table.schema[property: property.name] == nil, !property.isPrimaryKey else { return }
        var schema = table.schema
        schema.properties.append(property)
        guard (try? Schema(realm.coordinator.allTables.filter { $0.name != type }.map(\.schema) + [schema])) != nil else { return }
        try SchemaInstaller.addProperty(type, property, realm.connection)
        if property.isSingle { try SchemaInstaller.createIndexes(type, property, realm.connection) }
        try SchemaInstaller.replaceStoredType(schema, connection: realm.connection, path: realm.coordinator.path)
        realm.coordinator.install(TableInfo(schema: schema, classInfo: nil))
    }
}
