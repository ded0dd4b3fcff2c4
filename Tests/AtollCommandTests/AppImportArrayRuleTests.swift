import AtollAppImport
import AtollCore
import AtollServer
import Foundation
import Testing

/// What App Services apps commonly write and the import once refused (issue 24 §1): `$in`/`$nin`
/// with a user value, the user in a document's list, `%%user.identities`, custom JWT metadata
/// fields. The `teams` and `partition-teams` exports of Tests/Fixtures/AppServicesExports.
@Suite struct AppImportArrayRuleTests {
    func plan(_ name: String) throws -> ImportPlan {
        try AppImporter.plan(AppExport(folder: appServicesExport(name)))
    }

    func item(_ plan: ImportPlan, _ subject: String) -> ImportItem? {
        plan.report.items.first { $0.subject.contains(subject) }
    }

    static func readFilter(_ json: String) throws -> ImportPlan {
        let role = #"{"name": "r", "document_filters": {"read": \#(json)}, "read": true}"#
        return try AppImporter.plan(AppExport(files: [
            "realm_config.json": Data(#"{"app_id": "x"}"#.utf8),
            "data_sources/mongodb-atlas/db/things/rules.json": Data(#"{"roles": [\#(role)]}"#.utf8),
        ]))
    }

    @Test(arguments: [
        (#"{"team": {"$in": "%%user.custom_data.teams"}}"#, "team IN %user.custom_data.teams"),
        (#"{"team": {"$nin": "%%user.custom_data.teams"}}"#, "NOT (team IN %user.custom_data.teams)"),
        (#"{"team": {"$in": "%%user.data.groups"}}"#, "team IN %user.data.groups"),
        (#"{"%%user.id": {"$in": "%%root.members"}}"#, "%user.id IN members"),
        (#"{"%%user.id": {"$nin": "%%root.members"}}"#, "NOT (%user.id IN members)"),
        (#"{"members": "%%user.id"}"#, "members == %user.id"),
        (#"{"%%root.owner": "%%user.id"}"#, "owner == %user.id"),
        (#"{"members": {"$ne": "%%user.id"}}"#, "NOT (members == %user.id)"),
        (#"{"members": {"$in": ["%%user.id", "admin"]}}"#, "members IN {%user.id, 'admin'}"),
    ])
    func arrayExpressionsTranslate(_ json: String, _ expected: String) throws {
        let plan = try Self.readFilter(json)
        #expect(plan.app.permissions.first?.read == expected, "\(plan.report)")
    }

    @Test(arguments: [
        #"{"a": {"$in": "teams"}}"#,                                // a string, not an array: $in fails in App Services too
        #"{"a": {"$in": "%%root.b"}}"#,                              // two fields compared
        #"{"a": {"$in": "%%request.remoteIPAddress"}}"#,
        #"{"a": {"$in": "%%user.identities"}}"#,
        #"{"a": {"$all": "%%user.custom_data.teams"}}"#,
        #"{"a": {"$in": {"%function": {"name": "teams"}}}}"#,
        #"{"%%user.identities.provider_type": {"$gt": "a"}}"#,
        #"{"%%user.identities.provider_type": {"$in": "%%user.custom_data.providers"}}"#,
        #"{"%%user.identities.provider_type": ["custom-token"]}"#,
        #"{"%%user.identities": {"$elemMatch": {"provider_type": "custom-token"}}}"#,
        #"{"%%user.identities.data.org": "x"}"#,
        #"{"%%root": "%%user.id"}"#,
    ])
    func arrayExpressionsAtollCannotExpressAreRefused(_ json: String) throws {
        let plan = try Self.readFilter(json)
        #expect(plan.app.permissions.allSatisfy { $0.read == "false" && $0.write == "false" }, "\(json)")
        #expect(plan.report.items(.refused).count == 1, "\(plan.report)")
    }

    @Test func identitiesChooseARole() throws {
        let plan = try plan("teams")
        let rules = try JSONDecoder().decode(ServerConfiguration.App.self, from: plan.appJSON()).permissions
        #expect(rules.map { "\($0.type ?? "*") \($0.role ?? "")" } == [
            "Profile operator", "Profile self", "Project operator", "Project sso-staff", "Project member", "* nothing",
        ])
        let staff = rules[3]
        #expect(staff.when == "'custom-token' IN %user.identities.provider_type")
        #expect(staff.read == "department == %user.data.department")
        #expect(staff.write == "((department == %user.data.department) AND (team IN %user.data.groups)) AND (department == %user.data.department)")
        #expect(staff.insert && !staff.delete)
        let member = rules[4]
        #expect(member.when == nil)
        #expect(member.read == "(team IN %user.custom_data.teams) OR (members == %user.id)")
        #expect(member.write == "(%user.id IN members) AND ((team IN %user.custom_data.teams) OR (members == %user.id))")
        // The whole identities array compared with $elemMatch: refused, named.
        #expect(item(plan, "role \"banned\"")?.outcome == .refused)
        #expect(item(plan, "role \"banned\"")?.detail.contains("%%user.identities") == true)
        // Evaluated: an SSO user (custom-token identity) takes the staff role, others the member role.
        let app = try JSONDecoder().decode(ServerConfiguration.App.self, from: plan.appJSON())
        let sso = RuleUser(id: "s", identities: [.init(id: "sub-1", providerType: "custom-token")])
        let member2 = RuleUser(id: "m", identities: [.init(id: "m@x.com", providerType: "local-userpass")])
        #expect(app.rules(for: sso).first { $0.type == "Project" }?.role == "sso-staff")
        #expect(app.rules(for: member2).first { $0.type == "Project" }?.role == "member")
    }

    @Test func metadataFieldsMapIntoTheCustomJWTSettings() throws {
        let plan = try plan("teams")
        let provider = try #require(item(plan, "auth provider custom-token"))
        #expect(provider.outcome == .needsAttention)
        #expect(provider.detail.contains(#""metadataFields": [{"name": "org.department", "fieldName": "department", "required": true}, {"name": "groups", "fieldName": "groups", "required": false}, {"name": "name", "fieldName": "name", "required": false}]"#), "\(provider.detail)")
        #expect(item(plan, "metadata_fields[0]")?.outcome == .mapped)
        #expect(item(plan, "metadata_fields[0]")?.detail.contains("%user.data.department") == true)
        // What the report suggests is a configuration the server accepts.
        let start = try #require(provider.detail.range(of: "{\"algorithm\""))
        let end = try #require(provider.detail.range(of: "]}", options: .backwards))
        let suggested = String(provider.detail[start.lowerBound..<end.upperBound])
            .replacingOccurrences(of: "<the signing key>", with: "\"an HS256 key of at least thirty-two bytes\"")
        let jwt = try JSONDecoder().decode(ServerConfiguration.CustomJWT.self, from: Data(suggested.utf8))
        #expect(jwt.metadataFields.map(\.profileName) == ["department", "groups", "name"])
        #expect(jwt.metadataFields.first?.required == true)
    }

    @Test func metadataFieldsAtollCannotNameAreRefused() throws {
        let plan = try AppImporter.plan(AppExport(files: [
            "realm_config.json": Data(#"{"app_id": "x"}"#.utf8),
            "auth/providers.json": Data(#"""
                {"custom-token": {"name": "custom-token", "type": "custom-token", "config": {"signingAlgorithm": "HS256"},
                  "metadata_fields": [{"name": "org.unit", "required": true}, {"name": "ok", "field_name": "fine"},
                                      {"name": "a b", "field_name": "x"}, {"name": "c", "field_name": "fine"}]}}
                """#.utf8),
        ]))
        let refused = plan.report.items(.refused).map(\.subject)
        #expect(refused.contains { $0.hasSuffix("metadata_fields[0]") })  // a path without a field_name
        #expect(refused.contains { $0.hasSuffix("metadata_fields[2]") })  // not a path
        #expect(refused.contains { $0.hasSuffix("metadata_fields[3]") })  // the name twice
        #expect(item(plan, "metadata_fields[0]")?.detail.contains("required") == true)
        #expect(item(plan, "metadata_fields[1]")?.outcome == .mapped)
    }

    @Test func partitionRulesReadTheUsersArrays() throws {
        let plan = try plan("partition-teams")
        let rule = try #require(try JSONDecoder().decode(ServerConfiguration.App.self, from: plan.appJSON()).permissions.first)
        #expect(rule.read == "(partition == %user.id) OR (partition IN %user.custom_data.readPartitions)")
        #expect(rule.write == "(partition == %user.id) OR (partition IN %user.custom_data.writePartitions)")
        let schema = try Schema([ObjectSchema(name: "P", properties: [Property(name: "_id", type: .string, isPrimaryKey: true),
                                                                      Property(name: "partition", type: .string, isOptional: true)])])
        func reads(_ user: RuleUser, _ partition: String) throws -> Bool {
            let query = try #require(FlexibleSync.Rules.bind(rule.read, user: user, objectType: "P", schema: schema))
            return query.evaluate(on: ["_id": .string("x"), "partition": .string(partition)], resolver: NoLinkResolver())
        }
        let reader = RuleUser(id: "u1", customData: ["readPartitions": .list([.string("team-blue"), .string("public")])])
        #expect(try reads(reader, "u1"))
        #expect(try reads(reader, "team-blue"))
        #expect(try !reads(reader, "team-red"))
        // Not an array, or too long: nothing (App Services' $in fails on a value that is no array too).
        let scalar = RuleUser(id: "u1", customData: ["readPartitions": .string("team-blue")])
        #expect(FlexibleSync.Rules.bind(rule.read, user: scalar, objectType: "P", schema: schema) == nil)
        let long = RuleUser(id: "u1", customData: ["readPartitions": .list(Array(repeating: .string("team-blue"), count: RuleUser.maximumListCount + 1))])
        #expect(FlexibleSync.Rules.bind(rule.read, user: long, objectType: "P", schema: schema) == nil)
    }
}
