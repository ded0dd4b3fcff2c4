#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif
import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

// A coffee-shop app in the style of Realm's "Query MongoDB" documentation: the app reads and
// writes the server's data through `user.mongoClient("mongodb-atlas")` (completion handlers, async
// and Combine), while a synced device holds the same objects.
class CoffeeDrink: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var beanRegion = ""
    @Persisted var containsDairy = false
    @Persisted var storeNumber = 0
    @Persisted var owner = ""
}

final class CoffeeDrinkStore {
    let collection: MongoCollection

    init(user: User, database: String) {
        let client = user.mongoClient("mongodb-atlas")
        let database = client.database(named: database)
        collection = database.collection(withName: "CoffeeDrink")
    }

    // Realm's documentation, "Insert a Single Document".
    func insertColombianBlend(owner: String, completion: @escaping (Result<AnyBSON, Error>) -> Void) {
        let drink: Document = ["name": "Colombian Blend", "beanRegion": "Timbio, Colombia", "containsDairy": false, "storeNumber": 43,
                               "owner": AnyBSON(owner)]
        collection.insertOne(drink) { result in
            switch result {
            case .failure(let error):
                print("Call to MongoDB failed: \(error.localizedDescription)")
                completion(.failure(error))
            case .success(let objectId):
                print("Successfully inserted a document with id: \(objectId)")
                completion(.success(objectId))
            }
        }
    }

    // "Find Multiple Documents", with options.
    func drinks(inStore store: Int, completion: @escaping ([Document]) -> Void) {
        let queryFilter: Document = ["storeNumber": AnyBSON(store)]
        let options = FindOptions(10, ["name": 1, "storeNumber": 1], [["name": 1]])
        collection.find(filter: queryFilter, options: options) { result in
            switch result {
            case .failure(let error):
                print("Call to MongoDB failed: \(error.localizedDescription)")
                completion([])
            case .success(let documents):
                completion(documents)
            }
        }
    }

    // "Update a Single Document".
    func addDairy(name: String, completion: @escaping (UpdateResult?) -> Void) {
        let queryFilter: Document = ["name": AnyBSON(name)]
        let documentUpdate: Document = ["$set": ["containsDairy": true]]
        collection.updateOneDocument(filter: queryFilter, update: documentUpdate) { result in
            switch result {
            case .failure(let error):
                print("Failed to update document: \(error.localizedDescription)")
                completion(nil)
            case .success(let updateResult):
                if updateResult.matchedCount == 1 && updateResult.modifiedCount == 1 {
                    print("Successfully updated a matching document.")
                } else {
                    print("Did not update a document")
                }
                completion(updateResult)
            }
        }
    }

    // "Upsert a Single Document".
    func upsertHouseBlend(owner: String) async throws -> UpdateResult {
        let queryFilter: Document = ["name": "House Blend", "storeNumber": 55]
        let documentUpdate: Document = ["name": "House Blend", "beanRegion": "Yirgacheffe, Ethiopia", "containsDairy": false,
                                        "storeNumber": 55, "owner": AnyBSON(owner)]
        return try await collection.updateOneDocument(filter: queryFilter, update: ["$set": .document(documentUpdate)], upsert: true)
    }

    // "Count Documents", "Aggregate Documents", "Delete a Single Document" (async forms).
    func countAndAggregate() async throws -> (count: Int, names: [String]) {
        let count = try await collection.count(filter: ["containsDairy": false])
        let pipeline: [Document] = [["$match": ["storeNumber": ["$exists": true]]], ["$sort": ["storeNumber": -1]], ["$limit": 2],
                                    ["$project": ["name": 1, "_id": 0]]]
        let documents = try await collection.aggregate(pipeline: pipeline)
        return (count, documents.compactMap { $0["name"]??.stringValue })
    }

    func findOneAndUpdate() async throws -> Document? {
        let options = FindOneAndModifyOptions(["name": 1, "storeNumber": 1], [["storeNumber": 1]], false, true)
        return try await collection.findOneAndUpdate(filter: ["containsDairy": false], update: ["$inc": ["storeNumber": 1]], options: options)
    }

