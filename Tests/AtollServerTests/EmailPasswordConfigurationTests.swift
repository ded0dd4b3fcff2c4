import AtollServer
import Foundation
import Testing

extension SerialAuthTests {
@Suite("E-mail/password and custom user data settings")
struct EmailPasswordConfigurationTests {
    func load(_ json: String) throws -> ServerConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-config-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try ServerConfiguration.load(from: file)
    }

    @Test func theSettingsLoadFromTheFile() throws {
        let configuration = try load(
            """
            {
              "developmentMode": false,
              "apps": [{
                "id": "tasks",
                "emailPassword": {
                  "confirmation": "token",
                  "deliveryURL": "https://mailer.internal/atoll",
                  "resetFunctionURL": "http://127.0.0.1:8025/reset",
                  "webhookSecret": "a webhook secret of at least 32 bytes",
                  "tokenLifetime": 600,
                  "webhookTimeout": 5,
                  "requestsPerAddressPerHour": 3
                },
                "customUserData": { "type": "UserProfile", "userIdField": "userId", "maxBytes": 2048 },
                "permissions": [ { "type": "UserProfile", "write": "userId == %user.id" } ]
              }]
            }
            """)
        let app = try #require(configuration.app(id: "tasks"))
        #expect(app.emailPassword.confirmation == .token)
        #expect(app.emailPassword.deliveryURL == "https://mailer.internal/atoll")
        #expect(app.emailPassword.resetFunctionURL == "http://127.0.0.1:8025/reset")
        #expect(app.emailPassword.tokenLifetime == 600)
        #expect(app.emailPassword.requestsPerAddressPerHour == 3)
        #expect(app.customUserData == ServerConfiguration.CustomUserData(type: "UserProfile", userIdField: "userId", maxBytes: 2048))
    }

    @Test func theDefaultsConfirmAutomaticallyWithoutCustomData() throws {
        let app = try load(#"{"apps": [{"id": "tasks"}]}"#).settings(forApp: "tasks")
        #expect(app.emailPassword == ServerConfiguration.EmailPassword())
        #expect(app.emailPassword.confirmation == .automatic)
        #expect(app.emailPassword.tokenLifetime == 1800)
        #expect(app.customUserData == nil)
    }

    @Test func badSettingsNameTheirField() throws {
        let cases: [(String, String)] = [
            (#"{"confirmation": "function"}"#, "apps[0].emailPassword.confirmationFunctionURL"),
            (#"{"deliveryURL": "ftp://mail"}"#, "apps[0].emailPassword.deliveryURL"),
            (#"{"resetFunctionURL": "not a url"}"#, "apps[0].emailPassword.resetFunctionURL"),
            (#"{"webhookSecret": "short"}"#, "apps[0].emailPassword.webhookSecret"),
            (#"{"tokenLifetime": 0}"#, "apps[0].emailPassword.tokenLifetime"),
            (#"{"webhookTimeout": 1000}"#, "apps[0].emailPassword.webhookTimeout"),
            (#"{"requestsPerAddressPerHour": 0}"#, "apps[0].emailPassword.requestsPerAddressPerHour"),
            // Outside development mode a token must go somewhere.
            (#"{"confirmation": "token"}"#, "apps[0].emailPassword.deliveryURL"),
        ]
        for (settings, field) in cases {
            let error = #expect(throws: ConfigurationError.self) {
                try load(#"{"developmentMode": false, "apps": [{"id": "tasks", "emailPassword": \#(settings)}]}"#)
            }
            #expect(error?.field == field, "\(settings)")
        }
        let tooLarge = #expect(throws: ConfigurationError.self) {
            try load(#"{"apps": [{"id": "tasks", "customUserData": {"type": "P", "userIdField": "u", "maxBytes": 1000000}, "permissions": [{"write": "false"}]}]}"#)
        }
        #expect(tooLarge?.field == "apps[0].customUserData.maxBytes")
    }

    /// Custom user data is signed into access tokens: its type needs a write rule, or any user
    /// could write another's (issue 21 §3).
    @Test func customUserDataNeedsAWriteRuleOnItsType() throws {
        let settings = #""customUserData": {"type": "P", "userIdField": "u"}"#
        for permissions in ["[]", #"[{"type": "P", "write": "true"}]"#, #"[{"type": "Other", "write": "u == %user.id"}]"#,
                            #"[{"type": "P", "read": "u == %user.id"}]"#, #"[{"type": "P", "write": " True "}]"#,
                            #"[{"type": "P", "write": "TRUEPREDICATE"}]"#, #"[{"type": "P", "write": "u != nil"}]"#] {
            let error = #expect(throws: ConfigurationError.self, "\(permissions)") {
                try load(#"{"apps": [{"id": "tasks", \#(settings), "permissions": \#(permissions)}]}"#)
            }
            #expect(error?.field == "apps[0].customUserData")
            #expect(error?.message.contains("write rule") == true)
        }
        for permissions in [#"[{"type": "P", "write": "u == %user.id"}]"#, #"[{"write": "false"}]"#] {
            #expect(try load(#"{"apps": [{"id": "tasks", \#(settings), "permissions": \#(permissions)}]}"#)
                .app(id: "tasks")?.customUserData?.type == "P", "\(permissions)")
        }
        // In a partition, only the rule of every type applies.
        let partition = #""customUserData": {"type": "P", "userIdField": "u", "partition": "profiles"}"#
        #expect(throws: ConfigurationError.self) {
            try load(#"{"apps": [{"id": "tasks", \#(partition), "permissions": [{"type": "P", "write": "u == %user.id"}]}]}"#)
        }
        #expect(try load(#"{"apps": [{"id": "tasks", \#(partition), "permissions": [{"write": "partition == %user.id"}]}]}"#)
            .app(id: "tasks") != nil)
        // A partition every user may write holds every user's profile: refused, whatever it names.
        #expect(throws: ConfigurationError.self) {
            try load(#"{"apps": [{"id": "tasks", \#(partition), "permissions": [{"write": "partition == 'profiles' OR partition == %user.id"}]}]}"#)
        }
    }

    @Test func tokenConfirmationWithoutDeliveryIsForDevelopmentOnly() throws {
        let app = try load(#"{"apps": [{"id": "tasks", "emailPassword": {"confirmation": "token"}}]}"#).settings(forApp: "tasks")
        #expect(app.emailPassword.confirmation == .token)
        #expect(app.emailPassword.deliveryURL == nil)
    }
}
}
