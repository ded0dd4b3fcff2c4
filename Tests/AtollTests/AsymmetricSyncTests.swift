@_spi(Testing) @testable import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

final class SensorReading: AsymmetricObject {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var sensor = ""
    @Persisted var celsius = 0.0
}

/// Data ingest with `AsymmetricObject` through the SDK against a real server: readings are
/// uploaded, removed from the device once acknowledged, stored by the server and never
/// downloaded; a partition-based or local realm cannot hold the type.
extension SerialAppServicesTests {
@MainActor @Suite(.serialized) struct AsymmetricSyncTests {
    private func open(_ user: User) async throws -> Realm {
        var configuration = user.flexibleSyncConfiguration()
        configuration.objectTypes = [SyncedTask.self, SensorReading.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: .never)
    }

    @Test func readingsAreUploadedRemovedLocallyAndNeverDownloaded() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [.init(id: "test-app", syncKind: .flexible, permissions: [.init(read: "true", write: "true")])]
        }) { server in
            let station = try await server.app(device: "station").login(credentials: .anonymous)
            let realm = try await open(station)
            #expect(realm.schema["SensorReading"]?.isAsymmetric == true)
            let ids = [ObjectId.generate(), ObjectId.generate(), ObjectId.generate()]
            try realm.write {
                for (index, id) in ids.enumerated() {
                    realm.create(SensorReading.self, value: ["_id": id, "sensor": "porch", "celsius": 20.0 + Double(index)])
                }
            }
            let session = try #require(realm.syncSession)
            try await withTimeout(.seconds(30)) { try await session.wait(for: .upload) }
            #expect(await waitUntil(timeout: .seconds(30)) {
                realm.refresh()
                return realm.dynamicObjects("SensorReading").isEmpty
            })

            // The server has them (what an admin backup holds).
            let backup = try await server.server.coordinator.backup(appID: server.appId, path: nil, id: "ingest")
            let state = try #require(backup.realms.first { $0.path == "flx" }).state()
            for (index, id) in ids.enumerated() {
                #expect(state.object(ObjectID(type: "SensorReading", primaryKey: .objectId(id)))?["celsius"] == .double(20.0 + Double(index)))
            }

            // Another device syncing everything it may subscribe to never gets one.
            let reader = try await server.app(device: "reader").login(credentials: .anonymous)
            let readerRealm = try await open(reader)
            let subscriptions = readerRealm.subscriptions
            try await subscriptions.update { subscriptions.append(QuerySubscription<SyncedTask>(name: "all")) }
            try readerRealm.write { readerRealm.add(SyncedTask(value: ["name": "Ring"])) }
            let readerSession = try #require(readerRealm.syncSession)
            try await withTimeout(.seconds(30)) { try await readerSession.wait(for: .upload) }
            try await withTimeout(.seconds(30)) { try await readerSession.wait(for: .download) }
            readerRealm.refresh()
            #expect(readerRealm.dynamicObjects("SensorReading").isEmpty)
            #expect(readerRealm.objects(SyncedTask.self).count == 1)
        }
    }

    @Test func aPartitionOrLocalRealmCannotHoldAnAsymmetricType() async throws {
        try await withSyncTestServer { server in
            let user = try await server.app(device: "pbs").login(credentials: .anonymous)
            var configuration = user.configuration(partitionValue: "shire")
            configuration.objectTypes = [SyncedTask.self, SensorReading.self]
            #expect { _ = try Realm(configuration: configuration) } throws: { error in
                (error as? Realm.Error)?.message.contains("partition-based sync") == true
            }
            let folder = try TemporaryFolder("asymmetric-local")
            var local = Realm.Configuration(fileURL: folder.url.appendingPathComponent("local.realm"))
            local.objectTypes = [SensorReading.self]
            #expect { _ = try Realm(configuration: local) } throws: { error in
                (error as? Realm.Error)?.message.contains("local realm") == true
            }
        }
    }
}
}
