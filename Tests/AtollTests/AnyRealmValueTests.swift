@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

final class MixedHolder: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var payload: AnyRealmValue
    @Persisted var items: List<AnyRealmValue>
    @Persisted var bag: MutableSet<AnyRealmValue>
    @Persisted var attributes: Map<String, AnyRealmValue>
}

final class MixedTarget: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var rank = 0
}

final class MixedKeyless: Object {
    @Persisted var note = ""
}

final class MixedEmbedded: EmbeddedObject {
    @Persisted var street = ""
}

final class MixedOwner: Object {
    @Persisted var address: MixedEmbedded?
}

/// `AnyRealmValue`: every case as a property and in collections, links, nesting, sync.
@Suite struct AnyRealmValueTests {
    private func testRealm() throws -> TestRealm {
        try TestRealm(objectTypes: [MixedHolder.self, MixedTarget.self, MixedKeyless.self, MixedEmbedded.self, MixedOwner.self])
    }

    static var scalars: [AnyRealmValue] { [
        .none, .int(-7), .bool(true), .float(2.5), .double(2.5), .string("Frodo"), .data(Data([0, 1, 2])),
        .date(Date(timeIntervalSince1970: 1_700_000_000.25)), .objectId(try! ObjectId(string: "65a1f0c2e4b0a1b2c3d4e5f6")),
        .decimal128(try! Decimal128(string: "12.345")), .uuid(UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")!),
    ] }

    @Test(arguments: 0..<11) func everyScalarKeepsItsTypeAcrossReopening(_ index: Int) throws {
        let value = Self.scalars[index]
        let test = try testRealm()
        let id = ObjectId.generate()
        do {
            let realm = try test.open()
            try realm.write { realm.add(MixedHolder(value: ["_id": id, "payload": value])) }
            #expect(realm.object(ofType: MixedHolder.self, forPrimaryKey: id)?.payload == value)
        }
        let reopened = try test.open()
        #expect(reopened.object(ofType: MixedHolder.self, forPrimaryKey: id)?.payload == value)
    }

    /// JSONSerialization's numbers are NSNumbers, and one holding 0 or 1 casts to Bool on Linux as
    /// on Darwin: a value built from JSON keeps the kind the JSON had.
    @Test func numbersFromJSONKeepTheirKind() throws {
        let realm = try testRealm().open()
        let json = try JSONSerialization.jsonObject(with: Data(#"{"payload": 1, "items": [1, true, 2.5, 0, false, 7]}"#.utf8)) as! [String: Any]
        let holder = MixedHolder(value: json)
        #expect(holder.payload == .int(1))
        #expect(Array(holder.items) == [.int(1), .bool(true), .double(2.5), .int(0), .bool(false), .int(7)])
        try realm.write { realm.add(holder) }
        #expect(holder.payload == .int(1))
        let dogJSON = try JSONSerialization.jsonObject(with: Data(#"{"name": "Rex", "age": 1}"#.utf8)) as! [String: Any]
        let target = MixedTarget(value: ["name": "Rex", "rank": dogJSON["age"]!])
        #expect(target.rank == 1)
    }

    @Test func numbersOfDifferentKindsStayApart() throws {
        let realm = try testRealm().open()
        let holder = MixedHolder()
        try realm.write {
            realm.add(holder)
            holder.items.append(objectsIn: [.int(1), .double(1), .float(1), .bool(true), .decimal128(Decimal128(1))])
        }
        #expect(Array(holder.items) == [.int(1), .double(1), .float(1), .bool(true), .decimal128(Decimal128(1))])
        #expect(holder.items[0].intValue == 1 && holder.items[1].intValue == nil && holder.items[3].boolValue == true)
    }

    @Test func anObjectIsHeldAsALinkAndReadsAsNoneOnceDeleted() throws {
        let realm = try testRealm().open()
        let holder = MixedHolder()
        let ring = MixedTarget(value: ["name": "ring", "rank": 1])
        try realm.write {
            realm.add(holder)
            holder.payload = .object(ring) // an unmanaged object is added with it
        }
        #expect(ring.realm != nil)
        #expect(holder.payload.object(MixedTarget.self)?.rank == 1)
        #expect(holder.payload == .object(ring))
        #expect(holder.payload.dynamicObject?["rank"] as? Int == 1)
        try realm.write { realm.delete(ring) }
        #expect(holder.payload == .none)
        // The link is unresolved, not erased: an object with the same key brings it back.
        try realm.write { realm.add(MixedTarget(value: ["name": "ring", "rank": 2])) }
        #expect(holder.payload.object(MixedTarget.self)?.rank == 2)
    }

    @Test func objectsWithoutAPrimaryKeyCanBeHeld() throws {
        let realm = try testRealm().open()
        let holder = MixedHolder()
        try realm.write {
            realm.add(holder)
            holder.payload = .object(MixedKeyless(value: ["note": "keyless"]))
            holder.attributes["k"] = .object(MixedKeyless(value: ["note": "in a map"]))
        }
        #expect(holder.payload.object(MixedKeyless.self)?.note == "keyless")
        #expect(holder.attributes["k"]?.object(MixedKeyless.self)?.note == "in a map")
        #expect(realm.objects(MixedKeyless.self).count == 2)
    }

    @Test func embeddedObjectsAreRefused() throws {
        let realm = try testRealm().open()
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.create(MixedHolder.self, value: ["payload": MixedEmbedded(value: ["street": "Bag End"])]) }
        }
        #expect(realm.objects(MixedHolder.self).isEmpty)
    }

    @Test func collectionsHoldEveryKindAndObjects() throws {
        let realm = try testRealm().open()
        let holder = MixedHolder()
        let target = MixedTarget(value: ["name": "t"])
        try realm.write {
            realm.add(holder)
            holder.items.append(objectsIn: Self.scalars + [.object(target)])
            holder.bag.insert(objectsIn: [.int(1), .string("1"), .int(1), .object(target), .none])
            holder.attributes["n"] = .int(3)
            holder.attributes["s"] = .string("x")
            holder.attributes["o"] = .object(target)
        }
        #expect(Array(holder.items) == Self.scalars + [.object(target)])
        #expect(holder.bag.count == 4)
        #expect(holder.bag.contains(.object(target)) && holder.bag.contains(.string("1")) && !holder.bag.contains(.int(2)))
        try realm.write { holder.bag.remove(.object(target)) }
        #expect(holder.bag.count == 3 && !holder.bag.contains(.object(target)))
        #expect(holder.attributes["n"] == .int(3))
        #expect(holder.attributes["o"]?.object(MixedTarget.self)?.name == "t")
        try realm.write { realm.delete(target) }
        #expect(holder.items.last == AnyRealmValue.none)
        #expect(holder.attributes["o"] == .some(AnyRealmValue.none))
    }

    @Test func nestedListsAndDictionariesAreStoredWhole() throws {
        let test = try testRealm()
        let id = ObjectId.generate()
        let target = MixedTarget(value: ["name": "nested"])
        do {
            let realm = try test.open()
            try realm.write {
                let holder = realm.create(MixedHolder.self, value: ["_id": id])
                holder.payload = .fromArray([.int(1), .fromDictionary(["a": .string("b"), "t": .object(target)]), .fromArray([.bool(false)])])
            }
        }
        let realm = try test.open()
        let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: id))
        let list = try #require(holder.payload.listValue)
        #expect(list.count == 3)
        #expect(list[0] == .int(1))
        #expect(list[1].dictionaryValue?["a"] == .string("b"))
        #expect(list[1].dictionaryValue?["t"]?.object(MixedTarget.self)?.name == "nested")
        #expect(list[2].listValue.map(Array.init) == [.bool(false)])
    }

    @Test func nestedCollectionsAreEditedInPlace() throws {
        let test = try testRealm()
        let id = ObjectId.generate()
        do {
            let realm = try test.open()
            let holder = try realm.write {
                realm.create(MixedHolder.self, value: ["_id": id, "payload": AnyRealmValue.fromDictionary(["tags": .fromArray([.string("a")])])])
            }
            try realm.write {
                holder.payload.dictionaryValue?["count"] = .int(2)
                holder.payload.dictionaryValue?["tags"]?.listValue?.append(.string("b"))
            }
            let tags = try #require(holder.payload.dictionaryValue?["tags"]?.listValue)
            try realm.write { tags.insert(.object(MixedTarget(value: ["name": "deep"])), at: 0) }
        }
        let holder = try #require(try test.open().object(ofType: MixedHolder.self, forPrimaryKey: id))
        let dictionary = try #require(holder.payload.dictionaryValue)
        #expect(dictionary["count"] == .int(2))
        let tags = try #require(dictionary["tags"]?.listValue)
        #expect(tags.count == 3)
        #expect(tags[0].object(MixedTarget.self)?.name == "deep")
        #expect(Array(tags.dropFirst()) == [.string("a"), .string("b")])
    }

    @Test func looseValuesConvertAsRealmDoes() throws {
        let realm = try testRealm().open()
        let target = MixedTarget(value: ["name": "loose"])
        let holder = try realm.write {
            realm.create(MixedHolder.self, value: ["payload": 5, "items": ["a", 2.5, NSNull(), target], "attributes": ["k": true]])
        }
        #expect(holder.payload == .int(5))
        #expect(Array(holder.items) == [.string("a"), .double(2.5), .none, .object(target)])
        #expect(holder.attributes["k"] == .bool(true))
        #expect(holder.value(forKey: "payload") as? AnyRealmValue == .int(5))
    }

    @Test func notificationsReportChangesToMixedProperties() throws {
        let realm = try testRealm().open()
        let holder = MixedHolder()
        try realm.write { realm.add(holder) }
        var changes: [String] = []
        let token = holder.observe { change in
            if case .change(_, let properties) = change { changes += properties.map(\.name) }
        }
        defer { token.invalidate() }
        try realm.write { holder.payload = .string("changed") }
        realm.refresh()
        #expect(changes.contains("payload"))
    }

    @Test func theSchemaSaysAnyRealmValue() throws {
        let realm = try testRealm().open()
        let property = try #require(realm.schema["MixedHolder"]?["payload"])
        #expect(property.type == .any)
        #expect(property.description.contains("AnyRealmValue"))
    }
}


/// Mixed values through a real server: typed, links by key, nested collections whole.
@MainActor @Suite(.serialized) struct AnyRealmValueSyncTests {
    private func open(_ user: User) async throws -> Realm {
        var configuration = user.configuration(partitionValue: "mixed")
        configuration.objectTypes = [MixedHolder.self, MixedTarget.self, MixedKeyless.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: .never)
    }