    func deleteHouseBlend(completion: @escaping (Int) -> Void) {
        collection.deleteOneDocument(filter: ["name": "House Blend"]) { deletedResult in
            switch deletedResult {
            case .failure(let error):
                print("Failed to delete a document: \(error.localizedDescription)")
                completion(-1)
            case .success(let deletedCount):
                completion(deletedCount)
            }
        }
    }

    // The Combine forms.
    func countPublisher() -> Future<Int, Error> {
        collection.count(filter: [:])
    }
}

// Realm's documentation, "Watch for Changes".
final class MyChangeStreamDelegate: ChangeEventDelegate {
    private let lock = NSLock()
    private var _opened = false
    private var _events: [Document] = []
    private var _closed = false
    var opened: Bool { lock.withLock { _opened } }
    var events: [Document] { lock.withLock { _events } }
    var closed: Bool { lock.withLock { _closed } }

    func changeStreamDidOpen(_ changeStream: ChangeStream) {
        print("Change stream opened: \(changeStream)")
        lock.withLock { _opened = true }
    }

    func changeStreamDidClose(with error: Error?) {
        if let anError = error {
            print("Change stream closed with error: \(anError.localizedDescription)")
        } else {
            print("Change stream closed")
        }
        lock.withLock { _closed = true }
    }

    func changeStreamDidReceive(error: Error) {
        print("Received error: \(error.localizedDescription)")
    }

    func changeStreamDidReceive(changeEvent: AnyBSON?) {
        guard let changeEvent = changeEvent, let document = changeEvent.documentValue else { return }
        print("Change event document received: \(document)")
        lock.withLock { _events.append(document) }
    }
}

final class RefusalDelegate: ChangeEventDelegate {
    private let lock = NSLock()
    private var _closedWith: AppError?
    var closedWith: AppError? { lock.withLock { _closedWith } }
    func changeStreamDidOpen(_ changeStream: ChangeStream) {}
    func changeStreamDidClose(with error: Error?) { lock.withLock { _closedWith = error as? AppError } }
    func changeStreamDidReceive(error: Error) {}
    func changeStreamDidReceive(changeEvent: AnyBSON?) {}
}

/// A server whose drinks each user reads and writes only when it owns them, and a device
/// subscribed to its own.
@MainActor
private func withOwnersOnlyServer(_ body: (SyncTestServer, User, Realm) async throws -> Void) async throws {
    try await withSyncTestServer({ configuration in
        var app = ServerConfiguration.App(id: "test-app", syncKind: .flexible)
        app.permissions = [.init(type: "CoffeeDrink", read: "owner == %user.id", write: "owner == %user.id")]
        configuration.apps = [app]
    }) { server in
        let device = try await server.app(device: "device").login(credentials: .anonymous)
        var configuration = device.flexibleSyncConfiguration(initialSubscriptions: { subs in
            subs.append(QuerySubscription<CoffeeDrink>(name: "mine") { $0.owner == device.id })
        })
        configuration.objectTypes = [CoffeeDrink.self]
        let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
        try await body(server, device, realm)
    }
}

private func result<T>(_ start: (@escaping (T) -> Void) -> Void) async -> T {
    await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
}

