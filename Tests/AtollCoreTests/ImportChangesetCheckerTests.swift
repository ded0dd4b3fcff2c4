@testable import AtollCore
import Foundation
import Testing

/// `ImportChangeset.Checker`: the schema check and the shape check in one pass, a batch checked
/// document by document where the typer wrote it, against the two passes it replaced (the whole
/// changeset validated, then its shape; the batch checked whole, then each document alone when
/// that failed), on fuzzed and hostile instructions: the same refusals, word for word, and the
/// same changeset bytes.
@Suite struct ImportChangesetCheckerTests {
    static let schema = ImportChangesetTests.schema + [
        ObjectSchema(name: "Reading", properties: [Property(name: "_id", type: .int, isPrimaryKey: true), Property(name: "value", type: .double)],
                     isAsymmetric: true),
    ]

    static var current: HistorySchema {
        var history = HistorySchema()
        history.absorb(Changeset(version: 0, timestamp: 0, instructions: schema.map { .addTable($0) }))
        return history
    }

    /// The check as it was: `HistorySchema.validate` over the whole changeset, then the shape.
    static func twoPass(_ changeset: Changeset, schema: HistorySchema, limits: ChangesetLimits) throws(MergeError) {
        var schema = schema
        try schema.validate(changeset)
        var current: ObjectID?
        var currentType: ObjectSchema?
        var counts: [String: Int] = [:]
        for (index, instruction) in changeset.instructions.enumerated() {
            func refuse(_ problem: String) -> MergeError {
                MergeError(.invalidInstruction, "instruction \(index) of the import changeset: \(problem)")
            }
            if let problem = ReplicaState.sizeProblem(instruction, limits) { throw refuse(problem) }
            func property(_ id: ObjectID, _ path: [PathElement]) throws(MergeError) -> (Property, keyed: Bool) {
                guard let current, id == current, let currentType else { throw refuse("it changes an object other than the one created just before") }
                guard case .property(let name)? = path.first, let property = currentType[property: name] else {
                    throw refuse("its path does not start with a property of \(id.type)")
                }
                if path.count == 1 { return (property, false) }
                guard path.count == 2, case .key = path[1], property.collection == .map else { throw refuse("its path goes deeper than an import writes") }
                return (property, true)
            }
            func count(_ name: String) throws(MergeError) -> Int {
                guard let written = counts[name] else { throw refuse("it fills \(name) before clearing it") }
                guard written < limits.maximumCollectionCount else { throw refuse("\(name) would hold more than \(limits.maximumCollectionCount) elements") }
                counts[name] = written + 1
                return written
            }
            switch instruction {
            case .addTable, .addColumn:
                guard current == nil else { throw refuse("a schema instruction after the objects") }
            case .createObject(let id):
                (current, currentType, counts) = (id, schema.types[id.type], [:])
            case .set(let id, let path, _):
                let (property, keyed) = try property(id, path)
                if keyed { _ = try count(property.name) } else if property.collection != .single { throw refuse("it sets \(property.name), a collection, as a whole") }
            case .clear(let id, let path):
                let (property, keyed) = try property(id, path)
                guard !keyed, property.collection != .single else { throw refuse("it clears something that is not a collection") }
                counts[property.name] = 0
            case .listInsert(let id, let path, let position, _):
                let (property, keyed) = try property(id, path)
                guard !keyed, property.collection == .list else { throw refuse("a list insert into \(property.name), not a list") }
                guard try count(property.name) == position else { throw refuse("a list insert at \(position), not after the last") }
            case .setInsert(let id, let path, _):
                let (property, keyed) = try property(id, path)
                guard !keyed, property.collection == .set else { throw refuse("a set insert into \(property.name), not a set") }
                _ = try count(property.name)
            default:
                throw refuse("not an instruction an import makes")
            }
        }
    }

    static func outcome(_ body: () throws(MergeError) -> Void) -> String? {
        do { try body(); return nil } catch { return "\(error.code) \(error)" }
    }

    /// Random instructions around a few objects, mostly of an import's shape, often not.
    struct Fuzzer {
        var rng: SplitMix64
        mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

        mutating func task() -> ObjectID {
            [ObjectID(type: "Task", primaryKey: .objectId(ObjectId(ImportChangesetTests.id(int(3)))!)),
             ObjectID(type: "Reading", primaryKey: .int(Int64(int(2)))),
             ObjectID(type: "Address", primaryKey: .null), ObjectID(type: "Nope", primaryKey: .int(1)),
             ObjectID(type: "Task", primaryKey: .string("x"))][int(10) < 7 ? 0 : int(5)]
        }

        mutating func value() -> Value {
            [.string("s"), .string(String(repeating: "x", count: 40)), .int(3), .double(1.5), .null, .bool(true),
             .list([.string("a")]), .object(["street": .string("Main")]), .link(ObjectLink(objectType: "Person", primaryKey: .objectId(ObjectId(ImportChangesetTests.id(7))!)))][int(9)]
        }

        mutating func path() -> [PathElement] {
            let name = ["title", "priority", "tags", "labels", "scores", "owner", "address", "value", "missing"][int(9)]
            switch int(12) {
            case 0: return [.property(name), .key("k\(int(3))")]
            case 1: return [.property(name), .index(0)]
            case 2: return []
            case 3: return [.property(name), .key("k"), .key("deeper")]
            default: return [.property(name)]
            }
        }