    @Test func mixedValuesAndTheirLinksSyncWithTheirTypes() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let realmA = try await open(frodo)
            let realmB = try await open(sam)
            let id = ObjectId.generate()
            try realmA.write {
                let target = realmA.create(MixedTarget.self, value: ["name": "ring", "rank": 1])
                let holder = realmA.create(MixedHolder.self, value: ["_id": id])
                holder.payload = .object(target)
                holder.items.append(objectsIn: [.float(1.5), .int(2), .object(target), .fromArray([.string("deep")])])
                holder.bag.insert(objectsIn: [.bool(true), .decimal128(Decimal128(3))])
                holder.attributes["when"] = .date(Date(timeIntervalSince1970: 86_400))
            }
            try await realmA.syncSession!.wait(for: .upload)
            try await realmB.syncSession!.wait(for: .download)
            realmB.refresh()
            let holder = try #require(realmB.object(ofType: MixedHolder.self, forPrimaryKey: id))
            #expect(holder.payload.object(MixedTarget.self)?.rank == 1)
            #expect(Array(holder.items.prefix(3)) == [.float(1.5), .int(2), .object(realmB.object(ofType: MixedTarget.self, forPrimaryKey: "ring")!)])
            #expect(holder.items[3].listValue.map(Array.init) == [.string("deep")])
            #expect(Set(holder.bag) == [.bool(true), .decimal128(Decimal128(3))])
            #expect(holder.attributes["when"] == .date(Date(timeIntervalSince1970: 86_400)))

