@testable import AtollCore
import Foundation
import Testing

/// Remote data access, the pure part: MongoDB filters, sorts, projections and updates evaluated
/// over a realm's state under the app's read and write rules.
@Suite struct RemoteCollectionTests {
    static let schema: [ObjectSchema] = [
        ObjectSchema(name: "Task", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true),
            Property(name: "name", type: .string),
            Property(name: "owner", type: .string),
            Property(name: "done", type: .bool),
            Property(name: "priority", type: .int),
            Property(name: "tags", type: .string, collection: .list),
            Property(name: "notes", type: .string, isOptional: true),
        ]),
    ]

    static func oid(_ n: Int) -> ObjectId { ObjectId(String(format: "%024x", n))! }
    static func id(_ n: Int) -> ObjectID { ObjectID(type: "Task", primaryKey: .objectId(oid(n))) }

    /// Tasks 1…6: owners ann (1, 2, 3) and bob (4, 5, 6), priority n, done for even n.
    static func state() -> ReplicaState {
        var state = ReplicaState()
        for type in schema { state.apply(.addTable(type)) }
        for n in 1...6 {
            let id = id(n)
            for instruction: Instruction in [
                .createObject(id),
                .set(id, path: [.property("name")], value: .string("task \(n)")),
                .set(id, path: [.property("owner")], value: .string(n <= 3 ? "ann" : "bob")),
                .set(id, path: [.property("done")], value: .bool(n % 2 == 0)),
                .set(id, path: [.property("priority")], value: .int(Int64(n))),
                .set(id, path: [.property("notes")], value: .string("secret \(n)")),
            ] { state.apply(instruction) }
        }
        return state
    }

    static func collection(rules: FlexibleSync.Rules = FlexibleSync.Rules(), limits: RemoteLimits = RemoteLimits()) throws -> RemoteCollection {
        try RemoteCollection(state: state(), type: "Task", rules: rules, limits: limits)
    }

    static func json(_ text: String) throws -> JSONNode { try JSONNode.parse(Array(text.utf8)) }

    static func find(_ filter: String, in collection: RemoteCollection? = nil) throws -> [Int] {
        let collection = try collection ?? Self.collection()
        return try collection.find(filter: collection.filter(json(filter))).map { id in
            guard case .objectId(let o) = id.primaryKey else { return -1 }
            return Int(o.stringValue, radix: 16) ?? -1
        }
    }

    static func request(_ action: String, _ body: String) throws -> RemoteRequest {
        try RemoteRequest(action: action, body: Array(#"{"database": "db", "collection": "Task", \#(body.dropFirst())"#.utf8))
    }

    // MARK: Filters

    @Test func filtersUseMongoDBComparisonOperators() throws {
        #expect(try Self.find(#"{"owner": "ann"}"#) == [1, 2, 3])
        #expect(try Self.find(#"{"priority": {"$gt": 2, "$lte": 4}}"#) == [3, 4])
        #expect(try Self.find(#"{"priority": {"$in": [1, 6]}}"#) == [1, 6])
        #expect(try Self.find(#"{"priority": {"$nin": [1, 6]}, "done": true}"#) == [2, 4])
        #expect(try Self.find(#"{"$or": [{"priority": 1}, {"owner": {"$ne": "ann"}}]}"#) == [1, 4, 5, 6])
        #expect(try Self.find(#"{"$nor": [{"owner": "ann"}, {"done": true}]}"#) == [5])
        #expect(try Self.find(#"{"$and": [{"owner": "bob"}, {"priority": {"$gte": 5}}]}"#) == [5, 6])
        #expect(try Self.find(#"{"notes": {"$exists": true}}"#).count == 6)
        #expect(try Self.find(#"{"_id": {"$oid": "000000000000000000000002"}}"#) == [2])
        #expect(try Self.find("{}") == [1, 2, 3, 4, 5, 6])
    }

    @Test func stringsAreValuesNeverQueryText() throws {
        // A value that would be query text, or a rule placeholder, is only a string.
        #expect(try Self.find(#"{"owner": "ann' OR owner != 'x"}"#).isEmpty)
        #expect(try Self.find(#"{"owner": "%%user.id"}"#).isEmpty)
    }

    @Test func operatorsOutsideTheListAreRefused() throws {
        for filter in [#"{"$where": "this.owner == 'ann'"}"#, #"{"owner": {"$regex": "^a"}}"#, #"{"tags": {"$elemMatch": {"$eq": "x"}}}"#,
                       #"{"%%true": true}"#, #"{"owner": {"$expr": 1}}"#] {
            #expect(throws: RemoteError.self) { try Self.find(filter) }
            do { _ = try Self.find(filter) } catch let error as RemoteError { #expect(error.code == .unsupported, "\(filter)") }
        }
    }

    @Test func unknownFieldsAndWrongTypesAreBadRequests() throws {
        do { _ = try Self.find(#"{"colour": "red"}"#); Issue.record("no error") } catch let error as RemoteError { #expect(error.code == .badRequest) }
        do { _ = try Self.find(#"{"priority": "high"}"#); Issue.record("no error") } catch let error as RemoteError { #expect(error.code == .badRequest) }
    }

    @Test func largeFiltersAreRefused() throws {
        var limits = RemoteLimits()
        limits.maxFilterNodes = 50
        let big = "{\"priority\": {\"$in\": [" + (0..<100).map(String.init).joined(separator: ",") + "]}}"
        do {
            _ = try Self.find(big, in: Self.collection(limits: limits))
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .limitExceeded)
        }
        let deep = String(repeating: #"{"$and": ["#, count: 40) + #"{"owner": "ann"}"# + String(repeating: "]}", count: 40)
        do {
            _ = try Self.request("find", #"{"filter": \#(deep)}"#)
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .limitExceeded)
        }
    }

    @Test func examiningMoreObjectsThanTheLimitIsRefused() throws {
        var limits = RemoteLimits()
        limits.maxExamined = 5
        do {
            _ = try Self.find("{}", in: Self.collection(limits: limits))
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .limitExceeded)
        }
    }

    @Test func aCancelledRequestStopsExamining() async throws {
        var state = Self.state()
        for n in 100..<2_200 { state.apply(.createObject(Self.id(n))) }
        let collection = try RemoteCollection(state: state, type: "Task", rules: FlexibleSync.Rules())
        let outcome = await Task { () -> Result<[ObjectID], Error> in
            withUnsafeCurrentTask { $0?.cancel() }  // the server's time limit, run out
            return Result { try collection.find(filter: nil) }
        }.value
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    @Test func writingMoreDocumentsThanTheLimitIsRefused() throws {
        var limits = RemoteLimits()
        limits.maxWritten = 3
        let all = try Self.collection(limits: limits)
        let documents = (0..<4).map { #"{"name": "n\#($0)"}"# }.joined(separator: ",")
        for (action, body) in [("insertMany", #"{"documents": [\#(documents)]}"#), ("deleteMany", #"{"filter": {}}"#),
                               ("updateMany", #"{"filter": {}, "update": {"$set": {"done": true}}}"#)] {
            do {
                _ = try all.perform(Self.request(action, body), rule: nil)
                Issue.record("\(action) went past the limit")
            } catch let error as RemoteError {
                #expect(error.code == .limitExceeded, "\(action)")
            }
        }
    }

    // MARK: Rules

    static let annReads = FlexibleSync.Rules(readRules: [(type: "Task", query: "owner == %user.id")], user: RuleUser(id: "ann"),
                                             fieldAccess: ["Task": FieldAccess(fields: ["notes": .init(read: false, write: false)],
                                                                               otherFields: .init(read: true, write: true))])

    @Test func aUserReadsOnlyWhatItsReadRuleAllows() throws {
        let ann = try Self.collection(rules: Self.annReads)
        #expect(try Self.find("{}", in: ann) == [1, 2, 3])
        #expect(try Self.find(#"{"owner": "bob"}"#, in: ann).isEmpty)
        let (answer, _) = try ann.perform(Self.request("count", #"{"filter": {}}"#), rule: nil)
        #expect(answer == .number("3", isInteger: true))
    }

    @Test func fieldsTheUserMayNotReadAreNeverShownNorQueried() throws {
        let ann = try Self.collection(rules: Self.annReads)
        let (answer, _) = try ann.perform(Self.request("findOne", #"{"filter": {"priority": 1}}"#), rule: nil)
        #expect(answer["name"] == .string("task 1"))
        #expect(answer["notes"] == nil)
        do {
            _ = try Self.find(#"{"notes": "secret 1"}"#, in: ann)
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .permissionDenied)
        }
        do {
            _ = try ann.perform(Self.request("find", #"{"filter": {}, "sort": {"notes": 1}}"#), rule: nil)
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .permissionDenied)
        }
    }

    /// Only ann's tasks may be written, before and after.
    static func annWrites(_ id: ObjectID, _ before: [String: Value]?, _ after: [String: Value]?, _ state: ReplicaState) -> String? {
        for fields in [before, after].compactMap({ $0 }) where fields["owner"] != .string("ann") { return "not ann's" }
        return nil
    }

    @Test func aWriteTheRulesRefuseIsRefusedWhole() throws {
        let all = try Self.collection()
        // Task 4 is bob's: updating every task is refused, not done in part.
        do {
            _ = try all.perform(Self.request("updateMany", #"{"filter": {}, "update": {"$set": {"done": true}}}"#), rule: Self.annWrites)
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .permissionDenied)
        }
        // Giving one of ann's tasks to bob is refused too (the rule holds after the change).
        do {
            _ = try all.perform(Self.request("updateOne", #"{"filter": {"priority": 1}, "update": {"$set": {"owner": "bob"}}}"#), rule: Self.annWrites)
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .permissionDenied)
        }
        let (answer, write) = try all.perform(Self.request("updateMany", #"{"filter": {"owner": "ann"}, "update": {"$set": {"done": true}}}"#),
                                              rule: Self.annWrites)
        #expect(answer["matchedCount"] == .number("3", isInteger: true))
        #expect(answer["modifiedCount"] == .number("2", isInteger: true))  // task 2 was done already
        #expect(write?.instructions == [.set(Self.id(1), path: [.property("done")], value: .bool(true)),
                                        .set(Self.id(3), path: [.property("done")], value: .bool(true))])
    }

    // MARK: Updates

    @Test func updateOperatorsChangeOnlyWhatTheyName() throws {
        let document = try Self.json(#"{"_id": 1, "n": {"$numberInt": "2"}, "tags": ["a"], "name": "x", "sub": {"a": 1}}"#)
        let updated = try RemoteUpdate.apply(Self.json(#"{"$inc": {"n": 3}, "$push": {"tags": {"$each": ["b", "c"]}}, "$unset": {"name": ""}, "$set": {"sub.b": 2}}"#),
                                             to: document, primaryKey: "_id")
        #expect(updated["n"]?.literalValue == .int(5))
        #expect(updated["tags"] == .array([.string("a"), .string("b"), .string("c")]))
        #expect(updated["name"] == .null)
        #expect(updated["sub"]?["b"] == .number("2", isInteger: true))
        for bad in [#"{"$rename": {"n": "m"}}"#, #"{"$set": {"_id": 2}}"#, #"{"$inc": {"name": 1}}"#, #"{"n": 1}"#] {
            #expect(throws: RemoteError.self) { try RemoteUpdate.apply(Self.json(bad), to: document, primaryKey: "_id") }
        }
    }

    @Test func insertsAreTypedByTheSchemaAndKeyedUniquely() throws {
        let all = try Self.collection()
        let (answer, write) = try all.perform(Self.request("insertOne", #"{"document": {"name": "new", "owner": "ann", "priority": 9}}"#), rule: nil)
        guard case .objectId? = answer["insertedId"]?.literalValue else { Issue.record("no ObjectId: \(answer.text)"); return }
        #expect(write?.instructions.first.map { if case .createObject = $0 { true } else { false } } == true)
        do {
            _ = try all.perform(Self.request("insertOne", #"{"document": {"_id": {"$oid": "000000000000000000000001"}}}"#), rule: nil)
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .duplicateKey)
        }
        do {
            _ = try all.perform(Self.request("insertOne", #"{"document": {"priority": "high"}}"#), rule: nil)
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .invalidDocument)
        }
    }

    @Test func findOneAndUpdateReturnsTheDocumentBeforeOrAfter() throws {
        let all = try Self.collection()
        let before = try all.perform(Self.request("findOneAndUpdate", #"{"filter": {"priority": 2}, "update": {"$inc": {"priority": 10}}}"#), rule: nil)
        #expect(before.answer["priority"]?.literalValue == .int(2))
        let after = try all.perform(Self.request("findOneAndUpdate",
            #"{"filter": {"priority": 2}, "update": {"$inc": {"priority": 10}}, "returnNewDocument": true, "projection": {"priority": 1}}"#), rule: nil)
        #expect(after.answer["priority"]?.literalValue == .int(12))
        #expect(after.answer["name"] == nil)
        let upserted = try all.perform(Self.request("findOneAndUpdate",
            #"{"filter": {"owner": "cy"}, "update": {"$set": {"name": "made"}}, "upsert": true, "returnNewDocument": true}"#), rule: nil)
        #expect(upserted.answer["owner"] == .string("cy"))
        #expect(upserted.answer["name"] == .string("made"))
    }

    @Test func aggregationRunsTheSimpleStages() throws {
        let all = try Self.collection()
        let (answer, _) = try all.perform(Self.request("aggregate",
            #"{"pipeline": [{"$match": {"done": false}}, {"$sort": {"priority": -1}}, {"$skip": 1}, {"$limit": 1}, {"$project": {"priority": 1, "_id": 0}}]}"#),
            rule: nil)
        #expect(answer == .array([.object([("priority", .object([("$numberInt", .string("3"))]))])]))
        do {
            _ = try all.perform(Self.request("aggregate", #"{"pipeline": [{"$lookup": {"from": "Other"}}]}"#), rule: nil)
            Issue.record("no error")
        } catch let error as RemoteError {
            #expect(error.code == .unsupported)
        }
    }
}

/// Change streams, the pure part: the events between two states the user may see.
@Suite struct RemoteWatchTests {
    typealias T = RemoteCollectionTests

    static func changed(_ change: (inout ReplicaState) -> Void) -> ReplicaState {
        var state = T.state()
        change(&state)
        return state
    }

    static func events(_ filter: String? = nil, rules: FlexibleSync.Rules = FlexibleSync.Rules(),
                       _ change: (inout ReplicaState) -> Void) throws -> [JSONNode] {
        let before = try RemoteCollection(state: T.state(), type: "Task", rules: rules)
        let after = try RemoteCollection(state: changed(change), type: "Task", rules: rules)
        let watch = try RemoteWatch(matchFilter: filter.map { try T.json($0) }, ids: nil, in: before)
        return try watch.events(from: before, to: after, database: "db", version: 9)
    }

    @Test func insertsUpdatesAndDeletesBecomeEvents() throws {
        let events = try Self.events { state in
            state.apply(.createObject(T.id(7)))
            state.apply(.set(T.id(1), path: [.property("done")], value: .bool(true)))
            state.apply(.eraseObject(T.id(2)))
        }
        #expect(events.map { $0["operationType"] } == [.string("update"), .string("delete"), .string("insert")])
        #expect(events[0]["fullDocument"]?["done"] == .bool(true))
        #expect(events[1]["fullDocument"] == nil)
        #expect(events[1]["documentKey"]?["_id"] == .object([("$oid", .string("000000000000000000000002"))]))
    }

    @Test func eventsOfObjectsTheUserMayNotReadAreNotSent() throws {
        let events = try Self.events(rules: RemoteCollectionTests.annReads) { state in
            state.apply(.set(T.id(1), path: [.property("done")], value: .bool(true)))  // ann's
            state.apply(.set(T.id(5), path: [.property("done")], value: .bool(true)))  // bob's
            state.apply(.eraseObject(T.id(6)))                                          // bob's
        }
        #expect(events.count == 1)
        #expect(events.first?["fullDocument"]?["owner"] == .string("ann"))
        #expect(events.first?["fullDocument"]?["notes"] == nil, "a hidden field")
    }

    @Test func matchFiltersSelectOperationsAndDocuments() throws {
        let inserts = try Self.events(#"{"operationType": "insert"}"#) { state in
            state.apply(.createObject(T.id(7)))
            state.apply(.set(T.id(1), path: [.property("done")], value: .bool(true)))
        }
        #expect(inserts.map { $0["operationType"] } == [.string("insert")])
        let bobs = try Self.events(#"{"fullDocument.owner": "bob"}"#) { state in
            state.apply(.set(T.id(1), path: [.property("done")], value: .bool(true)))
            state.apply(.set(T.id(5), path: [.property("done")], value: .bool(true)))
        }
        #expect(bobs.count == 1 && bobs.first?["fullDocument"]?["owner"] == .string("bob"))
        #expect(throws: RemoteError.self) { try Self.events(#"{"ns.coll": "Task"}"#) { _ in } }
    }
}
