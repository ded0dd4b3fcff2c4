import AtollCore
import Foundation

/// A small schema for the query tests (AtollCoreTests, and the SQL translator's in AtollTests): `Task` (ObjectId key, every scalar kind, a link,
/// collections), `Person` with a list of `Dog`s and an embedded `Address`.
package enum QueryTestSchema {
    package static let schema: Schema = try! Schema([
        ObjectSchema(name: "Task", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true),
            Property(name: "name", type: .string),
            Property(name: "owner", type: .string, isOptional: true),
            Property(name: "done", type: .bool),
            Property(name: "priority", type: .int),
            Property(name: "progress", type: .double),
            Property(name: "estimate", type: .decimal128, isOptional: true),
            Property(name: "due", type: .date, isOptional: true),
            Property(name: "blob", type: .data, isOptional: true),
            Property(name: "assignee", type: .object, isOptional: true, objectType: "Person"),
            Property(name: "tags", type: .string, collection: .list),
            Property(name: "labels", type: .string, collection: .set),
            Property(name: "counts", type: .int, collection: .map),
        ]),
        ObjectSchema(name: "Person", properties: [
            Property(name: "_id", type: .int, isPrimaryKey: true),
            Property(name: "name", type: .string),
            Property(name: "age", type: .int),
            Property(name: "dogs", type: .object, collection: .list, objectType: "Dog"),
            Property(name: "address", type: .object, isOptional: true, objectType: "Address"),
        ]),
        ObjectSchema(name: "Dog", properties: [
            Property(name: "_id", type: .int, isPrimaryKey: true),
            Property(name: "name", type: .string),
            Property(name: "age", type: .int),
        ]),
        ObjectSchema(name: "Address", properties: [
            Property(name: "city", type: .string),
        ], isEmbedded: true),
    ])

    package static func bind(_ query: String, _ arguments: [Value] = [], on type: String = "Task") throws -> BoundQuery {
        try BoundQuery(parsing: query, arguments: arguments, objectType: type, schema: schema)
    }
}
