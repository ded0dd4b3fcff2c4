@_spi(Testing) import Atoll
import AtollAppImport
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// The `teams` export's types, as its app declares them.
final class TeamProject: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var team = ""
    @Persisted var department: String?
    @Persisted var members: List<String>
}

final class PartitionNote: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var text = ""
}

final class PayrollEntry: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var salary = 0
}

final class TeamProfile: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var userId = ""
    @Persisted var teams: List<String>
}

/// Rules on arrays end to end (issue 24 §1): the `teams` export imported, then devices of users
/// with different custom data, list memberships and identities sync, and see and change exactly
/// what the export's rules allowed; remote data access answers the same.
extension SerialAppServicesTests {
@MainActor @Suite(.serialized) struct AppImportArrayRuleSyncTests {
    static let password = "a long enough password"
    static let jwtKey = "the teams app's identity service signs with this"

    /// The imported app, with the custom JWT settings the report asked the operator to add.
    static func importedApp() throws -> ServerConfiguration.App {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/AppServicesExports/teams")
        let plan = try AppImporter.plan(AppExport(folder: folder))
        var app = try JSONDecoder().decode(ServerConfiguration.App.self, from: plan.appJSON())
        // The class names the devices use.
        for i in app.permissions.indices {
            app.permissions[i].type = app.permissions[i].type.map { ["Project": "TeamProject", "Profile": "TeamProfile"][$0] ?? $0 }
        }
        app.customUserData?.type = "TeamProfile"
        app.queryableFields = app.queryableFields.map { $0.replacingOccurrences(of: "Profile.", with: "TeamProfile.") }
        app.customJWT = .init(algorithm: .hs256, key: jwtKey, audience: "teams-app", metadataFields: [
            .init(name: "org.department", fieldName: "department", required: true), .init(name: "groups"),
        ])
        return app
    }

    struct Device {
        let user: User
        let realm: Realm
        let errors: Recorder<SyncError>
    }

    func device(_ server: SyncTestServer, _ name: String, credentials: Credentials) async throws -> Device {
        let app = server.app(device: name)
        let errors = Recorder<SyncError>()
        app.syncManager.errorHandler = { error, _ in if let error = error as? SyncError { errors.append(error) } }
        let user = try await app.login(credentials: credentials)
        var configuration = user.flexibleSyncConfiguration()
        configuration.objectTypes = [TeamProject.self, TeamProfile.self]
        let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
        let subscriptions = realm.subscriptions
        try await subscriptions.update {
            subscriptions.append(QuerySubscription<TeamProject>(name: "projects"))
            subscriptions.append(QuerySubscription<TeamProfile>(name: "profiles"))
        }
        return Device(user: user, realm: realm, errors: errors)
    }

    /// `name`'s device (an e-mail user), its realm of `partition` open with `types`.
    func partitionRealm(_ server: SyncTestServer, _ name: String, _ partition: String,
                        _ types: [ObjectBase.Type]) async throws -> (realm: Realm, errors: Recorder<SyncError>) {
        let app = server.app(device: "\(name)-\(partition)")
        let errors = Recorder<SyncError>()
        app.syncManager.errorHandler = { error, _ in if let error = error as? SyncError { errors.append(error) } }
        let user = try await app.login(credentials: .emailPassword(email: "\(name)@example.com", password: Self.password))
        var configuration = user.configuration(partitionValue: partition)
        configuration.objectTypes = types
        return (try await Realm(configuration: configuration, downloadBeforeOpen: .never), errors)
    }

    func email(_ server: SyncTestServer, _ name: String) async throws -> Device {
        try await device(server, name, credentials: .emailPassword(email: "\(name)@example.com", password: Self.password))
    }

    func projects(_ device: Device) -> [String] {
        device.realm.refresh()
        return device.realm.objects(TeamProject.self).map(\.name).sorted()
    }

