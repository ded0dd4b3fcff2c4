@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// Used only inside exit tests: the parent process never touches it.
final class FirstUsedLate: Object {
    @Persisted var name = ""
}

@Suite struct ConfigurationTests {
    // MARK: Configuration values

    @Test func inMemoryIdentifierAndFileURLReplaceEachOther() {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: "/tmp/a.realm"))
        #expect(configuration.inMemoryIdentifier == nil)
        configuration.inMemoryIdentifier = "cache"
        #expect(configuration.fileURL == nil)
        #expect(configuration.inMemoryIdentifier == "cache")
        configuration.fileURL = URL(fileURLWithPath: "/tmp/b.realm")
        #expect(configuration.inMemoryIdentifier == nil)
        #expect(configuration.fileURL?.lastPathComponent == "b.realm")

        let inMemory = Realm.Configuration(inMemoryIdentifier: "x")
        #expect(inMemory.fileURL == nil && inMemory.inMemoryIdentifier == "x")
    }

    @Test func defaultConfigurationPointsAtDefaultRealmWithNoRestrictions() {
        let configuration = Realm.Configuration()
        #expect(configuration.fileURL?.lastPathComponent == "default.realm")
        #expect(configuration.inMemoryIdentifier == nil)
        #expect(configuration.objectTypes == nil)
        #expect(configuration.schemaVersion == 0)
        #expect(configuration.migrationBlock == nil)
        #expect(!configuration.readOnly && !configuration.deleteRealmIfMigrationNeeded)
    }

    @Test func realmInitOpensTheDefaultConfiguration() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let saved = Realm.Configuration.defaultConfiguration
        defer { Realm.Configuration.defaultConfiguration = saved }
        Realm.Configuration.defaultConfiguration = folder.configuration("default.realm", objectTypes: [Dog.self])
        do {
            let realm = try Realm()
            try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
            #expect(realm.configuration.fileURL?.path == folder.url.appendingPathComponent("default.realm").path)
        }
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("default.realm").path))
        let reopened = try Realm.defaultRealm()
        #expect(reopened.objects(Dog.self).first?.name == "Rex")
    }

    @Test func fileURLChoosesTheFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let first = try Realm(configuration: folder.configuration("first.realm", objectTypes: [Dog.self]))
            let second = try Realm(configuration: folder.configuration("second.realm", objectTypes: [Dog.self]))
            try first.write { first.add(Dog(value: ["name": "Rex"])) }
            #expect(first.objects(Dog.self).count == 1)
            #expect(second.objects(Dog.self).isEmpty)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        #expect(files.contains("first.realm") && files.contains("second.realm"))
    }

    @Test func objectTypesRestrictTheSchemaToThemAndWhatTheyLinkTo() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        #expect(realm.schema.typeNames.sorted() == ["Address", "Dog", "Person"], "Dog links to Person, which embeds Address")
        let error = try #require(throws: Realm.Error.self) {
            try realm.write { realm.add(Task(value: ["name": "not here"])) }
        }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("'Task'"))
    }

    @Test func realmWithoutObjectTypesReadsATypeFirstUsedAfterOpening() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("late.realm").path
        // Each body runs in a fresh process, so the second one opens the file before it has ever
        // used the class (as an app does at launch).
        await #expect(processExitsWith: .success) { [path = path as String] in
            let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [FirstUsedLate.self]))
            try realm.write { realm.add(FirstUsedLate(value: ["name": "kept"])) }
        }
        await #expect(processExitsWith: .success) { [path = path as String] in
            let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path)))
            guard realm.objects(FirstUsedLate.self).first?.name == "kept" else { exit(1) }
            try realm.write { realm.add(FirstUsedLate(value: ["name": "added"])) }
            guard realm.objects(FirstUsedLate.self).count == 2 else { exit(2) }
        }
    }

    @Test func schemaVersionIsStoredInTheFile() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        t.configuration.schemaVersion = 4
        do { _ = try t.open() }
        #expect(try schemaVersionAtURL(t.configuration.fileURL!) == 4)
        t.configuration.schemaVersion = 9
        do { _ = try t.open() }
        #expect(try schemaVersionAtURL(t.configuration.fileURL!) == 9)
    }

    @Test func deleteFilesRemovesAClosedRealmAndRefusesAnOpenOne() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        do {
            let realm = try t.open()
            try realm.write { realm.add(Dog()) }
            #expect(throws: Realm.Error.self) { try Realm.deleteFiles(for: t.configuration) }
        }
        #expect(try Realm.deleteFiles(for: t.configuration))
        #expect(!FileManager.default.fileExists(atPath: t.path))
        #expect(try !Realm.deleteFiles(for: t.configuration), "nothing left to delete")
        #expect(try t.open().objects(Dog.self).isEmpty)
    }

    // MARK: Read-only

    @Test func readOnlyRealmReadsButRefusesWrites() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        do {
            let realm = try t.open()
            try realm.write { realm.add(Dog(value: ["name": "Rex", "age": 3])) }
        }
        var configuration = t.configuration
        configuration.readOnly = true
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Dog.self).first?.name == "Rex")
        #expect(realm.objects(Dog.self).where { $0.age > 2 }.count == 1)
        let error = try #require(throws: Realm.Error.self) { try realm.write { realm.add(Dog()) } }
        #expect(error.code == .readOnly)
        #expect(!realm.isInWriteTransaction)
    }

    @Test func readOnlyRealmSeesWritesOfAWritableRealmOfTheSameFile() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let writer = try t.open()
        try writer.write { writer.add(Dog(value: ["name": "Rex"])) }
        var configuration = t.configuration
        configuration.readOnly = true
        // The writable realm is still open, so the read-only one shares its coordinator; a fresh
        // process would open the file read-only (see readOnlyRealmReadsButRefusesWrites).
        let reader = try Realm(configuration: configuration)
        #expect(reader.objects(Dog.self).count == 1)
        try writer.write { writer.add(Dog(value: ["name": "Fido"])) }
        reader.refresh()
        #expect(reader.objects(Dog.self).count == 2)
        #expect(throws: Realm.Error.self) { try reader.write { reader.add(Dog()) } }
    }

    @Test func readOnlyRealmOfAMissingFileFailsToOpen() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var configuration = folder.configuration("missing.realm", objectTypes: [Dog.self])
        configuration.readOnly = true
        let error = try #require(throws: Realm.Error.self) { _ = try Realm(configuration: configuration) }
        #expect(error.code == .fileNotFound)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty, "nothing was created")
    }

    // MARK: In-memory

    private static func memoryFiles(_ identifier: String) -> [String] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-memory").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.contains(identifier) }
    }

    private static func uniqueIdentifier() -> String {
        "mem" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    }

    @Test func inMemoryRealmsWithTheSameIdentifierShareData() throws {
        let id = Self.uniqueIdentifier()
        let configuration = Realm.Configuration(inMemoryIdentifier: id, objectTypes: [Dog.self])
        let first = try Realm(configuration: configuration)
        let second = try Realm(configuration: configuration)
        try first.write { first.add(Dog(value: ["name": "Rex"])) }
        second.refresh()
        #expect(second.objects(Dog.self).first?.name == "Rex")
        try second.write { second.add(Dog(value: ["name": "Fido"])) }
        first.refresh()
        #expect(first.objects(Dog.self).count == 2)
    }

    @Test func inMemoryRealmWithAnotherIdentifierIsEmpty() throws {
        let one = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: Self.uniqueIdentifier(), objectTypes: [Dog.self]))
        try one.write { one.add(Dog(value: ["name": "Rex"])) }
        let other = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: Self.uniqueIdentifier(), objectTypes: [Dog.self]))
        #expect(other.objects(Dog.self).isEmpty)
    }

    @Test func inMemoryRealmIsGoneOnceEveryInstanceIsReleased() throws {
        let id = Self.uniqueIdentifier()
        let configuration = Realm.Configuration(inMemoryIdentifier: id, objectTypes: [Dog.self])
        do {
            let first = try Realm(configuration: configuration)
            try first.write { first.add(Dog(value: ["name": "Rex"])) }
            do {
                let second = try Realm(configuration: configuration)
                #expect(second.objects(Dog.self).count == 1)
            }
            #expect(!Self.memoryFiles(id).isEmpty, "the store lives while one realm is open")
            let again = try Realm(configuration: configuration)
            #expect(again.objects(Dog.self).count == 1, "releasing one of two instances keeps the data")
        }
        #expect(Self.memoryFiles(id).isEmpty)
        let fresh = try Realm(configuration: configuration)
        #expect(fresh.objects(Dog.self).isEmpty)
    }

    @Test func inMemoryRealmWritesNoFileAtTheDefaultPath() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var configuration = folder.configuration(objectTypes: [Dog.self])
        configuration.inMemoryIdentifier = Self.uniqueIdentifier()
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Dog()) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    // MARK: writeCopy

    @Test func writeCopyHoldsEveryObjectAndOpensAsARealm() throws {
        let t = try TestRealm()
        let destination = t.folder.configuration("copy.realm", objectTypes: t.configuration.objectTypes)
        do {
            let realm = try t.open()
            try realm.write {
                let person = Person(value: ["name": "Ann", "age": 30])
                person.dogs.append(Dog(value: ["name": "Rex"]))
                person.tags.insert("admin")
                person.scores["math"] = 9
                person.address = Address(value: ["city": "Paris"])
                realm.add(person)
                for i in 0..<50 { realm.add(Task(value: ["name": "task \(i)", "priority": i % 10])) }
            }
            try realm.writeCopy(configuration: destination)
        }
        let copy = try Realm(configuration: destination)
        #expect(copy.objects(Task.self).count == 50)
        #expect(copy.objects(Task.self).where { $0.priority == 3 }.count == 5)
        let ann = try #require(copy.object(ofType: Person.self, forPrimaryKey: "Ann"))
        #expect(ann.dogs.first?.name == "Rex" && ann.tags.contains("admin") && ann.scores["math"] == 9)
        #expect(ann.address?.city == "Paris")
        #expect(try copy.historyChangesets().isEmpty, "a local realm's copy has no history, as the realm had none")
        try copy.write { copy.add(Dog(value: ["name": "Fido"])) }
        #expect(copy.objects(Dog.self).count == 2)
    }

    @Test func writeCopyIsTheSnapshotTheRealmReads() throws {
        let t = try TestRealm(objectTypes: [Task.self])
        let destination = t.folder.configuration("copy.realm", objectTypes: [Task.self])
        let reader = try t.open()
        try reader.write { for i in 0..<10 { reader.add(Task(value: ["name": "\(i)"])) } }
        // Another thread commits after the reader's snapshot; with autorefresh off the reader keeps
        // its version.
        reader.autorefresh = false
        let configuration = t.configuration
        try onAnotherThread {
            let writer = try Realm(configuration: configuration)
            try writer.write { for i in 10..<25 { writer.add(Task(value: ["name": "\(i)"])) } }
        }
        #expect(reader.objects(Task.self).count == 10)
        try reader.writeCopy(configuration: destination)
        #expect(try Realm(configuration: destination).objects(Task.self).count == 10)
    }

    @Test func writeCopyIsConsistentWhileAnotherThreadWrites() async throws {
        let t = try TestRealm(objectTypes: [Task.self])
        let configuration = t.configuration
        let stop = Recorder<Bool>()
        let batch = 7
        let writer = Thread {
            do {
                let realm = try Realm(configuration: configuration)
                while stop.all.isEmpty {
                    try realm.write { for _ in 0..<batch { realm.add(Task(value: ["name": "w"])) } }
                }
            } catch {
                Issue.record(error)
            }
        }
        writer.start()
        defer { stop.append(true) }
        var counts: Set<Int> = []
        for round in 0..<20 {
            let destination = t.folder.configuration("copy-\(round).realm", objectTypes: [Task.self])
            do {
                let realm = try Realm(configuration: configuration)
                try realm.writeCopy(configuration: destination)
            }
            let count = try Realm(configuration: destination).objects(Task.self).count
            #expect(count % batch == 0, "a copy holds whole transactions only")
            counts.insert(count)
            try? await _Concurrency.Task.sleep(for: .milliseconds(5))
        }
        stop.append(true)
        while !writer.isFinished { try? await _Concurrency.Task.sleep(for: .milliseconds(5)) }
        #expect(counts.count > 1, "the writer made progress during the copies")
    }

    @Test func writeCopyOfAnInMemoryRealmIsAFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let destination = folder.configuration("copy.realm", objectTypes: [Dog.self])
        do {
            let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: Self.uniqueIdentifier(), objectTypes: [Dog.self]))
            try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
            try realm.writeCopy(configuration: destination)
        }
        #expect(try Realm(configuration: destination).objects(Dog.self).first?.name == "Rex")
    }
}

