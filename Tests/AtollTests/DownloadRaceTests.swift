@_spi(Testing) import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// An object two devices change at once: a field both set and a list both append to.
final class RacedItem: Object {
    @Persisted(primaryKey: true) var _id = ""
    @Persisted var value = 0
    @Persisted var tags: List<String>
}

/// A local write the app commits while the sync session merges a download (after the merger
/// rebased the local changes, before the download's write transaction) must still be merged with
/// that download both ways: the download applies on top of it as rebased over it, and it is
/// uploaded rebased over the download. Found by the chaos test (seed 7748234281985958114), where a
/// client ended with another field value and list order than the server and the other clients.
@MainActor @Suite(.serialized) struct DownloadRaceTests {
    private func open(_ user: User, _ behavior: Realm.OpenBehavior) async throws -> Realm {
        var configuration = user.configuration(partitionValue: "race")
        configuration.objectTypes = [RacedItem.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: behavior)
    }

    private func dump(_ realm: Realm) -> [String] {
        realm.refresh()
        return realm.objects(RacedItem.self).map { "\($0._id) value=\($0.value) tags=\(Array($0.tags))" }.sorted()
    }

    /// Commits on `configuration`'s file from another thread, as the app would during the merge.
    nonisolated private static func commitElsewhere(_ configuration: Realm.Configuration, value: Int, tag: String) {
        DispatchQueue.global().sync {
            let realm = try! Realm(configuration: configuration)
            let item = realm.object(ofType: RacedItem.self, forPrimaryKey: "x")!
            try! realm.write {
                item.value = value
                item.tags.append(tag)
            }
        }
    }

    @Test func aWriteRacingADownloadIsMergedWithIt() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let racer = try await open(frodo, .always)
            try racer.write { racer.add(RacedItem(value: ["_id": "x"])) }
            try await racer.syncSession!.wait(for: .upload)
            try await racer.syncSession!.wait(for: .download)
            let other = try await open(sam, .always)
            #expect(dump(other) == ["x value=0 tags=[]"])

            // The racer's next download write is preceded by a commit of its own, made after the
            // merger rebased its (then empty) local changes over the download.
            let configuration = racer.configuration
            let raced = Locked(false)
            SyncSession.injectDownloadWriteFault(for: configuration) { [configuration] in
                guard raced.withLock({ let first = !$0; $0 = true; return first }) else { return }
                Self.commitElsewhere(configuration, value: 2, tag: "racer")
            }
            defer { SyncSession.injectDownloadWriteFault(for: configuration, nil) }
            let item = try #require(other.object(ofType: RacedItem.self, forPrimaryKey: "x"))
            try other.write {
                item.value = 1
                item.tags.append("other")
            }
            try await other.syncSession!.wait(for: .upload)
            #expect(await waitUntil { raced.withLock { $0 } })

            for _ in 0..<2 {
                for realm in [racer, other] {
                    try await realm.syncSession!.wait(for: .upload)
                    try await realm.syncSession!.wait(for: .download)
                }
            }
            let witness = try await open(try await server.app(device: "witness").login(credentials: .anonymous), .always)
            // The racer's write is the later one: its value wins; at one list index the earlier
            // insert comes first.
            #expect(dump(witness) == ["x value=2 tags=[\"other\", \"racer\"]"])
            #expect(dump(racer) == dump(witness))
            #expect(dump(other) == dump(witness))
        }
    }
}
