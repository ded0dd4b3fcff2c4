@_spi(Testing) import Atoll
import AtollAppImport
import AtollServer
import AtollTesting
import Foundation
import Testing

/// The chores export's types, as its app declares them.
final class HouseChore: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var owner_id = ""
    @Persisted var team = ""
    @Persisted var notes = ""
    @Persisted var done: Bool?
}

final class TeamMember: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var userId = ""
    @Persisted var team = ""
    @Persisted var isAdmin = false
}

/// `atoll apps import` end to end (issue 24 §1): the chores export (Tests/Fixtures/AppServicesExports)
/// imported, then devices of users in each role sync and see exactly what the export's rules
/// allowed, and their writes beyond them are reverted.
extension SerialAppServicesTests {
@MainActor @Suite(.serialized) struct AppImportSyncTests {
    static let password = "a long enough password"

    static func importedApp() throws -> ServerConfiguration.App {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/AppServicesExports/chores")
        let plan = try AppImporter.plan(AppExport(folder: folder))
        return try JSONDecoder().decode(ServerConfiguration.App.self, from: plan.appJSON())
    }

    struct Device {
        let user: User
        let realm: Realm
        let errors: Recorder<SyncError>
    }

    /// `email`'s device, logged in, its flexible realm subscribed to every chore and member.
    func device(_ server: SyncTestServer, _ email: String, refresh: Bool = false) async throws -> Device {
        let app = server.app(device: email)
        let errors = Recorder<SyncError>()
        app.syncManager.errorHandler = { error, _ in if let error = error as? SyncError { errors.append(error) } }
        let user = try await app.login(credentials: .emailPassword(email: email, password: Self.password))
        var configuration = user.flexibleSyncConfiguration()
        configuration.objectTypes = [HouseChore.self, TeamMember.self]
        let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
        let subscriptions = realm.subscriptions
        try await subscriptions.update {
            subscriptions.append(QuerySubscription<HouseChore>(name: "chores"))
            subscriptions.append(QuerySubscription<TeamMember>(name: "members"))
        }
        return Device(user: user, realm: realm, errors: errors)
    }

    func chores(_ device: Device) -> [String] {
        device.realm.refresh()
        return device.realm.objects(HouseChore.self).map { "\($0.name):\($0.notes)" }.sorted()
    }

    @Test func devicesSeeWhatTheExportsRolesAllowedAndNoMore() async throws {
        let imported = try Self.importedApp()
        #expect(imported.id == "chores-abcde")
        try await withSyncTestServer(appId: imported.id, { $0.apps = [imported] }) { server in
            let app = server.app(device: "registration")
            var ids: [String: String] = [:]
            for name in ["ops", "alice", "bob", "carol", "eve"] {
                let email = "\(name)@example.com"
                try await app.emailPasswordAuth.registerUser(email: email, password: Self.password)
                ids[name] = try await app.login(credentials: .emailPassword(email: email, password: Self.password)).id
            }
            // The operator's role (by e-mail) writes every member: teams and the admin flag.
            let ops = try await device(server, "ops@example.com")
            try ops.realm.write {
                for (name, team, admin) in [("alice", "blue", false), ("bob", "blue", false), ("carol", "red", true), ("eve", "red", false)] {
                    ops.realm.add(TeamMember(value: ["userId": ids[name]!, "team": team, "isAdmin": admin]))
                }
            }
            try await ops.realm.syncSession!.wait(for: .upload)
            #expect(rejections(ops.errors).isEmpty)

            // Logged in now, their tokens carry their custom data (the TeamMember objects).
            let alice = try await device(server, "alice@example.com")
            let bob = try await device(server, "bob@example.com")
            let carol = try await device(server, "carol@example.com")
            let eve = try await device(server, "eve@example.com")
            for (device, name, team) in [(alice, "alice", "blue"), (bob, "bob", "blue"), (eve, "eve", "red")] {
                try device.realm.write { device.realm.add(HouseChore(value: ["name": name, "owner_id": device.user.id, "team": team])) }
                try await device.realm.syncSession!.wait(for: .upload)
                #expect(rejections(device.errors).isEmpty, "\(name): \(device.errors.all)")
            }
            // The admin role writes anything, notes included.
            #expect(await waitUntil { self.chores(carol).count == 3 })
            try carol.realm.write { for chore in carol.realm.objects(HouseChore.self) { chore.notes = "notes of \(chore.name)" } }
            try await carol.realm.syncSession!.wait(for: .upload)
            #expect(rejections(carol.errors).isEmpty)

            // Members read their own chores and their team's, without the notes; the admin reads all.
            #expect(await waitUntil { self.chores(alice) == ["alice:", "bob:"] }, "alice: \(chores(alice))")
            #expect(await waitUntil { self.chores(bob) == ["alice:", "bob:"] }, "bob: \(chores(bob))")
            #expect(await waitUntil { self.chores(eve) == ["eve:"] }, "eve: \(chores(eve))")
            #expect(chores(carol) == ["alice:notes of alice", "bob:notes of bob", "eve:notes of eve"])
            // Members read their own TeamMember only.
            #expect(await waitUntil { alice.realm.objects(TeamMember.self).map(\.userId) == [alice.user.id] })

            // Beyond the rules: another's chore, a delete, a hidden field, the own team (escalation).
            try alice.realm.write {
                alice.realm.objects(HouseChore.self).first { $0.name == "bob" }!.name = "renamed by alice"
                alice.realm.objects(TeamMember.self).first!.team = "red"
            }
            #expect(await waitUntil { rejections(alice.errors).count >= 1 })
            try alice.realm.write { alice.realm.delete(alice.realm.objects(HouseChore.self).first { $0.name == "alice" }!) }
            #expect(await waitUntil { rejections(alice.errors).count >= 2 })
            let reasons = rejections(alice.errors).flatMap { $0.compensatingWriteInfo ?? [] }.map(\.reason)
            #expect(reasons.contains { $0.contains("write rule") }, "\(reasons)")
            #expect(reasons.contains { $0.contains("field team") }, "\(reasons)")
            #expect(reasons.contains { $0.contains("may not delete") }, "\(reasons)")
            // Her copy is back in line, and nothing reached the others.
            #expect(await waitUntil { self.chores(alice) == ["alice:", "bob:"] }, "alice: \(chores(alice))")
            #expect(await waitUntil { alice.realm.objects(TeamMember.self).first?.team == "blue" })
            try await carol.realm.syncSession!.wait(for: .download)
            #expect(chores(carol) == ["alice:notes of alice", "bob:notes of bob", "eve:notes of eve"])
            // A member creating a TeamMember (insert is not theirs) is reverted too.
            try eve.realm.write { eve.realm.add(TeamMember(value: ["userId": eve.user.id, "team": "blue", "isAdmin": true])) }
            #expect(await waitUntil { !rejections(eve.errors).isEmpty })
        }
    }
}
}