            // An erase on B reaches A: the link reads as none there too.
            try realmB.write {
                realmB.delete(realmB.object(ofType: MixedTarget.self, forPrimaryKey: "ring")!)
                holder.payload = .fromDictionary(["k": .int(9)])
            }
            try await realmB.syncSession!.wait(for: .upload)
            try await realmA.syncSession!.wait(for: .download)
            realmA.refresh()
            let holderA = try #require(realmA.object(ofType: MixedHolder.self, forPrimaryKey: id))
            #expect(holderA.payload.dictionaryValue?["k"] == .int(9))
            #expect(holderA.items[2] == AnyRealmValue.none)
            #expect(realmA.objects(MixedTarget.self).isEmpty)
        }
    }

    @Test func mixedValuesWrittenOfflineSurviveARecoveringClientReset() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let recovered = Recorder<Int>()
            var configuration = frodo.configuration(partitionValue: "mixed", clientResetMode: .recoverUnsyncedChanges(
                afterReset: { _, after in recovered.append(after.objects(MixedHolder.self).count) }))
            configuration.objectTypes = [MixedHolder.self, MixedTarget.self, MixedKeyless.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            let id = ObjectId.generate()
            try realm.write { realm.create(MixedHolder.self, value: ["_id": id, "payload": 1]) }
            try await realm.syncSession!.wait(for: .upload)

            realm.syncSession!.suspend()
            try realm.write {
                let holder = realm.object(ofType: MixedHolder.self, forPrimaryKey: id)!
                holder.payload = .object(realm.create(MixedTarget.self, value: ["name": "offline", "rank": 3]))
                holder.items.append(objectsIn: [.float(2), .fromDictionary(["k": .bool(true)])])
            }
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.resume()

            #expect(await waitUntil { recovered.all.count == 1 })
            realm.refresh()
            let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: id))
            #expect(holder.payload.object(MixedTarget.self)?.rank == 3)
            #expect(holder.items.first == .float(2))
            #expect(holder.items.last?.dictionaryValue?["k"] == .bool(true))
        }
    }
}
