import AtollAdminAPI
import Foundation
import Testing

/// The admin API's bodies, declared once (``AdminAPI``) for the server's routes and `AdminClient`:
/// their wire names and the JSON a client reads without a model.
struct AdminAPIBodyTests {
    @Test func aServerAPIKeyTravelsUnderAppServicesFieldNames() throws {
        let key = AdminAPI.ServerAPIKey(id: "k1", name: "backend", key: "secret", disabled: false, userID: "u1")
        let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(key)) as? [String: Any])
        #expect(Set(object.keys) == ["_id", "name", "key", "disabled", "user_id"])
        #expect(try JSONDecoder().decode(AdminAPI.ServerAPIKey.self, from: JSONEncoder().encode(key)) == key)
    }

    @Test func aSettingsChangeSendsOnlyWhatItChanges() throws {
        // The server applies each field present: an absent one must not arrive as null or a default.
        let recovery = String(decoding: try JSONEncoder().encode(AdminAPI.SettingsChange(clientRecovery: false)), as: UTF8.self)
        #expect(recovery == #"{"clientRecovery":false}"#)
        let property = try JSONEncoder().encode(AdminAPI.PropertyChange(type: "Task", property: "done"))
        let keys = try #require(JSONSerialization.jsonObject(with: property) as? [String: Any]).keys
        #expect(Set(keys) == ["type", "property"])
    }

    @Test func anyJSONKeepsIntegersExactAndEveryKind() throws {
        let text = #"{"big":9007199254740993,"list":[true,null,1.5,"x",-2],"nested":{"empty":{},"none":[]}}"#
        let value = try JSONDecoder().decode(AdminAPI.JSON.self, from: Data(text.utf8))
        guard case .object(let object) = value else { Issue.record("not an object: \(value)"); return }
        #expect(object["big"] == .int(9_007_199_254_740_993))
        #expect(object["list"] == .array([.bool(true), .null, .double(1.5), .string("x"), .int(-2)]))
        #expect(object["nested"] == .object(["empty": .object([:]), "none": .array([])]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == text)
    }

    @Test func anAppConfigurationAnswerReadsWithoutTheServersModel() throws {
        let text = #"{"app":"tasks","configuration":{"id":"tasks","sync":{"kind":"flexible"}},"generation":3,"origin":"runtime"}"#
        let answer = try JSONDecoder().decode(AdminAPI.AppConfiguration<AdminAPI.JSON>.self, from: Data(text.utf8))
        #expect(answer.app == "tasks" && answer.origin == "runtime" && answer.generation == 3)
        #expect(answer.configuration == .object(["id": .string("tasks"), "sync": .object(["kind": .string("flexible")])]))
    }
}
