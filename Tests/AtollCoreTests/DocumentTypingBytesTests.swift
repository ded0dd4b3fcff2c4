@testable import AtollCore
import AtollTesting
import Foundation
import Testing

private let byteTyperOID = #"{"$oid":"5f1f0d1a2b3c4d5e00000001"}"#

/// A document with `members` after its `_id`.
private func byteTyperDocument(_ members: String) -> String {
    #"{"_id":\#(byteTyperOID)\#(members.isEmpty ? "" : ",")\#(members)}"#
}

/// The byte-level typer (`DocumentTyping.type(bytes:as:)`) against the node path it accelerates:
/// whenever the byte path types a document itself, the node path types it to the same
/// instructions, links and ignored fields; everything else (hostile input included) goes
/// through the node path, so refusals are the node path's.
@Suite struct DocumentTypingBytesTests {
    static let schema: [String: ObjectSchema] = [
        "Task": ObjectSchema(name: "Task", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true),
            Property(name: "title", type: .string), Property(name: "priority", type: .int), Property(name: "big", type: .int),
            Property(name: "estimate", type: .double), Property(name: "ratio", type: .float),
            Property(name: "price", type: .decimal128), Property(name: "done", type: .bool),
            Property(name: "due", type: .date, isOptional: true), Property(name: "tag", type: .UUID, isOptional: true),
            Property(name: "blob", type: .data, isOptional: true), Property(name: "note", type: .string, isOptional: true),
            Property(name: "tags", type: .string, collection: .list), Property(name: "labels", type: .string, collection: .set),
            Property(name: "scores", type: .int, collection: .map), Property(name: "answer", type: .any),
            Property(name: "owner", type: .object, objectType: "Person"),
            Property(name: "helpers", type: .object, collection: .list, objectType: "Person"),
            Property(name: "address", type: .object, objectType: "Address"),
            Property(name: "stops", type: .object, collection: .list, objectType: "Address"),
        ]),
        "Person": ObjectSchema(name: "Person", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true), Property(name: "name", type: .string)]),
        "Address": ObjectSchema(name: "Address", properties: [
            Property(name: "street", type: .string), Property(name: "city", type: .string, isOptional: true),
            Property(name: "lines", type: .string, collection: .list), Property(name: "owner", type: .object, objectType: "Person"),
            Property(name: "geo", type: .object, objectType: "Geo")], isEmbedded: true),
        "Geo": ObjectSchema(name: "Geo", properties: [Property(name: "lat", type: .double), Property(name: "lon", type: .double)], isEmbedded: true),
    ]
    static let typing = DocumentTyping(schema: schema, skippedField: "_partition")
    static let oid = byteTyperOID
    static func doc(_ members: String) -> String { byteTyperDocument(members) }

    /// Documents of every construct the byte path reads itself.
    static let scannable: [String] = [
        MongoExportGenerator.task(7, format: .relaxed),
        MongoExportGenerator.task(8, format: .relaxed, partition: "notes"),
        doc(#""title":"plain","priority":-0,"big":9007199254740993,"estimate":1e3,"ratio":0.25,"done":true"#),
        doc(#""priority":1.0e2,"estimate":-12,"price":7,"done":false,"note":null,"due":null,"tag":null,"blob":null"#),
        doc(#""title":"esc \"q\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 é","tags":[],"labels":["a","b","a"]"#),
        doc(#""priority":{"$numberInt":"-7"},"big":{"$numberLong":"-9223372036854775808"},"estimate":{"$numberDouble":"-Infinity"}"#),
        doc(#""price":{"$numberDecimal":"1234.5678"},"due":{"$date":"2024-02-29T23:59:59.123456789+05:30"},"tag":{"$uuid":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f"}"#),
        doc(#""tag":{"$binary":{"subType":"04","base64":"5iHh+MNsSVqT/AwkejbuXw=="}},"blob":{"$binary":{"base64":"AAEC","subType":"00"}}"#),
        doc(#""address":{},"stops":[{"street":"a","lines":["1","2"],"geo":{"lat":1,"lon":-2.5}},{"city":null,"zip":"x"}]"#),
        doc(#""address":{"street":"s","street":"t","unknown":{"deep":[1,[2,{"x":null}]]}},"tags":null,"labels":null"#),
        #"{"title":"id last","__v":3,"extra":[true,false,null],"_id":\#(oid)}"#,
        #"{"_id":\#(oid),"_id":{"$oid":"5f1f0d1a2b3c4d5e00000002"},"_partition":{"x":[1]}}"#,
        " \n\t{ \"_id\" : \(oid) ,\r\n \"title\" : \"spaced\" , \"tags\" : [ \"a\" , \"b\" ] } \n",
        doc(#""owner":\#(oid),"helpers":[\#(oid),{"$ref":"Person","$id":\#(oid)}],"scores":{"x":1,"y":{"$numberLong":"2"}},"answer":{"$numberDecimal":"1"}"#),
        doc(#""address":{"street":"s","owner":\#(oid)},"stops":[{"owner":\#(oid)}],"answer":"text","estimate":{"$numberDouble":"NaN"}"#),
        doc(#""address":{"$foo":1},"scores":{},"answer":null"#),
    ]

    /// The same document, the same instructions (compared as encoded: NaN is not equal to itself).
    static func same(_ a: TypedDocument, _ b: TypedDocument) -> Bool {
        a.id == b.id && a.links == b.links && a.ignoredFields == b.ignoredFields
            && Changeset(version: 1, timestamp: 0, instructions: a.instructions).encoded()
            == Changeset(version: 1, timestamp: 0, instructions: b.instructions).encoded()
    }

    /// The byte path either steps aside or agrees with the node path; the public call agrees always.
    static func agree(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) -> (scanned: Bool, agreed: Bool) {
        let node = Result { () throws(DataImportError) in try typing.type(JSONNode.parse(bytes, limits: limits), as: "Task") }
        let public_ = Result { () throws(DataImportError) in try typing.type(bytes: bytes, as: "Task", limits: limits) }
        let agreed: Bool
        switch (node, public_) {
        case (.success(let a), .success(let b)): agreed = same(a, b)
        case (.failure(let a), .failure(let b)): agreed = a == b
        default: agreed = false
        }
        guard let scanned = typing.scanned(bytes, as: "Task", limits: limits) else { return (false, agreed) }
        guard case .success(let expected) = node else { return (true, false) }
        return (true, agreed && same(scanned, expected))
    }

    @Test func everyConstructTypesFromTheBytesAsFromTheNodes() {
        for document in Self.scannable {
            let (scanned, agreed) = Self.agree(Array(document.utf8))
            #expect(scanned, "the byte path stepped aside for \(document)")
            #expect(agreed, "\(document)")
        }
    }

    @Test func aBatchOfTheBenchmarksDocumentsIsScannedWhole() {
        for n in 0..<200 {
            for format in [MongoExportGenerator.Format.relaxed, .canonical] {
                let bytes = Array(MongoExportGenerator.task(n, format: format, owner: n).utf8)
                let (scanned, agreed) = Self.agree(bytes)
                #expect(scanned && agreed, "task \(n)")
            }
        }
    }

    @Test(arguments: [
        // Wrong types and bad wrappers: the node path's refusal, word for word.
        byteTyperDocument(#""priority":"high""#), byteTyperDocument(#""priority":1.5"#), byteTyperDocument(#""priority":123456789012345678901234567890"#),
        byteTyperDocument(#""title":null"#), byteTyperDocument(#""title":5"#), byteTyperDocument(#""tags":"one""#), byteTyperDocument(#""tags":[1]"#), byteTyperDocument(#""address":5"#),
        byteTyperDocument(#""address":{"$oid":"5f1f0d1a2b3c4d5e00000001"}"#), byteTyperDocument(#""address":{"lines":null}"#),
        byteTyperDocument(#""due":{"$date":"yesterday"}"#), byteTyperDocument(#""due":{"$date":"2024-02-30T00:00:00Z"}"#), byteTyperDocument(#""price":{"$numberDecimal":"lots"}"#),
        byteTyperDocument(#""priority":{"$numberInt":"2147483648"}"#), byteTyperDocument(#""priority":{"$numberInt":"1","x":2}"#), byteTyperDocument(#""big":{"$numberLong":5}"#),
        byteTyperDocument(#""tag":{"$binary":{"base64":"AAEC","subType":"04"}}"#), byteTyperDocument(#""tag":{"$binary":{"base64":"!!","subType":"04"}}"#),
        byteTyperDocument(#""tag":{"$binary":{"base64":"AAEC","subType":"04","extra":1}}"#), byteTyperDocument(#""tag":{"$binary":{"subType":"zz","base64":"AA=="}}"#),
        byteTyperDocument(#""title":"a","title":"b""#), byteTyperDocument(#""__v":1,"__v":2"#), byteTyperDocument(#""owner":5"#), byteTyperDocument(#""answer":[1]"#), byteTyperDocument(#""answer":{"a":1}"#),
        #"{"_id":null}"#, #"{"title":"no id"}"#, #"{}"#, #"[1,2]"#, #""str""#, "", " ",
        // Malformed JSON, bad UTF-8, control characters, lone surrogates, huge numbers, deep nesting.
        #"{"_id": tru}"#, #"{"_id":"a" "b"}"#, "{\"_id\":\"\u{01}\"}", byteTyperDocument(#""title":"\ud800""#), byteTyperDocument(#""title":"\x""#),
        byteTyperDocument(#""title":"ok"} trailing"#), byteTyperDocument(#""title":"ok",}"#), byteTyperDocument(#""tags":[1,]"#), byteTyperDocument(#""priority":-"#), byteTyperDocument(#""priority":01.e5"#),
        byteTyperDocument(#""estimate":\#(String(repeating: "9", count: 401))"#), byteTyperDocument(#""estimate":1\#(String(repeating: "0", count: 350))"#),
        byteTyperDocument(#""__v":\#(String(repeating: "[", count: 70))\#(String(repeating: "]", count: 70))"#),
        byteTyperDocument(#""address":\#(String(repeating: #"{"geo":"#, count: 70))1\#(String(repeating: "}", count: 70))"#),
        byteTyperDocument(#""tags":\#(String(repeating: "[", count: 100_000))"#),
    ])
    func hostileAndWrongDocumentsGetTheNodePathsRefusal(_ document: String) {
        #expect(Self.agree(Array(document.utf8)).agreed, "\(document)")
    }

    @Test func badUTF8AndOversizedStringsAreRefusedAsByTheNodePath() {
        let good = Array(Self.doc(#""title":"xx""#).utf8)
        let at = good.firstIndex(of: UInt8(ascii: "x"))!
        for bad: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF]] {
            var bytes = good
            bytes.replaceSubrange(at..<at + 1, with: bad)
            #expect(Self.agree(bytes).agreed, "\(bad)")
            #expect(throws: DataImportError.self) { try Self.typing.type(bytes: bytes, as: "Task") }
        }
        var small = JSONLimits()
        small.maxStringBytes = 8
        small.maxElements = 3
        small.maxDepth = 2
        small.maxDocumentBytes = 400
        for document in Self.scannable + [Self.doc(#""title":"123456789""#), Self.doc(#""tags":["a","b","c","d"]"#)] {
            #expect(Self.agree(Array(document.utf8), limits: small).agreed, "\(document)")
        }
    }

    @Test func everyTruncationAndByteChangeOfADocumentAgrees() {
        let bytes = Array(Self.doc(#""title":"t\"é","priority":3,"tags":["a"],"due":{"$date":"2024-01-01T00:00:00Z"},"#
            + #""tag":{"$binary":{"subType":"04","base64":"5iHh+MNsSVqT/AwkejbuXw=="}},"address":{"street":"s","geo":{"lat":1.5,"lon":2}},"#
            + #""owner":\#(Self.oid),"__v":[1,{"a":null}],"price":{"$numberDecimal":"2.5"}"#).utf8)
        for end in 0...bytes.count {
            #expect(Self.agree(Array(bytes[..<end])).agreed, "cut at \(end)")
        }
        let replacements = Array(#"{}[]",:\0n-.e"#.utf8) + [0x20, 0xFF]
        for index in bytes.indices {
            for replacement in replacements where bytes[index] != replacement {
                var changed = bytes
                changed[index] = replacement
                #expect(Self.agree(changed).agreed, "byte \(index) as \(replacement)")
            }
        }
    }

    @Test func thePartitionIsReadFromTheBytesAsFromTheNodes() {
        let documents = Self.scannable + [
            #"{"_partition":"notes"}"#, #"{"_partition":{"$numberLong":"7"}}"#, #"{"_partition":{"$oid":"5f1f0d1a2b3c4d5e00000001"}}"#,
            #"{"_partition":null,"x":[{"y":"\u00e9"}]}"#, #"{"x":1,"_partition":"a","_partition":"b"}"#, #"{"_partition":[1]}"#,
            #"{"_partition":1.5}"#, #"{"_partition":"a"} x"#, #"{"_partition":"a","#, #"{"x":\#(String(repeating: "[", count: 70))"#, "[]", "",
        ]
        for document in documents {
            let bytes = Array(document.utf8)
            let fromNodes = Result { () throws(DataImportError) in try DocumentTyping.partition(of: JSONNode.parse(bytes), key: "_partition") }
            let fromBytes = Result { () throws(DataImportError) in try DocumentTyping.partition(ofBytes: bytes, key: "_partition") }
            switch (fromNodes, fromBytes) {
            case (.success(let a), .success(let b)): #expect(a.path == b.path, "\(document)")
            case (.failure(let a), .failure(let b)): #expect(a == b, "\(document)")
            default: Issue.record("\(document): \(fromNodes) from the nodes, \(fromBytes) from the bytes")
            }
        }
    }
}
