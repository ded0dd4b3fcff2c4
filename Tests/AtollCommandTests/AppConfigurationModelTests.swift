import AtollAppImport
import AtollCore
import AtollServer
import Foundation
import Testing

/// One configuration model (AtollAppConfig): what `atoll apps import` makes is the server's own
/// app type, every setting survives its JSON, and a tool prints it without secrets.
@Suite struct AppConfigurationModelTests {
    static func everySetting() -> ServerConfiguration.App {
        var app = ServerConfiguration.App(
            id: "all-settings", authProviders: .init(anonymous: false, emailPassword: true, apiKey: false, customToken: true),
            customJWT: .init(algorithm: .hs256, key: "a key of at least thirty-two bytes!!", audience: "aud", issuer: "iss", clockSkew: 30),
            syncKind: .flexible, queryableFields: ["owner", "Task.done"],
            permissions: [.init(type: "Task", role: "owner", when: "%user.custom_data.member == true", read: "owner == %user.id",
                                write: "owner == %user.id", insert: false, delete: false,
                                fields: FieldAccess(fields: ["secret": .init(read: false, write: false)], otherFields: .init(read: true, write: true)))],
            developmentMode: false, clientRecovery: false, maxOfflineTime: 86_400,
            apple: .init(jwks: #"{"keys":[]}"#, audience: ["com.example"]), google: .init(jwksPath: "/etc/google.json", issuer: "g", audience: ["g1", "g2"]))
        app.emailPassword = .init(confirmation: .function, deliveryURL: "https://mail.example/send", confirmationFunctionURL: "https://hooks.example/confirm",
                                  resetFunctionURL: "https://hooks.example/reset", webhookSecret: "a webhook secret of thirty-two bytes!",
                                  tokenLifetime: 600, webhookTimeout: 5, requestsPerAddressPerHour: 3, pendingRegistrationLifetime: 3_600)
        app.customUserData = .init(type: "Member", userIdField: "userId", partition: "p", maxBytes: 1_024)
        app.functions = .init(definitions: ["sum": .init(url: "https://hooks.example/sum", isPrivate: true, runAsSystem: true, canEvaluate: "true")],
                              authenticationURL: "https://hooks.example/login", webhookSecret: "a functions secret of thirty-two bytes",
                              timeout: 20, maxArgumentBytes: 1_000, maxAnswerBytes: 2_000, callsInFlightPerUser: 2, callsInFlightPerApp: 8)
        app.remoteAccess = .init(enabled: false, service: "atlas", database: "todo")
        return app
    }

    @Test func everySettingSurvivesTheJSON() throws {
        let app = Self.everySetting()
        let decoded = try JSONDecoder().decode(ServerConfiguration.App.self, from: app.json())
        #expect(decoded == app)
        // The same bytes each time: "unchanged" is decided on values, and files do not churn.
        #expect(try app.json() == decoded.json())
    }

    @Test func theImportProducesTheServersOwnType() throws {
        let plan = try AppImporter.plan(AppExport(folder: appServicesExport("chores")))
        let app: ServerConfiguration.App = plan.app  // the same type, not a copy that drifts
        #expect(try JSONDecoder().decode(ServerConfiguration.App.self, from: plan.appJSON()) == app)
    }

    @Test func redactedHidesEverySecret() throws {
        let app = Self.everySetting()
        let text = String(decoding: try app.redacted.json(), as: UTF8.self)
        for secret in [app.customJWT!.key, app.functions.webhookSecret!, app.emailPassword.webhookSecret!] {
            #expect(!text.contains(secret))
        }
        #expect(app.redacted.customJWT?.algorithm == .hs256)
    }

    @Test func settingsMergeIntoTheImportedApp() throws {
        var plan = try AppImporter.plan(AppExport(folder: appServicesExport("chores")))
        let confirmation = plan.app.emailPassword.confirmation
        try plan.merge(settings: Data(#"{"customJWT": {"algorithm": "HS256", "key": "a key of at least thirty-two bytes!!"}, "emailPassword": {"deliveryURL": "https://mail.example"}}"#.utf8))
        #expect(plan.app.customJWT?.key == "a key of at least thirty-two bytes!!")
        #expect(plan.app.emailPassword.deliveryURL == "https://mail.example")
        #expect(plan.app.emailPassword.confirmation == confirmation)  // merged member by member
        #expect(throws: AppImportError.self) { try plan.merge(settings: Data(#"{"id": "another"}"#.utf8)) }
        #expect(throws: AppImportError.self) { try plan.merge(settings: Data(#"{"customJWT": {"key": 42}}"#.utf8)) }
        #expect(throws: AppImportError.self) { try plan.merge(settings: Data("[]".utf8)) }
    }
}
