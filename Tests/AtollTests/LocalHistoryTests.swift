@_spi(Testing) @_spi(Sync) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// A local realm keeps no sync history (only a synced realm uploads it): its commits must leave
/// exactly the data and notifications that recording them leaves, and its file must never start
/// syncing with data its history does not describe.
@Suite struct LocalHistoryTests {
    private func id(_ n: Int) -> ObjectId { try! ObjectId(string: String(format: "%024x", n)) }

    /// The same writes, on a realm that records history and on one that does not.
    private func writeEverything(_ realm: Realm) throws {
        try realm.write {
            let person = Person(value: ["name": "Ann", "age": 30])
            person.dogs.append(Dog(value: ["_id": id(100_000), "name": "Rex", "age": 3]))
            person.tags.insert("admin")
            person.scores["math"] = 9
            person.address = Address(value: ["city": "Paris"])
            realm.add(person)
            for i in 0..<200 { realm.add(Task(value: ["_id": id(i), "name": "task \(i)", "owner": "o\(i % 7)", "priority": i % 10])) }
        }
        try realm.write {
            realm.add(Person(value: ["name": "Ann", "age": 31]), update: .modified)
            realm.create(Person.self, value: ["name": "Bob", "age": 40])
            for task in realm.objects(Task.self).where({ $0.priority == 3 }) { task.done = true }
            realm.delete(realm.objects(Task.self).where { $0.priority == 9 })
        }
        try realm.write {}  // an empty commit is a version too
        try realm.write {
            let ann = realm.object(ofType: Person.self, forPrimaryKey: "Ann")!
            ann.dogs.append(Dog(value: ["_id": id(100_001), "name": "Fido"]))
            ann.address = nil
        }
    }

    @Test func aLocalRealmRecordsNoHistoryAndStoresTheSameAsARecordingOne() throws {
        let local = try TestRealm()
        let recording = try TestRealm(recordingHistory: true)
        var tokens: [NotificationToken] = []
        let realms = try [local.open(), recording.open()]
        let changes = [Recorder<String>(), Recorder<String>()]
        for (realm, seen) in zip(realms, changes) {
            tokens.append(realm.objects(Task.self).where { $0.done == false }.observe { change in
                switch change {
                case .initial(let results): seen.append("initial \(results.count)")
                case .update(let results, let deletions, let insertions, let modifications):
                    seen.append("update \(results.count) \(deletions) \(insertions) \(modifications)")
                case .error(let error): seen.append("error \(error)")
                }
            })
            tokens.append(realm.objects(Person.self).observe { change in
                if case .update(_, let deletions, let insertions, let modifications) = change {
                    seen.append("people \(deletions) \(insertions) \(modifications)")
                }
            })
            try writeEverything(realm)
        }
        #expect(try realms[0].canonicalDump() == realms[1].canonicalDump())
        #expect(changes[0].all == changes[1].all)
        #expect(changes[0].all.count >= 5)
        #expect(try realms[0].historyChangesets().isEmpty)
        #expect(try realms[1].historyChangesets().count == 4)
        // Both files are at the same version: another realm of each sees the last commit.
        let reopened = try [local.open(), recording.open()]
        #expect(reopened.map { $0.objects(Task.self).count } == [180, 180])
        // `add(_:update: .modified)` of an unmanaged Ann with no dogs emptied the list; Fido came after.
        #expect(reopened.map { $0.object(ofType: Person.self, forPrimaryKey: "Ann")?.dogs.map(\.name) } == [["Fido"], ["Fido"]])
        withExtendedLifetime(tokens) {}
    }

    /// A file whose history holds records (a synced realm's, opened without sync) keeps recording,
    /// so its history stays whole.
    @Test func aFileWithHistoryKeepsRecordingWhenOpenedLocally() throws {
        let t = try TestRealm(recordingHistory: true)
        do {
            let realm = try t.open()
            try realm.write { realm.add(Dog(value: ["name": "Fido"])) }
        }
        var plain = t.configuration
        plain.recordsHistoryForTesting = false
        let realm = try Realm(configuration: plain)
        let before = try realm.historyChangesets().count
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        let history = try realm.historyChangesets()
        #expect(history.count == before + 1)
        #expect(history.last?.instructions.contains { if case .createObject = $0 { true } else { false } } == true)
    }

    /// A local realm's file cannot be opened with a sync configuration once it committed without
    /// history (its objects would never upload); `writeCopy(configuration:)` makes a synced copy.
    @Test func aLocalFileWithUnrecordedCommitsIsRefusedBySync() throws {
        let t = try FlexibleSyncRealm()
        var local = Realm.Configuration(fileURL: t.configuration.fileURL, objectTypes: t.configuration.objectTypes)
        local.schemaVersion = t.configuration.schemaVersion
        do {
            let realm = try Realm(configuration: local)
            try realm.write { realm.add(Task(value: ["name": "local only"])) }
        }
        #expect(try RawSQLite.fetch("SELECT value FROM _atoll_meta WHERE key = 'unrecorded_commits'", path: t.configuration.fileURL!.path) == [["1"]])
        do {
            _ = try Realm(configuration: t.configuration)
            Issue.record("a local file with unrecorded commits opened as a synced realm")
        } catch let error as Realm.Error {
            #expect(error.code == .incompatibleHistories)
        }
    }

    /// Creating objects in a file that never had an unresolved link skips the lookup for them;
    /// one noted earlier in the same transaction is still resolved.
    @Test func anUnresolvedLinkNotedInTheTransactionIsResolvedByAnObjectCreatedLater() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration(objectTypes: [Person.self, Dog.self, Address.self]))
        let rex = Dog(value: ["name": "Rex"])
        try realm.write { realm.add(rex) }
        try realm.write {
            realm.add(Dog(value: ["name": "Fido"]))  // asks whether the file has unresolved links: none
            try realm.integrateRemoteInWrite([Changeset(version: 1, timestamp: 0, instructions: [
                .set(ObjectID(type: "Dog", primaryKey: .objectId(rex._id)), path: [.property("owner")],
                     value: .link(ObjectLink(objectType: "Person", primaryKey: .string("Zed")))),
            ])])
            #expect(rex.owner == nil)
            realm.add(Person(value: ["name": "Zed"]))
        }
        #expect(rex.owner?.name == "Zed")
    }
}
