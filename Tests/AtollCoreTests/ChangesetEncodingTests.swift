import AtollCore
import Foundation
import Testing

@Suite struct ChangesetEncodingTests {
    static let dog = ObjectID(type: "Dog", primaryKey: .objectId(ObjectId(bytes: Array(0..<12))))
    static let person = ObjectID(type: "Person", primaryKey: .string("Ann"))
    static let schema = ObjectSchema(name: "Dog", properties: [
        Property(name: "_id", type: .objectId, isPrimaryKey: true, isIndexed: true),
        Property(name: "owner", type: .object, isOptional: true, objectType: "Person"),
        Property(name: "tags", type: .string, collection: .set, isOptional: true),
    ])

    static let everyInstruction: [Instruction] = [
        .addTable(schema),
        .addColumn(type: "Dog", Property(name: "age", type: .int)),
        .createObject(dog),
        .set(dog, path: [.property("name")], value: .string("Rex")),
        .set(dog, path: [.property("owner")], value: .link(ObjectLink(objectType: "Person", primaryKey: .string("Ann")))),
        .set(person, path: [.property("address"), .property("lines"), .index(2)], value: .string("Flat 3")),
        .set(person, path: [.property("scores"), .key("math")], value: .int(-7)),
        .set(person, path: [.property("address")], value: .object(["city": .string("Oslo"), "zip": .null])),
        .addInteger(dog, path: [.property("age")], delta: -3),
        .listInsert(person, path: [.property("dogs")], index: 0, value: .link(ObjectLink(objectType: "Dog", primaryKey: dog.primaryKey))),
        .listErase(person, path: [.property("dogs")], index: 4),
        .listMove(person, path: [.property("dogs")], from: 1, to: 3),
        .clear(person, path: [.property("dogs")]),
        .setInsert(dog, path: [.property("tags")], value: .string("good")),
        .setErase(dog, path: [.property("tags")], value: .null),
        .mapErase(person, path: [.property("scores")], key: "math"),
        .eraseObject(dog),
    ]

    static let everyValue: [Value] = [
        .null, .bool(true), .bool(false), .int(0), .int(Int64.min), .int(Int64.max), .double(-2.5), .double(.infinity),
        .float(1.25), .string(""), .string("héllo 🌍"), .data(Data([0, 255, 7])), .date(Date(timeIntervalSince1970: 1.5)),
        .objectId(ObjectId(bytes: Array(repeating: 9, count: 12))), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        .decimal(try! Decimal128(string: "-1.25E+3")), .list([.int(1), .string("a")]), .set([.int(2)]), .map(["k": .bool(true)]),
    ]

    @Test func everyInstructionKindRoundTrips() throws {
        let changeset = Changeset(version: 42, timestamp: 1_700_000_000_123, fileIdent: 9, instructions: Self.everyInstruction)
        #expect(try Changeset(decoding: changeset.encoded()) == changeset)
    }

    @Test(arguments: everyValue)
    func everyValueKindRoundTrips(_ value: Value) throws {
        let changeset = Changeset(version: 1, timestamp: 0, instructions: [.set(Self.dog, path: [.property("v")], value: value)])
        let decoded = try Changeset(decoding: changeset.encoded())
        #expect(decoded == changeset)
    }

    @Test func repeatedNamesAndObjectsAreWrittenOnce() {
        let sets: [Instruction] = (0..<100).map { _ in .set(Self.dog, path: [.property("name")], value: .int(1)) }
        let one = Changeset(version: 1, timestamp: 0, instructions: Array(sets.prefix(1))).encoded().count
        let hundred = Changeset(version: 1, timestamp: 0, instructions: sets).encoded().count
        // After the first, each set costs: op, same-object marker, path count, tag, name ref, value (2 bytes).
        #expect(hundred - one == 99 * 7)
    }

    @Test func truncatedDataIsATypedErrorNotACrash() {
        let data = Changeset(version: 3, timestamp: 4, instructions: Self.everyInstruction).encoded()
        for length in stride(from: 0, to: data.count, by: 7) {
            #expect(throws: DecodingFailure.self) { try Changeset(decoding: data.prefix(length)) }
        }
    }

    @Test func unknownFormatAndTrailingBytesAreRejectedWithAReason() {
        #expect(throws: DecodingFailure("unknown changeset format 99")) { try Changeset(decoding: Data([99])) }
        var data = Changeset(version: 1, timestamp: 1, instructions: []).encoded()
        data.append(0)
        #expect(throws: DecodingFailure("1 trailing bytes after the changeset")) { try Changeset(decoding: data) }
    }

    @Test func aNameReferenceBeforeItsDefinitionIsRejected() {
        // format 2, version 0, timestamp 0, file 0, one instruction: createObject, new object, name ref #5
        let data = Data([2, 0, 0, 0, 1, 3, 0, 6])
        #expect(throws: DecodingFailure.self) { try Changeset(decoding: data) }
    }

    /// `PropertyType` has realm-swift's `.linkingObjects` case, which no stored schema holds: a
    /// peer sending it as a column's type is refused when the changeset is read.
    @Test func aLinkingObjectsColumnFromAPeerIsRejected() {
        let data = Changeset(version: 1, timestamp: 1, instructions: [
            .addColumn(type: "Dog", Property(name: "owners", type: .linkingObjects, collection: .list, objectType: "Person")),
        ]).encoded()
        #expect(throws: DecodingFailure("unknown property type 'linkingObjects'")) { try Changeset(decoding: data) }
    }
}
