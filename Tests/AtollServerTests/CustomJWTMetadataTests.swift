import AtollServer
import AtollTesting
import Foundation
import Testing

/// A custom JWT's metadata fields (App Services' `metadata_fields`, issue 24 §1): claims copied
/// into the user's profile data at each login; a required one missing refuses the login; sizes
/// are bounded.
@Suite("Custom JWT metadata fields")
struct CustomJWTMetadataTests {
    static let key = CustomJWTTests.key

    static func configuration(_ fields: [ServerConfiguration.CustomJWT.MetadataField]) -> ServerConfiguration {
        TestServer.configuration {
            $0.apps = [ServerConfiguration.App(id: "jwt-app", customJWT: .init(algorithm: .hs256, key: key, metadataFields: fields))]
        }
    }

    static let fields: [ServerConfiguration.CustomJWT.MetadataField] = [
        .init(name: "org.department", fieldName: "department", required: true),
        .init(name: "groups", required: false),
        .init(name: "level", fieldName: "level"),
    ]

    func logIn(_ server: TestServer, _ claims: [String: JSONValue]) async throws -> HTTP.Answer {
        try await server.http.logIn(app: "jwt-app", provider: "custom-token", json: ["token": try await TestCustomJWT.sign(claims, key: Self.key)])
    }

    @Test func metadataFieldsReachTheProfileAndAreRefreshedAtEachLogin() async throws {
        try await withServer(Self.configuration(Self.fields)) { server in
            let first = try await logIn(server, [
                "sub": .string("u-7"), "org": .object(["department": .string("sales"), "secret": .string("not copied")]),
                "groups": .array([.string("blue"), .string("red")]), "level": .int(3), "other": .string("not copied"),
            ])
            #expect(first.status == 200, "\(first.text)")
            let login = try first.decode(HTTP.Login.self)
            let data = try await server.http.profile(login.access_token).object["data"] as? [String: Any]
            #expect(data?["department"] as? String == "sales")
            #expect(data?["groups"] as? [String] == ["blue", "red"])
            #expect(data?["level"] as? Int == 3)
            #expect(data?["other"] == nil && data?["secret"] == nil && data?["org"] == nil)
            // The next login's token says otherwise: the profile follows it; an optional field left out goes.
            let second = try await logIn(server, ["sub": .string("u-7"), "org": .object(["department": .string("ops")])])
            let again = try second.decode(HTTP.Login.self)
            #expect(again.user_id == login.user_id)
            let updated = try await server.http.profile(again.access_token).object["data"] as? [String: Any]
            #expect(updated?["department"] as? String == "ops")
            #expect(updated?["groups"] == nil && updated?["level"] == nil)
        }
    }

    @Test func aRequiredFieldMissingRefusesTheLogin() async throws {
        try await withServer(Self.configuration(Self.fields)) { server in
            for (what, claims) in [
                ("absent", ["sub": JSONValue.string("u-8")]),
                ("null", ["sub": .string("u-8"), "org": .object(["department": .null])]),
                ("its parent not a document", ["sub": .string("u-8"), "org": .string("sales")]),
            ] {
                let answer = try await logIn(server, claims)
                #expect(answer.status == 401, "\(what)")
                #expect(answer.errorCode == "InvalidCredentials", "\(what)")
                #expect(answer.text.contains("org.department"), "\(what): \(answer.text)")
            }
            // No user was made by the refused logins.
            let made = try await logIn(server, ["sub": .string("u-8"), "org": .object(["department": .string("x")])])
            #expect(made.status == 200)
        }
    }

    @Test func anOversizedValueRefusesTheLogin() async throws {
        try await withServer(Self.configuration(Self.fields)) { server in
            let huge = JSONValue.array((0..<2_000).map { .string("group-\($0)") })
            let answer = try await logIn(server, ["sub": .string("u-9"), "org": .object(["department": .string("x")]), "groups": huge])
            #expect(answer.status == 401)
            #expect(answer.text.contains("larger than"), "\(answer.text)")
            let long = JSONValue.string(String(repeating: "x", count: ServerConfiguration.CustomJWT.maximumMetadataValueBytes + 1))
            #expect(try await logIn(server, ["sub": .string("u-9"), "org": .object(["department": long])]).status == 401)
        }
    }

    @Test func unusableMetadataFieldsAreRefusedWithTheirField() throws {
        func load(_ fields: String) throws -> ServerConfiguration {
            let json = #"{"apps": [{"id": "a", "customJWT": {"algorithm": "HS256", "key": "\#(Self.key)", "metadataFields": \#(fields)}}]}"#
            let configuration = try JSONDecoder().decode(ServerConfiguration.self, from: Data(json.utf8))
            try configuration.validate()
            return configuration
        }
        let good = try load(#"[{"name": "org.department", "fieldName": "department", "required": true}, {"name": "name"}]"#)
        #expect(good.apps[0].customJWT?.metadataFields.map(\.profileName) == ["department", "name"])
        #expect(good.apps[0].customJWT?.metadataFields.map(\.required) == [true, false])
        let many = "[" + (0...ServerConfiguration.CustomJWT.maximumMetadataFields).map { #"{"name": "f\#($0)"}"# }.joined(separator: ",") + "]"
        for (fields, field) in [
            (#"[{"name": "org.department"}]"#, "apps[0].customJWT.metadataFields[0].fieldName"),
            (#"[{"name": "a b", "fieldName": "ab"}]"#, "apps[0].customJWT.metadataFields[0].name"),
            (#"[{"name": "a", "fieldName": "x"}, {"name": "b", "fieldName": "x"}]"#, "apps[0].customJWT.metadataFields[1].fieldName"),
            (#"[{"name": "\#(String(repeating: "a", count: 129))"}]"#, "apps[0].customJWT.metadataFields[0].name"),
            (many, "apps[0].customJWT.metadataFields"),
        ] {
            do {
                _ = try load(fields)
                Issue.record("accepted \(fields)")
            } catch let error as ConfigurationError {
                #expect(error.field == field, "\(fields): \(error)")
            }
        }
    }
}
