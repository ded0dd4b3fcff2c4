@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// Queries over `AnyRealmValue`: SQL on a real realm and the in-memory evaluator (which the server
/// runs for flexible sync) must give the same, Realm's, answers.
@Suite struct MixedQueryTests {
    /// Object `i + 1` holds `payloads[i]`.
    static var payloads: [AnyRealmValue] { [
        .int(1), .double(1), .bool(true), .string("1"), .string("apple"), .none, .decimal128(Decimal128(2.5)),
        .float(3), .date(Date(timeIntervalSince1970: 1000)), .none /* a link, set below */, .data(Data("apple".utf8)),
    ] }
    static let linkRow = 10

    static let schema = try! AtollCore.Schema([
        ObjectSchema(name: "MixedHolder", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true),
            Property(name: "payload", type: .any, isOptional: true),
            Property(name: "items", type: .any, collection: .list, isOptional: true),
            Property(name: "bag", type: .any, collection: .set, isOptional: true),
            Property(name: "attributes", type: .any, collection: .map, isOptional: true),
        ]),
        ObjectSchema(name: "MixedTarget", properties: [
            Property(name: "name", type: .string, isPrimaryKey: true), Property(name: "rank", type: .int),
        ]),
    ])

    /// A realm with the payloads, and the same objects as the evaluator sees them.
    private func fixture() throws -> (TestRealm, Realm, [[String: AtollCore.Value]], [ObjectId]) {
        let test = try TestRealm(objectTypes: [MixedHolder.self, MixedTarget.self, MixedKeyless.self])
        let realm = try test.open()
        var ids: [ObjectId] = []
        var values: [[String: AtollCore.Value]] = []
        try realm.write {
            let target = realm.create(MixedTarget.self, value: ["name": "t"])
            for (index, payload) in Self.payloads.enumerated() {
                let holder = realm.create(MixedHolder.self, value: ["_id": ObjectId.generate()])
                holder.payload = index + 1 == Self.linkRow ? .object(target) : payload
                holder.items.append(objectsIn: [.int(Int(index)), .string("i\(index)")])
                holder.attributes["k"] = index % 2 == 0 ? .string("even") : .int(index)
                ids.append(holder._id)
            }
        }
        for holder in realm.objects(MixedHolder.self) {
            let payload: AtollCore.Value = holder.payload.object(MixedTarget.self) != nil
                ? .link(ObjectLink(objectType: "MixedTarget", primaryKey: .string("t"))) : Self.value(holder.payload)
            values.append(["_id": .objectId(holder._id), "payload": payload,
                           "items": .list(holder.items.map(Self.value)),
                           "attributes": .map(Dictionary(uniqueKeysWithValues: holder.attributes.map { ($0.key, Self.value($0.value)) }))])
        }
        return (test, realm, values, ids)
    }

    static func value(_ mixed: AnyRealmValue) -> AtollCore.Value {
        switch mixed {
        case .none: .null
        case .int(let v): .int(Int64(v))
        case .bool(let v): .bool(v)
        case .float(let v): .float(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .data(let v): .data(v)
        case .date(let v): .date(v)
        case .objectId(let v): .objectId(v)
        case .decimal128(let v): .decimal(v)
        case .uuid(let v): .uuid(v)
        default: .null
        }
    }

    /// Rows (1-based) matching `query` through SQL and through the evaluator; both must be `expected`.
    private func check(_ query: String, _ arguments: [Any] = [], _ expected: [Int], ordered: Bool = false,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (test, realm, values, ids) = try fixture()
        defer { _ = test }
        let rows = { (found: [ObjectId]) in found.map { ids.firstIndex(of: $0)! + 1 } }
        let viaSQL = rows(Array(try realm.objects(MixedHolder.self).filter(query: query, arguments: arguments).map(\._id)))
        let bound = try BoundQuery(parsing: query, arguments: arguments.map { Self.argument($0) },
                                   objectType: "MixedHolder", schema: Self.schema)
        let viaEvaluator = rows(bound.run(on: values, values: { $0 }, resolver: NoLinkResolver()).map {
            guard case .objectId(let id)? = $0["_id"] else { return ObjectId.generate() }
            return id
        })
        if ordered {
            #expect(viaSQL == expected, "SQL", sourceLocation: sourceLocation)
            #expect(viaEvaluator == expected, "evaluator", sourceLocation: sourceLocation)
        } else {
            #expect(viaSQL.sorted() == expected.sorted(), "SQL", sourceLocation: sourceLocation)
            #expect(viaEvaluator.sorted() == expected.sorted(), "evaluator", sourceLocation: sourceLocation)
        }
    }

    static func argument(_ any: Any) -> AtollCore.Value {
        switch any {
        case let target as MixedTarget: .link(ObjectLink(objectType: "MixedTarget", primaryKey: .string(target.name)))
        case let date as Date: .date(date)
        case let int as Int: .int(Int64(int))
        default: .null
        }
    }

    @Test func numbersCompareByValueAcrossKinds() throws {
        try check("payload == 1", [], [1, 2])
        try check("payload == 1.0", [], [1, 2])
        try check("payload > 1", [], [7, 8])
        try check("payload <= 2.5", [], [1, 2, 7])
        try check("payload IN {1, 3}", [], [1, 2, 8])
    }

    @Test func otherKindsMatchOnlyTheirOwn() throws {
        try check("payload == true", [], [3])
        try check("payload == '1'", [], [4])
        try check("payload BEGINSWITH 'app'", [], [5])
        try check("payload CONTAINS[c] 'PP'", [], [5])
        try check("payload == nil", [], [6])
        try check("payload != nil", [], [1, 2, 3, 4, 5, 7, 8, 9, 10, 11])
        try check("payload < %@", [Date(timeIntervalSince1970: 2000)], [9])
        try check("NOT (payload > 1)", [], [1, 2, 3, 4, 5, 6, 9, 10, 11])
    }

    @Test func linksCompareByTarget() throws {
        let (test, realm, _, _) = try fixture()
        defer { _ = test }
        let target = try #require(realm.object(ofType: MixedTarget.self, forPrimaryKey: "t"))
        #expect(realm.objects(MixedHolder.self).filter("payload == %@", target).count == 1)
        #expect(realm.objects(MixedHolder.self).where { $0.payload == .object(target) }.count == 1)
    }

    @Test func collectionsOfMixedValues() throws {
        try check("ANY items == 3", [], [4])
        try check("ANY items == 'i4'", [], [5])
        try check("attributes['k'] == 'even'", [], [1, 3, 5, 7, 9, 11])
        try check("attributes['k'] > 6", [], [8, 10])
    }

    @Test func typeNamesMatchTheKindHeld() throws {
        try check("payload.@type == 'numeric'", [], [1, 2, 7, 8])
        try check("payload.@type == 'int'", [], [1])
        try check("payload.@type == 'Double'", [], [2])
        try check("payload.@type == 'string'", [], [4, 5])
        try check("payload.@type == 'object'", [], [10])
        try check("payload.@type == 'null'", [], [6])
        try check("payload.@type != 'numeric'", [], [3, 4, 5, 6, 9, 10, 11])
        try check("payload.@type IN {'bool', 'binary'}", [], [3, 11])
        try check("ANY items.@type == 'int' AND attributes['k'].@type == 'string'", [], [1, 3, 5, 7, 9, 11])
    }

    @Test func typeNamesAreChecked() throws {
        for bad in ["payload.@type == 'bogus'", "payload.@type > 'int'", "_id.@type == 'int'", "payload.@type == 3"] {
            #expect(throws: QueryError.self, "\(bad)") {
                try BoundQuery(parsing: bad, objectType: "MixedHolder", schema: Self.schema)
            }
        }
    }

    @Test func sortingOrdersKindsThenValues() throws {
        try check("TRUEPREDICATE SORT(payload ASC)", [], [6, 3, 1, 2, 7, 8, 4, 5, 11, 9, 10], ordered: true)
        try check("TRUEPREDICATE SORT(payload DESC)", [], [10, 9, 11, 5, 4, 8, 7, 1, 2, 3, 6], ordered: true)
    }

    @Test func typedQueriesCompareMixedValues() throws {
        let (test, realm, _, ids) = try fixture()
        defer { _ = test }
        let found = realm.objects(MixedHolder.self).where { $0.payload == .int(1) }.map { ids.firstIndex(of: $0._id)! + 1 }
        #expect(Array(found).sorted() == [1, 2])
        #expect(realm.objects(MixedHolder.self).where { $0.payload == .string("apple") }.count == 1)
    }
}
