import AtollAdminClient
import AtollCore
import AtollTesting
import Foundation
import Testing

/// The pure core of `atoll data import` / `export`: Extended JSON v2 parsed within limits, typed
/// through a schema, written back canonically; files cut into documents as bytes arrive.
@Suite struct DataExchangeTests {
    static let schema: [String: ObjectSchema] = [
        "ImportedTask": ObjectSchema(name: "ImportedTask", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true),
            Property(name: "title", type: .string),
            Property(name: "priority", type: .int),
            Property(name: "big", type: .int),
            Property(name: "estimate", type: .double),
            Property(name: "price", type: .decimal128),
            Property(name: "due", type: .date, isOptional: true),
            Property(name: "tag", type: .UUID, isOptional: true),
            Property(name: "tags", type: .string, collection: .list),
            Property(name: "owner", type: .object, objectType: "ImportedPerson"),
            Property(name: "address", type: .object, objectType: "ImportedAddress"),
        ]),
        "ImportedPerson": ObjectSchema(name: "ImportedPerson", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true), Property(name: "name", type: .string)]),
        "ImportedAddress": ObjectSchema(name: "ImportedAddress", properties: [
            Property(name: "street", type: .string), Property(name: "city", type: .string)], isEmbedded: true),
    ]

    func type(_ line: String, skipping: String? = nil) throws -> TypedDocument {
        try DocumentTyping(schema: Self.schema, skippedField: skipping).type(JSONNode.parse(Array(line.utf8)), as: "ImportedTask")
    }

    @Test func relaxedAndCanonicalFormsTypeToTheSameValues() throws {
        for n in [0, 1, 42, 99_999] {
            let relaxed = try type(MongoExportGenerator.task(n, format: .relaxed, partition: "p", owner: n), skipping: "_partition")
            let canonical = try type(MongoExportGenerator.task(n, format: .canonical, partition: "p", owner: n), skipping: "_partition")
            #expect(relaxed == canonical)
            #expect(relaxed.ignoredFields.isEmpty)
        }
        let typed = try type(MongoExportGenerator.task(3, format: .relaxed, owner: 8))
        let id = ObjectID(type: "ImportedTask", primaryKey: .objectId(ObjectId(MongoExportGenerator.objectId(3))!))
        #expect(typed.id == id)
        let sets = Dictionary(uniqueKeysWithValues: typed.instructions.compactMap { i -> (String, Value)? in
            guard case .set(_, let path, let value) = i, case .property(let name)? = path.first else { return nil }
            return (name, value)
        })
        #expect(sets["priority"] == .int(3))
        #expect(sets["big"] == .int(9_007_199_254_740_996))
        #expect(sets["estimate"] == .double(3.5))
        #expect(sets["price"] == .decimal(try Decimal128(string: "3.25")))
        #expect(sets["due"] == .date(Date(timeIntervalSince1970: 1_700_000_003)))
        #expect(sets["tag"] == .uuid(MongoExportGenerator.uuid(3)))
        #expect(sets["address"] == .object(["street": .string("3 Main St"), "city": .string("Atoll")]))
        #expect(sets["owner"] == .link(ObjectLink(objectType: "ImportedPerson", primaryKey: .objectId(ObjectId(MongoExportGenerator.objectId(8, kind: 2))!))))
        #expect(typed.instructions.contains(.listInsert(id, path: [.property("tags")], index: 1, value: .string("all"))))
        #expect(typed.links.count == 1)
    }

    @Test func membersOutsideTheSchemaAreReportedNotImported() throws {
        let typed = try type(#"{"_id":{"$oid":"\#(MongoExportGenerator.objectId(1))"},"__v":3,"title":"x"}"#)
        #expect(typed.ignoredFields == ["__v"])
    }

    @Test(arguments: [
        (String(repeating: "[", count: 100_000), DataImportError.Code.tooDeep),
        (#"{"_id":{"$oid":"000000010000000000000001"},"title":"\#(String(repeating: "x", count: 2 << 20))"}"#, .tooLarge),
        (#"{"_id":{"$oid":"000000010000000000000001"},"priority":"high"}"#, .wrongType),
        (#"{"_id":{"$oid":"000000010000000000000001"},"priority":1.5}"#, .wrongType),
        (#"{"_id":{"$oid":"000000010000000000000001"},"title":null}"#, .wrongType),
        (#"{"_id":{"$oid":"000000010000000000000001"},"tags":"one"}"#, .wrongType),
        (#"{"_id":{"$oid":"000000010000000000000001"},"address":5}"#, .wrongType),
        (#"{"_id":{"$oid":"not hex"}}"#, .badExtendedJSON),
        (#"{"_id":{"$oid":"000000010000000000000001"},"due":{"$date":"yesterday"}}"#, .badExtendedJSON),
        (#"{"_id":{"$oid":"000000010000000000000001"},"price":{"$numberDecimal":"lots"}}"#, .badExtendedJSON),
        (#"{"title":"no id"}"#, .missingPrimaryKey),
        (#"[1,2]"#, .notADocument),
        (#"{"_id": tru}"#, .malformedJSON),
        (#"{"_id":"a" "b"}"#, .malformedJSON),
        ("{\"_id\":\"\u{01}\"}", .malformedJSON),
    ])
    func hostileDocumentsAreRefusedWithATypedError(_ line: String, _ code: DataImportError.Code) {
        #expect(throws: DataImportError.self) { try type(line) }
        do { _ = try type(line) } catch let error as DataImportError { #expect(error.code == code, "\(error)") } catch {}
    }

    @Test func aPartitionKeyChoosesTheRealm() throws {
        #expect(try DocumentTyping.partition(of: JSONNode.parse(Array(#"{"_partition":"notes"}"#.utf8)), key: "_partition").path == "s:notes")
        #expect(try DocumentTyping.partition(of: JSONNode.parse(Array(#"{"p":{"$numberLong":"7"}}"#.utf8)), key: "p").path == "i:7")
        #expect(try DocumentTyping.partition(of: JSONNode.parse(Array(#"{}"#.utf8)), key: "p").path == "n:")
        #expect(throws: DataImportError.self) { try DocumentTyping.partition(of: JSONNode.parse(Array(#"{"p":[1]}"#.utf8)), key: "p") }
    }

    @Test func canonicalExportReadsBackAsTheSameObject() throws {
        var state = ReplicaState()
        let typed = try type(MongoExportGenerator.task(5, format: .relaxed, owner: 2))
        state.apply(Changeset(version: 1, timestamp: 0, instructions: Self.schema.values.sorted { $0.name < $1.name }.map(Instruction.addTable) + typed.instructions))
        let fields = try #require(state.object(typed.id))
        let line = ExtendedJSON.canonical(fields, of: Self.schema["ImportedTask"]!, schema: Self.schema)
        #expect(line.hasPrefix(#"{"_id":{"$oid":""#))
        #expect(line.contains(#""priority":{"$numberInt":"0"}"#))
        var again = ReplicaState()
        again.apply(Changeset(version: 1, timestamp: 0, instructions: Self.schema.values.sorted { $0.name < $1.name }.map(Instruction.addTable) + (try type(line)).instructions))
        #expect(again.object(typed.id) == fields)
    }

    @Test(arguments: [false, true])
    func theSplitterCutsDocumentsAcrossChunks(_ jsonArray: Bool) throws {
        let lines = (0..<50).map { MongoExportGenerator.task($0, format: .canonical) } + [#"{"s":"} ] { \" ,"}"#]
        let bytes = [UInt8](MongoExportGenerator.file(lines, jsonArray: jsonArray))
        for chunkSize in [1, 7, 4096] {
            var splitter = DocumentSplitter()
            var pieces: [DocumentSplitter.Piece] = []
            var start = 0
            while start < bytes.count {
                pieces += try splitter.feed(bytes[start..<min(start + chunkSize, bytes.count)])
                start += chunkSize
            }
            try splitter.finish()
            #expect(pieces.map { String(decoding: $0.bytes, as: UTF8.self) } == lines)
            // Resuming after a document reads the rest, and only the rest.
            var resumed = DocumentSplitter(startingAt: pieces[9].end, isArray: jsonArray)
            let rest = try resumed.feed(bytes[Int(pieces[9].end)...])
            #expect(rest.map(\.bytes) == pieces.dropFirst(10).map(\.bytes))
        }
    }

    @Test func anOversizedDocumentIsCutOutAndTheRestGoesOn() throws {
        var splitter = DocumentSplitter(maxDocumentBytes: 64)
        let pieces = try splitter.feed(Array((#"{"a":"\#(String(repeating: "x", count: 1000))"}"# + "\n{\"b\":1}\n").utf8))
        #expect(pieces.map(\.bytes.count) == [0, 7])
        var broken = DocumentSplitter()
        #expect(throws: DocumentSplitter.Failure.self) { try broken.feed(Array("{\"a\":1}\nhello".utf8)) }
        var truncated = DocumentSplitter()
        _ = try truncated.feed(Array("{\"a\":[1,".utf8))
        #expect(throws: DocumentSplitter.Failure.self) { try truncated.finish() }
    }
}

/// mongodump's BSON read into the same tree mongoexport's canonical Extended JSON gives.
@Suite struct BSONImportTests {
    @Test func aBSONDocumentTypesAsItsExtendedJSONTwin() throws {
        for n in [0, 7, 12_345] {
            let price = try Decimal128(string: "\(n).25").bsonBytes()
            let node = try BSON.read(MongoDumpGenerator.task(n, priceBytes: price))
            let typing = DocumentTyping(schema: DataExchangeTests.schema)
            let fromBSON = try typing.type(JSONNode.parse(Array(node.text.utf8)), as: "ImportedTask")
            let fromJSON = try typing.type(JSONNode.parse(Array(MongoExportGenerator.task(n, format: .canonical).utf8)), as: "ImportedTask")
            #expect(fromBSON == fromJSON)
        }
    }

    @Test func theBSONSplitterCutsAFileByLengths() throws {
        let price = try Decimal128(string: "1.25").bsonBytes()
        let documents = (0..<5).map { MongoDumpGenerator.task($0, priceBytes: price) }
        let file = documents.flatMap { $0 }
        var splitter = BSONSplitter(maxDocumentBytes: 4096)
        var pieces: [DocumentSplitter.Piece] = []
        for start in stride(from: 0, to: file.count, by: 13) { pieces += try splitter.feed(file[start..<min(start + 13, file.count)]) }
        try splitter.finish()
        #expect(pieces.map(\.bytes) == documents)
        var small = BSONSplitter(maxDocumentBytes: 64)
        #expect(try small.feed(file).map(\.bytes.count) == [0, 0, 0, 0, 0])
    }

    @Test(arguments: [
        MongoDumpGenerator.document([("a", .timestamp(1))]),
        [0x06, 0, 0, 0, 0],
        [0x10, 0, 0, 0, 0x02, 0x61, 0, 0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0, 0],
        [0x0C, 0, 0, 0, 0x08, 0x61, 0, 0x02, 0, 0, 0, 0],
        Array(repeating: UInt8(0), count: 3),
    ])
    func malformedBSONIsRefusedWithATypedError(_ bytes: [UInt8]) {
        #expect(throws: DataImportError.self) { try BSON.read(bytes) }
    }

    @Test func deeplyNestedBSONIsRefused() {
        var element = MongoDumpGenerator.Element.null
        for _ in 0..<200 { element = .document([("a", element)]) }
        #expect(throws: DataImportError.self) { try BSON.read(MongoDumpGenerator.document([("a", element)])) }
    }
}
