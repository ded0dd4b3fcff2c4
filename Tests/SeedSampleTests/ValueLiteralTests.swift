import Atoll
import Foundation
import Testing

/// Realm's own documentation writes objects from dictionary literals mixing an `ObjectId` with
/// strings. In realm-swift that literal is a `[String: Any]`; a literal conformance Atoll added
/// beyond realm-swift's (`ObjectId: ExpressibleByStringLiteral`) made Swift type it
/// `[String: ObjectId]` and trap on "Arrive safely in Bree" (issue 23 §4). Compiling and running
/// the example as written is the test.
@Suite struct ValueLiteralTests {
    @Test func realmsCreateExampleWithAnObjectIdAndStrings() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "value-literals-\(UUID().uuidString)",
                                                                 objectTypes: [Todo.self]))
        try realm.write {
            realm.create(Todo.self, value: ["_id": ObjectId.generate(), "name": "Arrive safely in Bree"])
        }
        #expect(realm.objects(Todo.self).first?.name == "Arrive safely in Bree")
    }
}