        mutating func instruction(_ id: ObjectID) -> Instruction {
            switch int(20) {
            case 0..<5: return .set(id, path: path(), value: value())
            case 5..<8: return .clear(id, path: path())
            case 8..<12: return .listInsert(id, path: path(), index: int(3), value: value())
            case 12..<14: return .setInsert(id, path: path(), value: value())
            case 14: return .createObject(task())
            case 15: return .addColumn(type: "Task", Property(name: ["extra", "title"][int(2)], type: [.string, .int][int(2)]))
            case 16: return .addTable(ObjectSchema(name: "Late", properties: []))
            case 17: return [.eraseObject(id), .addInteger(id, path: path(), delta: 1), .listErase(id, path: path(), index: 0),
                             .mapErase(id, path: path(), key: "k")][int(4)]
            default: return .set(task(), path: path(), value: value())
            }
        }

        /// One document: usually a `createObject` then instructions on it.
        mutating func document() -> [Instruction] {
            let id = task()
            var instructions: [Instruction] = int(8) == 0 ? [] : [.createObject(id)]
            for _ in 0..<int(8) { instructions.append(instruction(id)) }
            return instructions
        }

        /// A document as the typer writes it (2 in 3), or a fuzzed one.
        mutating func mixedDocument() -> [Instruction] {
            int(3) == 0 ? document()
                : (try? ImportChangesetTests.importInstructions([ImportChangesetTests.document(int(4), tags: int(4))])) ?? []
        }

        mutating func schemaInstructions() -> [Instruction] {
            [[], [], [.addColumn(type: "Task", Property(name: "extra", type: .string, isOptional: true))],
             [.addTable(ObjectSchema(name: "Late", properties: [Property(name: "_id", type: .int, isPrimaryKey: true)]))],
             [.addColumn(type: "Task", Property(name: "title", type: .int))]][int(5)]
        }
    }

    @Test func aFusedCheckRefusesWhatTheTwoPassesRefusedWordForWord() {
        var fuzzer = Fuzzer(rng: SplitMix64(seed: 24))
        var outcomes: [String: Int] = [:]
        for round in 0..<3_000 {
            let limits = round % 3 == 0 ? ChangesetLimits(maximumValueSize: 16, maximumCollectionCount: 2) : ChangesetLimits()
            var instructions = fuzzer.schemaInstructions()
            for _ in 0..<(1 + fuzzer.int(3)) { instructions += round % 2 == 0 ? fuzzer.document() : fuzzer.mixedDocument() }
            let changeset = Changeset(version: Int64(1 + round % 2), timestamp: 0, instructions: instructions)
            let expected = Self.outcome { () throws(MergeError) in try Self.twoPass(changeset, schema: Self.current, limits: limits) }
            let fused = Self.outcome { () throws(MergeError) in try ImportChangeset.check(changeset, schema: Self.current, limits: limits) }
            #expect(fused == expected, "round \(round): \(instructions)")
            outcomes[expected.map { String($0.prefix { $0 != " " }) } ?? "passed", default: 0] += 1
        }
        // Both kinds of refusal were met many times, and many changesets passed.
        #expect(outcomes.count == 3 && outcomes.values.allSatisfy { $0 > 200 }, "\(outcomes)")
    }

    @Test func aBatchCheckedDocumentByDocumentKeepsAndRefusesWhatTheWholeBatchCheckDid() throws {
        var fuzzer = Fuzzer(rng: SplitMix64(seed: 10))
        var refusedDocuments = 0, keptDocuments = 0
        for round in 0..<1_500 {
            let limits = round % 4 == 0 ? ChangesetLimits(maximumValueSize: 16, maximumCollectionCount: 2) : ChangesetLimits()
            let schemaInstructions = fuzzer.schemaInstructions()
            var history = Self.current
            guard (try? history.validate(Changeset(version: 0, timestamp: 0, instructions: schemaInstructions))) != nil else { continue }
            // Mostly documents of an import's shape (as the typer writes them), some hostile.
            let documents = (0..<(1 + fuzzer.int(6))).map { _ in fuzzer.mixedDocument() }
            // As it was: the batch checked whole; when refused, each document with the schema's instructions.
            var expected = schemaInstructions
            var expectedRefusals: [Int: String] = [:]
            let whole = Changeset(version: 1, timestamp: 0, instructions: schemaInstructions + documents.flatMap { $0 })
            if Self.outcome({ () throws(MergeError) in try Self.twoPass(whole, schema: Self.current, limits: limits) }) == nil {
                expected = whole.instructions
            } else {
                for (index, document) in documents.enumerated() {
                    let alone = Changeset(version: 1, timestamp: 0, instructions: schemaInstructions + document)
                    if let refusal = Self.outcome({ () throws(MergeError) in try Self.twoPass(alone, schema: Self.current, limits: limits) }) {
                        expectedRefusals[index] = refusal
                    } else {
                        expected += document
                    }
                }
            }
            // Now: each document appended where the typer writes it and checked there.
            let checker = ImportChangeset.Checker(schema: history, version: 1, limits: limits, offset: schemaInstructions.count)
            var instructions = schemaInstructions
            var refusals: [Int: String] = [:]
            for (index, document) in documents.enumerated() {
                let start = instructions.count
                instructions += document
                var addsSchema = false
                if let refusal = checker.admit(&instructions, from: start, addsSchema: &addsSchema) {
                    refusals[index] = "\(refusal.code) \(refusal)"
                } else {
                    #expect(addsSchema == document.contains { if case .addTable = $0 { true } else if case .addColumn = $0 { true } else { false } })
                }
            }
            #expect(refusals == expectedRefusals, "round \(round)")
            #expect(Changeset(version: 1, timestamp: 7, fileIdent: 3, instructions: instructions).encoded()
                == Changeset(version: 1, timestamp: 7, fileIdent: 3, instructions: expected).encoded(), "round \(round)")
            refusedDocuments += refusals.count
            keptDocuments += documents.count - refusals.count
        }
        #expect(refusedDocuments > 300 && keptDocuments > 1_000)
    }
}
