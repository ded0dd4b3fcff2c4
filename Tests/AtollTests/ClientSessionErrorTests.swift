@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import GRDB
import Testing

/// Code 4: the server refused what a session sent, and the session stopped.
@MainActor @Suite(.serialized) struct ClientSessionErrorTests {
    @Test func aChangesetThatBreaksTheSchemaIsRefusedByTheServerAsAClientSessionError() async throws {
        try await withSyncTestServer { server in
            let (realm, errors) = try await server.shireDevice("frodo")
            let configuration = realm.configuration
            let ring = SyncedTask(value: ["name": "carry the ring"])
            try realm.write { realm.add(ring) }
            try await realm.syncSession!.wait(for: .upload)
            // A history record that sets the string `name` to an int, as a buggy or foreign
            // writer could leave it: well formed, but not what the realm's schema allows...
            let id = ObjectID(type: "SyncedTask", primaryKey: .objectId(ring._id))
            let queue = try DatabaseQueue(path: configuration.fileURL!.path)
            try await queue.write { db in
                let version = try Int64.fetchOne(db, sql: "SELECT MAX(version) FROM _atoll_history")! + 1
                let changeset = Changeset(version: version, timestamp: Int64(Date().timeIntervalSince1970 * 1000),
                                          instructions: [.set(id, path: [.property("name")], value: .int(42))])
                try db.execute(sql: "INSERT INTO _atoll_history (version, timestamp, changeset) VALUES (?, ?, ?)",
                               arguments: [version, changeset.timestamp, changeset.encoded()])
            }
            try queue.close()
            // ...uploaded with the next write; the server refuses the upload.
            try realm.write { realm.add(SyncedTask(value: ["name": "second breakfast"])) }
            var found: SyncError?
            for _ in 0..<200 where found == nil {
                found = errors.all.compactMap { $0 as? SyncError }.first { $0.code == .clientSessionError }
                try await _Concurrency.Task.sleep(nanoseconds: 25_000_000)
            }
            let error = try #require(found)
            #expect(error.code.rawValue == 4)
            #expect(error.localizedDescription.contains("SyncedTask.name is string, the upload gives a int"), "\(error)")
            #expect((error.underlying as? SessionError)?.serverCode == .badChangeset)

            // The server goes on serving others: a second device gets the first task.
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            var samConfiguration = sam.configuration(partitionValue: "shire")
            samConfiguration.objectTypes = [SyncedTask.self]
            let samRealm = try await Realm(configuration: samConfiguration, downloadBeforeOpen: .always)
            #expect(samRealm.objects(SyncedTask.self).map(\.name) == ["carry the ring"])
        }
    }
}