/// Where `default.realm` goes on each platform, as realm-swift chooses it. The Apple branches
/// run only on Apple systems; their choice is this pure function, checked here for each.
@Suite struct DefaultDirectoryTests {
    static func directory(_ platform: DefaultDirectory.Platform, _ environment: [String: String] = [:],
                          bundle: String? = "com.example.Tasks") -> DefaultDirectory {
        DefaultDirectory(platform: platform, environment: environment, documents: "/home/Documents",
                         applicationSupport: "/home/Library/Application Support", caches: "/home/Library/Caches",
                         bundleIdentifier: bundle, executableName: "Tasks", currentDirectory: "/work")
    }

    @Test func eachPlatformHasRealmsFolder() {
        #expect(Self.directory(.iOS).path == "/home/Documents")
        #expect(Self.directory(.watchOS).path == "/home/Documents")
        #expect(Self.directory(.visionOS).path == "/home/Documents")
        #expect(Self.directory(.tvOS).path == "/home/Library/Caches")
        #expect(Self.directory(.linux).path == "/home/Documents")
        // A Mac keeps its files in Application Support, out of the user's Documents (no privacy
        // prompt), in a folder of the app's own unless sandboxed (the container is the app's).
        #expect(Self.directory(.macOS).path == "/home/Library/Application Support/com.example.Tasks")
        #expect(Self.directory(.macCatalyst).path == "/home/Library/Application Support/com.example.Tasks")
        #expect(Self.directory(.macOS, bundle: nil).path == "/home/Library/Application Support/Tasks")
        #expect(Self.directory(.macOS, ["APP_SANDBOX_CONTAINER_ID": "x"]).path == "/home/Library/Application Support")
        #expect(Self.directory(.macOS).isPerApplication && !Self.directory(.iOS).isPerApplication)
    }

    @Test func atollHomeOverridesEveryPlatform() {
        for platform in [DefaultDirectory.Platform.iOS, .tvOS, .macOS, .linux] {
            #expect(Self.directory(platform, ["ATOLL_HOME": "/tmp/realms"]).path == "/tmp/realms")
            #expect(!Self.directory(platform, ["ATOLL_HOME": "/tmp/realms"]).isPerApplication)
        }
        #expect(DefaultDirectory.Platform.current == .linux)
    }
}