    @Test func devicesSeeWhatArrayRulesAllowedAndNoMore() async throws {
        let imported = try Self.importedApp()
        try await withSyncTestServer(appId: imported.id, { $0.apps = [imported] }) { server in
            let registration = server.app(device: "registration")
            var ids: [String: String] = [:]
            for name in ["ops", "alice", "bob", "carol", "dave", "eve"] {
                try await registration.emailPasswordAuth.registerUser(email: "\(name)@example.com", password: Self.password)
                ids[name] = try await registration.login(credentials: .emailPassword(email: "\(name)@example.com", password: Self.password)).id
            }
            // The operator writes every profile (the custom user data) and project.
            let ops = try await email(server, "ops")
            try ops.realm.write {
                ops.realm.add(TeamProfile(value: ["userId": ids["alice"]!, "teams": ["blue"]]))
                ops.realm.add(TeamProfile(value: ["userId": ids["bob"]!, "teams": ["red", "green"]]))
                ops.realm.add(TeamProfile(value: ["userId": ids["carol"]!, "teams": [String]()]))
                // Larger than the token carries (4 KB of custom data): left out, so no team of dave's counts.
                ops.realm.add(TeamProfile(value: ["userId": ids["dave"]!, "teams": (0..<1_500).map { "team-\($0)" } + ["blue"]]))
                ops.realm.add(TeamProject(value: ["name": "blue-1", "team": "blue"]))
                ops.realm.add(TeamProject(value: ["name": "red-1", "team": "red", "members": [ids["carol"]!, ids["eve"]!]]))
                ops.realm.add(TeamProject(value: ["name": "green-1", "team": "yellow", "members": [ids["alice"]!, ids["dave"]!]]))
                ops.realm.add(TeamProject(value: ["name": "sales-1", "team": "blue", "department": "sales"]))
                ops.realm.add(TeamProject(value: ["name": "sales-2", "team": "red", "department": "sales"]))
            }
            try await ops.realm.syncSession!.wait(for: .upload)
            #expect(rejections(ops.errors).isEmpty, "\(ops.errors.all)")

            // Logged in now, their tokens carry their teams.
            let alice = try await email(server, "alice")
            let bob = try await email(server, "bob")
            let carol = try await email(server, "carol")
            let dave = try await email(server, "dave")
            let eve = try await email(server, "eve")
            // team IN the user's teams, or the user in the project's members.
            #expect(await waitUntil { self.projects(alice) == ["blue-1", "green-1", "sales-1"] }, "alice: \(projects(alice))")
            #expect(await waitUntil { self.projects(bob) == ["red-1", "sales-2"] }, "bob: \(projects(bob))")
            #expect(await waitUntil { self.projects(carol) == ["red-1"] }, "carol: \(projects(carol))")
            // No teams at all (eve has no profile; dave's is too large for the token): the rule
            // names a value the user lacks, so it holds for nothing, membership included, as
            // App Services' $in fails on a missing array.
            try await dave.realm.syncSession!.wait(for: .download)
            try await eve.realm.syncSession!.wait(for: .download)
            #expect(projects(dave).isEmpty, "dave: \(projects(dave))")
            #expect(projects(eve).isEmpty, "eve: \(projects(eve))")
            try await ops.realm.syncSession!.wait(for: .download)
            #expect(projects(ops).count == 5)

            // Writes need membership (%%user.id $in %%root.members): alice changes green-1, not blue-1.
            try alice.realm.write { alice.realm.objects(TeamProject.self).first { $0.name == "green-1" }!.team = "mint" }
            try await alice.realm.syncSession!.wait(for: .upload)
            #expect(rejections(alice.errors).isEmpty, "\(alice.errors.all)")
            try alice.realm.write { alice.realm.objects(TeamProject.self).first { $0.name == "blue-1" }!.team = "stolen" }
            #expect(await waitUntil { rejections(alice.errors).count == 1 })
            #expect(await waitUntil { alice.realm.objects(TeamProject.self).first { $0.name == "blue-1" }?.team == "blue" })
            // Joining a project by adding oneself to its members is a write to it: refused too.
            try bob.realm.write { bob.realm.objects(TeamProject.self).first { $0.name == "red-1" }!.members.append(bob.user.id) }
            #expect(await waitUntil { rejections(bob.errors).count == 1 })
            try await ops.realm.syncSession!.wait(for: .download)
            #expect(ops.realm.objects(TeamProject.self).first { $0.name == "red-1" }.map { Array($0.members) } == [ids["carol"]!, ids["eve"]!])
            #expect(ops.realm.objects(TeamProject.self).first { $0.name == "blue-1" }?.team == "blue")
            #expect(ops.realm.objects(TeamProject.self).first { $0.name == "green-1" }?.team == "mint")

            // Remote data access applies the same rules.
            let remote = alice.user.mongoClient("mongodb-atlas").database(named: "crm").collection(withName: "TeamProject")
            let found = try await remote.find(filter: [:]).compactMap { $0["name"]??.stringValue }.sorted()
            #expect(found == ["blue-1", "green-1", "sales-1"])
            let carolsRemote = carol.user.mongoClient("mongodb-atlas").database(named: "crm").collection(withName: "TeamProject")
            #expect(try await carolsRemote.count(filter: [:]) == 1)
        }
    }

