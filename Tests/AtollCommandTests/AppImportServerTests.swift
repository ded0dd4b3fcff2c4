import ArgumentParser
@_spi(Testing) import Atoll
import AtollAdminClient
import AtollAppImport
import AtollServer
import AtollTesting
import Foundation
import Testing
@testable import atoll

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

/// `atoll apps import <folder>` against a running server (issue 24 §1): the app is created through
/// the admin API, devices log in with its imported provider and sync under its imported rules,
/// it is still there after a restart, and a replaced configuration ends the sessions, which
/// reconnect under the new rules.
@MainActor @Suite(.serialized) struct AppImportServerTests {
    static let password = "a long enough password"

    private func atoll(_ server: SyncTestServer, _ arguments: [String]) async throws {
        let options = ["--server", server.server.baseURL.absoluteString, "--admin-key=\(server.server.adminKey)"]
        var command = try AtollCommand.parseAsRoot(arguments + options)
        guard var runnable = command as? AsyncParsableCommand else { return try command.run() }
        try await runnable.run()
    }

    struct Device {
        let user: User
        let realm: Realm
        let errors: Recorder<SyncError>
    }

    private func device(_ server: SyncTestServer, _ email: String) async throws -> Device {
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

    private func chores(_ device: Device) -> [String] {
        device.realm.refresh()
        return device.realm.objects(HouseChore.self).map(\.name).sorted()
    }

    private func rejections(_ device: Device) -> [SyncError] { device.errors.all.filter { $0.code == .writeRejected } }

    @Test func anImportedAppServesDevicesUnderItsRulesAndSurvivesARestart() async throws {
        try await withSyncTestServer(appId: "chores-abcde", { $0.developmentMode = false }) { server in
            let folder = appServicesExport("chores").path
            // Before the import the server does not know the app.
            await #expect(throws: AppError.self) {
                _ = try await server.app(device: "early").login(credentials: .anonymous)
            }
            try await atoll(server, ["apps", "import", folder])
            // Twice is harmless: the server answers "unchanged".
            try await atoll(server, ["apps", "import", folder])
            let admin = AdminClient(server: server.server.baseURL, key: server.server.adminKey)
            let plan = try AppImporter.plan(AppExport(folder: appServicesExport("chores")))
            #expect(try await admin.putAppConfiguration(app: plan.app.id, plan.appJSON()).status == "unchanged")

            // The imported providers: e-mail/password on (confirmed at once), anonymous off.
            let registration = server.app(device: "registration")
            await #expect(throws: AppError.self) { _ = try await registration.login(credentials: .anonymous) }
            var ids: [String: String] = [:]
            for name in ["ops", "alice", "bob"] {
                let email = "\(name)@example.com"
                try await registration.emailPasswordAuth.registerUser(email: email, password: Self.password)
                ids[name] = try await registration.login(credentials: .emailPassword(email: email, password: Self.password)).id
            }
            // The imported rules: the operator (by e-mail) writes the members, whose teams
            // decide who reads which chores.
            let ops = try await device(server, "ops@example.com")
            try ops.realm.write {
                ops.realm.add(TeamMember(value: ["userId": ids["alice"]!, "team": "blue"]))
                ops.realm.add(TeamMember(value: ["userId": ids["bob"]!, "team": "red"]))
            }
            try await ops.realm.syncSession!.wait(for: .upload)
            #expect(rejections(ops).isEmpty, "\(ops.errors.all)")
            let alice = try await device(server, "alice@example.com")
            let bob = try await device(server, "bob@example.com")
            for (device, name, team) in [(alice, "alice", "blue"), (bob, "bob", "red")] {
                try device.realm.write { device.realm.add(HouseChore(value: ["name": name, "owner_id": device.user.id, "team": team])) }
                try await device.realm.syncSession!.wait(for: .upload)
                #expect(rejections(device).isEmpty, "\(name): \(device.errors.all)")
            }
            try await alice.realm.syncSession!.wait(for: .download)
            try await bob.realm.syncSession!.wait(for: .download)
            #expect(chores(alice) == ["alice"])
            #expect(chores(bob) == ["bob"])

            // Replaced: chores are read-only now. Alice's session ends, reconnects under the new
            // rules, and her next chore is refused.
            var readOnly = plan.app
            readOnly.permissions = readOnly.permissions.map { rule in
                guard rule.type == "HouseChore" else { return rule }
                var rule = rule
                rule.write = "false"
                rule.insert = false
                return rule
            }
            await #expect(throws: AdminClientError.self) { _ = try await admin.putAppConfiguration(app: plan.app.id, readOnly.json()) }
            #expect(try await admin.putAppConfiguration(app: plan.app.id, readOnly.json(), replace: true).status == "replaced")
            try alice.realm.write { alice.realm.add(HouseChore(value: ["name": "alice-2", "owner_id": alice.user.id, "team": "blue"])) }
            #expect(await waitUntil(timeout: .seconds(20)) { !self.rejections(alice).isEmpty }, "\(alice.errors.all)")
            #expect(await waitUntil(timeout: .seconds(20)) { self.chores(alice) == ["alice"] }, "\(chores(alice))")

            // Restarted: the app is still there, with the configuration it was given last.
            try await server.restart()
            let again = server.app(device: "after-restart")
            let user = try await again.login(credentials: .emailPassword(email: "bob@example.com", password: Self.password))
            #expect(user.id == ids["bob"])
            await #expect(throws: AppError.self) { _ = try await again.login(credentials: .anonymous) }
            #expect(try await admin.putAppConfiguration(app: plan.app.id, readOnly.json()).status == "unchanged")
        }
    }
}
