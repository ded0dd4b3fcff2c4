import AtollAppImport
import AtollCore
import AtollServer
import Foundation
import Testing

/// The folders of Tests/Fixtures/AppServicesExports, written in the layout `appservices pull` uses.
func appServicesExport(_ name: String) -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/AppServicesExports/\(name)")
}

/// `atoll apps import`'s translation core: an export folder → an Atoll app and a report.
@Suite struct AppImportTests {
    func plan(_ name: String) throws -> ImportPlan {
        try AppImporter.plan(AppExport(folder: appServicesExport(name)))
    }

    /// The plan's app, read back as the server reads its configuration file.
    func serverApp(_ plan: ImportPlan) throws -> ServerConfiguration.App {
        try JSONDecoder().decode(ServerConfiguration.App.self, from: plan.appJSON())
    }

    func item(_ plan: ImportPlan, _ subject: String) -> ImportItem? {
        plan.report.items.first { $0.subject.contains(subject) }
    }

    @Test func theAppKeepsItsAppServicesID() throws {
        let plan = try plan("chores")
        #expect(plan.app.id == "chores-abcde")
        #expect(try serverApp(plan).id == "chores-abcde")
        #expect(try self.plan("legacy").app.id == "legacy-xyz")  // the older config.json
    }

    @Test func syncSettingsMap() throws {
        let app = try serverApp(plan("chores"))
        #expect(app.syncKind == .flexible)
        #expect(app.maxOfflineTime == Double(30 * 86_400))
        #expect(app.clientRecovery == false)
        #expect(app.developmentMode == false)
        #expect(app.queryableFields == ["owner_id", "team", "TeamMember.userId"])
    }

    /// `user.mongoClient("mongodb-atlas").database("…")` keeps answering: the data source's
    /// service and database become the app's remote data access names.
    @Test func theDataSourceNamesRemoteDataAccess() throws {
        let plan = try plan("chores")
        let app = try serverApp(plan)
        let database = try #require(plan.app.remoteAccess.database)
        #expect(app.remoteAccess.database == database)
        #expect(app.remoteAccess.service == plan.app.remoteAccess.service)
        #expect(item(plan, "data_sources/\(app.remoteAccess.service)/\(database)")?.outcome == .mapped)
    }

    @Test func providersTheExportDoesNotTurnOnAreOff() throws {
        let plan = try plan("chores")
        let app = try serverApp(plan)
        #expect(app.authProviders.anonymous == false)  // disabled in the export
        #expect(app.authProviders.emailPassword)
        #expect(app.authProviders.apiKey)
        #expect(app.customJWT == nil)  // its key is a secret the operator supplies
        #expect(item(plan, "auth provider custom-token")?.outcome == .needsAttention)
        #expect(item(plan, "auth provider custom-token")?.detail.contains("\"audience\": \"chores-app\"") == true)
        #expect(item(plan, "metadata_fields")?.outcome == .mapped)  // into the customJWT the operator adds
        #expect(item(plan, "auth provider custom-token")?.detail.contains(#""metadataFields": [{"name": "name""#) == true)
        #expect(item(plan, "auth provider oauth2-apple")?.detail.contains("com.example.chores") == true)
        #expect(item(plan, "auth provider custom-function")?.outcome == .needsAttention)
        #expect(item(plan, "auth provider custom-function")?.detail.contains("functions.authenticationURL") == true)
        #expect(!app.accepts(.customFunction))  // until the operator sets its webhook
        #expect(app.emailPassword.confirmation == .automatic)
        #expect(item(plan, "auth provider local-userpass reset")?.outcome == .needsAttention)
        let legacy = try serverApp(self.plan("legacy"))
        #expect(!legacy.authProviders.anonymous && !legacy.authProviders.emailPassword && !legacy.authProviders.apiKey)
    }