    /// `{"%%partition": {"$in": "%%user.custom_data.readPartitions"}}`: the partition-teams export;
    /// each user opens the partitions its custom data lists, no others, and writes only where
    /// `writePartitions` says.
    @Test func partitionsInTheUsersArraysAndNoOthers() async throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/AppServicesExports/partition-teams")
        var app = try JSONDecoder().decode(ServerConfiguration.App.self, from: AppImporter.plan(AppExport(folder: folder)).appJSON())
        app.customUserData = .init(type: "TeamProfile", userIdField: "userId", partition: "profiles")
        app.developmentMode = true
        app.authProviders.emailPassword = true
        let imported = app
        try await withSyncTestServer(appId: imported.id, { $0.apps = [imported] }) { server in
            let registration = server.app(device: "registration")
            var ids: [String: String] = [:]
            for name in ["alice", "bob", "carol"] {
                try await registration.emailPasswordAuth.registerUser(email: "\(name)@example.com", password: Self.password)
                ids[name] = try await registration.login(credentials: .emailPassword(email: "\(name)@example.com", password: Self.password)).id
            }
            // The custom user data and the partitions' notes, imported by the operator.
            let schema = try JSONEncoder().encode([
                ObjectSchema(name: "TeamProfile", properties: [Property(name: "_id", type: .objectId, isPrimaryKey: true),
                                                               Property(name: "userId", type: .string),
                                                               Property(name: "readPartitions", type: .string, collection: .list),
                                                               Property(name: "writePartitions", type: .string, collection: .list)]),
                ObjectSchema(name: "PartitionNote", properties: [Property(name: "_id", type: .objectId, isPrimaryKey: true),
                                                                 Property(name: "text", type: .string)]),
            ])
            let profiles = [
                #"{"userId": "\#(ids["alice"]!)", "readPartitions": ["team-blue"], "writePartitions": []}"#,
                #"{"userId": "\#(ids["bob"]!)", "readPartitions": ["team-blue", "team-red"], "writePartitions": ["team-red"]}"#,
                // An empty list: her own partition only.
                #"{"userId": "\#(ids["carol"]!)", "readPartitions": [], "writePartitions": []}"#,
            ].enumerated().map { #"{"_id": {"$oid": "00000000000000000000000\#($0.offset)"}, "# + $0.element.dropFirst() }
            _ = try await server.admin.importBatch(app: imported.id, type: "TeamProfile", documents: profiles, realm: "s:profiles", schema: schema)
            for partition in ["team-blue", "team-red"] {
                let note = #"{"_id": {"$oid": "\#(String(repeating: partition == "team-blue" ? "a" : "b", count: 24))"}, "text": "\#(partition)"}"#
                _ = try await server.admin.importBatch(app: imported.id, type: "PartitionNote", documents: [note], realm: "s:\(partition)", schema: schema)
            }

            func notes(_ realm: Realm) -> [String] {
                realm.refresh()
                return realm.objects(PartitionNote.self).map(\.text)
            }
            let aliceBlue = try await partitionRealm(server, "alice", "team-blue", [PartitionNote.self])
            #expect(await waitUntil { notes(aliceBlue.realm) == ["team-blue"] })
            let aliceRed = try await partitionRealm(server, "alice", "team-red", [PartitionNote.self])
            #expect(await waitUntil { aliceRed.errors.all.contains { $0.code == .permissionDeniedError } })
            #expect(notes(aliceRed.realm).isEmpty)
            // Reading is not writing: alice's note in team-blue is reverted.
            try aliceBlue.realm.write { aliceBlue.realm.add(PartitionNote(value: ["text": "alice was here"])) }
            #expect(await waitUntil { !rejections(aliceBlue.errors).isEmpty })
            let bobRed = try await partitionRealm(server, "bob", "team-red", [PartitionNote.self])
            #expect(await waitUntil { notes(bobRed.realm) == ["team-red"] })
            try bobRed.realm.write { bobRed.realm.add(PartitionNote(value: ["text": "bob's"])) }
            try await bobRed.realm.syncSession!.wait(for: .upload)
            #expect(rejections(bobRed.errors).isEmpty, "\(bobRed.errors.all)")
            let bobBlue = try await partitionRealm(server, "bob", "team-blue", [PartitionNote.self])
            #expect(await waitUntil { notes(bobBlue.realm) == ["team-blue"] })
            // carol lists nothing: her own partition only.
            let carolBlue = try await partitionRealm(server, "carol", "team-blue", [PartitionNote.self])
            #expect(await waitUntil { carolBlue.errors.all.contains { $0.code == .permissionDeniedError } })
            let carolOwn = try await partitionRealm(server, "carol", ids["carol"]!, [PartitionNote.self])
            try carolOwn.realm.write { carolOwn.realm.add(PartitionNote(value: ["text": "mine"])) }
            try await carolOwn.realm.syncSession!.wait(for: .upload)
            #expect(carolOwn.errors.all.isEmpty, "\(carolOwn.errors.all)")
        }
    }

