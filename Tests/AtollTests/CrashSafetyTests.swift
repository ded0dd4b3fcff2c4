@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A transaction that never commits — abandoned, or cut short by a killed process — leaves the file
/// as it was before it began, and the file opens cleanly afterwards.
@Suite struct CrashSafetyTests {
    private func seed(_ t: TestRealm) throws {
        let realm = try t.open()
        try realm.write { realm.add(Task(value: ["name": "before"])) }
    }

    private func expectIntact(_ t: TestRealm) throws {
        #expect(try RawSQLite.fetch("PRAGMA integrity_check", path: t.path) == [["ok"]])
    }

    @Test func abandonedWriteTransactionLeavesThePreviousState() throws {
        let t = try TestRealm(objectTypes: [Task.self], recordingHistory: true)
        try seed(t)
        do {
            let realm = try t.open()
            realm.beginWrite()
            for i in 0..<2_000 { realm.add(Task(value: ["name": "abandoned \(i)"])) }
            realm.objects(Task.self).where { $0.name == "before" }.first?.done = true
            #expect(realm.objects(Task.self).count == 2_001)
        }   // released without commitWrite()
        try expectIntact(t)
        let realm = try t.open()
        #expect(realm.objects(Task.self).map(\.name) == ["before"])
        #expect(realm.objects(Task.self).first?.done == false)
        #expect(try realm.historyChangesets().count == 1)
        try realm.write { realm.add(Task(value: ["name": "after"])) }
        #expect(realm.objects(Task.self).count == 2)
    }

    @Test func abandonedWriteTransactionReleasesTheWriteLockForOtherRealms() throws {
        let t = try TestRealm(objectTypes: [Task.self])
        let other = try t.open()
        // Abandoned on another thread: this thread's `Realm()` is `other` itself.
        let configuration = t.configuration
        try onAnotherThread {
            let realm = try Realm(configuration: configuration)
            realm.beginWrite()
            realm.add(Task(value: ["name": "abandoned"]))
        }
        try other.write { other.add(Task(value: ["name": "written"])) }
        #expect(other.objects(Task.self).map(\.name) == ["written"])
    }

    @Test func writerKilledMidTransactionLeavesTheLastCommittedState() async throws {
        let t = try TestRealm(objectTypes: [Task.self], recordingHistory: true)
        try seed(t)
        let path = t.path
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Task.self])
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(Task(value: ["name": "committed by the child"])) }
            realm.beginWrite()
            realm.objects(Task.self).where { $0.name == "before" }.first?.priority = 9
            // About 5 MB: more than SQLite's page cache, so uncommitted pages spill into the WAL file.
            let filler = String(repeating: "x", count: 1_000)
            for i in 0..<5_000 { realm.add(Task(value: ["name": "uncommitted \(i) \(filler)"])) }
            kill(getpid(), SIGKILL)
        }
        // The uncommitted pages did reach the disk: the kill interrupted a real transaction.
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        #expect(wal > 2_000_000)
        try expectIntact(t)
        let realm = try t.open()
        #expect(realm.objects(Task.self).map(\.name).sorted() == ["before", "committed by the child"])
        #expect(realm.objects(Task.self).where { $0.priority == 9 }.isEmpty)
        #expect(try realm.historyChangesets().count == 2)
        try realm.write { realm.add(Task(value: ["name": "after"])) }
        #expect(realm.objects(Task.self).count == 3)
    }

    @Test func processKilledDuringMigrationLeavesTheOldSchemaAndData() async throws {
        let t = try TestRealm()
        do {
            let realm = try Realm(configuration: t.configuration([MemberV1.self]))
            try realm.write {
                for i in 0..<100 { realm.add(MemberV1(value: ["firstName": "F\(i)", "lastName": "L\(i)", "age": i])) }
            }
        }
        let path = t.path
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [MemberV2.self])
            configuration.schemaVersion = 1
            configuration.migrationBlock = { migration, _ in
                var converted = 0
                migration.enumerateObjects(ofType: "Member") { oldObject, newObject in
                    newObject?["fullName"] = "\(oldObject?["firstName"] ?? "") \(oldObject?["lastName"] ?? "")"
                    converted += 1
                    if converted == 50 { kill(getpid(), SIGKILL) }
                }
            }
            _ = try Realm(configuration: configuration)
        }
        try expectIntact(t)
        #expect(try schemaVersionAtURL(t.configuration.fileURL!) == 0)
        let realm = try Realm(configuration: t.configuration([MemberV1.self]))
        #expect(realm.objects(MemberV1.self).count == 100)
        #expect(realm.objects(MemberV1.self).where { $0.age == 42 }.first?.lastName == "L42")
    }
}