    /// `oauth2-facebook` and `oauth2-google` keep their client ids; the client secrets are the
    /// operator's to supply (`--settings`), and until then the logins that need them are refused.
    @Test func facebookAndGoogleProvidersMapWithTheSecretsLeftToTheOperator() throws {
        var plan = try plan("social")
        let app = try serverApp(plan)
        #expect(app.facebook?.clientId == "1234567890")
        #expect(app.facebook?.clientSecret == nil)
        #expect(app.facebook?.graphURL == "https://graph.facebook.com")
        #expect(!app.accepts(.facebook))
        #expect(app.google?.audience == ["987-server.apps.googleusercontent.com"])
        #expect(app.google?.authCode?.clientId == "987-server.apps.googleusercontent.com")
        #expect(app.google?.authCode?.clientSecret == nil)
        #expect(app.google?.jwks == nil && app.google?.jwksPath == nil)  // Google's published keys
        #expect(app.accepts(.google))  // ID tokens at once
        let facebook = try #require(item(plan, "auth provider oauth2-facebook"))
        #expect(facebook.outcome == .needsAttention)
        #expect(facebook.detail.contains("facebookAppSecret") && facebook.detail.contains(#"--settings {"facebook": {"clientSecret""#))
        #expect(item(plan, "auth provider oauth2-google")?.outcome == .mapped)
        let codes = try #require(item(plan, "auth provider oauth2-google server auth codes"))
        #expect(codes.outcome == .needsAttention && codes.detail.contains("googleClientSecret"))
        var configuration = ServerConfiguration()
        configuration.apps = [app]
        try configuration.validate()

        try plan.merge(settings: Data(#"{"facebook": {"clientSecret": "fb-secret"}, "google": {"authCode": {"clientSecret": "g-secret"}}}"#.utf8))
        let complete = try serverApp(plan)
        #expect(complete.facebook?.clientSecret == "fb-secret" && complete.facebook?.clientId == "1234567890")
        #expect(complete.google?.authCode?.clientSecret == "g-secret")
        #expect(complete.accepts(.facebook))
        configuration.apps = [complete]
        try configuration.validate()
        let shown = String(decoding: try plan.app.redacted.json(), as: UTF8.self)
        #expect(!shown.contains("fb-secret") && !shown.contains("g-secret"))
    }

    @Test func customUserDataNamesTheClass() throws {
        let plan = try plan("chores")
        let settings = try #require(try serverApp(plan).customUserData)
        #expect(settings.type == "TeamMember")
        #expect(settings.userIdField == "userId")
        #expect(item(plan, "on_user_creation_function_name")?.outcome == .notCarried)
    }

    @Test func schemaTypesMapToAtollProperties() throws {
        let plan = try plan("chores")
        let chore = try #require(plan.schema.first { $0.name == "HouseChore" })
        func property(_ name: String) -> Property? { chore.properties.first { $0.name == name } }
        #expect(property("_id")?.isPrimaryKey == true)
        #expect(property("_id")?.type == .objectId)
        #expect(property("name")?.type == .string && property("name")?.isOptional == false)
        #expect(property("done")?.type == .bool && property("done")?.isOptional == true)  // not required
        #expect(property("priority")?.type == .int)
        #expect(property("estimate")?.type == .double)
        #expect(property("cost")?.type == .decimal128)
        #expect(property("due")?.type == .date && property("due")?.isOptional == true)
        #expect(property("ref")?.type == .UUID)
        #expect(property("photo")?.type == .data)
        #expect(property("tags")?.collection == .set)
        #expect(property("scores")?.collection == .list && property("scores")?.type == .int)
        #expect(property("labels")?.collection == .map)
        #expect(property("place")?.objectType == "Place")
        #expect(property("steps")?.collection == .list && property("steps")?.objectType == "Step")
        #expect(property("assignee")?.type == .object && property("assignee")?.objectType == "TeamMember")
        #expect(property("watchers")?.collection == .list && property("watchers")?.objectType == "TeamMember")
        #expect(property("shape") == nil)
        #expect(item(plan, "HouseChore.shape")?.outcome == .refused)
        #expect(plan.schema.first { $0.name == "Place" }?.isEmbedded == true)
        #expect(plan.schema.first { $0.name == "Log" }?.isAsymmetric == true)
        // The Atoll schema accepts what the import made.
        _ = try Schema(plan.schema)
    }

    @Test func rolesBecomeRulesInOrder() throws {
        let plan = try plan("chores")
        let rules = try serverApp(plan).permissions
        #expect(rules.map { "\($0.type ?? "*") \($0.role ?? "")" } == [
            "HouseChore admin", "HouseChore member", "TeamMember operator", "TeamMember self", "* nothing",
        ])
        let admin = rules[0]
        #expect(admin.when == "%user.custom_data.isAdmin == true")
        #expect(admin.read == "true" && admin.write == "true" && admin.insert && admin.delete && admin.fields == nil)
        let member = rules[1]
        #expect(member.when == nil)
        #expect(member.read == "(owner_id == %user.id) OR (team == %user.custom_data.team)")
        // The write filter, and (never more than the source) the read filter.
        #expect(member.write == "((NOT (done == true)) AND (owner_id == %user.id)) AND ((owner_id == %user.id) OR (team == %user.custom_data.team))")
        #expect(member.insert && !member.delete)
        #expect(member.fields?.mayRead("notes") == false && member.fields?.mayWrite("notes") == false)
        #expect(member.fields?.mayWrite("name") == true)
        #expect(rules[2].when == "%user.data.email == 'ops@example.com'")
        let defaults = rules[4]
        #expect(defaults.read == "false" && defaults.write == "false" && !defaults.insert && !defaults.delete)
    }