    /// Field permissions in partition-based sync (issue 24 §1.4): a role whose field rules hide
    /// `salary` never receives it, and its writes to it are reverted; other fields stay its own.
    @Test func partitionFieldRulesHideAndGuardFields() async throws {
        let rules: [ServerConfiguration.PermissionRule] = [
            .init(type: nil, role: "hr", when: "%user.data.email == 'hr@example.com'"),
            .init(type: nil, role: "staff", read: "true", write: "true", insert: true, delete: false,
                  fields: FieldAccess(fields: ["salary": .init(read: false, write: false)], otherFields: .init(read: true, write: true))),
        ]
        try await withSyncTestServer(appId: "payroll", {
            $0.apps = [ServerConfiguration.App(id: "payroll", syncKind: .partition, permissions: rules, developmentMode: true)]
        }) { server in
            let registration = server.app(device: "registration")
            for name in ["hr", "sam"] {
                try await registration.emailPasswordAuth.registerUser(email: "\(name)@example.com", password: Self.password)
            }
            func entries(_ realm: Realm) -> [String] {
                realm.refresh()
                return realm.objects(PayrollEntry.self).map { "\($0.name):\($0.salary)" }.sorted()
            }
            let hr = try await partitionRealm(server, "hr", "company", [PayrollEntry.self])
            try hr.realm.write {
                hr.realm.add(PayrollEntry(value: ["name": "ann", "salary": 5_000]))
                hr.realm.add(PayrollEntry(value: ["name": "ben", "salary": 6_000]))
            }
            try await hr.realm.syncSession!.wait(for: .upload)
            let sam = try await partitionRealm(server, "sam", "company", [PayrollEntry.self])
            #expect(await waitUntil { entries(sam.realm) == ["ann:0", "ben:0"] }, "\(entries(sam.realm))")
            // A later change of a salary does not reach sam either.
            try hr.realm.write { hr.realm.objects(PayrollEntry.self).first { $0.name == "ann" }!.salary = 5_500 }
            try hr.realm.write { hr.realm.objects(PayrollEntry.self).first { $0.name == "ben" }!.name = "benjamin" }
            #expect(await waitUntil { entries(sam.realm) == ["ann:0", "benjamin:0"] }, "\(entries(sam.realm))")
            // sam writes a name (allowed) and a salary (reverted).
            try sam.realm.write { sam.realm.objects(PayrollEntry.self).first { $0.name == "ann" }!.name = "anne" }
            try await sam.realm.syncSession!.wait(for: .upload)
            #expect(rejections(sam.errors).isEmpty, "\(sam.errors.all)")
            try sam.realm.write { sam.realm.objects(PayrollEntry.self).first { $0.name == "anne" }!.salary = 1_000_000 }
            #expect(await waitUntil { !rejections(sam.errors).isEmpty })
            #expect(rejections(sam.errors).flatMap { $0.compensatingWriteInfo ?? [] }.contains { $0.reason.contains("field salary") })
            // The revert reaches sam as the field's default (what sam saw before), not as the
            // salary hr set, and not left at what sam wrote.
            try await sam.realm.syncSession!.wait(for: .download)
            #expect(await waitUntil { entries(sam.realm) == ["anne:0", "benjamin:0"] }, "\(entries(sam.realm))")
            try await hr.realm.syncSession!.wait(for: .download)
            #expect(await waitUntil { entries(hr.realm) == ["anne:5500", "benjamin:6000"] }, "\(entries(hr.realm))")
            // Creating one with a salary is refused the same way; without one it is sam's to make.
            try sam.realm.write { sam.realm.add(PayrollEntry(value: ["name": "cat", "salary": 9])) }
            #expect(await waitUntil { rejections(sam.errors).count >= 2 })
            try sam.realm.write { sam.realm.add(PayrollEntry(value: ["name": "dan"])) }
            try await sam.realm.syncSession!.wait(for: .upload)
            #expect(await waitUntil { entries(hr.realm) == ["anne:5500", "benjamin:6000", "dan:0"] }, "\(entries(hr.realm))")
            try await sam.realm.syncSession!.wait(for: .download)
            #expect(await waitUntil { entries(sam.realm) == ["anne:0", "benjamin:0", "dan:0"] }, "\(entries(sam.realm))")
        }
    }

