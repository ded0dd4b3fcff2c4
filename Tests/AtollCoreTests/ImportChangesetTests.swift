import AtollCore
import Foundation
import Testing

/// `ImportChangeset.check`: what an import writes needs none of `ReplicaState.validate`'s checks
/// against the state, and what is not of an import's shape is refused.
@Suite struct ImportChangesetTests {
    static let schema = [
        ObjectSchema(name: "Task", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true),
            Property(name: "title", type: .string), Property(name: "priority", type: .int),
            Property(name: "tags", type: .string, collection: .list),
            Property(name: "labels", type: .string, collection: .set),
            Property(name: "scores", type: .int, collection: .map),
            Property(name: "owner", type: .object, isOptional: true, objectType: "Person"),
            Property(name: "address", type: .object, isOptional: true, objectType: "Address"),
        ]),
        ObjectSchema(name: "Person", properties: [Property(name: "_id", type: .objectId, isPrimaryKey: true), Property(name: "name", type: .string)]),
        ObjectSchema(name: "Address", properties: [Property(name: "street", type: .string)], isEmbedded: true),
    ]
    static let types = Dictionary(uniqueKeysWithValues: schema.map { ($0.name, $0) })

    static func id(_ n: Int) -> String { String(format: "5f1f0d1a2b3c4d5e%08x", n) }

    static func document(_ n: Int, tags: Int) -> String {
        let tagList = (0..<tags).map { "\"t\($0)\"" }.joined(separator: ",")
        return #"{"_id":{"$oid":"\#(id(n))"},"title":"Task \#(n)","priority":\#(n),"tags":[\#(tagList)],"labels":["a","b","a"],"#
            + #""scores":{"x":1,"y":\#(n)},"owner":{"$oid":"\#(id(1000 + n))"},"address":{"street":"\#(n) Main St"}}"#
    }

    /// The instructions an import of `documents` writes, as the server types them.
    static func importInstructions(_ documents: [String]) throws -> [Instruction] {
        let typing = DocumentTyping(schema: types)
        return try documents.flatMap { try typing.type(JSONNode.parse(Array($0.utf8)), as: "Task").instructions }
    }

    static var history: HistorySchema {
        var history = HistorySchema()
        history.absorb(Changeset(version: 0, timestamp: 0, instructions: schema.map { .addTable($0) }))
        return history
    }

    static func state(_ changesets: [Changeset]) -> ReplicaState {
        var state = ReplicaState()
        state.apply(Changeset(version: 0, timestamp: 0, instructions: schema.map { .addTable($0) }))
        state.apply(changesets)
        return state
    }

    @Test func anImportBatchPassesAndValidatesOnAnyStateOfTheSchema() throws {
        let first = Changeset(version: 1, timestamp: 1, instructions: try Self.importInstructions((0..<20).map { Self.document($0, tags: $0 % 4) }))
        try ImportChangeset.check(first, schema: Self.history)
        // On an empty realm, and on one where the objects exist with longer lists and other values
        // (an import overwriting them), the state-dependent validation agrees.
        try Self.state([]).validate([first])
        let longer = Changeset(version: 1, timestamp: 1, instructions: try Self.importInstructions((0..<20).map { Self.document($0, tags: 9) }))
        let existing = Self.state([longer])
        try existing.validate([first])
        // A document twice in a batch (the second overwrites the first) is still of the shape.
        let twice = Changeset(version: 1, timestamp: 1, instructions: try Self.importInstructions([Self.document(3, tags: 5), Self.document(3, tags: 1)]))
        try ImportChangeset.check(twice, schema: Self.history)
        try existing.validate([twice])
        var applied = existing
        applied.apply(twice)
        #expect(applied.value(ObjectID(type: "Task", primaryKey: .objectId(ObjectId(Self.id(3))!)), [.property("tags")]) == .list([.string("t0")]))
    }

    @Test func whatIsNotOfAnImportsShapeIsRefused() throws {
        let good = try Self.importInstructions([Self.document(1, tags: 3), Self.document(2, tags: 2)])
        let task = ObjectID(type: "Task", primaryKey: .objectId(ObjectId(Self.id(1))!))
        let other = ObjectID(type: "Task", primaryKey: .objectId(ObjectId(Self.id(9))!))
        let tags: [PathElement] = [.property("tags")]
        let createAt = good.firstIndex(of: .createObject(task))!
        let cases: [(String, [Instruction])] = [
            ("an object not created just before", [.createObject(task), .set(other, path: [.property("title")], value: .string("x"))]),
            ("a list filled before its clear", [.createObject(task), .listInsert(task, path: tags, index: 0, value: .string("x"))]),
            ("a list insert not after the last", [.createObject(task), .clear(task, path: tags),
                                                  .listInsert(task, path: tags, index: 1, value: .string("x"))]),
            ("an erase", [.createObject(task), .eraseObject(task)]),
            ("a list erase", [.createObject(task), .clear(task, path: tags), .listErase(task, path: tags, index: 0)]),
            ("a whole list set", [.createObject(task), .set(task, path: tags, value: .list([]))]),
            ("a path into a list element", [.createObject(task), .clear(task, path: tags),
                                            .set(task, path: tags + [.index(0)], value: .string("x"))]),
            ("a clear of a single value", [.createObject(task), .clear(task, path: [.property("title")])]),
            ("a map key under a list", [.createObject(task), .clear(task, path: tags), .set(task, path: tags + [.key("k")], value: .string("x"))]),
            ("a schema instruction after the objects", Array(good[createAt...]) + [.addTable(ObjectSchema(name: "Late", properties: []))]),
            ("an add", [.createObject(task), .addInteger(task, path: [.property("priority")], delta: 1)]),
        ]
        for (what, instructions) in cases {
            #expect(throws: MergeError.self, "\(what)") {
                try ImportChangeset.check(Changeset(version: 1, timestamp: 1, instructions: instructions), schema: Self.history)
            }
        }
        // The schema is checked as for an upload.
        #expect(throws: MergeError.self) {
            try ImportChangeset.check(Changeset(version: 1, timestamp: 1, instructions: [.createObject(task), .set(task, path: [.property("title")], value: .int(1))]),
                                      schema: Self.history)
        }
        // And the limits.
        let limits = ChangesetLimits(maximumValueSize: 16, maximumCollectionCount: 2)
        #expect(throws: MergeError.self) {
            try ImportChangeset.check(Changeset(version: 1, timestamp: 1, instructions: [.createObject(task), .set(task, path: [.property("title")], value: .string(String(repeating: "x", count: 17)))]),
                                      schema: Self.history, limits: limits)
        }
        #expect(throws: MergeError.self) {
            try ImportChangeset.check(Changeset(version: 1, timestamp: 1, instructions: try Self.importInstructions([Self.document(1, tags: 3)])),
                                      schema: Self.history, limits: limits)
        }
        try ImportChangeset.check(Changeset(version: 1, timestamp: 1, instructions: try Self.importInstructions([Self.document(1, tags: 2)])),
                                  schema: Self.history, limits: ChangesetLimits(maximumCollectionCount: 3))
    }
}