    @Test func rolesAtollCannotExpressAreRefusedAndNamed() throws {
        let plan = try plan("chores")
        let refused = plan.report.items(.refused).map(\.subject)
        #expect(refused.contains { $0.hasSuffix("role \"vip\"") })       // %function
        #expect(refused.contains { $0.hasSuffix("role \"by-owner\"") })  // apply_when on a document field
        #expect(refused.contains { $0.hasSuffix("role \"regex\"") })     // $regex
        #expect(item(plan, "role \"vip\"")?.detail.contains("%function") == true)
        #expect(item(plan, "role \"by-owner\"")?.detail.contains("owner_id") == true)
        #expect(item(plan, "role \"regex\"")?.detail.contains("$regex") == true)
        let legacy = try self.plan("legacy")
        #expect(item(legacy, "role \"request\"")?.outcome == .refused)
        #expect(item(legacy, "role \"request\"")?.detail.contains("%%request") == true)
    }

    @Test func filesOutsideTheImportAreListed() throws {
        let plan = try plan("chores")
        #expect(item(plan, "functions/resetFunc.js")?.outcome == .needsAttention)
        #expect(item(plan, "values/supportEmail.json")?.outcome == .notCarried)
        #expect(item(plan, "hosting/config.json")?.outcome == .notCarried)
        #expect(item(plan, "data_sources/mongodb-atlas/config.json")?.outcome == .notCarried)
        #expect(item(plan, "realm_config.json location")?.outcome == .notCarried)
    }

