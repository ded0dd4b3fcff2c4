import ArgumentParser
@_spi(Testing) import Atoll
import AtollAdminClient
import AtollServer
import AtollTesting
import Foundation
import Testing
@testable import atoll

final class Note: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var text = ""
}

/// The `atoll` tool itself, parsed and run as an operator types it, against an in-process server.
@MainActor @Suite(.serialized) struct AtollCommandTests {
    /// Runs `atoll <arguments>` against `server`, with its admin key or, when `keyOption` is false,
    /// with only its data folder.
    private func atoll(_ server: SyncTestServer, _ arguments: [String], keyOption: Bool = true) async throws {
        let key = keyOption ? "--admin-key=\(server.server.adminKey)" : "--data=\(server.configuration.dataDirectory)"
        let options = ["--server", server.server.baseURL.absoluteString, key]
        var command = try AtollCommand.parseAsRoot(arguments + options)
        guard var runnable = command as? AsyncParsableCommand else { return try command.run() }
        try await runnable.run()
    }

    /// The seeds' procedure with the tool: terminate and enable sync, and the client resets.
    @Test func terminateAndEnableFromTheToolResetTheClient() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let resets = Counter()
            let user = try await app.login(credentials: .anonymous)
            var configuration = user.configuration(partitionValue: "notes", clientResetMode: .discardUnsyncedChanges(
                afterReset: { _, _ in resets.count += 1 }))
            configuration.objectTypes = [Note.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try realm.write { realm.add(Note(value: ["text": "synced"])) }
            try await realm.syncSession!.wait(for: .upload)

            realm.syncSession!.suspend()
            try await atoll(server, ["sync", "terminate", "--app", server.appId])
            #expect(try await server.admin.apps().first { $0.id == server.appId }?.syncEnabled == false)
            try await atoll(server, ["sync", "enable", "--app", server.appId])
            realm.syncSession!.resume()
            // A reset downloads a fresh copy through a side realm: on two loaded cores that took
            // more than the default 10 s (twice, with the session waiting for its reset). Say what
            // the session was doing if it never comes.
            if !(await waitUntil(timeout: .seconds(60)) { resets.count == 1 }) {
                let session = await realm.syncSession!.diagnosticDescription()
                Issue.record("no client reset after terminate and enable; the session: \(session)")
            }
        }
    }

    /// Back up, change, restore: the history rolls back and the client resets onto the backup.
    @Test func backupAndRestoreFromTheTool() async throws {
        try await withSyncTestServer { server in
            let user = try await server.app(device: "frodo").login(credentials: .anonymous)
            let resets = Counter()
            var configuration = user.configuration(partitionValue: "notes", clientResetMode: .discardUnsyncedChanges(
                afterReset: { _, _ in resets.count += 1 }))
            configuration.objectTypes = [Note.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try realm.write { realm.add(Note(value: ["text": "before the backup"])) }
            try await realm.syncSession!.wait(for: .upload)
            try await atoll(server, ["backup", "create", "--app", server.appId, "--realm", "s:notes"])
            let backup = try #require(try await server.admin.backups(app: server.appId).first)
            try realm.write { realm.add(Note(value: ["text": "after the backup"])) }
            try await realm.syncSession!.wait(for: .upload)

            try await atoll(server, ["backup", "restore", "--app", server.appId, backup.id])
            #expect(await waitUntil(timeout: .seconds(60)) { resets.count == 1 })
            realm.refresh()
            #expect(realm.objects(Note.self).map(\.text) == ["before the backup"])
        }
    }

    /// A backup that does not exist: a typed error the operator can read; the server stays up.
    @Test func anUnknownBackupIsAnErrorThatSaysSo() async throws {
        try await withSyncTestServer { server in
            try await atoll(server, ["apps", "create", server.appId])
            let error = await #expect(throws: AdminClientError.self) {
                try await atoll(server, ["backup", "restore", "--app", server.appId, "no-such-backup"])
            }
            #expect(error?.status == 404)
            #expect(error?.message.contains("no-such-backup") == true)
            #expect(try await server.admin.apps().contains { $0.id == server.appId })
        }
    }

    /// Without `--admin-key` the tool reads the key the server wrote into its data folder.
    @Test func theToolFindsTheKeyInTheServersDataFolder() async throws {
        try await withSyncTestServer { server in
            #expect(try AdminClient.key(dataDirectory: server.configuration.dataDirectory) == server.server.adminKey)
            try await atoll(server, ["apps", "create", server.appId], keyOption: false)
            #expect(try await server.admin.apps().contains { $0.id == server.appId })
        }
    }

    /// Server API keys made, listed and deleted with the tool: the secret is printed once, logs in
    /// as the key's own user, never shows in the list, and stops working once the key is deleted.
    @Test func serverAPIKeysFromTheTool() async throws {
        try await withSyncTestServer { server in
            try await atoll(server, ["apps", "create", server.appId])
            let options = ["--server", server.server.baseURL.absoluteString, "--admin-key=\(server.server.adminKey)"]
            let create = try #require(try AtollCommand.parseAsRoot(["api-keys", "create", "--app", server.appId, "--name", "backend"] + options)
                as? APIKeys.Create)
            let fields = try await create.output().split(separator: "\t").map(String.init)
            try #require(fields.count == 3)
            let (id, secret) = (fields[0], fields[2])
            #expect(fields[1] == "backend")
            #expect(!secret.isEmpty)

            let user = try await server.app(device: "backend").login(credentials: .serverAPIKey(secret))
            let list = try #require(try AtollCommand.parseAsRoot(["api-keys", "list", "--app", server.appId] + options) as? APIKeys.List)
            let lines = try await list.output()
            #expect(lines.count == 1)
            #expect(lines.first?.hasPrefix("\(id)\tbackend\tuser \(user.id)\tenabled") == true)
            #expect(lines.allSatisfy { !$0.contains(secret) })

            try await atoll(server, ["api-keys", "delete", "--app", server.appId, id])
            #expect(try await list.output().isEmpty)
            await #expect(throws: AppError.self) {
                _ = try await server.app(device: "another").login(credentials: .serverAPIKey(secret))
            }
        }
    }

    @Test func missingArgumentsAreRefusedBeforeAnythingRuns() {
        #expect(throws: (any Error).self) { _ = try AtollCommand.parseAsRoot(["backup", "restore"]) }
        #expect(throws: (any Error).self) { _ = try AtollCommand.parseAsRoot(["schema", "change-type", "--app", "a"]) }
    }
}

/// A counter the reset blocks bump from the session's actor.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    var count: Int {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
