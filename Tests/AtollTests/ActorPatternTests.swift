import Atoll
import AtollTesting
import Foundation
import Testing

// Realm's documented pattern for a realm isolated to an actor of the app's own, compiled in
// Swift 6 mode (AppCompatibilityTests/ActorStoreApp compiles it in Swift 5 mode). Swift 6.3.1
// crashed compiling `try await realm.asyncWrite { realm… }` here while Atoll declared the
// isolation parameter last and optional; these declarations must keep compiling.

final class PatternTodo: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var owner = ""
}

/// The pattern as Realm's docs write it, on the default configuration (compiled, not run: it
/// would open the default realm).
actor DefaultPatternStore {
    var realm: Realm!

    init() async throws {
        realm = try await Realm(actor: self)
    }

    func add() async throws {
        try await realm.asyncWrite {
            realm.create(PatternTodo.self, value: ["name": "Keep it secret", "owner": "Gandalf"])
        }
    }

    func refresh() async -> Bool {
        await realm.asyncRefresh()
    }
}

/// The same pattern on a test configuration, run.
actor PatternStore {
    var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func add(_ name: String) async throws {
        try await realm.asyncWrite {
            realm.create(PatternTodo.self, value: ["name": name, "owner": "Frodo"])
        }
    }

    func names() -> [String] { realm.objects(PatternTodo.self).sorted(byKeyPath: "name").map(\.name) }

    func refresh() async -> Bool { await realm.asyncRefresh() }

    func close() { realm = nil }
}

@Suite struct ActorPatternTests {
    @Test func anActorWritesItsRealmWithAsyncWriteInSwift6Mode() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: [PatternTodo.self])
        let store = try await PatternStore(configuration: configuration)
        try await store.add("b")
        try await store.add("a")
        #expect(await store.names() == ["a", "b"])

        // Another realm's write shows after asyncRefresh.
        try await onAnotherThread { () -> Void in
            let other = try Realm(configuration: configuration)
            try other.write { other.create(PatternTodo.self, value: ["name": "c"]) }
        }
        _ = await store.refresh()
        #expect(await store.names() == ["a", "b", "c"])
        await store.close()
    }
}
