import AtollCore
import Testing

@Suite struct SchemaValidationTests {
    static let person = ObjectSchema(name: "Person", properties: [
        Property(name: "_id", type: .objectId, isPrimaryKey: true, isIndexed: true),
        Property(name: "name", type: .string, isIndexed: true),
        Property(name: "dogs", type: .object, collection: .list, objectType: "Dog"),
        Property(name: "address", type: .object, isOptional: true, objectType: "Address"),
    ])
    static let dog = ObjectSchema(name: "Dog", properties: [Property(name: "name", type: .string)])
    static let address = ObjectSchema(name: "Address", properties: [Property(name: "city", type: .string)], isEmbedded: true)

    @Test func aConsistentSchemaValidates() throws {
        let schema = try Schema([Self.person, Self.dog, Self.address])
        #expect(schema["Person"]?.primaryKey == "_id")
        #expect(schema.typeNames == ["Person", "Dog", "Address"])
    }

    typealias Case = (label: String, objects: [ObjectSchema], code: SchemaError.Code, message: String)

    static let cases: [Case] = [
        ("two primary keys",
         [ObjectSchema(name: "T", properties: [Property(name: "a", type: .int, isPrimaryKey: true), Property(name: "b", type: .string, isPrimaryKey: true)])],
         .multiplePrimaryKeys, "'T' declares 2 primary keys (a, b); at most one is allowed"),
        ("float primary key",
         [ObjectSchema(name: "T", properties: [Property(name: "f", type: .float, isPrimaryKey: true)])],
         .invalidPrimaryKey, "'T.f' of type float cannot be a primary key; use Int, String, ObjectId or UUID"),
        ("list primary key",
         [ObjectSchema(name: "T", properties: [Property(name: "l", type: .int, collection: .list, isPrimaryKey: true)])],
         .invalidPrimaryKey, "'T.l' of type List<int> cannot be a primary key; use Int, String, ObjectId or UUID"),
        ("link to an unknown type",
         [ObjectSchema(name: "T", properties: [Property(name: "owner", type: .object, isOptional: true, objectType: "Ghost")])],
         .unknownLinkTarget, "'T.owner' links to 'Ghost', which is not in the schema"),
        ("non-optional to-one link",
         [Self.dog, ObjectSchema(name: "T", properties: [Property(name: "dog", type: .object, objectType: "Dog")])],
         .nonOptionalLink, "'T.dog': a to-one link must be optional"),
        ("indexed double",
         [ObjectSchema(name: "T", properties: [Property(name: "d", type: .double, isIndexed: true)])],
         .invalidIndex, "'T.d' of type double cannot be indexed"),
        ("duplicate type",
         [Self.dog, Self.dog], .duplicateType, "object type 'Dog' is declared twice"),
        ("duplicate property",
         [ObjectSchema(name: "T", properties: [Property(name: "a", type: .int), Property(name: "a", type: .string)])],
         .duplicateProperty, "'T.a' is declared twice"),
        ("invalid type name",
         [ObjectSchema(name: "1abc", properties: [])], .invalidName, "'1abc' is not a valid object type name"),
        ("invalid property name",
         [ObjectSchema(name: "T", properties: [Property(name: "a b", type: .int)])], .invalidName, "'T.a b' is not a valid property name"),
        ("primary key on an embedded type",
         [ObjectSchema(name: "E", properties: [Property(name: "id", type: .int, isPrimaryKey: true)], isEmbedded: true)],
         .primaryKeyOnEmbedded, "embedded type 'E' cannot have a primary key ('id')"),
        ("set of embedded objects",
         [Self.address, ObjectSchema(name: "T", properties: [Property(name: "s", type: .object, collection: .set, objectType: "Address")])],
         .unsupportedType, "'T.s': a MutableSet cannot hold embedded objects"),
        ("list of optional objects",
         [Self.dog, ObjectSchema(name: "T", properties: [Property(name: "l", type: .object, collection: .list, isOptional: true, objectType: "Dog")])],
         .unsupportedType, "'T.l': a List cannot hold optional objects"),
        ("target type on a scalar",
         [Self.dog, ObjectSchema(name: "T", properties: [Property(name: "n", type: .int, objectType: "Dog")])],
         .unsupportedType, "'T.n' names a target type but is not a link"),
    ]

    @Test(arguments: cases.indices)
    func invalidSchemasAreRejectedWithAPreciseError(_ index: Int) {
        let c = Self.cases[index]
        #expect {
            _ = try Schema(c.objects)
        } throws: { error in
            guard let error = error as? SchemaError else { return false }
            return error.code == c.code && error.message == c.message
        }
    }
}
