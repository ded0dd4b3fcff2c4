@_spi(Testing) import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// Code 11, caused for real: the server refuses writes the user may not make (the app's write
/// rules) or, in flexible sync, writes outside the session's subscriptions; the client's copy is
/// brought back in line and the error lists the objects.
@MainActor @Suite(.serialized) struct CompensatingWriteTests {
    @Test func aWriteToAPartitionTheUserMayNotWriteIsReverted() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [ServerConfiguration.App(id: "test-app", permissions: [
                ServerConfiguration.PermissionRule(read: "true", write: "partition == %user.id"),
            ])]
        }) { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<SyncError>()
            app.syncManager.errorHandler = { error, _ in if let error = error as? SyncError { errors.append(error) } }
            let frodo = try await app.login(credentials: .anonymous)

            // His own partition: written and synced.
            var own = frodo.configuration(partitionValue: frodo.id)
            own.objectTypes = [SyncedTask.self]
            let mine = try await Realm(configuration: own, downloadBeforeOpen: .always)
            try mine.write { mine.add(SyncedTask(value: ["name": "mine"])) }
            try await mine.syncSession!.wait(for: .upload)
            #expect(rejections(errors).isEmpty)

            // Someone else's partition: readable, not writable.
            var shire = frodo.configuration(partitionValue: "shire")
            shire.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: shire, downloadBeforeOpen: .always)
            let task = SyncedTask(value: ["name": "not allowed"])
            let taskID = task._id
            try realm.write { realm.add(task) }
            #expect(names(realm) == ["not allowed"])
            #expect(await waitUntil { !rejections(errors).isEmpty })
            let error = try #require(rejections(errors).first)
            #expect(error.code.rawValue == 11)
            let info = try #require(error.compensatingWriteInfo)
            #expect(info.count == 1)
            #expect(info.first?.objectType == "SyncedTask")
            #expect(info.first?.primaryKey == .objectId(taskID))
            #expect(info.first?.reason.contains("write rule") == true)
            // The client's copy is brought back in line.
            #expect(await waitUntil { names(realm).isEmpty })
            // The realm keeps syncing: a device reading the partition never sees the write.
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            var samConfig = sam.configuration(partitionValue: "shire")
            samConfig.objectTypes = [SyncedTask.self]
            let samRealm = try await Realm(configuration: samConfig, downloadBeforeOpen: .always)
            #expect(names(samRealm).isEmpty)
        }
    }

    @Test func aFlexibleWriteOutsideTheSubscriptionsIsReverted() async throws {
        try await withSyncTestServer { server in
            let (_, realm, errors) = try await flexibleDevice(server, "frodo") {
                $0.append(QuerySubscription<SyncedTask>(name: "frodo's") { $0.owner == "Frodo" })
            }
            try realm.write {
                realm.add(SyncedTask(value: ["name": "inside", "owner": "Frodo"]))
                realm.add(SyncedTask(value: ["name": "outside", "owner": "Sam"]))
            }
            #expect(await waitUntil { !rejections(errors).isEmpty })
            let info = try #require(rejections(errors).first?.compensatingWriteInfo)
            #expect(info.count == 1)
            #expect(info.first?.reason.contains("outside the session's subscriptions") == true)
            #expect(await waitUntil { names(realm) == ["inside"] })

            // What was inside reached the server.
            let samRealm = try await flexibleDevice(server, "sam").realm
            #expect(names(samRealm) == ["inside"])
        }
    }

    @Test func aFlexibleWriteRuleProtectsOtherUsersObjects() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [ServerConfiguration.App(id: "test-app", permissions: [
                ServerConfiguration.PermissionRule(type: "SyncedTask", read: "true", write: "owner == %user.id"),
            ])]
        }) { server in
            let (sam, samRealm, _) = try await flexibleDevice(server, "sam")
            try samRealm.write { samRealm.add(SyncedTask(value: ["name": "pans", "owner": sam.id])) }
            try await samRealm.syncSession!.wait(for: .upload)

            let (_, realm, errors) = try await flexibleDevice(server, "frodo")
            #expect(names(realm) == ["pans"])
            try realm.write { realm.objects(SyncedTask.self).first!.name = "stolen pans" }
            #expect(await waitUntil { !rejections(errors).isEmpty })
            #expect(rejections(errors).first?.compensatingWriteInfo?.first?.reason.contains("owner == %user.id") == true)
            #expect(await waitUntil { names(realm) == ["pans"] })
            samRealm.refresh()
            #expect(names(samRealm) == ["pans"])
        }
    }
}