    @Test func functionsBecomeWebhookSlotsAndTheirSourcesNeedAPort() throws {
        let plan = try plan("chores")
        let functions = try serverApp(plan).functions
        #expect(functions.definitions.keys.sorted() == ["adminReport", "fromOffice", "login", "resetFunc", "sum"])
        #expect(functions.definitions.values.allSatisfy { $0.url == nil })  // the operator supplies each webhook
        #expect(functions.definitions["resetFunc"]?.isPrivate == true)
        #expect(functions.definitions["sum"] == .init(url: nil, isPrivate: false, runAsSystem: true, canEvaluate: nil))
        #expect(functions.definitions["adminReport"]?.canEvaluate == "%user.custom_data.role == 'admin'")
        // A condition Atoll cannot express: callable by no one, and named.
        #expect(functions.definitions["fromOffice"]?.canEvaluate == "false")
        #expect(item(plan, "function fromOffice can_evaluate")?.outcome == .refused)
        #expect(item(plan, "function fromOffice can_evaluate")?.detail.contains("%%request") == true)
        for name in ["sum", "adminReport", "fromOffice", "login", "resetFunc"] {
            let source = try #require(item(plan, "functions/\(name).js"), "\(name)")
            #expect(source.outcome == .needsAttention)
            #expect(source.detail.hasPrefix("needs a port: function \(name)"))
        }
        #expect(item(plan, "functions/sum.js")?.detail.contains("callable by clients, ran as system") == true)
        #expect(item(plan, "functions/login.js")?.detail.contains("private") == true)
        // The older layout: a folder per function.
        let older = try AppImporter.plan(AppExport(files: [
            "realm_config.json": Data(#"{"app_id": "x"}"#.utf8),
            "functions/double/config.json": Data(#"{"name": "double", "private": false}"#.utf8),
            "functions/double/source.js": Data("exports = (x) => 2 * x;".utf8),
        ]))
        #expect(older.app.functions.definitions["double"] != nil)
        #expect(older.report.items.first { $0.subject == "functions/double/source.js" }?.outcome == .needsAttention)
    }

    @Test func legacySyncPermissionsTranslate() throws {
        let app = try serverApp(plan("legacy"))
        #expect(app.developmentMode)
        #expect(app.permissions.map { "\($0.type ?? "*") \($0.role ?? "")" } == ["Item owner", "* reader"])
        #expect(app.permissions[0].read == "owner == %user.id")
        #expect(app.permissions[1].when == "%user.custom_data.reader == true")
        #expect(app.permissions[1].read == "true" && app.permissions[1].write == "false")
        #expect(!app.permissions[1].insert && !app.permissions[1].delete)
    }

    @Test func partitionRulesReadThePartition() throws {
        let plan = try plan("partition")
        let app = try serverApp(plan)
        #expect(app.syncKind == .partition)
        #expect(app.maxOfflineTime == Double(7 * 86_400))
        #expect(app.permissions.count == 1)
        let rule = app.permissions[0]
        #expect(rule.type == nil)
        for (partition, reads, writes) in [("u1", true, true), ("public", true, false), ("u2", false, false)] {
            #expect(rule.read == "(partition == %user.id) OR (partition == 'public')")
            let user = RuleUser(id: "u1")
            let schema = try Schema([ObjectSchema(name: "P", properties: [Property(name: "_id", type: .string, isPrimaryKey: true),
                                                                          Property(name: "partition", type: .string)])])
            let read = try #require(FlexibleSync.Rules.bind(rule.read, user: user, objectType: "P", schema: schema))
            let write = try #require(FlexibleSync.Rules.bind(rule.write, user: user, objectType: "P", schema: schema))
            #expect(read.evaluate(on: ["_id": .string("x"), "partition": .string(partition)], resolver: NoLinkResolver()) == reads)
            #expect(write.evaluate(on: ["_id": .string("x"), "partition": .string(partition)], resolver: NoLinkResolver()) == writes)
        }
    }

    @Test func anExportWithoutAnAppIDIsRefused() throws {
        #expect(throws: AppImportError.self) { try AppImporter.plan(AppExport(files: ["sync/config.json": Data("{}".utf8)])) }
        #expect(throws: AppImportError.self) { try AppImporter.plan(AppExport(files: ["realm_config.json": Data("not json".utf8)])) }
    }

    /// Every operator the issue lists, and what is refused.
    @Test(arguments: [
        (#"{"a": 1}"#, "a == 1"), (#"{"a": {"$eq": "x"}}"#, "a == 'x'"), (#"{"a": {"$ne": null}}"#, "NOT (a == nil)"),
        (#"{"a": {"$gt": 1.5}}"#, "a > 1.5"), (#"{"a": {"$gte": 1, "$lt": 3}}"#, "(a >= 1) AND (a < 3)"),
        (#"{"a": {"$lte": 2}}"#, "a <= 2"), (#"{"a": {"$in": ["x", "y"]}}"#, "a IN {'x', 'y'}"),
        (#"{"a": {"$nin": [1]}}"#, "NOT (a IN {1})"), (#"{"a": {"$exists": true}}"#, "a != nil"), (#"{"a": {"$exists": false}}"#, "false"),
        (#"{"$or": [{"a": 1}, {"b": 2}]}"#, "(a == 1) OR (b == 2)"), (#"{"$nor": [{"a": 1}]}"#, "NOT (a == 1)"),
        (#"{"$and": [{"a": "%%user.id"}, {"b.c": "%%user.custom_data.team"}]}"#, "(a == %user.id) AND (b.c == %user.custom_data.team)"),
        (#"{"%%user.data.email": "a'b"}"#, #"%user.data.email == 'a\'b'"#), (#"{"%%true": true}"#, "true"), (#"{}"#, "true"),
        (#"{"a": {"$oid": "5f1b2c3d4e5f6a7b8c9d0e1f"}}"#, "a == oid(5f1b2c3d4e5f6a7b8c9d0e1f)"),
    ])
    func expressionsTranslate(_ json: String, _ expected: String) throws {
        let expression = try #require(ExportJSON(parsing: Data(json.utf8)))
        let role = #"{"name": "r", "document_filters": {"read": \#(json)}, "read": true}"#
        let plan = try AppImporter.plan(AppExport(files: [
            "realm_config.json": Data(#"{"app_id": "x"}"#.utf8),
            "data_sources/mongodb-atlas/db/things/rules.json": Data(#"{"roles": [\#(role)]}"#.utf8),
        ]))
        _ = expression
        #expect(plan.app.permissions.first?.read == expected, "\(plan.report)")
    }

    @Test(arguments: [
        #"{"a": {"$regex": "x"}}"#, #"{"a": {"$elemMatch": {"b": 1}}}"#, #"{"a": "%%request.remoteIPAddress"}"#,
        #"{"a": "%%root.b"}"#, #"{"a": {"$in": "teams"}}"#, #"{"a": {"b": 1}}"#, #"{"a": [1, 2]}"#,
        #"{"$where": "this.a"}"#, #"{"a": {"%stringToOid": "%%user.id"}}"#, #"{"%%true": {"%function": {"name": "f"}}}"#,
        #"{"a": "%%partition"}"#, #"{"a b": 1}"#,
    ])
    func expressionsAtollCannotExpressAreRefused(_ json: String) throws {
        let role = #"{"name": "r", "document_filters": {"read": \#(json)}, "read": true, "write": true}"#
        let plan = try AppImporter.plan(AppExport(files: [
            "realm_config.json": Data(#"{"app_id": "x"}"#.utf8),
            "data_sources/mongodb-atlas/db/things/rules.json": Data(#"{"roles": [\#(role)]}"#.utf8),
        ]))
        // The role is gone: the collection denies everyone.
        #expect(plan.app.permissions.map(\.role) == [nil, nil])
        #expect(plan.app.permissions.allSatisfy { $0.read == "false" && $0.write == "false" && !$0.insert && !$0.delete })
        #expect(plan.report.items(.refused).count == 1, "\(plan.report)")
    }

    /// Running the import twice into one configuration file gives the same file.
    @Test func importingTwiceIsHarmless() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("atoll.json")
        try Data(#"{"port": 9191, "apps": [{"id": "other"}]}"#.utf8).write(to: file)
        let plan = try plan("chores")
        try plan.write(into: file)
        let once = try Data(contentsOf: file)
        try plan.write(into: file)
        #expect(try Data(contentsOf: file) == once)
        let configuration = try ServerConfiguration.load(from: file)
        #expect(configuration.port == 9191)
        #expect(configuration.apps.map(\.id) == ["other", "chores-abcde"])
    }
}