/// The compact import body: framing written and read back, and hostile framing refused.
@Suite struct DataImportBodyTests {
    static let header = Array(#"{"type":"Task"}"#.utf8)

    @Test func aBodyReadsBackAsItsDocumentsBytes() throws {
        let documents = [#"{"_id":1}"#, "", "{\"a\":\"Grüße\\n\"}", String(repeating: "x", count: 70_000)]
        var writer = DataImportBody.Writer(header: Self.header)
        for document in documents { writer.append(document.utf8) }
        #expect(writer.count == 4)
        #expect(writer.documentBytes == documents.reduce(0) { $0 + $1.utf8.count })
        let bytes = writer.finish()
        let batch = try DataImportBody.read(bytes, maxDocuments: 4)
        #expect(Array(bytes[batch.header]) == Self.header)
        #expect(batch.documents.map { String(decoding: bytes[$0], as: UTF8.self) } == documents)
    }

    @Test func framingThatDoesNotAddUpIsRefusedWithACode() throws {
        var writer = DataImportBody.Writer(header: Self.header)
        writer.append(#"{"_id":1}"#.utf8)
        writer.append(#"{"_id":2}"#.utf8)
        let good = writer.finish()
        func code(_ bytes: [UInt8], maxDocuments: Int = 10, maxDocumentBytes: Int = 1 << 20) -> DataImportError.Code? {
            do {
                _ = try DataImportBody.read(bytes, maxDocuments: maxDocuments, maxDocumentBytes: maxDocumentBytes)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(good) == nil)
        #expect(code([]) == .malformedBody)
        #expect(code(Array("{\"type\":\"Task\",\"documents\":[]}".utf8)) == .malformedBody)
        #expect(code(Array(good.dropLast())) == .malformedBody)         // the last document cut short
        #expect(code(good + [0]) == .malformedBody)                     // bytes after it
        #expect(code(Array(good.prefix(6))) == .malformedBody)          // inside the header's length
        #expect(code(DataImportBody.magic + [0x7F, 0xFF, 0xFF, 0xFF]) == .tooLarge)   // a 2 GB header
        #expect(code(DataImportBody.magic + [0, 0, 0, 9, 0x7B]) == .malformedBody)    // a header past the end
        #expect(code(good, maxDocuments: 1) == .malformedBody)
        #expect(code(good, maxDocumentBytes: 8) == .tooLarge)
        // A count that promises more documents than the body has.
        var inflated = good
        inflated[4 + 4 + Self.header.count + 3] = 200
        #expect(code(inflated, maxDocuments: 1_000) == .malformedBody)
        // A document length of 4 GB - 1.
        var huge = DataImportBody.Writer(header: Self.header)
        huge.append([0x7B])
        var hugeBytes = huge.finish()
        let at = 4 + 4 + Self.header.count + 4
        hugeBytes.replaceSubrange(at..<at + 4, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(code(hugeBytes) == .tooLarge)
    }
}
