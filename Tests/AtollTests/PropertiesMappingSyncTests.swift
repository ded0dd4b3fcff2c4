@_spi(Testing) import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

/// `propertiesMapping()` in synced realms: the instructions carry the persisted name, so a device
/// whose model renames a property and one that declares the persisted name see each other's writes.
@MainActor @Suite(.serialized) struct PropertiesMappingSyncTests {
    private func open(_ user: User, _ types: [ObjectBase.Type]) async throws -> Realm {
        var configuration = user.configuration(partitionValue: "contacts")
        configuration.objectTypes = types
        return try await Realm(configuration: configuration, downloadBeforeOpen: .always)
    }

    private func exchange(_ realms: Realm...) async throws {
        for realm in realms { try await realm.syncSession!.wait(for: .upload) }
        for realm in realms {
            try await realm.syncSession!.wait(for: .download)
            realm.refresh()
        }
    }

    @Test func aDeviceWithSwiftNamesAndOneWithPersistedNamesSeeEachOthersWrites() async throws {
        try await withSyncTestServer { server in
            let mapped = try await open(try await server.app(device: "mapped").login(credentials: .anonymous),
                                        [MappedContact.self, MappedPet.self])
            let stored = try await open(try await server.app(device: "stored").login(credentials: .anonymous),
                                        [StoredContact.self, StoredPet.self])
            try mapped.write {
                mapped.add(MappedContact(value: ["id": 1, "name": "Ann", "age": 40, "pets": [["nickname": "Rex"]], "labels": ["team": "blue"]]))
            }
            try await exchange(mapped, stored)
            let annOnStored = try #require(stored.object(ofType: StoredContact.self, forPrimaryKey: 1))
            #expect(annOnStored.full_name == "Ann" && annOnStored.age_years == 40)
            #expect(annOnStored.pet_list.map(\.nick_name) == ["Rex"] && annOnStored.labels["team"] == "blue")

            try stored.write {
                let bo = StoredContact(value: ["_id": 2, "full_name": "Bo", "age_years": 30])
                stored.add(bo)
                annOnStored.best_friend = bo
                annOnStored.age_years = 41
            }
            try mapped.write { mapped.object(ofType: MappedContact.self, forPrimaryKey: 1)!.phone = "555" }
            try await exchange(stored, mapped)
            let ann = try #require(mapped.object(ofType: MappedContact.self, forPrimaryKey: 1))
            #expect(ann.age == 41 && ann.bestFriend?.name == "Bo" && ann.phone == "555")
            #expect(mapped.objects(MappedContact.self).where { $0.name == "Bo" }.count == 1)
            #expect(stored.object(ofType: StoredContact.self, forPrimaryKey: 1)?.phone == "555")
        }
    }

    @Test func aSubscriptionWrittenWithSwiftNamesReachesTheServerWithPersistedNames() async throws {
        try await withSyncTestServer { server in
            let writer = try await server.app(device: "writer").login(credentials: .anonymous)
            var writerConfiguration = writer.flexibleSyncConfiguration()
            writerConfiguration.objectTypes = [StoredContact.self, StoredPet.self]
            let stored = try await Realm(configuration: writerConfiguration, downloadBeforeOpen: .never)
            try await stored.subscriptions.update { $0.append(QuerySubscription<StoredContact>(name: "all")) }
            try stored.write {
                stored.add(StoredContact(value: ["_id": 1, "full_name": "Ann", "age_years": 40]))
                stored.add(StoredContact(value: ["_id": 2, "full_name": "Bo", "age_years": 30]))
            }
            try await stored.syncSession!.wait(for: .upload)

            let reader = try await server.app(device: "reader").login(credentials: .anonymous)
            var readerConfiguration = reader.flexibleSyncConfiguration()
            readerConfiguration.objectTypes = [MappedContact.self, MappedPet.self]
            let mapped = try await Realm(configuration: readerConfiguration, downloadBeforeOpen: .never)
            try await mapped.subscriptions.update {
                $0.append(QuerySubscription<MappedContact>(name: "older") { $0.age > 35 })
            }
            #expect(mapped.subscriptions.first?.queryString == "age_years > 35")
            mapped.refresh()
            #expect(mapped.objects(MappedContact.self).map(\.name) == ["Ann"])
            try await mapped.subscriptions.update {
                $0.append(QuerySubscription<MappedContact>(name: "bo", where: "name == %@", "Bo"))
            }
            mapped.refresh()
            #expect(mapped.objects(MappedContact.self).sorted(byKeyPath: "name").map(\.name) == ["Ann", "Bo"])
            try stored.write { stored.add(StoredContact(value: ["_id": 3, "full_name": "Cy", "age_years": 20])) }
            try await stored.syncSession!.wait(for: .upload)
            let cy = try await mapped.objects(MappedContact.self).where { $0.name == "Cy" }.subscribe(name: "cy", waitForSync: .always)
            #expect(cy.map(\.id) == [3])
        }
    }

    @Test func aClientResetRecoversOfflineChangesToRenamedProperties() async throws {
        try await withSyncTestServer { server in
            let user = try await server.app(device: "mapped").login(credentials: .anonymous)
            let recovered = Recorder<[String]>()
            var configuration = user.configuration(partitionValue: "contacts", clientResetMode: .recoverUnsyncedChanges(
                afterReset: { _, after in recovered.append(after.objects(MappedContact.self).sorted(byKeyPath: "id").map(\.name)) }))
            configuration.objectTypes = [MappedContact.self, MappedPet.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try realm.write { realm.add(MappedContact(value: ["id": 1, "name": "Ann"])) }
            try await realm.syncSession!.wait(for: .upload)

            realm.syncSession!.suspend()
            try realm.write {
                realm.object(ofType: MappedContact.self, forPrimaryKey: 1)!.name = "Anne"
                realm.add(MappedContact(value: ["id": 2, "name": "Bo", "pets": [["nickname": "Rex"]]]))
            }
            try await server.admin.terminateSync(app: server.appId)
            try await server.admin.enableSync(app: server.appId)
            realm.syncSession!.resume()

            #expect(await waitUntil { recovered.all.count == 1 })
            #expect(recovered.all == [["Anne", "Bo"]])
            try await realm.syncSession!.wait(for: .upload)
            let stored = try await open(try await server.app(device: "stored").login(credentials: .anonymous),
                                        [StoredContact.self, StoredPet.self])
            #expect(stored.objects(StoredContact.self).sorted(byKeyPath: "_id").map(\.full_name) == ["Anne", "Bo"])
            #expect(stored.object(ofType: StoredContact.self, forPrimaryKey: 2)?.pet_list.map(\.nick_name) == ["Rex"])
        }
    }
}
