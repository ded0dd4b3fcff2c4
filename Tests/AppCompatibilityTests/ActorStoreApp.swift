import Atoll
import AtollTesting
import Foundation
import Testing

// Realm's documented pattern for a realm isolated to an actor of the app's own, compiled in
// Swift 5 mode: `realm.asyncWrite` inside the actor, with the realm as an actor property.
class ActTodo: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var owner = ""
    @Persisted var status = ""
}

actor ActRealmStore {
    var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func createTodo(name: String, owner: String, status: String) async throws {
        try await realm.asyncWrite {
            realm.create(ActTodo.self, value: ["_id": ObjectId.generate(), "name": name, "owner": owner, "status": status])
        }
    }

    func updateTodo(_id: ObjectId, name: String, owner: String, status: String) async throws {
        try await realm.asyncWrite {
            realm.create(ActTodo.self, value: ["_id": _id, "name": name, "owner": owner, "status": status], update: .modified)
        }
    }

    func deleteTodo(id: ObjectId) async throws {
        try await realm.asyncWrite {
            let todoToDelete = realm.object(ofType: ActTodo.self, forPrimaryKey: id)
            realm.delete(todoToDelete!)
        }
    }

    func getTodoCount() -> Int { realm.objects(ActTodo.self).count }

    func close() { realm = nil }
}

@Suite struct ActorStoreApp {
    @Test func anActorOwnsItsRealmAndWritesAsynchronously() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try await ActRealmStore(configuration: folder.configuration(objectTypes: [ActTodo.self]))
        try await store.createTodo(name: "Keep it secret", owner: "Gandalf", status: "In Progress")
        try await store.createTodo(name: "Keep it safe", owner: "Frodo", status: "Open")
        #expect(await store.getTodoCount() == 2)
        await store.close()
    }
}