@MainActor @Suite struct RemoteDataApp {
    @Test func aDeviceSeesWhatAnotherUserWritesThroughMongoClient() async throws {
        try await withSyncTestServer { server in
            // The device: a synced realm of every drink.
            let deviceUser = try await server.app(device: "device").login(credentials: .anonymous)
            var configuration = deviceUser.flexibleSyncConfiguration(initialSubscriptions: { subs in
                subs.append(QuerySubscription<CoffeeDrink>(name: "all"))
            })
            configuration.objectTypes = [CoffeeDrink.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try realm.write { realm.add(CoffeeDrink(value: ["name": "Americano", "storeNumber": 42, "owner": deviceUser.id])) }
            try await realm.syncSession?.wait(for: .upload)

            // Another user, on another device, through remote data access.
            let user = try await server.app(device: "remote").login(credentials: .anonymous)
            let store = CoffeeDrinkStore(user: user, database: server.appId)
            let inserted = await result { done in store.insertColombianBlend(owner: user.id) { done($0) } }
            let insertedId = try inserted.get()
            #expect(insertedId.objectIdValue != nil)
            let inStore = await result { done in store.drinks(inStore: 42, completion: done) }
            #expect(inStore.map { $0["name"]??.stringValue } == ["Americano"])
            #expect(inStore.first?["beanRegion"] == nil, "projected out")
            let updated = await result { done in store.addDairy(name: "Americano", completion: done) }
            #expect(updated?.matchedCount == 1 && updated?.modifiedCount == 1)
            let upserted = try await store.upsertHouseBlend(owner: user.id)
            #expect(upserted.matchedCount == 0 && upserted.objectId != nil)
            let (count, names) = try await store.countAndAggregate()
            #expect(count == 2)
            #expect(names == ["House Blend", "Colombian Blend"])
            let changed = try await store.findOneAndUpdate()
            #expect(changed?["storeNumber"]??.asInt() == 44, "the new document: \(String(describing: changed))")

            // The device downloads those writes like any change.
            #expect(await waitUntil(timeout: .seconds(30)) {
                realm.refresh()
                let drinks = realm.objects(CoffeeDrink.self)
                return drinks.count == 3 && drinks.where { $0.name == "Americano" }.first?.containsDairy == true
                    && drinks.where { $0.name == "Colombian Blend" }.first?.storeNumber == 44
            }, "\(realm.objects(CoffeeDrink.self).map { "\($0.name) \($0.storeNumber) \($0.containsDairy)" })")

            let deleted = await result { done in store.deleteHouseBlend(completion: done) }
            #expect(deleted == 1)
            #expect(await waitUntil(timeout: .seconds(30)) { realm.refresh(); return realm.objects(CoffeeDrink.self).count == 2 })

            // The Combine form, and an unsupported stage as a typed error.
            let counted: Int? = await withCheckedContinuation { continuation in
                var cancellable: AnyCancellable?
                cancellable = store.countPublisher().sink(receiveCompletion: { _ in }, receiveValue: { value in
                    continuation.resume(returning: value)
                    cancellable?.cancel()
                })
                _ = cancellable
            }
            #expect(counted == 2)
            do {
                _ = try await store.collection.aggregate(pipeline: [["$group": ["_id": "$storeNumber", "numItems": ["$sum": 1]]]])
                Issue.record("$group ran")
            } catch let error as AppError {
                #expect(error.code == .mongoDBError)
            }
        }
    }

    @Test func watchDeliversTheChangesTheUserMayRead() async throws {
        try await withSyncTestServer { server in
            let user = try await server.app(device: "remote").login(credentials: .anonymous)
            let collection = CoffeeDrinkStore(user: user, database: server.appId).collection
            // The app's data exists once a device declared its schema.
            let device = try await server.app(device: "device").login(credentials: .anonymous)
            var configuration = device.flexibleSyncConfiguration(initialSubscriptions: { $0.append(QuerySubscription<CoffeeDrink>()) })
            configuration.objectTypes = [CoffeeDrink.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            try realm.write { realm.add(CoffeeDrink(value: ["name": "Seed"])) }
            try await realm.syncSession?.wait(for: .upload)

            let queue = DispatchQueue(label: "io.realm.watchQueue")
            let delegate = MyChangeStreamDelegate()
            let changeStream = collection.watch(delegate: delegate, queue: queue)
            #expect(await waitUntil(timeout: .seconds(30)) { delegate.opened })
            let id = try await collection.insertOne(["name": "Watched", "storeNumber": 7])
            _ = try await collection.updateOneDocument(filter: ["_id": id], update: ["$set": ["storeNumber": 8]])
            // A device's write is an event too.
            try realm.write { realm.objects(CoffeeDrink.self).where { $0.name == "Seed" }.first!.storeNumber = 1 }
            #expect(await waitUntil(timeout: .seconds(30)) { delegate.events.count >= 3 }, "\(delegate.events)")
            let events = delegate.events
            #expect(events.first?["operationType"]??.stringValue == "insert")
            #expect(events.first?["fullDocument"]??.documentValue?["name"]??.stringValue == "Watched")
            #expect(events.dropFirst().first?["operationType"]??.stringValue == "update")
            changeStream.close()
            #expect(await waitUntil(timeout: .seconds(10)) { delegate.closed })

            // The async form, with a match filter: only inserts.
            let opened = Locked(false)
            let events2 = collection.changeEvents(matchFilter: ["operationType": "insert"], onOpen: { opened.withLock { $0 = true } })
            let reader = Task { () -> AnyBSON? in
                for try await event in events2 { return event }
                return nil
            }
            #expect(await waitUntil(timeout: .seconds(30)) { opened.withLock { $0 } })
            _ = try await collection.deleteOneDocument(filter: ["name": "Seed"])
            _ = try await collection.insertOne(["name": "Second"])
            let first = try await reader.value
            #expect(first?.documentValue?["operationType"]??.stringValue == "insert")
            #expect(first?.documentValue?["fullDocument"]??.documentValue?["name"]??.stringValue == "Second")
        }
    }

    @Test func aChangeStreamCarriesOnlyWhatTheUserMayReadAndIsBounded() async throws {
        try await withOwnersOnlyServer { server, device, realm in

            let watcher = try await server.app(device: "watcher").login(credentials: .anonymous)
            let collection = CoffeeDrinkStore(user: watcher, database: server.appId).collection
            let queue = DispatchQueue(label: "watch")
            let delegate = MyChangeStreamDelegate()
            let stream = collection.watch(delegate: delegate, queue: queue)
            #expect(await waitUntil(timeout: .seconds(30)) { delegate.opened })
            // The device's drink is not the watcher's to read: no event. The watcher's own is.
            try realm.write { realm.add(CoffeeDrink(value: ["name": "Device's", "owner": device.id])) }
            try await realm.syncSession?.wait(for: .upload)
            _ = try await collection.insertOne(["name": "Watcher's", "owner": AnyBSON(watcher.id)])
            #expect(await waitUntil(timeout: .seconds(30)) { !delegate.events.isEmpty })
            try await Task.sleep(for: .milliseconds(600))
            #expect(delegate.events.compactMap { $0["fullDocument"]??.documentValue?["name"]??.stringValue } == ["Watcher's"])

            // Four streams of one user at once; a fifth is refused.
            let more = (0..<3).map { _ in MyChangeStreamDelegate() }
            let streams = more.map { collection.watch(delegate: $0, queue: queue) }
            #expect(await waitUntil(timeout: .seconds(30)) { more.allSatisfy(\.opened) })
            let refused = RefusalDelegate()
            let fifth = collection.watch(delegate: refused, queue: queue)
            #expect(await waitUntil(timeout: .seconds(30)) { refused.closedWith != nil })
            #expect(refused.closedWith?.httpStatusCode == 429, "\(String(describing: refused.closedWith))")
            for stream in streams + [stream, fifth] { stream.close() }
        }
    }

    @Test func aUserWithADocumentFilterReadsAndWritesOnlyItsDocuments() async throws {
        try await withOwnersOnlyServer { server, deviceUser, realm in
            try realm.write { realm.add(CoffeeDrink(value: ["name": "Mine", "storeNumber": 1, "owner": deviceUser.id])) }
            try await realm.syncSession?.wait(for: .upload)

            let user = try await server.app(device: "remote").login(credentials: .anonymous)
            let drinks = CoffeeDrinkStore(user: user, database: server.appId).collection
            _ = try await drinks.insertOne(["name": "Theirs", "storeNumber": 2, "owner": AnyBSON(user.id)])
            #expect(try await drinks.find(filter: [:]).compactMap { $0["name"]??.stringValue } == ["Theirs"])
            #expect(try await drinks.count(filter: ["name": "Mine"]) == 0)
            let update = try await drinks.updateManyDocuments(filter: [:], update: ["$set": ["storeNumber": 9]])
            #expect(update.matchedCount == 1)
            // Writing a document that is not its own is refused.
            do {
                _ = try await drinks.insertOne(["name": "Forged", "owner": AnyBSON(deviceUser.id)])
                Issue.record("a forged document was inserted")
            } catch let error as AppError {
                #expect(error.code == .mongoDBError && error.httpStatusCode == 403, "\(error)")
            }
            // The device's own drink is untouched.
            try await realm.syncSession?.wait(for: .download)
            #expect(realm.objects(CoffeeDrink.self).map(\.storeNumber) == [1])
            #expect(realm.objects(CoffeeDrink.self).count == 1)
        }
    }
}
