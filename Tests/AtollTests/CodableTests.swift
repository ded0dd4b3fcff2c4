import Atoll
import AtollTesting
import Foundation
import Testing

enum CafeStatus: String, PersistableEnum, Codable { case open, closed }

final class Cafe: Object, Codable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name: String
    @Persisted var openedAt: Date
    @Persisted var rating: Double
    @Persisted var priceLevel: Int?
    @Persisted var status: CafeStatus
    @Persisted var tags: MutableSet<String>
    @Persisted var address: CafeAddress?
    @Persisted var menu: List<MenuItem>
    @Persisted var hours: Map<String, String>
    @Persisted var ratings: Map<String, Int?>
    @Persisted var owner: CafeOwner?
}

final class CafeAddress: EmbeddedObject, Codable {
    @Persisted var street: String
    @Persisted var city: String
    @Persisted var zip: String?
}

final class MenuItem: EmbeddedObject, Codable {
    @Persisted var name: String
    @Persisted var price: Decimal128
    @Persisted var vegan: Bool
}

final class CafeOwner: Object, Codable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name: String
}

/// A model without Codable, to show what encoding needs.
final class PlainNote: Object {
    @Persisted var text = ""
}

/// `Codable` models as in realm-swift: decoded from JSON straight into a realm, and encoded back.
@Suite struct CodableTests {
    static let json = #"""
    {
      "_id": "65a1f0c2e4b0a1b2c3d4e5f6",
      "name": "Green Lantern Café",
      "openedAt": "2021-03-14T09:30:00Z",
      "rating": 4.5,
      "priceLevel": null,
      "status": "open",
      "tags": ["coffee", "wifi"],
      "address": { "street": "1 Rue Main", "city": "Montréal", "zip": null },
      "menu": [
        { "name": "Latte", "price": "4.50", "vegan": false },
        { "name": "Oat flat white", "price": 5, "vegan": true }
      ],
      "hours": { "mon": "8-18", "sun": "closed" },
      "ratings": { "alice": 5, "bob": null },
      "owner": { "_id": "65a1f0c2e4b0a1b2c3d4e5f7", "name": "Ann" }
    }
    """#

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// JSON as Foundation values, for comparing documents whatever their key order.
    private static func object(_ data: Data) throws -> NSDictionary {
        try #require(JSONSerialization.jsonObject(with: data) as? NSDictionary)
    }

    private func realm() throws -> (TestRealm, Realm) {
        let t = try TestRealm(objectTypes: [Cafe.self, CafeAddress.self, MenuItem.self, CafeOwner.self, PlainNote.self])
        return (t, try t.open())
    }

    @Test func aNestedDocumentDecodesIntoAnUnmanagedObject() throws {
        let cafe = try Self.decoder.decode(Cafe.self, from: Data(Self.json.utf8))
        #expect(cafe.realm == nil)
        #expect(cafe._id == (try ObjectId(string: "65a1f0c2e4b0a1b2c3d4e5f6")))
        #expect(cafe.name == "Green Lantern Café" && cafe.rating == 4.5 && cafe.priceLevel == nil && cafe.status == .open)
        #expect(cafe.openedAt == ISO8601DateFormatter().date(from: "2021-03-14T09:30:00Z"))
        #expect(Set(cafe.tags) == ["coffee", "wifi"])
        #expect(cafe.address?.city == "Montréal" && cafe.address?.zip == nil)
        #expect(cafe.menu.map(\.name) == ["Latte", "Oat flat white"])
        #expect(cafe.menu.map(\.price) == [try Decimal128(string: "4.50"), Decimal128(5)])
        #expect(cafe.hours["sun"] == "closed" && cafe.ratings["alice"] == 5 && cafe.ratings["bob"] == .some(nil))
        #expect(cafe.owner?.name == "Ann")
    }

    @Test func aDecodedObjectIsAddedReadBackAndEncodedToTheSameDocument() throws {
        let (t, realm) = try realm()
        _ = t
        let decoded = try Self.decoder.decode(Cafe.self, from: Data(Self.json.utf8))
        try realm.write { realm.add(decoded) }
        let read = try #require(realm.objects(Cafe.self).first)
        #expect(read.menu.count == 2 && read.owner?.name == "Ann" && read.hours.count == 2)
        // A managed object encodes from the realm (realm-swift throws here).
        let encoded = try Self.encoder.encode(read)
        let document = try Self.object(encoded)
        #expect(document.normalizedCafe() == (try Self.object(Data(Self.json.utf8))).normalizedCafe())
        #expect(Set(document["tags"] as? [String] ?? []) == ["coffee", "wifi"])
        // And decodes again into an equal object.
        let again = try Self.decoder.decode(Cafe.self, from: encoded)
        #expect(again.menu.map(\.price) == read.menu.map(\.price) && again.owner?._id == read.owner?._id)
    }

    @Test func theObjectItWasDecodedIntoEncodesTooOnceManaged() throws {
        let (t, realm) = try realm()
        _ = t
        let cafe = try Self.decoder.decode(Cafe.self, from: Data(Self.json.utf8))
        let before = try Self.object(Self.encoder.encode(cafe))
        try realm.write { realm.add(cafe) }
        try realm.write { cafe.name = "Renamed" }
        let after = try Self.object(Self.encoder.encode(cafe))
        let expected = before.mutableCopy() as! NSMutableDictionary
        expected["name"] = "Renamed"
        #expect(after.normalizedCafe() == expected.normalizedCafe())
    }

    @Test func resultsAndCollectionsEncodeAsArraysAndDictionaries() throws {
        let (t, realm) = try realm()
        _ = t
        try realm.write {
            realm.add(try Self.decoder.decode(Cafe.self, from: Data(Self.json.utf8)))
            realm.add(CafeOwner(value: ["name": "Bo"]))
        }
        let owners = realm.objects(CafeOwner.self).sorted(byKeyPath: "name")
        let array = try #require(JSONSerialization.jsonObject(with: Self.encoder.encode(owners)) as? [[String: Any]])
        #expect(array.map { $0["name"] as? String } == ["Ann", "Bo"])
        let cafe = try #require(realm.objects(Cafe.self).first)
        #expect(String(decoding: try Self.encoder.encode(cafe.menu.map(\.vegan)), as: UTF8.self) == "[false,true]")
        let hours = try #require(JSONSerialization.jsonObject(with: Self.encoder.encode(cafe.hours)) as? [String: String])
        #expect(hours == ["mon": "8-18", "sun": "closed"])
        #expect(try JSONDecoder().decode(List<Int>.self, from: Data("[3,1,2]".utf8)).map { $0 } == [3, 1, 2])
        #expect(try JSONDecoder().decode(MutableSet<String>.self, from: Data(#"["a","a","b"]"#.utf8)).count == 2)
        #expect(try JSONDecoder().decode(Map<String, Double>.self, from: Data(#"{"x":1.5}"#.utf8))["x"] == 1.5)
    }

    @Test func aMissingOptionalDecodesAsNilAndAMissingRequiredValueIsAnError() throws {
        let minimal = #"{"_id": "65a1f0c2e4b0a1b2c3d4e5f6", "name": "x", "openedAt": "2021-03-14T09:30:00Z", "rating": 1, "status": "closed", "tags": [], "menu": [], "hours": {}, "ratings": {}}"#
        let cafe = try Self.decoder.decode(Cafe.self, from: Data(minimal.utf8))
        #expect(cafe.priceLevel == nil && cafe.address == nil && cafe.owner == nil && cafe.status == .closed)
        let noName = minimal.replacingOccurrences(of: #""name": "x", "#, with: "")
        #expect {
            _ = try Self.decoder.decode(Cafe.self, from: Data(noName.utf8))
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "name"
        }
        let badId = minimal.replacingOccurrences(of: "65a1f0c2e4b0a1b2c3d4e5f6", with: "nope")
        #expect(throws: DecodingError.self) { _ = try Self.decoder.decode(Cafe.self, from: Data(badId.utf8)) }
    }

    @Test func aDeletedObjectDoesNotEncode() throws {
        let (t, realm) = try realm()
        _ = t
        let owner = CafeOwner(value: ["name": "Ann"])
        try realm.write { realm.add(owner) }
        try realm.write { realm.delete(owner) }
        #expect(throws: EncodingError.self) { _ = try Self.encoder.encode(owner) }
    }

    @Test func decodedObjectsWithExistingKeysUpdateWithUpdatePolicy() throws {
        let (t, realm) = try realm()
        _ = t
        try realm.write { realm.add(try Self.decoder.decode(Cafe.self, from: Data(Self.json.utf8))) }
        let changed = Self.json.replacingOccurrences(of: "\"rating\": 4.5", with: "\"rating\": 3.0")
        try realm.write { realm.add(try Self.decoder.decode(Cafe.self, from: Data(changed.utf8)), update: .modified) }
        #expect(realm.objects(Cafe.self).count == 1 && realm.objects(Cafe.self).first?.rating == 3.0)
        // The linked owner exists too: the policy applies to it, as in Realm.
        #expect(realm.objects(CafeOwner.self).count == 1)
        let renamedOwner = Self.json.replacingOccurrences(of: "\"name\": \"Ann\"", with: "\"name\": \"Anne\"")
        try realm.write { realm.create(Cafe.self, value: ["_id": try ObjectId(string: "65a1f0c2e4b0a1b2c3d4e5f6"),
                                                          "owner": try Self.decoder.decode(Cafe.self, from: Data(renamedOwner.utf8)).owner!],
                                      update: .modified) }
        #expect(realm.objects(CafeOwner.self).map(\.name) == ["Anne"])
        // With the default policy an existing linked key is an error, as before.
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.add(CafeOwner(value: ["_id": realm.objects(CafeOwner.self).first!._id])) }
        }
    }
}

extension NSDictionary {
    /// The café document without its tags (a set has no order) and with its menu prices as
    /// `Decimal128` encodes them (strings).
    func normalizedCafe() -> NSDictionary {
        let copy = mutableCopy() as! NSMutableDictionary
        copy.removeObject(forKey: "tags")
        copy["menu"] = (self["menu"] as! [NSDictionary]).map { item -> NSDictionary in
            let entry = item.mutableCopy() as! NSMutableDictionary
            entry["price"] = "\(entry["price"]!)"
            return entry
        }
        return copy
    }
}
