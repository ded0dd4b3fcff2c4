@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// realm-swift's `Query<AnyRealmValue>` subscripts — `[position]`, `[key]` and `.any` — and their
/// query-language forms `payload[0]`, `payload['key']`, `payload[*]`, through SQL (a realm) and
/// through the evaluator the server runs (the same predicates over property maps).
@Suite struct MixedSubscriptQueryTests {
    private func seeded() throws -> (TestRealm, Realm) {
        let t = try TestRealm(objectTypes: [MixedHolder.self, MixedTarget.self, MixedKeyless.self, MixedEmbedded.self, MixedOwner.self])
        let realm = try t.open()
        let values: [(String, AnyRealmValue)] = [
            ("list", .fromArray([.int(1), .string("Rex"), .fromArray([.double(2.5)])])),
            ("dict", .fromDictionary(["name": .string("Rex"), "age": .int(3), "nested": .fromDictionary(["deep": .bool(true)])])),
            ("otherList", .fromArray([.string("Fido"), .int(7)])),
            ("scalar", .string("Rex")),
            ("none", .none),
        ]
        try realm.write {
            for (index, (_, value)) in values.enumerated() {
                let holder = MixedHolder()
                holder._id = try ObjectId(string: String(format: "%024x", index + 1))
                holder.payload = value
                realm.add(holder)
            }
        }
        return (t, realm)
    }

    /// The holders (by their position in `seeded()`, 1-based) a query matches, through the realm.
    private func matches(_ realm: Realm, _ query: String, _ arguments: Any...) -> Set<Int> {
        Set(realm.objects(MixedHolder.self).filter(query, arguments).map { Int($0._id.stringValue, radix: 16)! })
    }

    private func matches(_ realm: Realm, _ query: (Query<MixedHolder>) -> Query<Bool>) -> Set<Int> {
        Set(realm.objects(MixedHolder.self).where(query).map { Int($0._id.stringValue, radix: 16)! })
    }

    @Test func anIndexReadsTheHeldListsElement() throws {
        let (_, realm) = try seeded()
        #expect(matches(realm, "payload[0] == 1") == [1])
        #expect(matches(realm, "payload[1] == 'Rex'") == [1])
        #expect(matches(realm, "payload[1] BEGINSWITH[c] 'r'") == [1])
        #expect(matches(realm, "payload[0] > 0") == [1])
        #expect(matches(realm, "payload[2][0] == 2.5") == [1])
        #expect(matches(realm, "payload[9] == 1").isEmpty)
        #expect(matches(realm, "payload[0].@type == 'string'") == [3])
        #expect(matches(realm) { $0.payload[0] == .int(1) } == [1])
        #expect(matches(realm) { $0.payload[2][0] == .double(2.5) } == [1])
    }

    @Test func aKeyReadsTheHeldDictionarysValue() throws {
        let (_, realm) = try seeded()
        #expect(matches(realm, "payload['name'] == 'Rex'") == [2])
        #expect(matches(realm, "payload['age'] >= 3") == [2])
        #expect(matches(realm, "payload['nested']['deep'] == true") == [2])
        #expect(matches(realm, "payload['missing'] == nil") == [1, 2, 3, 4, 5])
        #expect(matches(realm) { $0.payload["name"] == .string("Rex") } == [2])
        #expect(matches(realm) { $0.payload["nested"]["deep"] == .bool(true) } == [2])
    }

    @Test func allElementsCompareOneByOne() throws {
        let (_, realm) = try seeded()
        #expect(matches(realm, "payload[*] == 'Rex'") == [1, 2])
        #expect(matches(realm, "ANY payload[*] == 7") == [3])
        #expect(matches(realm, "ALL payload[*] == 'Rex'") == [4, 5])   // a scalar or none has no elements
        #expect(matches(realm, "NONE payload[*] == 'Rex'") == [3, 4, 5])
        #expect(matches(realm, "payload[*].@type == 'string'") == [1, 2, 3])
        #expect(matches(realm, "payload['nested'][*] == true") == [2])
        #expect(matches(realm) { $0.payload.any == .string("Rex") } == [1, 2])
    }

    @Test func theServersEvaluatorAgreesWithSQL() throws {
        let (_, realm) = try seeded()
        let schema = try #require(realm.schema.objectSchema.first { $0.className == "MixedHolder" })
        let stored = try Schema([schema])
        // The payloads of `seeded()`, as the server holds them.
        let payloads: [Value] = [
            .list([.int(1), .string("Rex"), .list([.double(2.5)])]),
            .map(["name": .string("Rex"), "age": .int(3), "nested": .map(["deep": .bool(true)])]),
            .list([.string("Fido"), .int(7)]),
            .string("Rex"),
            .null,
        ]
        let rows: [[String: Value]] = payloads.map { ["payload": $0] }
        for query in ["payload[0] == 1", "payload[2][0] == 2.5", "payload['name'] == 'Rex'", "payload[*] == 'Rex'",
                      "ALL payload[*] == 'Rex'", "payload['nested'][*] == true", "payload[*].@type == 'string'"] {
            let bound = try BoundQuery(parsing: query, arguments: [], objectType: "MixedHolder", schema: stored)
            let evaluated = Set(rows.enumerated().filter { bound.evaluate(on: $0.element, resolver: NoLinkResolver()) }.map { $0.offset + 1 })
            #expect(evaluated == matches(realm, query), "\(query)")
        }
    }

    @Test func subscriptsNeedAMixedValueAndRefuseWhatTheyCannotDo() throws {
        let (_, realm) = try seeded()
        let schema = try Schema([try #require(realm.schema.objectSchema.first { $0.className == "MixedHolder" })])
        func error(_ query: String) -> QueryError? {
            do { _ = try BoundQuery(parsing: query, arguments: [], objectType: "MixedHolder", schema: schema) } catch { return error }
            return nil
        }
        #expect(error("_id[0] == 1")?.code == .invalidOperation)
        #expect(error("payload[*].@count > 1")?.code == .unsupported)
        #expect(error("payload[*] > 1") == nil)
        #expect(error("payload[99999999999999999999] == 1")?.code != nil)
        // The text form round-trips (flexible sync sends it to the server).
        let path = QueryKeyPath([.property("payload"), .key("a'b"), .index(3), .allElements])
        let text = "\(path) == 1"
        #expect(text.hasSuffix("[3][*] == 1"))
        #expect(try QueryExpression.parse(text).description == text)
    }
}