    /// A custom JWT's identity picks the SSO role, and its metadata fields (department, groups)
    /// are what the role's filters compare with.
    @Test func aCustomJWTsIdentityAndMetadataDecide() async throws {
        let imported = try Self.importedApp()
        try await withSyncTestServer(appId: imported.id, { $0.apps = [imported] }) { server in
            let registration = server.app(device: "registration")
            try await registration.emailPasswordAuth.registerUser(email: "ops@example.com", password: Self.password)
            let ops = try await email(server, "ops")
            try ops.realm.write {
                ops.realm.add(TeamProject(value: ["name": "sales-blue", "team": "blue", "department": "sales"]))
                ops.realm.add(TeamProject(value: ["name": "sales-red", "team": "red", "department": "sales"]))
                ops.realm.add(TeamProject(value: ["name": "ops-blue", "team": "blue", "department": "ops"]))
            }
            try await ops.realm.syncSession!.wait(for: .upload)

            func token(_ sub: String, _ claims: [String: JSONValue]) async throws -> String {
                var claims = claims
                claims["sub"] = .string(sub)
                claims["aud"] = .string("teams-app")
                return try await TestCustomJWT.sign(claims, key: Self.jwtKey)
            }
            // Without the required department the login is refused, as App Services refused it.
            await #expect(throws: AppError.self) {
                _ = try await server.app(device: "nobody").login(credentials: .jwt(token: try await token("sso-0", ["groups": .array([])])))
            }
            let staff = try await device(server, "sso", credentials: .jwt(token: try await token("sso-1", [
                "org": .object(["department": .string("sales")]), "groups": .array([.string("blue")]),
            ])))
            #expect(staff.user.profile.metadata["department"]??.stringValue == "sales")
            #expect(await waitUntil { self.projects(staff) == ["sales-blue", "sales-red"] }, "\(projects(staff))")
            // The write filter: team in the token's groups.
            try staff.realm.write { staff.realm.objects(TeamProject.self).first { $0.name == "sales-blue" }!.name = "sales-blue-2" }
            try await staff.realm.syncSession!.wait(for: .upload)
            #expect(rejections(staff.errors).isEmpty, "\(staff.errors.all)")
            try staff.realm.write { staff.realm.objects(TeamProject.self).first { $0.name == "sales-red" }!.name = "taken" }
            #expect(await waitUntil { rejections(staff.errors).count == 1 })
            // Groups that are no array grant nothing the write filter needs.
            let odd = try await device(server, "odd", credentials: .jwt(token: try await token("sso-2", [
                "org": .object(["department": .string("sales")]), "groups": .string("blue"),
            ])))
            #expect(await waitUntil { self.projects(odd) == ["sales-blue-2", "sales-red"] })
            try odd.realm.write { odd.realm.objects(TeamProject.self).first { $0.name == "sales-blue-2" }!.name = "odd" }
            #expect(await waitUntil { rejections(odd.errors).count == 1 })
            try await ops.realm.syncSession!.wait(for: .download)
            #expect(projects(ops) == ["ops-blue", "sales-blue-2", "sales-red"])
        }
    }
}
}
