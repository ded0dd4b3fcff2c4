import AtollCore
import Foundation

/// A small dataset for query tests: `Person`, `Dog`, `Task`, the embedded `Address` and the embedded
/// point `Location`, with every property kind, a to-one link, an embedded object, lists, sets and maps,
/// and computed backlinks (``backlinks``). Objects are property maps (as
/// ``BoundQuery/evaluate(on:resolver:)`` takes them) and their order is their row order.
package enum QueryFixtures {
    package static let schema: Schema = try! Schema([
        ObjectSchema(name: "Person", properties: [
            Property(name: "_id", type: .int, isPrimaryKey: true),
            Property(name: "name", type: .string),
            Property(name: "age", type: .int),
            Property(name: "nickname", type: .string, isOptional: true),
            Property(name: "height", type: .double),
            Property(name: "weight", type: .float, isOptional: true),
            Property(name: "isActive", type: .bool),
            Property(name: "birthday", type: .date, isOptional: true),
            Property(name: "avatar", type: .data, isOptional: true),
            Property(name: "oid", type: .objectId, isOptional: true),
            Property(name: "uuid", type: .UUID, isOptional: true),
            Property(name: "balance", type: .decimal128, isOptional: true),
            Property(name: "bestFriend", type: .object, isOptional: true, objectType: "Person"),
            Property(name: "address", type: .object, isOptional: true, objectType: "Address"),
            Property(name: "dogs", type: .object, collection: .list, objectType: "Dog"),
            Property(name: "tags", type: .string, collection: .list),
            Property(name: "scores", type: .int, collection: .list),
            Property(name: "luckyNumbers", type: .int, collection: .set),
            Property(name: "attrs", type: .int, collection: .map),
            Property(name: "home", type: .object, isOptional: true, objectType: "Location"),
        ]),
        ObjectSchema(name: "Dog", properties: [
            Property(name: "_id", type: .int, isPrimaryKey: true),
            Property(name: "name", type: .string),
            Property(name: "age", type: .int),
            Property(name: "weight", type: .double, isOptional: true),
            Property(name: "owner", type: .object, isOptional: true, objectType: "Person"),
        ]),
        ObjectSchema(name: "Address", properties: [
            Property(name: "city", type: .string),
            Property(name: "zip", type: .string, isOptional: true),
        ], isEmbedded: true),
        ObjectSchema(name: "Location", properties: [
            Property(name: "type", type: .string),
            Property(name: "coordinates", type: .double, collection: .list),
        ], isEmbedded: true),
        ObjectSchema(name: "Task", properties: [
            Property(name: "_id", type: .int, isPrimaryKey: true),
            Property(name: "title", type: .string),
            Property(name: "done", type: .bool),
            Property(name: "priority", type: .int),
            Property(name: "assignee", type: .object, isOptional: true, objectType: "Person"),
            Property(name: "labels", type: .string, collection: .set),
            Property(name: "estimate", type: .decimal128, isOptional: true),
            Property(name: "due", type: .date, isOptional: true),
            Property(name: "costs", type: .decimal128, collection: .list),
        ]),
    ])

    /// Computed backlinks, as a client declares them with `LinkingObjects`: a person's `tasks` (the
    /// tasks assigned to them) and a dog's `owners` (the people listing it in `dogs`).
    package static let backlinks: [String: [ComputedBacklink]] = [
        "Person": [ComputedBacklink(name: "tasks", originType: "Task", originProperty: "assignee")],
        "Dog": [ComputedBacklink(name: "owners", originType: "Person", originProperty: "dogs")],
    ]

    static func point(_ longitude: Double, _ latitude: Double, type: String = "Point") -> Value {
        .object(["type": .string(type), "coordinates": .list([.double(longitude), .double(latitude)])])
    }

    static func person(_ id: Int64) -> Value { .link(ObjectLink(objectType: "Person", primaryKey: .int(id))) }
    static func dog(_ id: Int64) -> Value { .link(ObjectLink(objectType: "Dog", primaryKey: .int(id))) }
    static func date(_ seconds: Double) -> Value { .date(Date(timeIntervalSince1970: seconds)) }
    static func decimal(_ text: String) -> Value { .decimal(try! Decimal128(string: text)) }
    static func ints(_ values: [Int64]) -> [Value] { values.map { .int($0) } }
    static func strings(_ values: [String]) -> [Value] { values.map { .string($0) } }

    /// The objects of each top-level type, in row order.
    package static let objects: [String: [[String: Value]]] = [
        "Person": [
            ["_id": .int(1), "name": .string("Alice"), "age": .int(30), "nickname": .string("Al"),
             "height": .double(1.75), "weight": .float(60.5), "isActive": .bool(true), "birthday": date(631_152_000),
             "avatar": .data(Data([1, 2, 3])), "oid": .objectId(try! ObjectId(string: "507f1f77bcf86cd799439011")),
             "uuid": .uuid(UUID(uuidString: "3b241101-e2bb-4255-8caf-4136c566a962")!), "balance": decimal("10.50"),
             "bestFriend": person(2), "address": .object(["city": .string("Paris"), "zip": .string("75001")]),
             "dogs": .list([dog(1), dog(2)]), "tags": .list(strings(["red", "green"])),
             "scores": .list(ints([10, 20, 30])), "luckyNumbers": .set(ints([3, 7])),
             "attrs": .map(["a": .int(1), "b": .int(2)]), "home": point(2.3522, 48.8566)],
            ["_id": .int(2), "name": .string("Bob"), "age": .int(25), "nickname": .null,
             "height": .double(1.8), "weight": .null, "isActive": .bool(false), "birthday": date(961_027_200),
             "avatar": .null, "oid": .objectId(try! ObjectId(string: "507f1f77bcf86cd799439012")),
             "uuid": .null, "balance": decimal("-3.25"),
             "bestFriend": person(1), "address": .object(["city": .string("Berlin"), "zip": .null]),
             "dogs": .list([dog(3)]), "tags": .list(strings(["blue"])),
             "scores": .list(ints([5])), "luckyNumbers": .set(ints([7])), "attrs": .map(["a": .int(5)]),
             "home": point(13.405, 52.52)],
            ["_id": .int(3), "name": .string("Carla"), "age": .int(40), "nickname": .string("Cee"),
             "height": .double(1.6), "weight": .float(55.25), "isActive": .bool(true), "birthday": .null,
             "avatar": .data(Data()), "oid": .null,
             "uuid": .uuid(UUID(uuidString: "9a7d3c52-0b5e-4f5e-8d1a-2c3b4a5d6e7f")!), "balance": decimal("100"),
             "bestFriend": .null, "address": .null,
             "dogs": .list([]), "tags": .list([]), "scores": .list([]), "luckyNumbers": .set([]), "attrs": .map([:])],
            ["_id": .int(4), "name": .string("dave"), "age": .int(25), "nickname": .string("Davy"),
             "height": .double(1.9), "weight": .float(80), "isActive": .bool(true), "birthday": date(478_656_000),
             "avatar": .data(Data([0xFF])), "oid": .objectId(try! ObjectId(string: "507f1f77bcf86cd799439013")),
             "uuid": .null, "balance": .null,
             "bestFriend": person(3), "address": .object(["city": .string("paris"), "zip": .string("75002")]),
             "dogs": .list([dog(4), dog(5)]), "tags": .list(strings(["Red", "yellow"])),
             "scores": .list(ints([1, 2])), "luckyNumbers": .set(ints([1, 2, 3])),
             "attrs": .map(["c": .int(3), "a": .int(0)]), "home": point(151.2093, -33.8688)],
            ["_id": .int(5), "name": .string("\u{C9}lo\u{EF}se"), "age": .int(35), "nickname": .null,
             "height": .double(1.65), "weight": .null, "isActive": .bool(false), "birthday": date(1_293_753_600),
             "avatar": .null, "oid": .null, "uuid": .null, "balance": decimal("0.1"),
             "bestFriend": person(1), "address": .object(["city": .string("Z\u{FC}rich"), "zip": .null]),
             "dogs": .list([dog(6)]), "tags": .list(strings(["green", "Green"])),
             "scores": .list(ints([100])), "luckyNumbers": .set([]), "attrs": .map(["b": .int(10)]),
             "home": point(8.54, 47.37, type: "Polygon")],
        ],
        "Dog": [
            ["_id": .int(1), "name": .string("Rex"), "age": .int(3), "weight": .double(20.5), "owner": person(1)],
            ["_id": .int(2), "name": .string("Fido"), "age": .int(5), "weight": .null, "owner": person(1)],
            ["_id": .int(3), "name": .string("Rex"), "age": .int(7), "weight": .double(30.25), "owner": person(2)],
            ["_id": .int(4), "name": .string("Bella"), "age": .int(1), "weight": .double(5.5), "owner": person(4)],
            ["_id": .int(5), "name": .string("Max"), "age": .int(12), "weight": .double(25), "owner": person(4)],
            ["_id": .int(6), "name": .string("rexy"), "age": .int(2), "weight": .double(8), "owner": person(5)],
        ],
        "Task": [
            ["_id": .int(1), "title": .string("Buy milk"), "done": .bool(false), "priority": .int(1),
             "assignee": person(1), "labels": .set(strings(["home"])), "estimate": decimal("1.5"),
             "due": date(1_704_189_600), "costs": .list(["1.5", "2.25"].map(decimal))],
            ["_id": .int(2), "title": .string("Write report"), "done": .bool(true), "priority": .int(3),
             "assignee": person(2), "labels": .set(strings(["work", "urgent"])), "estimate": decimal("8"),
             "due": .null, "costs": .list(["10"].map(decimal))],
            ["_id": .int(3), "title": .string("Call mom"), "done": .bool(false), "priority": .int(2),
             "assignee": .null, "labels": .set([]), "estimate": .null, "due": date(1_704_067_200),
             "costs": .list([])],
            ["_id": .int(4), "title": .string("Fix bug"), "done": .bool(false), "priority": .int(3),
             "assignee": person(4), "labels": .set(strings(["work"])), "estimate": decimal("2.25"),
             "due": date(1_706_745_600), "costs": .list(["0.1", "0.2"].map(decimal))],
            ["_id": .int(5), "title": .string("Read *book?"), "done": .bool(true), "priority": .int(0),
             "assignee": person(1), "labels": .set(strings(["home", "fun"])), "estimate": decimal("0.5"),
             "due": .null, "costs": .list(["-1"].map(decimal))],
            ["_id": .int(6), "title": .string("plan trip"), "done": .bool(false), "priority": .int(5),
             "assignee": person(5), "labels": .set(strings(["fun"])), "estimate": decimal("13.75"),
             "due": date(1_710_505_800), "costs": .list(["100.5", "0.5"].map(decimal))],
        ],
    ]

    /// Resolves links between the fixture's objects.
    package static let resolver: DictionaryObjectResolver = {
        var byLink: [ObjectLink: [String: Value]] = [:]
        for (type, list) in objects {
            for object in list { byLink[ObjectLink(objectType: type, primaryKey: object["_id"]!)] = object }
        }
        return DictionaryObjectResolver(byLink)
    }()

    /// The primary keys of the objects of `type` that `query` returns, in order, evaluated in memory.
    package static func evaluate(_ query: String, arguments: [Value] = [], on type: String) throws -> [Int64] {
        let bound = try BoundQuery(parsing: query, arguments: arguments, objectType: type, schema: schema, backlinks: backlinks)
        return bound.run(on: objects[type] ?? [], values: { $0 }, resolver: resolver).map(primaryKey)
    }

    package static func primaryKey(_ object: [String: Value]) -> Int64 {
        if case .int(let id) = object["_id"] { return id }
        return -1
    }
}
